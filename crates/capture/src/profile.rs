//! What the capture learned of each touched table's data, from `pg_class.reltuples` and
//! `pg_stats` (null fraction, distinct values, most-common values with their frequencies,
//! histogram bounds): the profile the data generator follows, and part of `capture.json`.
//! Statistics are read only for columns whose values the server's own output functions
//! print (see [`crate::model::Column::readable`]).

use hotbench_wire::Connection;
use serde::{Deserialize, Serialize};

use crate::catalog::{cell, query_or_note};
use crate::model::{Model, RelKind, Relation, ValueKind};
use crate::schema_error::SchemaError;
use crate::sqltext::{array_text, parse_array};

/// One column's `pg_stats` row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ColumnStats {
    pub null_frac: f64,
    /// As `pg_stats` says: > 0 a count, < 0 minus a fraction of the rows.
    pub n_distinct: f64,
    /// Most-common values (as text) and the fraction of all rows holding each.
    pub mcv: Vec<(String, f64)>,
    /// Histogram bounds (as text): equal-frequency buckets of the values not in `mcv`.
    pub histogram: Vec<String>,
    pub correlation: Option<f64>,
}

impl ColumnStats {
    /// Distinct non-null values expected in `rows` rows.
    pub fn distinct_in(&self, rows: f64) -> f64 {
        let d = if self.n_distinct >= 0.0 {
            self.n_distinct
        } else {
            -self.n_distinct * rows
        };
        d.clamp(1.0, rows.max(1.0))
    }
}

/// One column of a [`TableProfile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnProfile {
    pub name: String,
    /// The type as `format_type` writes it.
    #[serde(rename = "type")]
    pub type_sql: String,
    pub kind: ValueKind,
    pub not_null: bool,
    /// `None` when `pg_stats` has no row for it (never analyzed, no privilege, or a type
    /// whose values would be printed by its owner's code).
    pub stats: Option<ColumnStats>,
}

/// One touched table as the data generator sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableProfile {
    pub schema: String,
    pub name: String,
    pub kind: RelKind,
    /// The partitioned table it is a partition of (`schema.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<String>,
    /// `pg_class.reltuples` (-1: never vacuumed or analyzed).
    pub reltuples: f64,
    /// Rows the data generator writes (reltuples × scale, at least the rows it must contain).
    pub rows: u64,
    pub columns: Vec<ColumnProfile>,
}

const STATS_SQL: &str = "select attname::text, null_frac::float8, n_distinct::float8, \
      case when attname = any($4::text[]) then most_common_vals::text end, \
      most_common_freqs::text, \
      case when attname = any($4::text[]) then histogram_bounds::text end, \
      correlation::float8 \
    from pg_catalog.pg_stats where schemaname = $1 and tablename = $2 and inherited = $3::bool";

/// The profile of `rel` (rows not yet decided: 0), with `pg_stats` of its readable
/// columns; a column without statistics is named in `model.unreproducible`.
pub fn read(
    conn: &mut Connection,
    rel: &Relation,
    model: &mut Model,
) -> Result<TableProfile, SchemaError> {
    let mut profile = TableProfile {
        schema: rel.schema.clone(),
        name: rel.name.clone(),
        kind: rel.kind,
        partition_of: rel
            .partition_of
            .as_ref()
            .and_then(|(p, _)| model.relation(*p))
            .map(Relation::display),
        reltuples: rel.reltuples,
        rows: 0,
        columns: rel
            .columns
            .iter()
            .map(|c| ColumnProfile {
                name: c.name.clone(),
                type_sql: c.type_sql.clone(),
                kind: c.kind.clone(),
                not_null: c.not_null,
                stats: None,
            })
            .collect(),
    };
    if rel.kind == RelKind::View {
        return Ok(profile);
    }
    let readable: Vec<Option<String>> = rel
        .columns
        .iter()
        .filter(|c| c.readable)
        .map(|c| Some(c.name.clone()))
        .collect();
    let inherited = if rel.kind == RelKind::Partitioned {
        "t"
    } else {
        "f"
    };
    let arr = array_text(&readable);
    let r = query_or_note(
        conn,
        model,
        &format!("statistics of {}", rel.display()),
        STATS_SQL,
        &[
            Some(&rel.schema),
            Some(&rel.name),
            Some(inherited),
            Some(&arr),
        ],
    )?;
    for row in 0..r.rows.len() {
        let name = cell(&r, row, 0).unwrap_or_default();
        let Some(col) = profile.columns.iter_mut().find(|c| c.name == name) else {
            continue;
        };
        let num = |k: usize| r.get(row, k).and_then(|v| v.parse::<f64>().ok());
        let vals = r.get(row, 3).and_then(parse_array).unwrap_or_default();
        let freqs: Vec<f64> = r
            .get(row, 4)
            .and_then(parse_array)
            .unwrap_or_default()
            .into_iter()
            .map(|f| f.and_then(|f| f.parse().ok()).unwrap_or(0.0))
            .collect();
        let mcv = vals
            .into_iter()
            .zip(freqs)
            .filter_map(|(v, f)| v.map(|v| (v, f)))
            .collect();
        col.stats = Some(ColumnStats {
            null_frac: num(1).unwrap_or(0.0).clamp(0.0, 1.0),
            n_distinct: num(2).unwrap_or(0.0),
            mcv,
            histogram: r
                .get(row, 5)
                .and_then(parse_array)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect(),
            correlation: num(6),
        });
    }
    if rel.kind == RelKind::Table {
        for (c, p) in rel.columns.iter().zip(&profile.columns) {
            if p.stats.is_some() || c.generated.is_some() {
                continue;
            }
            let why = if c.readable {
                "no pg_stats row (ANALYZE never ran, or no privilege to read the column)"
            } else {
                "its type's values are printed by code its owner wrote, so they are not read"
            };
            model.unreproducible.push(format!(
                "table {} column {:?}: {why}; its values are made up from its type",
                rel.display(),
                c.name
            ));
        }
    }
    Ok(profile)
}
