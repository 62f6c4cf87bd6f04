//! Which tables the probe follows. Named ones (a scenario's) are resolved to oids and all
//! reported. Without names it follows the database's user tables, largest first up to
//! [`MAX_DEFAULT_TABLES`], and reports only those the run writes to (see
//! [`crate::health::keep_written`]): a table left by an earlier run is not the workload's.

use std::collections::BTreeSet;

use crate::classify::int;
use crate::health::{self, TablesSnap};
use crate::session::{Part, Session};

/// At most this many tables are followed when none are named (per-interval points are kept
/// only for tables written so far, so memory follows the workload, not the database).
pub const MAX_DEFAULT_TABLES: i64 = 200;

/// The oids to follow: `names` resolved (missing ones noted), else the largest user tables.
pub fn pick(s: &mut Session, names: &[String]) -> Vec<i64> {
    let mut oids = Vec::new();
    if !names.is_empty() {
        let arr = text_array(names);
        // In the user's own search_path (the session's is pg_catalog): for this transaction.
        let path = s.user_search_path.clone();
        let scoped = path.is_some() && s.begin_snapshot();
        if let (true, Some(p)) = (scoped, &path) {
            let _ = s.raw(
                "select pg_catalog.set_config('search_path', $1, true)",
                &[Some(p)],
            );
        }
        let resolved = s.run(Part::Tables, health::RESOLVE_SQL, &[Some(&arr)]);
        if scoped {
            s.end_snapshot();
        }
        if let Some(r) = resolved {
            let mut missing = Vec::new();
            for (i, row) in r.rows.iter().enumerate() {
                match int(row.first().and_then(|c| c.as_deref())) {
                    Some(oid) => oids.push(oid),
                    None => missing.push(names.get(i).cloned().unwrap_or_default()),
                }
            }
            if !missing.is_empty() {
                s.note(format!("tables not found: {}", missing.join(", ")));
            }
        }
        return oids;
    }
    let lim = MAX_DEFAULT_TABLES.to_string();
    if let Some(r) = s.run(Part::Tables, health::DEFAULT_TABLES_SQL, &[Some(&lim)]) {
        oids = r
            .rows
            .iter()
            .filter_map(|row| int(row.first().and_then(|c| c.as_deref())))
            .collect();
    }
    if oids.len() as i64 >= MAX_DEFAULT_TABLES {
        if let Some(r) = s.run(Part::Tables, health::COUNT_TABLES_SQL, &[]) {
            let n = int(r.get(0, 0)).unwrap_or(0);
            if n > MAX_DEFAULT_TABLES {
                s.note(format!(
                    "table health follows the {MAX_DEFAULT_TABLES} largest of {n} user tables"
                ));
            }
        }
    }
    oids
}

/// Names of the tables written (inserts, updates or deletes) between `first` and `now`.
pub fn written_since(first: &TablesSnap, now: &TablesSnap) -> BTreeSet<String> {
    now.iter()
        .filter(|(oid, n)| {
            let b = first.get(oid).cloned().unwrap_or_default();
            n.ins != b.ins || n.upd != b.upd || n.del != b.del
        })
        .map(|(_, n)| n.name.clone())
        .collect()
}

/// PostgreSQL's text form of a text array, each element quoted (passed as one typed
/// parameter: `$1::text[]`, never pasted into SQL).
pub fn text_array<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    format!("{{{}}}", quoted.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::TableSnap;

    #[test]
    fn text_array_quotes() {
        assert_eq!(
            text_array(&["a".into(), "s.\"b\"".into()]),
            "{\"a\",\"s.\\\"b\\\"\"}"
        );
    }

    #[test]
    fn written_tables_are_those_whose_write_counters_moved() {
        let snap = |name: &str, ins: i64, dead: i64| TableSnap {
            name: name.into(),
            ins,
            dead,
            ..Default::default()
        };
        let mut first = TablesSnap::new();
        first.insert(1, snap("left_behind", 5, 900));
        first.insert(2, snap("accounts", 5, 0));
        let mut now = first.clone();
        now.insert(1, snap("left_behind", 5, 950)); // dead tuples alone: not a write
        now.insert(2, snap("accounts", 9, 0));
        now.insert(3, snap("created_during_run", 1, 0));
        let w: Vec<String> = written_since(&first, &now).into_iter().collect();
        assert_eq!(w, ["accounts", "created_during_run"]);
    }
}
