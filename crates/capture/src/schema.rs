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

use hotbench_wire::Connection;
use serde::{Deserialize, Serialize};

pub use crate::catalog::TableName;
use crate::catalog::{self, make_safe};
use crate::model::Model;
pub use crate::profile::{ColumnProfile, ColumnStats, TableProfile};
pub use crate::schema_error::SchemaError;
pub use crate::schema_options::{DumpSource, KeyRows, NamedSequence, SchemaOptions};
use crate::sqlnames::{self, Placement};
use crate::{catalog_seq, catalog_sig, catalog_types};
use crate::{datagen, pgdump, profile, schema_sql, sqltext};

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
    /// The touched tables' trigger functions (SQL and PL/pgSQL, `pg_get_functiondef`),
    /// not in `schema_sql` (the twin runs without triggers): what they run is no client's.
    pub trigger_sql: String,
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
        trigger_sql: model.trigger_functions.join(";\n"),
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
        let (cons, backing) = catalog::constraints(conn, &mut rels, &mut model)?;
        let idx = catalog::indexes(conn, &mut rels, &backing, &mut model)?;
        drop_locked(&mut rels, &mut model);
        catalog_types::types(conn, &mut rels, &mut model)?;
        let named =
            catalog_seq::resolve(conn, &opts.sequences, &opts.search_path, &rels, &mut model)?;
        catalog_types::sequences(conn, &rels, &defaults, &named, &mut model)?;
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
    let written = catalog_types::functions(
        conn,
        &opts.functions,
        &opts.search_path,
        &used_by,
        &mut model,
    )?;
    let rel_oids: Vec<u32> = rels.iter().map(|r| r.oid).collect();
    catalog_sig::signature_types(conn, &written, &rel_oids, &mut model)?;
    model.relations = rels;
    let mut profiles = Vec::new();
    for k in 0..model.relations.len() {
        let rel = model.relations[k].clone();
        profiles.push(profile::read(conn, &rel, &mut model)?);
    }
    Ok((model, profiles))
}

/// Leaves out the relations another session held locked while they were read (each named).
fn drop_locked(rels: &mut Vec<crate::model::Relation>, model: &mut Model) {
    if model.locked.is_empty() {
        return;
    }
    for r in rels.iter().filter(|r| model.locked.contains(&r.oid)) {
        model.unreproducible.push(format!(
            "table {}: another session holds a lock on it (DDL in flight?); not waited for, \
             so it is left out",
            r.display()
        ));
    }
    let named: Vec<u32> = rels.iter().map(|r| r.oid).collect();
    for oid in model.locked.iter().filter(|o| !named.contains(o)) {
        model.unreproducible.push(format!(
            "a related table (oid {oid}): another session holds a lock on it (DDL in flight?); \
             not waited for, so it is left out"
        ));
    }
    let locked = model.locked.clone();
    rels.retain(|r| !locked.contains(&r.oid));
    model.catalogs_only = Some("a table was locked by another session".into());
}
