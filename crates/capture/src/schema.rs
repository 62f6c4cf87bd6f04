//! The schema and data half of a capture: the tables a workload touches (and the parents
//! their foreign keys reference, their partitions, the types, sequences and functions they
//! use) read from a user's server as safely as `diagnose` reads it, written out as
//! `schema_sql` (from `pg_dump --schema-only` when a pg_dump as new as the server is at
//! hand, else from the catalogs) and `data_sql`, a pure-SQL generator that fills each table
//! to its captured size with values following `pg_stats`.
//!
//! ```no_run
//! use hotbench_capture::schema::{capture_schema, SchemaOptions, TableName};
//! # let mut conn: hotbench_wire::Connection = unimplemented!();
//! let tables = [TableName::new(None, "accounts")];
//! let cap = capture_schema(&mut conn, &tables, &SchemaOptions::default()).expect("captured");
//! std::fs::write("schema.sql", &cap.schema_sql).unwrap();
//! std::fs::write("data.sql", &cap.data_sql).unwrap();
//! for why in &cap.unreproducible { eprintln!("not reproduced: {why}"); }
//! ```

use std::path::PathBuf;
use std::time::Duration;

use hotbench_wire::{ConnectParams, Connection};
use serde::{Deserialize, Serialize};

pub use crate::catalog::TableName;
use crate::catalog::{self, make_safe};
use crate::catalog_types;
use crate::model::Model;
pub use crate::profile::{ColumnProfile, ColumnStats, TableProfile};
use crate::sqlnames::{self, Placement};
use crate::{datagen, pgdump, profile, schema_sql, sqltext};

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
    /// Functions the statements call (`name` or `schema.name`): written with
    /// `pg_get_functiondef` (SQL and PL/pgSQL only).
    pub functions: Vec<String>,
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
            search_path: vec!["public".into()],
            dump: DumpSource::Catalogs,
            place: Vec::new(),
            dump_timeout: Duration::from_secs(60),
            chunk_rows: 1_000_000,
        }
    }
}

/// Which way `schema_sql` was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum SchemaSource {
    /// `pg_dump --schema-only` (its `--version` line), with types, functions and schemas
    /// from the catalogs around it.
    PgDump { version: String },
    /// Built from the catalogs (why not pg_dump, when it was asked for).
    Catalogs { why: Option<String> },
}

/// What [`capture_schema`] produced.
#[derive(Debug, Clone)]
pub struct SchemaCapture {
    /// Creates the touched schema on an empty database.
    pub schema_sql: String,
    /// Fills it (pure SQL, runs on any server); ends with `ANALYZE` of each table.
    pub data_sql: String,
    pub source: SchemaSource,
    pub tables: Vec<TableProfile>,
    /// Each thing that could not be reproduced, and why.
    pub unreproducible: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The session could not be made read-only and bounded; nothing was read.
    #[error("refusing to read the schema: {0}")]
    Unsafe(String),
    /// A catalog read failed (the connection went away, or an unexpected server error).
    #[error("{what}: {source}")]
    Query {
        what: String,
        #[source]
        source: hotbench_wire::Error,
    },
}

/// Reads the schema and statistics of `tables` (and what they need) from `conn`, made
/// diagnose's safe session first, in one read-only snapshot, and writes `schema_sql` and
/// `data_sql`. A table not found, a type, trigger or policy that cannot be reproduced, a
/// column without statistics: each is named in `unreproducible`, never an error.
pub fn capture_schema(
    conn: &mut Connection,
    tables: &[TableName],
    opts: &SchemaOptions,
) -> Result<SchemaCapture, SchemaError> {
    make_safe(conn)?;
    let began = catalog::begin_snapshot(conn)?;
    let read = read_model(conn, tables, opts);
    if began {
        catalog::end_snapshot(conn);
    }
    let (mut model, mut profiles) = read?;
    let placement: Placement = opts.place.iter().cloned().collect();
    model.schemas = model
        .schemas
        .iter()
        .filter_map(|s| match placement.get(s) {
            Some(None) => None,
            Some(Some(t)) => Some(t.clone()),
            None => Some(s.clone()),
        })
        .fold(Vec::new(), |mut v, s| {
            if !v.contains(&s) && s != "public" {
                v.push(s);
            }
            v
        });
    let (mut schema_sql, source) = match &opts.dump {
        DumpSource::Catalogs => (
            schema_sql::write(&model),
            SchemaSource::Catalogs { why: None },
        ),
        DumpSource::PgDump { params, bin_dir } => {
            match pgdump::dump(&model, params, bin_dir.as_deref(), opts.dump_timeout) {
                Ok((sql, version)) => (sql, SchemaSource::PgDump { version }),
                Err(why) => (
                    schema_sql::write(&model),
                    SchemaSource::Catalogs { why: Some(why) },
                ),
            }
        }
    };
    let data = datagen::write(&model, &mut profiles, opts);
    model.unreproducible.extend(data.notes);
    schema_sql = sqltext::guard_braces(&sqlnames::place(&schema_sql, &placement));
    let data_sql = sqltext::guard_braces(&sqlnames::place(&data.sql, &placement));
    Ok(SchemaCapture {
        schema_sql,
        data_sql,
        source,
        tables: profiles,
        unreproducible: model.unreproducible,
    })
}

/// Every catalog read, in the snapshot.
fn read_model(
    conn: &mut Connection,
    tables: &[TableName],
    opts: &SchemaOptions,
) -> Result<(Model, Vec<TableProfile>), SchemaError> {
    let mut model = Model {
        server_version_num: conn.server_version_num(),
        ..Model::default()
    };
    let named = catalog::resolve(conn, tables, &opts.search_path, &mut model)?;
    let oids = catalog::closure(conn, &named, &mut model)?;
    let mut rels = if oids.is_empty() {
        Vec::new()
    } else {
        catalog::relations(conn, &oids, &mut model)?
    };
    let mut used_by: Vec<(u32, u32)> = Vec::new();
    if !rels.is_empty() {
        let defaults = catalog::columns(conn, &mut rels, &mut model)?;
        let (cons, backing) = catalog::constraints(conn, &mut rels)?;
        let idx = catalog::indexes(conn, &mut rels, &backing)?;
        catalog_types::types(conn, &mut rels, &mut model)?;
        catalog_types::sequences(conn, &rels, &defaults, &mut model)?;
        catalog_types::extras(conn, &rels, &mut model)?;
        used_by.extend(defaults.iter().map(|o| (catalog_types::PG_ATTRDEF, *o)));
        used_by.extend(cons.iter().map(|o| (catalog_types::PG_CONSTRAINT, *o)));
        used_by.extend(idx.iter().map(|o| (catalog_types::PG_CLASS, *o)));
    }
    for r in &rels {
        if r.schema != "public" && !model.schemas.contains(&r.schema) {
            model.schemas.push(r.schema.clone());
        }
    }
    catalog_types::functions(
        conn,
        &opts.functions,
        &opts.search_path,
        &used_by,
        &mut model,
    )?;
    model.relations = rels;
    let mut profiles = Vec::new();
    for k in 0..model.relations.len() {
        let rel = model.relations[k].clone();
        profiles.push(profile::read(conn, &rel, &mut model)?);
    }
    Ok((model, profiles))
}
