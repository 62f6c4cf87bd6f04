//! A hot row's primary key, read by ctid without running anything a table's owner could
//! define. Per relation, once: its kind, schema, name and primary-key columns (names, base
//! types, column privileges) and whether row-level security applies to the role, read from
//! the catalog as data. From them hotbench builds `SELECT "a", "b" FROM "schema"."table"
//! WHERE ctid OPERATOR(pg_catalog.=) $1` itself (the operator named whatever the session's
//! `search_path`) (every identifier quoted here, nothing pasted from a user), run as
//! an unnamed prepared statement with its results in binary format and decoded by
//! [`crate::key_decode`]. No view, cast or function touches the row.
//!
//! Named by ctid instead, with a note saying why: a key column the role may not select, a
//! table row-level security applies to (its policies' expressions would run, and under
//! `row_security = off` the read would fail), a key column of a user-defined type (its
//! `send` function is its owner's code). A table without a
//! primary key is named by ctid without a note.

use std::collections::BTreeMap;

use hotbench_wire::SqlState;

use crate::classify::{display_relation, int};
use crate::key_decode::{decode, quote_ident, readable};
use crate::session::{first_line, Part, Session};

/// A key longer than this is cut (wide text keys).
const MAX_KEY_CHARS: usize = 200;

/// The catalog facts of relation `$1` and, per primary-key column in key order, its name,
/// base type (a domain's base type), that type's `typtype`, its name, and whether the role
/// may select the column. One row without columns when the table has no primary key.
pub const PLAN_SQL: &str = "select c.relkind::text, n.nspname::text, c.relname::text, \
     row_security_active(c.oid), a.attname::text, \
     (case when t.typtype = 'd' then t.typbasetype else t.oid end)::int8, \
     (case when t.typtype = 'd' then b.typtype else t.typtype end)::text, \
     t.typname::text, has_column_privilege(c.oid, a.attnum, 'SELECT') \
     from pg_class c join pg_namespace n on n.oid = c.relnamespace \
     left join pg_index i on i.indrelid = c.oid and i.indisprimary \
     left join lateral unnest(i.indkey::int2[]) with ordinality k(attnum, ord) on true \
     left join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum \
     left join pg_type t on t.oid = a.atttypid \
     left join pg_type b on b.oid = t.typbasetype \
     where c.oid = $1 order by k.ord";

/// `tid`: the type of the ctid parameter.
const TID_OID: u32 = 27;

/// How one relation's keys are read.
#[derive(Debug, Clone, PartialEq)]
enum Plan {
    /// The statement and, per selected column, its name, base type OID and `typtype`.
    Read {
        sql: String,
        columns: Vec<(String, u32, String)>,
    },
    /// Rows are named by ctid.
    Ctid,
}

/// What the catalog says about a relation (see [`PLAN_SQL`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    pub relkind: String,
    pub schema: String,
    pub name: String,
    pub row_security: bool,
    /// Name, base type OID, `typtype`, type name, selectable.
    pub key: Vec<(String, u32, String, String, bool)>,
}

impl Catalog {
    fn parse(r: &hotbench_wire::QueryResult) -> Option<Catalog> {
        let first = r.rows.first()?;
        let cell = |row: &Vec<Option<String>>, i: usize| row.get(i).and_then(|c| c.clone());
        let mut c = Catalog {
            relkind: cell(first, 0)?,
            schema: cell(first, 1)?,
            name: cell(first, 2)?,
            row_security: cell(first, 3).as_deref() == Some("t"),
            key: Vec::new(),
        };
        for row in &r.rows {
            let Some(col) = cell(row, 4) else { continue };
            let oid = int(cell(row, 5).as_deref())
                .and_then(|o| u32::try_from(o).ok())
                .unwrap_or(0);
            c.key.push((
                col,
                oid,
                cell(row, 6).unwrap_or_default(),
                cell(row, 7).unwrap_or_default(),
                cell(row, 8).as_deref() == Some("t"),
            ));
        }
        Some(c)
    }

    /// The plan, or the plan with why the keys are not read.
    fn plan(&self) -> (Plan, Option<String>) {
        let table = display_relation(
            &format!(
                "{}.{}",
                quote_if_needed(&self.schema),
                quote_if_needed(&self.name)
            ),
            None,
        );
        if self.relkind != "r" {
            return (Plan::Ctid, None);
        }
        if self.key.is_empty() {
            return (Plan::Ctid, None);
        }
        if self.row_security {
            return (
                Plan::Ctid,
                Some(format!(
                    "hot rows: keys of {table} not read: row-level security applies to this \
                     role (its policies would run on the read, and a policy can hide the row): \
                     rows are named by ctid, which changes with every update (a role with \
                     BYPASSRLS sees its keys)"
                )),
            );
        }
        if let Some((col, ..)) = self.key.iter().find(|k| !k.4) {
            return (
                Plan::Ctid,
                Some(format!(
                    "hot rows: keys of {table} not read (no SELECT on its key column {}): rows \
                     are named by ctid, which changes with every update (GRANT SELECT on the \
                     table to see its keys)",
                    quote_if_needed(col)
                )),
            );
        }
        if let Some((col, _, _, ty, _)) = self.key.iter().find(|k| !readable(k.1, &k.2)) {
            return (
                Plan::Ctid,
                Some(format!(
                    "hot rows: keys of {table} not read: key column {} is of the user-defined \
                     type {ty} (reading it would run the type's own code): rows are named by \
                     ctid",
                    quote_if_needed(col)
                )),
            );
        }
        let cols: Vec<String> = self.key.iter().map(|k| quote_ident(&k.0)).collect();
        let sql = format!(
            "select {} from {}.{} where ctid operator(pg_catalog.=) $1",
            cols.join(", "),
            quote_ident(&self.schema),
            quote_ident(&self.name)
        );
        let columns = self
            .key
            .iter()
            .map(|(n, oid, tt, _, _)| (n.clone(), *oid, tt.clone()))
            .collect();
        (Plan::Read { sql, columns }, None)
    }
}

/// `name` quoted only when it needs to be (for messages).
fn quote_if_needed(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        quote_ident(name)
    }
}

/// Key reads with their per-relation plans.
#[derive(Default)]
pub struct RowKeys {
    plans: BTreeMap<i64, Plan>,
}

/// Relations whose plans are remembered; more are read by ctid.
const MAX_PLANS: usize = 100;

impl RowKeys {
    pub fn new() -> RowKeys {
        RowKeys::default()
    }

    /// The key of the row version at `ctid` of relation `oid` (`id=1`, `a=x, b=2`), or
    /// `ctid=(p,t)` when keys are not read; `None` when the row version is gone or the read
    /// was skipped.
    pub fn key(&mut self, s: &mut Session, oid: i64, ctid: &str) -> Option<String> {
        let plan = match self.plans.get(&oid) {
            Some(p) => p.clone(),
            None => {
                let p = self.plan(s, oid)?;
                if self.plans.len() < MAX_PLANS {
                    self.plans.insert(oid, p.clone());
                }
                p
            }
        };
        let Plan::Read { sql, columns } = plan else {
            return Some(format!("ctid={ctid}"));
        };
        match s.raw_binary(&sql, &[TID_OID], &[Some(ctid)]) {
            Ok(r) => {
                let row = r.rows.first()?;
                let key: Vec<String> = columns
                    .iter()
                    .zip(row)
                    .map(|((name, oid, tt), v)| match v {
                        Some(v) => format!("{name}={}", decode(*oid, tt, v)),
                        None => format!("{name}=NULL"),
                    })
                    .collect();
                Some(cut(&key.join(", "), MAX_KEY_CHARS))
            }
            Err(e) => {
                let code = e.sqlstate();
                if code == Some(SqlState::INSUFFICIENT_PRIVILEGE) {
                    // Granted privileges changed since the plan (or a policy we did not see).
                    self.plans.insert(oid, Plan::Ctid);
                    s.note(format!(
                        "hot rows: keys not read ({}): rows are named by ctid",
                        first_line(&e)
                    ));
                    return Some(format!("ctid={ctid}"));
                }
                s.outcome(Part::HotRows, Err(e));
                None
            }
        }
    }

    fn plan(&mut self, s: &mut Session, oid: i64) -> Option<Plan> {
        let oid_text = oid.to_string();
        let r = s.run(Part::HotRows, PLAN_SQL, &[Some(&oid_text)])?;
        let Some(c) = Catalog::parse(&r) else {
            return Some(Plan::Ctid);
        };
        let (plan, note) = c.plan();
        if let Some(n) = note {
            s.note(n);
        }
        Some(plan)
    }
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(key: &[(&str, u32, &str, bool)]) -> Catalog {
        Catalog {
            relkind: "r".into(),
            schema: "public".into(),
            name: "Accounts".into(),
            row_security: false,
            key: key
                .iter()
                .map(|(n, o, t, sel)| (n.to_string(), *o, t.to_string(), "t".into(), *sel))
                .collect(),
        }
    }

    #[test]
    fn the_key_read_is_a_plain_select_by_ctid_with_quoted_names() {
        let (p, note) = catalog(&[("id", 23, "b", true), ("Day\"x", 1082, "b", true)]).plan();
        assert_eq!(note, None);
        assert_eq!(
            p,
            Plan::Read {
                sql: "select \"id\", \"Day\"\"x\" from \"public\".\"Accounts\" \
                      where ctid operator(pg_catalog.=) $1"
                    .into(),
                columns: vec![
                    ("id".into(), 23, "b".into()),
                    ("Day\"x".into(), 1082, "b".into())
                ],
            }
        );
    }

    #[test]
    fn keys_not_safely_readable_are_named_by_ctid_with_a_note() {
        let (p, note) = catalog(&[("id", 16500, "b", true)]).plan();
        assert_eq!(p, Plan::Ctid);
        assert!(note.is_some_and(|n| n.contains("user-defined")));
        let (p, note) = catalog(&[("id", 23, "b", false)]).plan();
        assert_eq!(p, Plan::Ctid);
        assert!(note.is_some_and(|n| n.contains("GRANT SELECT") && n.contains("\"Accounts\"")));
        let mut c = catalog(&[("id", 23, "b", true)]);
        c.row_security = true;
        assert!(c.plan().1.is_some_and(|n| n.contains("row-level security")));
        // An enum key is read: its binary form is the label, written by the server.
        assert!(matches!(
            catalog(&[("k", 16500, "e", true)]).plan().0,
            Plan::Read { .. }
        ));
        // No primary key, or not a table: ctid, no note.
        assert_eq!(catalog(&[]).plan(), (Plan::Ctid, None));
        let mut v = catalog(&[("id", 23, "b", true)]);
        v.relkind = "v".into();
        assert_eq!(v.plan(), (Plan::Ctid, None));
    }

    #[test]
    fn long_keys_are_cut_at_a_character() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("ééé", 2), "éé…");
    }
}
