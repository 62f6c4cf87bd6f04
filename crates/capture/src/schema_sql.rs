//! `schema.sql` written from the catalogs (when no pg_dump fits the server, and around
//! pg_dump's output for what `pg_dump -t` leaves out): schemas, extensions, enum, domain
//! and composite types, sequences, functions, tables with their columns, partitions,
//! constraints (primary keys, unique, checks, exclusion, foreign keys last) and indexes,
//! views. Pure: every name is quoted by [`crate::sqltext`], every expression is the
//! server's own deparsed text.

use std::fmt::Write as _;

use crate::model::{Model, RelKind, Relation, Sequence, TypeDef};
use crate::sqltext::{ident, literal, qualified};

/// The whole schema from the catalogs.
pub fn write(model: &Model) -> String {
    let mut out = String::from("-- hotbench capture: the touched schema, from the catalogs\n");
    out.push_str(&prelude(model, true));
    for rel in &model.relations {
        if rel.kind != RelKind::View {
            out.push_str(&table(model, rel));
        }
    }
    out.push_str(&late_functions(model));
    out.push_str(&after_tables(model));
    out
}

/// The functions whose signature names a table's row type, once the tables exist.
pub fn late_functions(model: &Model) -> String {
    if model.late_functions.is_empty() {
        return String::new();
    }
    let mut out = String::from("set check_function_bodies = off;\n");
    for (_, def) in &model.late_functions {
        let _ = writeln!(out, "{};", def.trim_end());
    }
    out
}

/// What must exist before the tables: `check_function_bodies` off (a function may read a
/// table created after it), schemas, extensions, types, sequences (unless pg_dump writes
/// them), functions.
pub fn prelude(model: &Model, with_sequences: bool) -> String {
    let mut out = String::from("set check_function_bodies = off;\n");
    for s in &model.schemas {
        let _ = writeln!(out, "create schema if not exists {};", ident(s));
    }
    for e in &model.extensions {
        let _ = writeln!(out, "create extension if not exists {};", ident(e));
    }
    for t in &model.types {
        out.push_str(&type_def(t));
    }
    for s in model
        .sequences
        .iter()
        .filter(|s| !s.identity && with_sequences)
    {
        out.push_str(&sequence(s));
    }
    for (_, def) in &model.functions {
        let def = def.trim_end();
        let _ = writeln!(out, "{def};");
    }
    out
}

/// Constraints, foreign keys, indexes, views and sequence ownership, after every table.
pub fn after_tables(model: &Model) -> String {
    let mut out = String::new();
    let tables = || model.relations.iter().filter(|r| r.kind != RelKind::View);
    for rel in tables() {
        out.push_str(&constraints(rel, |k| k != 'f'));
    }
    for rel in tables() {
        out.push_str(&foreign_keys(model, rel));
    }
    for rel in tables() {
        for ix in rel.indexes.iter().filter(|i| !i.inherited) {
            let def = if rel.kind == RelKind::Partitioned {
                without_only(&ix.def)
            } else {
                ix.def.clone()
            };
            let _ = writeln!(out, "{def};");
        }
    }
    for rel in model.relations.iter().filter(|r| r.kind == RelKind::View) {
        if let Some(def) = &rel.view_def {
            let def = def.trim().trim_end_matches(';');
            let _ = writeln!(out, "create view {} as {def};", rel.qualified());
        }
    }
    for s in model.sequences.iter().filter(|s| !s.identity) {
        if let Some(rel_col) = s.owned_by.and_then(|(r, c)| {
            let rel = model.relation(r)?;
            Some((rel, rel.column(c)?))
        }) {
            let _ = writeln!(
                out,
                "alter sequence {} owned by {}.{};",
                qualified(&s.schema, &s.name),
                rel_col.0.qualified(),
                ident(&rel_col.1.name)
            );
        }
    }
    out
}

fn type_def(t: &TypeDef) -> String {
    match t {
        TypeDef::Enum { name, labels } => {
            let labels: Vec<String> = labels.iter().map(|l| literal(l)).collect();
            format!("create type {name} as enum ({});\n", labels.join(", "))
        }
        TypeDef::Domain {
            name,
            base_sql,
            not_null,
            default,
            checks,
        } => {
            let mut s = format!("create domain {name} as {base_sql}");
            if let Some(d) = default {
                let _ = write!(s, " default {d}");
            }
            if *not_null {
                s.push_str(" not null");
            }
            for c in checks {
                let _ = write!(s, " {c}");
            }
            s.push_str(";\n");
            s
        }
        TypeDef::Composite { name, fields } => {
            let f: Vec<String> = fields
                .iter()
                .map(|(n, ty)| format!("{} {ty}", ident(n)))
                .collect();
            format!("create type {name} as ({});\n", f.join(", "))
        }
    }
}

fn sequence(s: &Sequence) -> String {
    let max = if s.max.is_empty() {
        String::new()
    } else {
        format!(" maxvalue {}", s.max)
    };
    format!(
        "create sequence {} as {} increment by {} minvalue {}{max} start with {} cache {}{};\n",
        qualified(&s.schema, &s.name),
        s.type_sql,
        s.increment,
        s.min,
        s.start,
        s.cache,
        if s.cycle { " cycle" } else { " no cycle" }
    )
}

/// `CREATE TABLE` (or `… PARTITION OF`) with its columns.
pub fn table(model: &Model, rel: &Relation) -> String {
    let mut out = String::new();
    let unlogged = if rel.unlogged { "unlogged " } else { "" };
    let parent = rel
        .partition_of
        .as_ref()
        .and_then(|(p, bound)| Some((model.relation(*p)?, bound)));
    match parent {
        Some((p, bound)) => {
            let _ = write!(
                out,
                "create {unlogged}table {} partition of {} {bound}",
                rel.qualified(),
                p.qualified()
            );
        }
        None => {
            let cols: Vec<String> = rel.columns.iter().map(column_def).collect();
            let _ = write!(
                out,
                "create {unlogged}table {} (\n    {}\n)",
                rel.qualified(),
                cols.join(",\n    ")
            );
        }
    }
    if let Some(key) = &rel.partition_key {
        let _ = write!(out, " partition by {key}");
    }
    let opts: Vec<String> = rel.options.iter().filter_map(|o| reloption(o)).collect();
    if !opts.is_empty() {
        let _ = write!(out, " with ({})", opts.join(", "));
    }
    out.push_str(";\n");
    out
}

/// `name=value` as a storage parameter (`"name" = 'value'`); `None` for text that is not
/// `name=value`.
fn reloption(o: &str) -> Option<String> {
    let (k, v) = o.split_once('=')?;
    let k_ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    k_ok.then(|| format!("{k} = {}", literal(v)))
}

fn column_def(c: &crate::model::Column) -> String {
    let mut s = format!("{} {}", ident(&c.name), c.type_sql);
    if let Some(coll) = &c.collation {
        let _ = write!(s, " collate {coll}");
    }
    if let Some(g) = &c.generated {
        let _ = write!(s, " generated always as ({g}) stored");
    } else if let Some(id) = c.identity.filter(|i| *i == 'a' || *i == 'd') {
        let how = if id == 'a' { "always" } else { "by default" };
        let _ = write!(s, " generated {how} as identity");
    } else if let Some(d) = &c.default {
        let _ = write!(s, " default {d}");
    }
    if c.not_null {
        s.push_str(" not null");
    }
    s
}

/// The relation's own constraints of the kinds `keep` accepts (a partition's copies of its
/// parent's come with the parent's).
fn constraints(rel: &Relation, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::new();
    for c in rel
        .constraints
        .iter()
        .filter(|c| !c.inherited && keep(c.kind) && matches!(c.kind, 'p' | 'u' | 'c' | 'x' | 'f'))
    {
        let _ = writeln!(
            out,
            "alter table {} add constraint {} {};",
            rel.qualified(),
            ident(&c.name),
            c.def
        );
    }
    out
}

fn foreign_keys(model: &Model, rel: &Relation) -> String {
    let present = |c: &crate::model::Constraint| {
        c.references
            .as_ref()
            .is_some_and(|(p, _)| model.relation(*p).is_some())
    };
    let mut out = String::new();
    for c in rel
        .constraints
        .iter()
        .filter(|c| c.kind == 'f' && !c.inherited && present(c))
    {
        let _ = writeln!(
            out,
            "alter table {} add constraint {} {};",
            rel.qualified(),
            ident(&c.name),
            c.def
        );
    }
    out
}

/// `CREATE INDEX name ON ONLY parent …` (a partitioned table's index as `pg_get_indexdef`
/// writes it, valid only once each partition's index is attached) as `… ON parent …`,
/// which creates the partitions' indexes too.
pub fn without_only(def: &str) -> String {
    let mut rest = def;
    let mut head = String::new();
    for word in ["CREATE ", "UNIQUE ", "INDEX "] {
        if let Some(r) = rest.strip_prefix(word) {
            head.push_str(word);
            rest = r;
        }
    }
    let name_len = ident_token_len(rest);
    let (name, after) = rest.split_at(name_len);
    match after.strip_prefix(" ON ONLY ") {
        Some(tail) => format!("{head}{name} ON {tail}"),
        None => def.to_string(),
    }
}

/// Length of the identifier at the start of `s` (quoted with `""` doubling, or bare).
fn ident_token_len(s: &str) -> usize {
    let b = s.as_bytes();
    if b.first() == Some(&b'"') {
        let mut i = 1;
        while i < b.len() {
            if b[i] == b'"' {
                if b.get(i + 1) == Some(&b'"') {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i += 1;
        }
        return s.len();
    }
    s.find(' ').unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partitioned_index_is_created_on_every_partition() {
        assert_eq!(
            without_only("CREATE INDEX \"x ON ONLY y\" ON ONLY public.t USING btree (a)"),
            "CREATE INDEX \"x ON ONLY y\" ON public.t USING btree (a)"
        );
        assert_eq!(
            without_only("CREATE UNIQUE INDEX i ON ONLY s.t USING btree (a)"),
            "CREATE UNIQUE INDEX i ON s.t USING btree (a)"
        );
        let plain = "CREATE INDEX i ON public.t USING btree (a)";
        assert_eq!(without_only(plain), plain);
    }

    #[test]
    fn reloptions_are_quoted_values() {
        assert_eq!(
            reloption("fillfactor=70").as_deref(),
            Some("fillfactor = E'70'")
        );
        assert_eq!(reloption("x'); drop table t; --=1"), None);
    }
}
