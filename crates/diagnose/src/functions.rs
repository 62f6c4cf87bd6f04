//! Statements that work inside functions: `SELECT … FROM procrastinate_fetch_job_v2(…)` claims
//! its job in a PL/pgSQL body that `pg_stat_activity` never shows. After the sample, diagnose
//! reads the bodies (`pg_proc.prosrc`, as text: nothing is executed) of the SQL and PL/pgSQL
//! functions the statements seen call, outside `pg_catalog`, so [`crate::facts`] can place
//! what they do; the ones it could not read are said (a C function, another language, or
//! the read failed). One read-only statement on diagnose's own bounded session
//! ([`crate::session`]), and only when a statement called such a function.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_wire::{ConnectParams, Connector};

use crate::session;

/// Most functions whose bodies are read.
pub const MAX_FUNCTIONS: usize = 50;

/// The named functions outside `pg_catalog` and `information_schema` (`$1`: their names, a
/// text array), with the body of those in SQL or PL/pgSQL. Catalog data read as text: no
/// user function runs.
pub const BODIES_SQL: &str = "select p.proname::text, \
     case when l.lanname in ('sql', 'plpgsql') then p.prosrc end \
     from pg_catalog.pg_proc p join pg_catalog.pg_language l on l.oid = p.prolang \
     join pg_catalog.pg_namespace n on n.oid = p.pronamespace \
     where n.nspname <> 'pg_catalog' and n.nspname <> 'information_schema' \
       and p.proname::text = any($1::text[])";

/// Function bodies by (lower-case, unqualified) name, and what could not be read.
#[derive(Debug, Clone, Default)]
pub struct Bodies {
    pub bodies: BTreeMap<String, String>,
    /// Why no body was read at all (connection or query failed), when that happened.
    pub error: Option<String>,
    /// Names asked for.
    pub asked: BTreeSet<String>,
    /// User functions found without a body to read (C or another language).
    pub opaque: BTreeSet<String>,
}

impl Bodies {
    /// Called user functions whose statements cannot be seen: no SQL or PL/pgSQL body (C,
    /// another language), or every name asked when the read failed. Names that are no
    /// user function (built-ins, a column list) are not among them.
    pub fn unseen(&self) -> Vec<&str> {
        if self.error.is_some() {
            return self.asked.iter().map(String::as_str).collect();
        }
        self.opaque.iter().map(String::as_str).collect()
    }
}

/// Reads the bodies of the functions `statements` call (none read when none is called).
pub fn read<'a>(params: &ConnectParams, statements: impl Iterator<Item = &'a str>) -> Bodies {
    let mut asked = BTreeSet::new();
    for s in statements {
        for c in crate::shape::calls(s) {
            if asked.len() < MAX_FUNCTIONS {
                asked.insert(c);
            }
        }
    }
    let mut out = Bodies {
        asked,
        ..Default::default()
    };
    if out.asked.is_empty() {
        return out;
    }
    match fetch(params, &out.asked) {
        Ok((b, opaque)) => {
            out.opaque = opaque.into_iter().filter(|n| !b.contains_key(n)).collect();
            out.bodies = b;
        }
        Err(e) => out.error = Some(e),
    }
    out
}

/// Bodies by name, and the names found without one.
type Fetched = (BTreeMap<String, String>, BTreeSet<String>);

fn fetch(params: &ConnectParams, names: &BTreeSet<String>) -> Result<Fetched, String> {
    let mut c = Connector::new(session::params(params))
        .connect()
        .map_err(|e| e.to_string())?;
    let _ = c.set_io_timeout(Some(
        session::STATEMENT_TIMEOUT + std::time::Duration::from_secs(3),
    ));
    let result = (|| {
        for sql in session::settings() {
            c.simple_query(&sql).map_err(|e| e.to_string())?;
        }
        let arr = hotbench_probe::tables::text_array(names);
        let r = c
            .query_params(BODIES_SQL, &[Some(&arr)])
            .map_err(|e| e.to_string())?;
        let mut out = BTreeMap::new();
        let mut opaque = BTreeSet::new();
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            match (cell(0), cell(1)) {
                (Some(name), Some(body)) => {
                    // Overloads: their bodies together.
                    let e: &mut String = out.entry(name.to_string()).or_default();
                    e.push_str(body);
                    e.push_str(";\n");
                }
                (Some(name), None) => {
                    opaque.insert(name.to_string());
                }
                _ => {}
            }
        }
        Ok((out, opaque))
    })();
    c.close();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_in_the_array_and_unseen_ones_listed() {
        let names: BTreeSet<String> = ["a\"b".to_string(), "f".to_string()].into();
        assert_eq!(
            hotbench_probe::tables::text_array(&names),
            "{\"a\\\"b\",\"f\"}"
        );
        let mut b = Bodies {
            asked: names,
            ..Default::default()
        };
        b.bodies.insert("f".into(), "select 1".into());
        b.opaque.insert("a\"b".into());
        assert_eq!(b.unseen(), ["a\"b"]);
        b.error = Some("connection refused".into());
        assert_eq!(b.unseen(), ["a\"b", "f"]);
    }
}
