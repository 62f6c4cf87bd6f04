//! Reading the touched part of a user's catalog, as safely as `diagnose` samples: the
//! session is diagnose's (read-only transaction, statement and lock timeouts,
//! `search_path = pg_catalog`, `row_security = off`), every read is one snapshot, and every
//! query looks up only the touched relations by OID (or name) through the catalogs' own
//! indexes, so its cost does not grow with the number of tables in the database. Nothing
//! here calls code a user could define: only catalog functions (`format_type`,
//! `pg_get_expr`, `pg_get_constraintdef`, `pg_get_indexdef`, …) and built-in output
//! functions on catalog columns.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_wire::{Connection, QueryResult, SqlState, TxStatus};

use crate::model::{Column, Constraint, Index, Model, RelKind, Relation, ValueKind};
use crate::schema_error::SchemaError;
use crate::sqltext::{array_text, parse_array};

/// A relation as a statement names it: `schema` is `None` for an unqualified name, looked
/// up along the search path given in the options.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct TableName {
    pub schema: Option<String>,
    pub name: String,
}

impl TableName {
    pub fn new(schema: Option<&str>, name: &str) -> TableName {
        TableName {
            schema: schema.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// The name a statement wrote (`"S".t`, `t`, `db.s.t`), read as the server reads it;
    /// `None` for no name.
    pub fn from_written(written: &str) -> Option<TableName> {
        let mut parts = hotbench_diagnose::shape::name_parts(written);
        let name = parts.pop().filter(|n| !n.is_empty())?;
        let schema = parts.pop().filter(|s| !s.is_empty());
        Some(TableName { schema, name })
    }

    /// `schema.name` (or `name`) as people read it.
    pub fn display(&self) -> String {
        match &self.schema {
            Some(s) => format!("{s}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The most relations a capture follows (named ones, the parents their foreign keys
/// reference, partitions): past it the rest is named in `unreproducible`.
pub const MAX_RELATIONS: usize = 2000;

/// How values are printed to the capture (session settings, no writes).
pub const OUTPUT_SETTINGS: [&str; 4] = [
    "set datestyle = 'ISO, YMD'",
    "set intervalstyle = 'postgres'",
    "set extra_float_digits = 3",
    "set bytea_output = 'hex'",
];

/// Makes `conn` diagnose's safe session (read-only by default, bounded statements and lock
/// waits, `search_path = pg_catalog`, `row_security = off`) and checks that it is
/// read-only; refuses to go on otherwise.
pub fn make_safe(conn: &mut Connection) -> Result<(), SchemaError> {
    for sql in hotbench_diagnose::session::settings() {
        conn.simple_query(&sql).map_err(|e| {
            if e.is_connection_lost() {
                SchemaError::Query {
                    what: "setting up the session".into(),
                    source: e,
                }
            } else {
                SchemaError::Unsafe(format!("\"{sql}\" failed: {e}"))
            }
        })?;
    }
    // Values print the same whatever the server's defaults: ISO dates, every float digit,
    // hex bytea (what the data generator and the redactor read, and the twin parses).
    for sql in OUTPUT_SETTINGS {
        query(conn, "setting the output formats", sql, &[])?;
    }
    let r = query(
        conn,
        "checking the session",
        "select current_setting('transaction_read_only')",
        &[],
    )?;
    if r.get(0, 0) != Some("on") {
        return Err(SchemaError::Unsafe(
            "the session could not be made read-only".into(),
        ));
    }
    Ok(())
}

/// Runs one catalog query (extended protocol when it has parameters).
pub fn query(
    conn: &mut Connection,
    what: &str,
    sql: &str,
    params: &[Option<&str>],
) -> Result<QueryResult, SchemaError> {
    let r = if params.is_empty() {
        conn.simple_query(sql)
            .map(|mut v| v.pop().unwrap_or_default())
    } else {
        conn.query_params(sql, params)
    };
    r.map_err(|e| SchemaError::Query {
        what: what.to_string(),
        source: e,
    })
}

/// As [`query`], but a missing privilege, view or function, a timeout, or a lock another
/// session holds (`lock_timeout`) is a note in `model.unreproducible` and no rows, rather
/// than an error; inside the snapshot the query runs under a savepoint, so a failed one
/// leaves the snapshot usable.
pub fn query_or_note(
    conn: &mut Connection,
    model: &mut Model,
    what: &str,
    sql: &str,
    params: &[Option<&str>],
) -> Result<QueryResult, SchemaError> {
    let in_block = conn.tx_status() == TxStatus::InTransaction;
    if in_block {
        query(conn, what, "savepoint hotbench_capture", &[])?;
    }
    match query(conn, what, sql, params) {
        Ok(r) => {
            if in_block {
                query(conn, what, "release savepoint hotbench_capture", &[])?;
            }
            Ok(r)
        }
        Err(SchemaError::Query { source, .. })
            if !source.is_connection_lost()
                && source.sqlstate().is_some_and(|c| {
                    c == SqlState::INSUFFICIENT_PRIVILEGE
                        || c == SqlState::QUERY_CANCELED
                        || c == SqlState::LOCK_NOT_AVAILABLE
                        || c.is_undefined_object()
                        || c == SqlState::FEATURE_NOT_SUPPORTED
                }) =>
        {
            if in_block {
                query(conn, what, "rollback to savepoint hotbench_capture", &[])?;
            }
            let why = match source.sqlstate() {
                Some(SqlState::LOCK_NOT_AVAILABLE) => {
                    "another session holds a lock on it (DDL in flight?); not waited for"
                        .to_string()
                }
                _ => source
                    .db_error()
                    .map(|d| d.message.clone())
                    .unwrap_or_else(|| source.to_string()),
            };
            model
                .unreproducible
                .push(format!("{what}: could not be read ({why})"));
            Ok(QueryResult::default())
        }
        Err(e) => Err(e),
    }
}

/// Runs `sql` (its `$1` the `oid[]` of `oids`) for all of them at once; when another
/// session holds a lock one of them needs (the server locks a relation to deparse some of
/// its parts), runs it per relation instead, and the relations it could not read (not waited
/// for) go to `model.locked`.
pub fn per_relation(
    conn: &mut Connection,
    model: &mut Model,
    what: &str,
    sql: &str,
    oids: &[u32],
) -> Result<QueryResult, SchemaError> {
    let arr = oid_array(oids.iter().copied());
    if conn.tx_status() != TxStatus::InTransaction {
        return query(conn, what, sql, &[Some(&arr)]);
    }
    let locked = |e: &SchemaError| {
        matches!(e, SchemaError::Query { source, .. }
            if source.sqlstate() == Some(SqlState::LOCK_NOT_AVAILABLE))
    };
    query(conn, what, "savepoint hotbench_capture", &[])?;
    match query(conn, what, sql, &[Some(&arr)]) {
        Ok(r) => {
            query(conn, what, "release savepoint hotbench_capture", &[])?;
            Ok(r)
        }
        Err(e) if locked(&e) => {
            query(conn, what, "rollback to savepoint hotbench_capture", &[])?;
            let mut all = QueryResult::default();
            for oid in oids {
                query(conn, what, "savepoint hotbench_capture", &[])?;
                let one = oid_array([*oid]);
                match query(conn, what, sql, &[Some(&one)]) {
                    Ok(r) => {
                        query(conn, what, "release savepoint hotbench_capture", &[])?;
                        all.columns = r.columns;
                        all.rows.extend(r.rows);
                    }
                    Err(e) if locked(&e) => {
                        query(conn, what, "rollback to savepoint hotbench_capture", &[])?;
                        model.locked.insert(*oid);
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(all)
        }
        Err(e) => Err(e),
    }
}

/// Cell `col` of `row` as text.
pub fn cell(r: &QueryResult, row: usize, col: usize) -> Option<String> {
    r.get(row, col).map(str::to_string)
}

pub fn cell_u32(r: &QueryResult, row: usize, col: usize) -> u32 {
    r.get(row, col)
        .and_then(|v| v.parse::<i64>().ok())
        .map_or(0, |v| v as u32)
}

pub fn cell_bool(r: &QueryResult, row: usize, col: usize) -> bool {
    r.get(row, col) == Some("t")
}

/// An `oid[]` parameter.
pub fn oid_array(oids: impl IntoIterator<Item = u32>) -> String {
    let items: Vec<String> = oids.into_iter().map(|o| o.to_string()).collect();
    format!("{{{}}}", items.join(","))
}

/// An `int2[]` as PostgreSQL prints it (`{1,2}`), parsed.
pub fn int2_array(text: Option<&str>) -> Vec<i16> {
    text.and_then(parse_array)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.and_then(|v| v.parse().ok()))
        .collect()
}

const LOOKUP_SQL: &str = "select u.i::int8, c.oid::int8 \
    from unnest($1::text[], $2::text[]) with ordinality as u(s, r, i) \
    join pg_catalog.pg_namespace n on n.nspname = u.s \
    join pg_catalog.pg_class c on c.relnamespace = n.oid and c.relname = u.r \
    where c.relkind::text = any($3::text[])";

/// The OID of each of `names` among the relations whose `relkind` is one of `kinds` (an
/// unqualified name along `search_path`, first match), by the name's index; a name not found
/// is absent. `what` names the lookup in an error.
pub fn lookup(
    conn: &mut Connection,
    names: &[&TableName],
    search_path: &[String],
    kinds: &[&str],
    what: &str,
) -> Result<BTreeMap<usize, u32>, SchemaError> {
    let (mut schemas, mut rels, mut owner) = (Vec::new(), Vec::new(), Vec::new());
    for (k, n) in names.iter().enumerate() {
        let candidates: Vec<String> = match &n.schema {
            Some(s) => vec![s.clone()],
            None => search_path.to_vec(),
        };
        for s in candidates {
            schemas.push(Some(s));
            rels.push(Some(n.name.clone()));
            owner.push(k);
        }
    }
    let kinds: Vec<Option<String>> = kinds.iter().map(|k| Some(k.to_string())).collect();
    let (a, b, c) = (array_text(&schemas), array_text(&rels), array_text(&kinds));
    let r = query(conn, what, LOOKUP_SQL, &[Some(&a), Some(&b), Some(&c)])?;
    let mut found: BTreeMap<usize, (usize, u32)> = BTreeMap::new();
    for row in 0..r.rows.len() {
        let Some(cand) = (cell_u32(&r, row, 0) as usize).checked_sub(1) else {
            continue;
        };
        let oid = cell_u32(&r, row, 1);
        let Some(&k) = owner.get(cand) else { continue };
        let e = found.entry(k).or_insert((cand, oid));
        if cand < e.0 {
            *e = (cand, oid);
        }
    }
    Ok(found.into_iter().map(|(k, (_, oid))| (k, oid)).collect())
}

/// The OIDs of `names` (an unqualified one along `search_path`, first match); a name not
/// found is a note.
pub fn resolve(
    conn: &mut Connection,
    names: &[TableName],
    search_path: &[String],
    model: &mut Model,
) -> Result<Vec<u32>, SchemaError> {
    let refs: Vec<&TableName> = names.iter().collect();
    let found = lookup(
        conn,
        &refs,
        search_path,
        &["r", "p", "v", "m", "f"],
        "looking up the tables",
    )?;
    let mut oids = Vec::new();
    for (k, n) in names.iter().enumerate() {
        match found.get(&k) {
            Some(&oid) => {
                if !oids.contains(&oid) {
                    oids.push(oid)
                }
            }
            None => model.unreproducible.push(format!(
                "table {}: not found (a temporary table, a CTE, or no privilege to see it)",
                n.display()
            )),
        }
    }
    Ok(oids)
}

const RELATED_SQL: &str = "select confrelid::int8 from pg_catalog.pg_constraint \
      where conrelid = any($1::oid[]) and contype = 'f' \
    union select h.inhrelid::int8 from pg_catalog.pg_inherits h \
      join pg_catalog.pg_class c on c.oid = h.inhrelid \
      where h.inhparent = any($1::oid[]) and c.relispartition \
    union select h.inhparent::int8 from pg_catalog.pg_inherits h \
      join pg_catalog.pg_class c on c.oid = h.inhrelid \
      where h.inhrelid = any($1::oid[]) and c.relispartition \
    union select d.refobjid::int8 from pg_catalog.pg_rewrite w \
      join pg_catalog.pg_depend d on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass \
        and d.objid = w.oid \
      join pg_catalog.pg_class c on c.oid = d.refobjid \
      where w.ev_class = any($1::oid[]) and w.rulename = '_RETURN' \
        and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass \
        and d.refobjid <> w.ev_class and c.relkind in ('r', 'p', 'v', 'm')";

/// `start` and what it needs, to a fixpoint: the parents its foreign keys reference, the
/// partitions of a partitioned table and the parent of a partition, a view's relations.
pub fn closure(
    conn: &mut Connection,
    start: &[u32],
    model: &mut Model,
) -> Result<Vec<u32>, SchemaError> {
    let mut all: Vec<u32> = start.to_vec();
    let mut seen: BTreeSet<u32> = start.iter().copied().collect();
    let mut frontier: Vec<u32> = start.to_vec();
    while !frontier.is_empty() {
        let arr = oid_array(frontier.iter().copied());
        let r = query(
            conn,
            "following foreign keys and partitions",
            RELATED_SQL,
            &[Some(&arr)],
        )?;
        frontier.clear();
        for row in 0..r.rows.len() {
            let oid = cell_u32(&r, row, 0);
            if oid != 0 && seen.insert(oid) {
                if all.len() >= MAX_RELATIONS {
                    model.unreproducible.push(format!(
                        "more than {MAX_RELATIONS} related tables: the rest are left out"
                    ));
                    return Ok(all);
                }
                all.push(oid);
                frontier.push(oid);
            }
        }
    }
    Ok(all)
}

fn relations_sql(version: u32) -> String {
    let partdef = if version >= 100000 {
        "case when c.relkind = 'p' then pg_catalog.pg_get_partkeydef(c.oid) end, \
         case when c.relispartition then (select h.inhparent::int8 from pg_catalog.pg_inherits h \
           where h.inhrelid = c.oid) end, \
         case when c.relispartition then pg_catalog.pg_get_expr(c.relpartbound, c.oid) end, \
         null::text"
    } else {
        "null::text, null::int8, null::text, null::text"
    };
    format!(
        "select c.oid::int8, n.nspname::text, c.relname::text, c.relkind::text, \
           c.reltuples::float8, c.relpersistence::text, {partdef}, c.reloptions::text, \
           null::text, \
           pg_catalog.pg_stat_get_live_tuples(c.oid)::float8, \
           pg_catalog.pg_stat_get_last_analyze_time(c.oid) is not null \
             or pg_catalog.pg_stat_get_last_autoanalyze_time(c.oid) is not null, \
           c.relrowsecurity, \
           exists(select 1 from pg_catalog.pg_inherits h where h.inhrelid = c.oid) \
             and not c.relispartition, \
           (pg_catalog.pg_stat_get_tuples_inserted(c.oid) \
             - pg_catalog.pg_stat_get_tuples_deleted(c.oid))::float8 \
         from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace \
         where c.oid = any($1::oid[])"
    )
}

/// Reads the relations `oids` (names, kinds, sizes, partitioning, options).
pub fn relations(
    conn: &mut Connection,
    oids: &[u32],
    model: &mut Model,
) -> Result<Vec<Relation>, SchemaError> {
    let sql = relations_sql(model.server_version_num);
    let r = per_relation(conn, model, "reading the tables", &sql, oids)?;
    let mut out = Vec::new();
    for row in 0..r.rows.len() {
        let kind = match r.get(row, 3) {
            Some("r") | Some("f") => RelKind::Table,
            Some("p") => RelKind::Partitioned,
            Some("v") | Some("m") => RelKind::View,
            _ => RelKind::Other,
        };
        let rel = Relation {
            oid: cell_u32(&r, row, 0),
            schema: cell(&r, row, 1).unwrap_or_default(),
            name: cell(&r, row, 2).unwrap_or_default(),
            kind,
            reltuples: r.get(row, 4).and_then(|v| v.parse().ok()).unwrap_or(-1.0),
            live_tuples: r.get(row, 12).and_then(|v| v.parse().ok()),
            inserted_tuples: r.get(row, 16).and_then(|v| v.parse().ok()),
            unlogged: r.get(row, 5) == Some("u"),
            partition_key: cell(&r, row, 6),
            partition_of: r
                .get(row, 7)
                .and_then(|p| p.parse::<i64>().ok())
                .map(|p| (p as u32, cell(&r, row, 8).unwrap_or_default())),
            partition_constraint: cell(&r, row, 9),
            options: r
                .get(row, 10)
                .and_then(parse_array)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect(),
            view_def: cell(&r, row, 11),
            columns: Vec::new(),
            constraints: Vec::new(),
            indexes: Vec::new(),
        };
        let what = format!("table {}", rel.display());
        if r.get(row, 3) == Some("m") {
            model.unreproducible.push(format!(
                "{what}: a materialized view, written as a plain view over its tables"
            ));
        }
        if r.get(row, 3) == Some("f") {
            model
                .unreproducible
                .push(format!("{what}: a foreign table, written as a plain table"));
        }
        if cell_bool(&r, row, 14) {
            model.unreproducible.push(format!(
                "{what}: row-level security is enabled; its policies are not reproduced"
            ));
        }
        if cell_bool(&r, row, 15) {
            model.unreproducible.push(format!(
                "{what}: inherits from another table (not a partition); written as a plain table"
            ));
        }
        if kind == RelKind::Table && !cell_bool(&r, row, 13) && rel.reltuples < 0.0 {
            model.unreproducible.push(format!(
                "{what}: never analyzed (reltuples unknown): sized from its live tuple count \
                 (or more, as a note says) and filled without statistics"
            ));
        }
        out.push(rel);
    }
    locked_parts(conn, &mut out, model)?;
    // Parents before partitions, then as asked.
    let order: BTreeMap<u32, usize> = oids.iter().enumerate().map(|(k, o)| (*o, k)).collect();
    let depths: BTreeMap<u32, usize> = out
        .iter()
        .map(|r| (r.oid, out_parents(r.oid, &out).len()))
        .collect();
    out.sort_by_key(|r| (depths.get(&r.oid).copied(), order.get(&r.oid).copied()));
    Ok(out)
}

/// A view's definition and a partition's bound as a constraint: the server locks the
/// relation to write them, so each is read on its own (a relation another session holds
/// locked is named, not waited for).
fn locked_parts(
    conn: &mut Connection,
    rels: &mut [Relation],
    model: &mut Model,
) -> Result<(), SchemaError> {
    for rel in rels.iter_mut() {
        let oid = rel.oid.to_string();
        if rel.kind == RelKind::View {
            let r = query_or_note(
                conn,
                model,
                &format!("view {}", rel.display()),
                "select pg_catalog.pg_get_viewdef($1::oid)",
                &[Some(&oid)],
            )?;
            rel.view_def = cell(&r, 0, 0);
        }
        if rel.partition_of.is_some() {
            let r = query_or_note(
                conn,
                model,
                &format!("partition bound of {}", rel.display()),
                "select pg_catalog.pg_get_partition_constraintdef($1::oid)",
                &[Some(&oid)],
            )?;
            rel.partition_constraint = cell(&r, 0, 0);
        }
    }
    Ok(())
}

/// The partition parents of `oid` up to its root.
fn out_parents(oid: u32, rels: &[Relation]) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut cur = oid;
    while let Some((p, _)) = rels
        .iter()
        .find(|r| r.oid == cur)
        .and_then(|r| r.partition_of.clone())
    {
        if chain.contains(&p) || chain.len() > 64 {
            break;
        }
        chain.push(p);
        cur = p;
    }
    chain
}

fn columns_sql(version: u32) -> String {
    let generated = if version >= 120000 {
        "a.attgenerated::text"
    } else {
        "''::text"
    };
    format!(
        "select a.attrelid::int8, a.attnum::int4, a.attname::text, \
           pg_catalog.format_type(a.atttypid, a.atttypmod), a.atttypid::int8, a.attnotnull, \
           a.attidentity::text, {generated}, pg_catalog.pg_get_expr(d.adbin, d.adrelid), \
           case when a.attcollation <> t.typcollation and a.attcollation <> 0 then \
             (select pg_catalog.quote_ident(cn.nspname) || '.' || pg_catalog.quote_ident(co.collname) \
                || case when cn.nspname = 'pg_catalog' then '' else ' (user)' end \
              from pg_catalog.pg_collation co join pg_catalog.pg_namespace cn on cn.oid = co.collnamespace \
              where co.oid = a.attcollation) end, \
           a.attislocal, d.oid::int8 \
         from pg_catalog.pg_attribute a \
         join pg_catalog.pg_type t on t.oid = a.atttypid \
         left join pg_catalog.pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum \
         where a.attrelid = any($1::oid[]) and a.attnum > 0 and not a.attisdropped \
         order by a.attrelid, a.attnum"
    )
}

/// Fills each relation's columns (their kinds are set later, when the types are known);
/// returns the OIDs of the column defaults (`pg_attrdef`), whose functions are followed.
pub fn columns(
    conn: &mut Connection,
    rels: &mut [Relation],
    model: &mut Model,
) -> Result<Vec<u32>, SchemaError> {
    let sql = columns_sql(model.server_version_num);
    let oids: Vec<u32> = rels.iter().map(|r| r.oid).collect();
    let r = per_relation(conn, model, "reading the columns", &sql, &oids)?;
    let mut defaults = Vec::new();
    for row in 0..r.rows.len() {
        let rel_oid = cell_u32(&r, row, 0);
        let Some(rel) = rels.iter_mut().find(|x| x.oid == rel_oid) else {
            continue;
        };
        let generated = r.get(row, 7) == Some("s");
        let default = cell(&r, row, 8);
        let mut collation = cell(&r, row, 9);
        if let Some(c) = &collation {
            if let Some(name) = c.strip_suffix(" (user)") {
                model.unreproducible.push(format!(
                    "table {}: column {:?} uses collation {name}, a user-defined one: the \
                     twin uses the type's default collation",
                    rel.display(),
                    cell(&r, row, 2).unwrap_or_default()
                ));
                collation = None;
            }
        }
        if r.get(row, 11).is_some() {
            defaults.push(cell_u32(&r, row, 11));
        }
        rel.columns.push(Column {
            num: r.get(row, 1).and_then(|v| v.parse().ok()).unwrap_or(0),
            name: cell(&r, row, 2).unwrap_or_default(),
            type_sql: cell(&r, row, 3).unwrap_or_default(),
            type_oid: cell_u32(&r, row, 4),
            kind: ValueKind::Other,
            not_null: cell_bool(&r, row, 5),
            default: if generated { None } else { default.clone() },
            identity: r.get(row, 6).and_then(|v| v.chars().next()),
            generated: if generated { default } else { None },
            collation,
            local: cell_bool(&r, row, 10),
            readable: false,
        });
    }
    Ok(defaults)
}

const CONSTRAINTS_SQL: &str = "select conrelid::int8, conname::text, contype::text, \
      pg_catalog.pg_get_constraintdef(oid), conkey::text, confrelid::int8, confkey::text, \
      conislocal, oid::int8, conindid::int8 \
    from pg_catalog.pg_constraint where conrelid = any($1::oid[]) \
    order by conrelid, contype, conname";

/// Fills each relation's constraints; returns their OIDs (whose functions are followed)
/// and the indexes that back them (not written again as indexes).
pub fn constraints(
    conn: &mut Connection,
    rels: &mut [Relation],
    model: &mut Model,
) -> Result<(Vec<u32>, BTreeSet<u32>), SchemaError> {
    let oids: Vec<u32> = rels.iter().map(|r| r.oid).collect();
    let r = per_relation(
        conn,
        model,
        "reading the constraints",
        CONSTRAINTS_SQL,
        &oids,
    )?;
    let mut oids = Vec::new();
    let mut backing = BTreeSet::new();
    for row in 0..r.rows.len() {
        let rel_oid = cell_u32(&r, row, 0);
        let Some(rel) = rels.iter_mut().find(|x| x.oid == rel_oid) else {
            continue;
        };
        let kind = r.get(row, 2).and_then(|k| k.chars().next()).unwrap_or('?');
        if kind == 'n' {
            continue; // NOT NULL (PostgreSQL 18 lists them): attnotnull says it.
        }
        oids.push(cell_u32(&r, row, 8));
        if matches!(kind, 'p' | 'u' | 'x') {
            backing.insert(cell_u32(&r, row, 9));
        }
        let confrel = cell_u32(&r, row, 5);
        rel.constraints.push(Constraint {
            name: cell(&r, row, 1).unwrap_or_default(),
            kind,
            def: cell(&r, row, 3).unwrap_or_default(),
            columns: int2_array(r.get(row, 4)),
            references: (kind == 'f').then(|| (confrel, int2_array(r.get(row, 6)))),
            inherited: !cell_bool(&r, row, 7),
        });
    }
    Ok((oids, backing))
}

const INDEXES_SQL: &str = "select i.indrelid::int8, c.relname::text, \
      pg_catalog.pg_get_indexdef(i.indexrelid), i.indexrelid::int8, \
      exists(select 1 from pg_catalog.pg_inherits h where h.inhrelid = i.indexrelid), \
      case when i.indisunique and i.indpred is null and i.indexprs is null \
        then i.indkey::text end \
    from pg_catalog.pg_index i join pg_catalog.pg_class c on c.oid = i.indexrelid \
    where i.indrelid = any($1::oid[]) order by i.indrelid, c.relname";

/// Fills each relation's indexes that back no constraint; returns all their OIDs.
pub fn indexes(
    conn: &mut Connection,
    rels: &mut [Relation],
    backing: &BTreeSet<u32>,
    model: &mut Model,
) -> Result<Vec<u32>, SchemaError> {
    let oids: Vec<u32> = rels.iter().map(|r| r.oid).collect();
    let r = per_relation(conn, model, "reading the indexes", INDEXES_SQL, &oids)?;
    let mut oids = Vec::new();
    for row in 0..r.rows.len() {
        let rel_oid = cell_u32(&r, row, 0);
        let index_oid = cell_u32(&r, row, 3);
        oids.push(index_oid);
        if backing.contains(&index_oid) {
            continue;
        }
        let Some(rel) = rels.iter_mut().find(|x| x.oid == rel_oid) else {
            continue;
        };
        rel.indexes.push(Index {
            name: cell(&r, row, 1).unwrap_or_default(),
            def: cell(&r, row, 2).unwrap_or_default(),
            inherited: cell_bool(&r, row, 4),
            unique_columns: r.get(row, 5).map(|k| {
                k.split_whitespace()
                    .filter_map(|n| n.parse().ok())
                    .collect()
            }),
        });
    }
    Ok(oids)
}

/// Begins the one read-only snapshot every read shares (when the session is not already in
/// a transaction); true when it began one (then [`end_snapshot`] ends it).
pub fn begin_snapshot(conn: &mut Connection) -> Result<bool, SchemaError> {
    if conn.tx_status() != TxStatus::Idle {
        return Ok(false);
    }
    query(
        conn,
        "beginning a read-only snapshot",
        "begin transaction isolation level repeatable read read only",
        &[],
    )?;
    Ok(true)
}

pub fn end_snapshot(conn: &mut Connection) {
    let sql = match conn.tx_status() {
        TxStatus::Failed => "rollback",
        _ => "commit",
    };
    let _ = conn.simple_query(sql);
}
