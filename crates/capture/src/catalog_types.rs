//! The rest of the touched catalog, read as [`crate::catalog`] reads relations (by OID,
//! through the catalogs' indexes, catalog functions only): the user-defined types the
//! columns use (enums, domains, composites; an extension's types as the extension), the
//! sequences their defaults draw from, the functions the statements call and those
//! defaults, checks and indexes use, and what is there but not reproduced (triggers,
//! rules, policies).

use std::collections::{BTreeMap, BTreeSet};

use hotbench_wire::Connection;

use crate::catalog::{cell, cell_bool, cell_u32, oid_array, query, query_or_note, TableName};
use crate::model::{Model, Relation, Sequence, TypeDef, ValueKind};
use crate::schema_error::SchemaError;
use crate::sqltext::{array_text, parse_array};

/// The first OID a user object can have: below it, the server's own.
pub const FIRST_NORMAL_OID: u32 = hotbench_probe::key_decode::FIRST_NORMAL_OID;

/// `pg_class`'s OID (an index's `pg_depend.classid`).
pub const PG_CLASS: u32 = 1259;
/// `pg_attrdef`'s OID (a column default's `pg_depend.classid`).
pub const PG_ATTRDEF: u32 = 2604;
/// `pg_constraint`'s OID.
pub const PG_CONSTRAINT: u32 = 2606;

const TYPES_SQL: &str = "select t.oid::int8, t.typtype::text, t.typelem::int8, \
      t.typbasetype::int8, t.typrelid::int8, pg_catalog.format_type(t.oid, null), \
      n.nspname::text, t.typnotnull, t.typdefault, \
      (select e.extname::text from pg_catalog.pg_depend d \
         join pg_catalog.pg_extension e on e.oid = d.refobjid \
       where d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass and d.objid = t.oid \
         and d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass \
         and d.deptype = 'e' limit 1), \
      case when t.typtype = 'e' then (select pg_catalog.array_agg(e.enumlabel::text \
         order by e.enumsortorder)::text from pg_catalog.pg_enum e where e.enumtypid = t.oid) end, \
      t.typlen::int4, \
      case when t.typtype = 'd' then pg_catalog.format_type(t.typbasetype, t.typtypmod) end, \
      (select c.relkind::text from pg_catalog.pg_class c where c.oid = t.typrelid) \
    from pg_catalog.pg_type t join pg_catalog.pg_namespace n on n.oid = t.typnamespace \
    where t.oid = any($1::oid[])";

const FIELDS_SQL: &str = "select a.attrelid::int8, a.attname::text, \
      pg_catalog.format_type(a.atttypid, a.atttypmod), a.atttypid::int8 \
    from pg_catalog.pg_attribute a where a.attrelid = any($1::oid[]) and a.attnum > 0 \
      and not a.attisdropped order by a.attrelid, a.attnum";

const DOMAIN_CHECKS_SQL: &str = "select contypid::int8, pg_catalog.pg_get_constraintdef(oid) \
    from pg_catalog.pg_constraint where contypid = any($1::oid[]) and contype = 'c' \
    order by contypid, conname";

/// One row of [`TYPES_SQL`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TypeRow {
    typtype: String,
    elem: u32,
    base: u32,
    relid: u32,
    name: String,
    schema: String,
    not_null: bool,
    default: Option<String>,
    extension: Option<String>,
    labels: Vec<String>,
    typlen: i32,
    base_sql: String,
    fields: Vec<(String, String, u32)>,
    checks: Vec<String>,
    /// A composite's relation kind: `c` a standalone composite type, else a table's (or
    /// view's) row type, which the relation itself creates.
    relkind: Option<String>,
}

impl TypeRow {
    fn is_array(&self) -> bool {
        self.elem != 0 && self.typlen == -1
    }

    /// A table's (or view's) row type: created by its relation, not by `CREATE TYPE`.
    fn is_rowtype(&self) -> bool {
        self.typtype == "c" && self.relkind.as_deref().is_some_and(|k| k != "c")
    }
}

/// The relation whose row type `oid` is, or is an array or domain of.
pub(crate) fn rowtype_relation(
    rows: &BTreeMap<u32, TypeRow>,
    oid: u32,
    depth: usize,
) -> Option<u32> {
    let t = rows.get(&oid)?;
    if depth > 16 {
        return None;
    }
    if t.is_rowtype() {
        return Some(t.relid);
    }
    [t.elem, t.base]
        .into_iter()
        .filter(|d| *d != 0)
        .find_map(|d| rowtype_relation(rows, d, depth + 1))
}

/// Reads every type the columns use (and the types those use), sets each column's
/// [`ValueKind`] and whether its values are readable, and records the types to create.
pub fn types(
    conn: &mut Connection,
    rels: &mut [Relation],
    model: &mut Model,
) -> Result<(), SchemaError> {
    let mut rows: BTreeMap<u32, TypeRow> = BTreeMap::new();
    let want: BTreeSet<u32> = rels
        .iter()
        .flat_map(|r| r.columns.iter().map(|c| c.type_oid))
        .collect();
    read_rows(conn, want, &mut rows)?;
    for rel in rels.iter_mut() {
        for c in &mut rel.columns {
            c.kind = kind_of(&rows, c.type_oid, 0);
            c.readable = readable(&rows, c.type_oid, 0);
        }
    }
    record_types(&rows, rels, model);
    Ok(())
}

/// Reads the types `want` names into `rows`, and those they are built on (elements,
/// bases, fields), with each domain's checks.
pub(crate) fn read_rows(
    conn: &mut Connection,
    mut want: BTreeSet<u32>,
    rows: &mut BTreeMap<u32, TypeRow>,
) -> Result<(), SchemaError> {
    while !want.is_empty() {
        let batch: Vec<u32> = want
            .iter()
            .copied()
            .filter(|o| !rows.contains_key(o))
            .collect();
        want.clear();
        if batch.is_empty() {
            break;
        }
        let arr = oid_array(batch.iter().copied());
        let r = query(conn, "reading the column types", TYPES_SQL, &[Some(&arr)])?;
        let mut composites = Vec::new();
        for row in 0..r.rows.len() {
            let t = TypeRow {
                typtype: cell(&r, row, 1).unwrap_or_default(),
                elem: cell_u32(&r, row, 2),
                base: cell_u32(&r, row, 3),
                relid: cell_u32(&r, row, 4),
                name: cell(&r, row, 5).unwrap_or_default(),
                schema: cell(&r, row, 6).unwrap_or_default(),
                not_null: cell_bool(&r, row, 7),
                default: cell(&r, row, 8),
                extension: cell(&r, row, 9),
                labels: r
                    .get(row, 10)
                    .and_then(parse_array)
                    .unwrap_or_default()
                    .into_iter()
                    .flatten()
                    .collect(),
                typlen: r.get(row, 11).and_then(|v| v.parse().ok()).unwrap_or(0),
                base_sql: cell(&r, row, 12).unwrap_or_default(),
                fields: Vec::new(),
                checks: Vec::new(),
                relkind: cell(&r, row, 13),
            };
            let oid = cell_u32(&r, row, 0);
            for dep in [t.elem, t.base] {
                if dep != 0 && !rows.contains_key(&dep) {
                    want.insert(dep);
                }
            }
            if t.typtype == "c" && t.relid != 0 && !t.is_rowtype() {
                composites.push((oid, t.relid));
            }
            rows.insert(oid, t);
        }
        if !composites.is_empty() {
            let arr = oid_array(composites.iter().map(|c| c.1));
            let f = query(conn, "reading composite types", FIELDS_SQL, &[Some(&arr)])?;
            for row in 0..f.rows.len() {
                let relid = cell_u32(&f, row, 0);
                let Some(&(oid, _)) = composites.iter().find(|c| c.1 == relid) else {
                    continue;
                };
                let ftype = cell_u32(&f, row, 3);
                if !rows.contains_key(&ftype) {
                    want.insert(ftype);
                }
                if let Some(t) = rows.get_mut(&oid) {
                    t.fields.push((
                        cell(&f, row, 1).unwrap_or_default(),
                        cell(&f, row, 2).unwrap_or_default(),
                        ftype,
                    ));
                }
            }
        }
    }
    let domains: Vec<u32> = rows
        .iter()
        .filter(|(_, t)| t.typtype == "d" && t.checks.is_empty())
        .map(|(o, _)| *o)
        .collect();
    if !domains.is_empty() {
        let arr = oid_array(domains.iter().copied());
        let r = query(
            conn,
            "reading domain checks",
            DOMAIN_CHECKS_SQL,
            &[Some(&arr)],
        )?;
        for row in 0..r.rows.len() {
            if let Some(t) = rows.get_mut(&cell_u32(&r, row, 0)) {
                t.checks.push(cell(&r, row, 1).unwrap_or_default());
            }
        }
    }
    Ok(())
}

/// The [`ValueKind`] of type `oid`.
fn kind_of(rows: &BTreeMap<u32, TypeRow>, oid: u32, depth: usize) -> ValueKind {
    let Some(t) = rows.get(&oid) else {
        return ValueKind::of_builtin(oid);
    };
    if depth > 16 {
        return ValueKind::Other;
    }
    match t.typtype.as_str() {
        "d" => kind_of(rows, t.base, depth + 1),
        "e" => ValueKind::Enum {
            labels: t.labels.clone(),
        },
        _ if t.is_array() => ValueKind::Array(Box::new(kind_of(rows, t.elem, depth + 1))),
        "b" if oid < FIRST_NORMAL_OID => ValueKind::of_builtin(oid),
        _ => ValueKind::Other,
    }
}

/// Whether the server's own output functions print values of `oid` (a built-in type, an
/// enum, a domain or array of those): a user-defined base type's output function is code
/// its owner wrote, and a composite's prints its fields (kept out too).
fn readable(rows: &BTreeMap<u32, TypeRow>, oid: u32, depth: usize) -> bool {
    let Some(t) = rows.get(&oid) else {
        return oid < FIRST_NORMAL_OID;
    };
    if depth > 16 {
        return false;
    }
    match t.typtype.as_str() {
        "d" => readable(rows, t.base, depth + 1),
        "e" => true,
        _ if t.is_array() => readable(rows, t.elem, depth + 1),
        "b" | "r" | "m" | "p" => oid < FIRST_NORMAL_OID,
        _ => false,
    }
}

/// The user-defined types to create (dependencies first), the extensions to create, and
/// what cannot be reproduced; a column whose type cannot be created on the twin is
/// written as `text` (its values made up), and named.
fn record_types(rows: &BTreeMap<u32, TypeRow>, rels: &mut [Relation], model: &mut Model) {
    let mut seen: BTreeMap<u32, bool> = BTreeMap::new();
    for rel in rels.iter_mut() {
        let display = rel.display();
        for c in &mut rel.columns {
            let user = format!("table {display} column {:?}", c.name);
            if !visit_type(rows, c.type_oid, &user, &mut seen, model, 0) {
                model.unreproducible.push(format!(
                    "{user}: its type {} cannot be created on the twin; the column is \
                     written as text and its values are made up",
                    c.type_sql
                ));
                c.type_sql = "text".into();
                model.catalogs_only = Some(format!(
                    "{user} is written with another type than the server's"
                ));
                c.kind = ValueKind::Text;
                c.readable = false;
                c.default = None;
            }
        }
    }
}

/// Records type `oid` (and what it is built on) to be created, after what it needs and
/// once (a type already in `model.types` is not written again); false when it cannot be.
pub(crate) fn visit_type(
    rows: &BTreeMap<u32, TypeRow>,
    oid: u32,
    user: &str,
    seen: &mut BTreeMap<u32, bool>,
    model: &mut Model,
    depth: usize,
) -> bool {
    if oid < FIRST_NORMAL_OID {
        return true;
    }
    if depth > 16 {
        return false;
    }
    if let Some(ok) = seen.get(&oid) {
        return *ok;
    }
    seen.insert(oid, true);
    let Some(t) = rows.get(&oid) else { return true };
    if t.is_rowtype() {
        return true;
    }
    if let Some(ext) = &t.extension {
        if !model.extensions.contains(ext) {
            model.extensions.push(ext.clone());
            model.unreproducible.push(format!(
                "{user}: type {} comes from extension {ext:?}, created on the twin with \
                 CREATE EXTENSION (it must be installed there)",
                t.name
            ));
        }
        return true;
    }
    let mut ok = true;
    for dep in [t.elem, t.base] {
        if dep != 0 {
            ok &= visit_type(rows, dep, user, seen, model, depth + 1);
        }
    }
    for (_, _, f) in &t.fields {
        ok &= visit_type(rows, *f, user, seen, model, depth + 1);
    }
    let def = match t.typtype.as_str() {
        _ if !ok => None,
        _ if t.is_array() => return true,
        "e" => Some(TypeDef::Enum {
            name: t.name.clone(),
            labels: t.labels.clone(),
        }),
        "d" => Some(TypeDef::Domain {
            name: t.name.clone(),
            base_sql: t.base_sql.clone(),
            not_null: t.not_null,
            default: t.default.clone(),
            checks: t.checks.clone(),
        }),
        "c" => Some(TypeDef::Composite {
            name: t.name.clone(),
            fields: t
                .fields
                .iter()
                .map(|(n, ty, _)| (n.clone(), ty.clone()))
                .collect(),
        }),
        other => {
            let what = match other {
                "r" => "a range type",
                "m" => "a multirange type",
                _ => "a base type with its own input and output functions",
            };
            model
                .unreproducible
                .push(format!("{user}: type {} is {what}, not reproduced", t.name));
            None
        }
    };
    let Some(def) = def else {
        seen.insert(oid, false);
        return false;
    };
    if t.schema != "public" && t.schema != "pg_catalog" && !model.schemas.contains(&t.schema) {
        model.schemas.push(t.schema.clone());
    }
    if !model.types.iter().any(|d| d.name() == def.name()) {
        model.types.push(def);
    }
    true
}

const OWNED_SEQUENCES_SQL: &str = "select d.objid::int8, d.refobjid::int8, d.refobjsubid::int4, \
      d.deptype::text from pg_catalog.pg_depend d \
      join pg_catalog.pg_class s on s.oid = d.objid and s.relkind = 'S' \
    where d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass \
      and d.refobjid = any($1::oid[]) \
      and d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass and d.deptype in ('a', 'i') \
    union all select d.refobjid::int8, 0, 0, 'n' from pg_catalog.pg_depend d \
      join pg_catalog.pg_class s on s.oid = d.refobjid and s.relkind = 'S' \
    where d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass \
      and d.objid = any($2::oid[]) \
      and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass";

const SEQUENCE_SQL: &str = "select s.seqrelid::int8, n.nspname::text, c.relname::text, \
      pg_catalog.format_type(s.seqtypid, null), s.seqstart::text, s.seqincrement::text, \
      s.seqmin::text, s.seqmax::text, s.seqcache::text, s.seqcycle \
    from pg_catalog.pg_sequence s join pg_catalog.pg_class c on c.oid = s.seqrelid \
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace where s.seqrelid = any($1::oid[])";

/// The sequences the touched tables own (serial, identity), their defaults draw from, and
/// the statements name (`named`: each with the column it feeds).
pub fn sequences(
    conn: &mut Connection,
    rels: &[Relation],
    defaults: &[u32],
    named: &[(u32, Option<(u32, i16)>)],
    model: &mut Model,
) -> Result<(), SchemaError> {
    let rel_arr = oid_array(rels.iter().map(|r| r.oid));
    let def_arr = oid_array(defaults.iter().copied());
    let r = query(
        conn,
        "reading the sequences",
        OWNED_SEQUENCES_SQL,
        &[Some(&rel_arr), Some(&def_arr)],
    )?;
    let mut owned: BTreeMap<u32, (Option<(u32, i16)>, bool)> = BTreeMap::new();
    for row in 0..r.rows.len() {
        let seq = cell_u32(&r, row, 0);
        let e = owned.entry(seq).or_insert((None, false));
        match r.get(row, 3) {
            Some("a") | Some("i") => {
                let col = r.get(row, 2).and_then(|v| v.parse().ok()).unwrap_or(0);
                e.0 = Some((cell_u32(&r, row, 1), col));
                e.1 = r.get(row, 3) == Some("i");
            }
            _ => {}
        }
    }
    for (seq, _) in named {
        owned.entry(*seq).or_insert((None, false));
    }
    if owned.is_empty() || model.server_version_num < 100000 {
        return Ok(());
    }
    let arr = oid_array(owned.keys().copied());
    let r = query_or_note(conn, model, "sequences", SEQUENCE_SQL, &[Some(&arr)])?;
    for row in 0..r.rows.len() {
        let oid = cell_u32(&r, row, 0);
        let (owned_by, identity) = owned.get(&oid).cloned().unwrap_or((None, false));
        let schema = cell(&r, row, 1).unwrap_or_default();
        if schema != "public" && schema != "pg_catalog" && !model.schemas.contains(&schema) {
            model.schemas.push(schema.clone());
        }
        model.sequences.push(Sequence {
            oid,
            schema,
            name: cell(&r, row, 2).unwrap_or_default(),
            type_sql: cell(&r, row, 3).unwrap_or_else(|| "bigint".into()),
            start: cell(&r, row, 4).unwrap_or_else(|| "1".into()),
            increment: cell(&r, row, 5).unwrap_or_else(|| "1".into()),
            min: cell(&r, row, 6).unwrap_or_else(|| "1".into()),
            max: cell(&r, row, 7).unwrap_or_default(),
            cache: cell(&r, row, 8).unwrap_or_else(|| "1".into()),
            cycle: cell_bool(&r, row, 9),
            feeds: named
                .iter()
                .find(|n| n.0 == oid)
                .and_then(|n| n.1)
                .filter(|_| owned_by.is_none()),
            owned_by,
            identity,
        });
    }
    Ok(())
}

fn functions_by_name_sql(version: u32) -> String {
    let kind = if version >= 110000 {
        "p.prokind::text"
    } else {
        "case when p.proisagg then 'a' else 'f' end"
    };
    format!(
        "select p.oid::int8, n.nspname::text, p.proname::text, {kind}, l.lanname::text, \
           (select e.extname::text from pg_catalog.pg_depend d \
              join pg_catalog.pg_extension e on e.oid = d.refobjid \
            where d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass and d.objid = p.oid \
              and d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass \
              and d.deptype = 'e' limit 1) \
         from (select p.oid from pg_catalog.pg_proc p where p.oid = any($1::oid[]) \
               union select p.oid from unnest($2::text[], $3::text[]) as u(s, f) \
               join pg_catalog.pg_namespace n on n.nspname = u.s \
               join pg_catalog.pg_proc p on p.proname = u.f and p.pronamespace = n.oid) x \
         join pg_catalog.pg_proc p on p.oid = x.oid \
         join pg_catalog.pg_namespace n on n.oid = p.pronamespace \
         join pg_catalog.pg_language l on l.oid = p.prolang"
    )
}

const FUNCTION_DEPS_SQL: &str = "select distinct d.refobjid::int8 from \
      unnest($1::oid[], $2::oid[]) as u(cls, obj) \
      join pg_catalog.pg_depend d on d.classid = u.cls and d.objid = u.obj \
    where d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass and d.refobjid >= 16384";

/// The functions named (an unqualified one in each schema of
/// `search_path`) and those the touched defaults, constraints and indexes use:
/// `pg_get_functiondef` of each SQL or PL/pgSQL one; others are named as unreproducible.
/// Returns the OID of each function written into `model.functions`, in its order.
pub fn functions(
    conn: &mut Connection,
    names: &[TableName],
    search_path: &[String],
    used_by: &[(u32, u32)],
    model: &mut Model,
) -> Result<Vec<u32>, SchemaError> {
    let mut oids: Vec<u32> = Vec::new();
    if !used_by.is_empty() {
        let cls = oid_array(used_by.iter().map(|u| u.0));
        let obj = oid_array(used_by.iter().map(|u| u.1));
        let r = query(
            conn,
            "reading the functions defaults and checks use",
            FUNCTION_DEPS_SQL,
            &[Some(&cls), Some(&obj)],
        )?;
        oids.extend((0..r.rows.len()).map(|row| cell_u32(&r, row, 0)));
    }
    let (mut schemas, mut fnames) = (Vec::new(), Vec::new());
    for n in names {
        let (s, f) = match &n.schema {
            Some(s) => (vec![s.clone()], n.name.clone()),
            None => (search_path.to_vec(), n.name.clone()),
        };
        for s in s {
            schemas.push(Some(s));
            fnames.push(Some(f.clone()));
        }
    }
    if oids.is_empty() && schemas.is_empty() {
        return Ok(Vec::new());
    }
    let (o, s, f) = (
        oid_array(oids.iter().copied()),
        array_text(&schemas),
        array_text(&fnames),
    );
    let sql = functions_by_name_sql(model.server_version_num);
    let r = query(
        conn,
        "reading the functions",
        &sql,
        &[Some(&o), Some(&s), Some(&f)],
    )?;
    let mut wanted = Vec::new();
    for row in 0..r.rows.len() {
        let oid = cell_u32(&r, row, 0);
        let schema = cell(&r, row, 1).unwrap_or_default();
        let name = format!("{schema}.{}", cell(&r, row, 2).unwrap_or_default());
        if schema == "pg_catalog" || schema == "information_schema" || oid < FIRST_NORMAL_OID {
            continue;
        }
        if let Some(ext) = cell(&r, row, 5) {
            if !model.extensions.contains(&ext) {
                model.extensions.push(ext);
            }
            continue;
        }
        let kind = cell(&r, row, 3).unwrap_or_default();
        let lang = cell(&r, row, 4).unwrap_or_default();
        if !matches!(kind.as_str(), "f" | "p") {
            model.unreproducible.push(format!(
                "function {name}: an aggregate or window function, not reproduced"
            ));
        } else if !matches!(lang.as_str(), "sql" | "plpgsql") {
            model.unreproducible.push(format!(
                "function {name}: written in {lang}, not reproduced (only SQL and PL/pgSQL are)"
            ));
        } else {
            if schema != "public" && !model.schemas.contains(&schema) {
                model.schemas.push(schema);
            }
            wanted.push((oid, name));
        }
    }
    let mut written = Vec::new();
    for (oid, name) in wanted {
        let arg = oid.to_string();
        let r = query_or_note(
            conn,
            model,
            &format!("function {name}"),
            "select pg_catalog.pg_get_functiondef($1::oid)",
            &[Some(&arg)],
        )?;
        if let Some(def) = cell(&r, 0, 0) {
            model.functions.push((name, def));
            written.push(oid);
        }
    }
    Ok(written)
}

const EXTRAS_SQL: &str = "select t.tgrelid::int8, 'trigger'::text, t.tgname::text, \
      case when l.lanname in ('sql', 'plpgsql') then pg_catalog.pg_get_functiondef(t.tgfoid) end \
      from pg_catalog.pg_trigger t join pg_catalog.pg_proc p on p.oid = t.tgfoid \
      join pg_catalog.pg_language l on l.oid = p.prolang \
      where t.tgrelid = any($1::oid[]) and not t.tgisinternal \
    union all select ev_class::int8, 'rule', rulename::text, null from pg_catalog.pg_rewrite \
      where ev_class = any($1::oid[]) and rulename <> '_RETURN' \
    union all select polrelid::int8, 'policy', polname::text, null from pg_catalog.pg_policy \
      where polrelid = any($1::oid[])";

/// Triggers, rules and policies of the touched tables: named as unreproducible (a
/// trigger runs its owner's code; the twin's tables have none). A SQL or PL/pgSQL
/// trigger function's definition is kept in `model.trigger_functions` (never written
/// into the schema): the statements it runs are no client's ([`crate::nested`]).
pub fn extras(
    conn: &mut Connection,
    rels: &[Relation],
    model: &mut Model,
) -> Result<(), SchemaError> {
    let arr = oid_array(rels.iter().map(|r| r.oid));
    let r = query_or_note(
        conn,
        model,
        "triggers, rules and policies",
        EXTRAS_SQL,
        &[Some(&arr)],
    )?;
    let mut seen = BTreeSet::new();
    for row in 0..r.rows.len() {
        let oid = cell_u32(&r, row, 0);
        let what = cell(&r, row, 1).unwrap_or_default();
        let name = cell(&r, row, 2).unwrap_or_default();
        let Some(rel) = rels.iter().find(|x| x.oid == oid) else {
            continue;
        };
        // A partition's clone of its parent's trigger is the parent's.
        let root = rel
            .partition_of
            .as_ref()
            .and_then(|(p, _)| rels.iter().find(|x| x.oid == *p))
            .map_or(rel.display(), |p| p.display());
        if let Some(def) = cell(&r, row, 3) {
            if !model.trigger_functions.contains(&def) {
                model.trigger_functions.push(def);
            }
        }
        if seen.insert((what.clone(), name.clone(), root.clone())) {
            model.unreproducible.push(format!(
                "table {}: {what} {name:?} is not reproduced (the twin runs without it)",
                rel.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(typtype: &str) -> TypeRow {
        TypeRow {
            typtype: typtype.into(),
            typlen: 4,
            ..TypeRow::default()
        }
    }

    #[test]
    fn kinds_follow_domains_arrays_and_enums() {
        let mut rows = BTreeMap::new();
        let mut dom = row("d");
        dom.base = 23;
        rows.insert(20000, dom);
        let mut en = row("e");
        en.labels = vec!["a".into(), "b".into()];
        rows.insert(20001, en);
        let mut arr = row("b");
        arr.elem = 20001;
        arr.typlen = -1;
        rows.insert(20002, arr);
        let mut ub = row("b");
        ub.typlen = -1;
        rows.insert(20003, ub);
        assert!(matches!(kind_of(&rows, 20000, 0), ValueKind::Int { .. }));
        assert!(
            matches!(kind_of(&rows, 20002, 0), ValueKind::Array(k) if matches!(*k, ValueKind::Enum { .. }))
        );
        assert!(readable(&rows, 20002, 0));
        assert!(readable(&rows, 20000, 0));
        assert!(
            !readable(&rows, 20003, 0),
            "a user base type's output is its owner's code"
        );
        assert_eq!(kind_of(&rows, 20003, 0), ValueKind::Other);
    }

    #[test]
    fn a_composite_signature_type_comes_after_what_it_is_built_on() {
        let mut rows = BTreeMap::new();
        let mut en = row("e");
        en.name = r#""st ""e""""#.into();
        en.labels = vec!["a".into()];
        rows.insert(20001, en);
        let mut en_arr = row("b");
        (en_arr.elem, en_arr.typlen) = (20001, -1);
        rows.insert(20002, en_arr);
        let mut dom = row("d");
        (dom.name, dom.base) = ("\"l; drop\"".into(), 20002);
        rows.insert(20003, dom);
        let mut comp = row("c");
        (comp.name, comp.relid, comp.relkind) = ("\"job\"".into(), 30000, Some("c".into()));
        comp.fields = vec![
            ("s".into(), "st".into(), 20001),
            ("l".into(), "l".into(), 20003),
        ];
        rows.insert(20004, comp);
        let mut comp_arr = row("b");
        (comp_arr.elem, comp_arr.typlen) = (20004, -1);
        rows.insert(20005, comp_arr);
        let mut table = row("c");
        (table.name, table.relid, table.relkind) = ("jobs".into(), 30001, Some("r".into()));
        rows.insert(20006, table);
        let mut table_arr = row("b");
        (table_arr.elem, table_arr.typlen) = (20006, -1);
        rows.insert(20007, table_arr);
        let mut model = Model::default();
        let mut seen = BTreeMap::new();
        for t in [20005, 20007, 20004, 20001] {
            assert!(visit_type(&rows, t, "f", &mut seen, &mut model, 0));
        }
        let names: Vec<&str> = model.types.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [r#""st ""e""""#, "\"l; drop\"", "\"job\""],
            "each once, dependencies first"
        );
        assert_eq!(
            rowtype_relation(&rows, 20007, 0),
            Some(30001),
            "an array of a table's row"
        );
        assert_eq!(
            rowtype_relation(&rows, 20005, 0),
            None,
            "a standalone composite"
        );
    }
}
