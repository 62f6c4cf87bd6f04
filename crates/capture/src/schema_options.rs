//! How a schema capture is asked for ([`SchemaOptions`]: scale, redaction, the rows a table
//! must contain, where `schema_sql` comes from), apart from `schema`, which does the capture,
//! so the data generator reads its options without importing the capture that calls it.
//! Re-exported from `crate::schema`.

use std::path::PathBuf;
use std::time::Duration;

use hotbench_wire::ConnectParams;
use serde::{Deserialize, Serialize};

use crate::catalog::TableName;

/// Rows a table must contain whatever the statistics say: the hot keys the workload's
/// statements use, so the twin's hottest row is the same row. Values are text as a
/// statement would write them (`42`, `alice`), one per column, in `columns` order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRows {
    pub table: TableName,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

/// Where `schema_sql` comes from.
#[derive(Debug, Clone, Default)]
pub enum DumpSource {
    /// Built from the catalogs only.
    #[default]
    Catalogs,
    /// `pg_dump --schema-only` connecting with these parameters (the password, if any,
    /// reaches it through its environment, never its command line), from `bin_dir` or
    /// the newest installed PostgreSQL whose major is at least the server's; the
    /// catalogs when none is.
    PgDump {
        params: Box<ConnectParams>,
        bin_dir: Option<PathBuf>,
    },
}

/// A sequence a statement names (`nextval('s')`), and the column its values go into
/// (`INSERT INTO t (id) VALUES (nextval('s'))`) when the statement shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedSequence {
    pub name: crate::catalog::TableName,
    /// (table, column) it feeds.
    pub feeds: Option<(crate::catalog::TableName, String)>,
}

/// How to capture.
#[derive(Debug, Clone)]
pub struct SchemaOptions {
    /// Rows written per table: `reltuples × scale` (at least the rows of `must_contain`).
    pub scale: f64,
    /// Replace every value the statistics hold (most-common values, strings) and every
    /// `must_contain` value with a generated one ([`crate::redact::Redactor`] keyed by
    /// `seed`, so the same value maps to the same generated one everywhere).
    pub redact: bool,
    /// Seed of the data generator (`setseed`) and the redaction key.
    pub seed: u64,
    pub must_contain: Vec<KeyRows>,
    /// Functions the statements call (an unqualified one along `search_path`): written
    /// with `pg_get_functiondef` (SQL and PL/pgSQL only).
    pub functions: Vec<TableName>,
    /// Sequences the statements draw from by name (`nextval('s')`, not a column default):
    /// created on the twin, and moved past the column they feed when known.
    pub sequences: Vec<NamedSequence>,
    /// Schemas an unqualified table or function name is looked up in, in order (the
    /// user's `search_path`).
    pub search_path: Vec<String>,
    pub dump: DumpSource,
    /// Where each source schema's objects go on the twin: `(schema, None)` written
    /// unqualified (they land in the setup session's current schema: a scenario's own),
    /// `(schema, Some(t))` into schema `t`; a schema not listed keeps its name.
    pub place: Vec<(String, Option<String>)>,
    /// The longest `pg_dump` may run.
    pub dump_timeout: Duration,
    /// Rows per `INSERT` statement of `data_sql`.
    pub chunk_rows: u64,
}

impl Default for SchemaOptions {
    fn default() -> SchemaOptions {
        SchemaOptions {
            scale: 1.0,
            redact: false,
            seed: 1,
            must_contain: Vec::new(),
            functions: Vec::new(),
            sequences: Vec::new(),
            search_path: vec!["public".into()],
            dump: DumpSource::Catalogs,
            place: Vec::new(),
            dump_timeout: Duration::from_secs(60),
            chunk_rows: 1_000_000,
        }
    }
}
