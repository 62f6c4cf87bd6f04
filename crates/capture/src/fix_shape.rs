//! What the fix generator works from and writes: a captured transaction [`Shape`] (its
//! statements, draws, amounts, floors, hot relations, claimed variables), the [`Floor`]s of
//! its columns, and a [`GeneratedFile`] of the scenario directory. Shared by `fixes`, which
//! assembles the variants, and `fixes_sql`, which writes their statements; re-exported from
//! `crate::fixes`.

use std::collections::BTreeMap;

/// A captured transaction shape as its script runs it.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// A short name for variant and file names (`shape_1`).
    pub name: String,
    /// The captured script's file (`shape_1.sql`).
    pub script: String,
    /// Script lines that draw its variables (`\set k random_zipfian(1, 1000, 1.1)`): every
    /// fix runs them first, so it runs the same keys.
    pub draws: Vec<String>,
    /// The SQL statements in order, pgbench variables (`:k`) where the captured values
    /// were, `BEGIN`/`COMMIT` included when the transaction had them.
    pub statements: Vec<String>,
    /// Column (as `diagnose::shape::relation_key` writes it) → the variable holding how
    /// much a read-check-write takes from it, for an UPDATE that assigns the new value
    /// (`SET remaining = :new`) rather than subtracting (`remaining - :amount`).
    pub amounts: BTreeMap<String, String>,
    /// Floors known for columns of the touched relations.
    pub floors: Vec<Floor>,
    /// Relations whose rows are hot, those waited on first, hottest first; a counter is
    /// sharded only there, in the first of them it increments (empty: every counter the
    /// shape increments, the first).
    pub hot: Vec<String>,
    /// Variable → the column of a claim's result it holds (a claim whose row the next
    /// statements work on: `select id … for update limit 1` then `… where id = :id`).
    pub claimed: BTreeMap<String, String>,
}

/// The least value a column may take, and where that came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Floor {
    /// `diagnose::shape::relation_key` of the relation and column.
    pub relation: String,
    pub column: String,
    /// `>=` or `>`.
    pub strict: bool,
    /// A numeric SQL constant (`0`, `-100.5`).
    pub value: String,
    pub source: FloorSource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FloorSource {
    /// `CHECK` constraint of this name.
    Check(String),
    /// The least value the capture saw (statistics or statements).
    ObservedMinimum,
}

/// A file of the scenario directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    pub name: String,
    pub text: String,
}
