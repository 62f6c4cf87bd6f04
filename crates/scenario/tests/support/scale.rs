//! What an hour-long run leaves in a scenario's tables, and the statements a ladder runs on
//! them besides its timed run (setup, monitors, the work count, finish, checks). Shared by
//! the plan-shape test (`tests/checks_scale.rs`) and `bench/checks-at-scale` (the
//! `checks_at_scale` example), so both look at the same statements on the same data: the
//! test asserts that no statement's plan re-reads a large table per key (rows × keys), the
//! bench times each statement at a million rows.

#![allow(dead_code)] // each user takes the part it needs

use std::collections::BTreeMap;

use hotbench_scenario::manifest::Variant;
use hotbench_scenario::params::Params;
use hotbench_scenario::{db, sqlsplit, Scenario};
use hotbench_wire::Connection;
use serde_json::Value;

/// One way a scenario's schema is set up: a variant (or the ceiling) with its parameters,
/// and the check files of every variant set up the same way.
pub struct Setup {
    pub label: String,
    pub variant: Variant,
    pub params: Params,
    pub checks: Vec<String>,
}

/// One setup per distinct setup (the same files, substituted to the same text) among the
/// variants and the ceiling, with the check files of all that share it. `user`: `--param`s.
pub fn setups(scn: &Scenario, user: &[(String, String)]) -> Result<Vec<Setup>, String> {
    let m = &scn.manifest;
    let mut all = Vec::new();
    for v in &m.variants {
        let params = Params::resolve(m, Some(v), user).map_err(|e| e.to_string())?;
        all.push((v.clone(), params));
    }
    if let Some(c) = hotbench_scenario::ceiling::ceiling_variant(m) {
        let p = hotbench_scenario::ceiling::ceiling_params(m, user);
        let params = Params::resolve(m, Some(&c), &p).map_err(|e| e.to_string())?;
        all.push((c, params));
    }
    let mut out: Vec<(String, Setup)> = Vec::new();
    for (variant, params) in all {
        let mut s = Setup {
            label: variant.name.clone(),
            checks: m.checks.iter().chain(&variant.checks).cloned().collect(),
            variant,
            params,
        };
        let mut key = String::new();
        for rel in m.setup.iter().chain(&s.variant.setup) {
            key.push_str(&file(scn, &s, rel)?);
        }
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, same)) => {
                for c in s.checks.drain(..) {
                    if !same.checks.contains(&c) {
                        same.checks.push(c);
                    }
                }
            }
            None => out.push((key, s)),
        }
    }
    Ok(out.into_iter().map(|(_, s)| s).collect())
}

/// `sql` with the parameters substituted; run values (`{{committed}}`, `{{goodput:NAME}}`)
/// become 0, which changes no plan.
pub fn substitute(s: &Setup, sql: &str) -> Result<String, String> {
    let mut extra = BTreeMap::new();
    let mut rest = sql;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if !s.params.values.contains_key(name) {
            extra.insert(name.to_string(), "0".to_string());
        }
        rest = &after[end + 2..];
    }
    s.params.substitute(sql, &extra)
}

/// A file of the scenario, substituted.
fn file(scn: &Scenario, s: &Setup, rel: &str) -> Result<String, String> {
    let text = scn
        .bundle
        .file(rel)
        .ok_or_else(|| format!("{}: no such file", scn.bundle.display(rel)))?;
    substitute(s, text)
}

/// A fresh `schema` (on `conn`'s search path) set up as the ladder sets up the variant:
/// pgbench's tables if the scenario asks, then the setup files statement by statement.
/// `each` sees every setup statement just before it runs (the plan test explains it).
pub fn set_up(
    conn: &mut Connection,
    schema: &str,
    scn: &Scenario,
    s: &Setup,
    each: &mut dyn FnMut(&mut Connection, &str, &str) -> Result<(), String>,
) -> Result<(), String> {
    let m = &scn.manifest;
    exec(
        conn,
        &format!("drop schema if exists {schema} cascade; create schema {schema}"),
    )?;
    if let Some(pi) = &m.pgbench_init {
        let scale = s
            .params
            .number(&pi.scale.text(), "scale", &BTreeMap::new())
            .map_err(|e| e.to_string())?;
        let init = hotbench_init::InitOptions {
            scale: scale as i32,
            quiet: true,
            terminal: Some(false),
            ..Default::default()
        };
        hotbench_init::run_init(conn, &init, &mut std::io::sink()).map_err(|e| e.to_string())?;
    }
    for rel in m.setup.iter().chain(&s.variant.setup) {
        let sql = file(scn, s, rel)?;
        let statements = sqlsplit::split(&sql).map_err(|e| format!("{rel}: {e}"))?;
        for st in statements {
            let label = format!("{}:{}", scn.bundle.display(rel), st.line);
            each(conn, &label, &st.text)?;
            conn.simple_query(&st.text)
                .map_err(|e| format!("{label}: {e}"))?;
        }
    }
    Ok(())
}

/// Fills the work tables with `rows` rows, spread over the scenario's keys, as an hour of a
/// run would (about 3.6 ms apart). Returns the tables filled.
pub fn seed(
    conn: &mut Connection,
    scn: &Scenario,
    s: &Setup,
    rows: u64,
) -> Result<Vec<&'static str>, String> {
    let (tables, sql): (Vec<&'static str>, &str) = match scn.name() {
        "daily-limit" => (
            vec!["ledger"],
            "insert into ledger (customer_id, day, amount, paid_at)
             select 1 + g % {{customers}}, current_date, 1 + g % {{max_amount}},
                    now() - g * interval '3.6 ms'
             from generate_series(1, {{rows}}) as g",
        ),
        "queue" => (
            vec!["job_done", "job_enqueued"],
            "insert into job_enqueued select 1000000000 + g from generate_series(1, {{rows}}) as g;
             insert into job_done (id, shard, enqueued_at, done_at)
             select 1000000000 + g, g % {{clients}}, now() - ({{rows}} - g) * interval '3.6 ms',
                    now() - ({{rows}} - g) * interval '3.6 ms'
             from generate_series(1, {{rows}}) as g",
        ),
        "counters" => (
            vec!["view_log", "view_event", "comment", "post_view_slot"],
            "insert into view_log select 1 + g % {{posts}} from generate_series(1, {{rows}}) as g;
             insert into view_event select 1 + g % {{posts}} from generate_series(1, {{rows}} / 100) as g;
             insert into comment (post_id, body)
             select 1 + g % {{posts}}, md5(g::text) from generate_series(1, {{rows}}) as g;
             insert into post_view_slot (post_id, slot, n)
             select 1 + (g / {{slots}}) % {{posts}}, g % {{slots}}, 1
             from generate_series(0, least({{rows}}, {{posts}} * {{slots}}) - 1) as g",
        ),
        "tpcb-hotspot" => (
            vec!["pgbench_history"],
            "insert into pgbench_history (tid, bid, aid, delta, mtime)
             select 1 + g % (10 * {{scale}}), 1 + g % {{scale}}, 1 + g % (100000 * {{scale}}),
                    g % 10001 - 5000, now() - g * interval '3.6 ms'
             from generate_series(1, {{rows}}) as g",
        ),
        // Workloads D and E insert rows; short fields keep a million of them small.
        "ycsb" => (
            vec!["usertable"],
            "insert into usertable (ycsb_key, field0)
             select {{records}} + g, 'x' from generate_series(1, {{rows}}) as g",
        ),
        other => return Err(format!("no seed for scenario {other}")),
    };
    let sql = sql.replace("{{rows}}", &rows.to_string());
    exec(conn, &substitute(s, &sql)?)?;
    Ok(tables)
}

/// What a statement is to the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Monitor,
    Work,
    Finish,
    Check,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Monitor => "monitor",
            Kind::Work => "work",
            Kind::Finish => "finish",
            Kind::Check => "check",
        }
    }
}

/// A statement the ladder runs on the work tables outside the timed run.
pub struct Stmt {
    pub kind: Kind,
    /// The monitor's name, or `file:line`.
    pub label: String,
    pub sql: String,
    /// A monitor sampled with these parameters (`when` on).
    pub on: bool,
}

/// Every monitor (sampled each second while the run goes on), the work count, the finish
/// and the check statements of `s`, in the order the ladder runs them.
pub fn statements(scn: &Scenario, s: &Setup) -> Result<Vec<Stmt>, String> {
    let m = &scn.manifest;
    let mut out = Vec::new();
    for mo in &m.monitors {
        let on = match &mo.when {
            Some(w) => matches!(substitute(s, w)?.trim(), "on" | "true" | "yes" | "1"),
            None => true,
        };
        out.push(Stmt {
            kind: Kind::Monitor,
            label: mo.name.clone(),
            sql: substitute(s, &mo.sql)?,
            on,
        });
    }
    if let Some(w) = &m.work {
        out.push(Stmt {
            kind: Kind::Work,
            label: "count".into(),
            sql: substitute(s, &w.sql)?,
            on: true,
        });
    }
    let files = m
        .finish
        .iter()
        .map(|f| (Kind::Finish, f))
        .chain(s.checks.iter().map(|f| (Kind::Check, f)));
    for (kind, rel) in files {
        let sql = file(scn, s, rel)?;
        for st in sqlsplit::split(&sql).map_err(|e| format!("{rel}: {e}"))? {
            out.push(Stmt {
                kind,
                label: format!("{rel}:{}", st.line),
                sql: st.text,
                on: true,
            });
        }
    }
    Ok(out)
}

/// Whether EXPLAIN accepts the statement (DDL, VACUUM and the like have no plan).
pub fn explainable(sql: &str) -> bool {
    let first = sql
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        first.as_str(),
        "select" | "with" | "insert" | "update" | "delete" | "values" | "table"
    )
}

/// Rows in each table of `schema`, counted (the planner's statistics may predate the seed).
pub fn table_sizes(conn: &mut Connection, schema: &str) -> Result<BTreeMap<String, f64>, String> {
    let r = conn
        .simple_query(&format!(
            "select c.relname,
                    (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I.%I',
                                                              n.nspname, c.relname),
                                                       false, true, '')))[1]::text
               from pg_class c join pg_namespace n on n.oid = c.relnamespace
              where n.nspname = '{schema}' and c.relkind in ('r', 'p')"
        ))
        .map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    for row in r.iter().flat_map(|q| &q.rows) {
        if let (Some(Some(name)), Some(Some(n))) = (row.first(), row.get(1)) {
            out.insert(name.clone(), n.parse().unwrap_or(0.0));
        }
    }
    Ok(out)
}

/// The plan of `sql` (EXPLAIN, FORMAT JSON: nothing runs).
pub fn explain(conn: &mut Connection, sql: &str) -> Result<Value, String> {
    let r = conn
        .simple_query(&format!("explain (format json) {sql}"))
        .map_err(|e| e.to_string())?;
    let text = r
        .iter()
        .flat_map(|q| &q.rows)
        .filter_map(|row| row.first().cloned().flatten())
        .collect::<String>();
    let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(v[0]["Plan"].clone())
}

/// A table is large from this many rows: re-reading it per key is the cost that grows.
pub const LARGE: f64 = 1000.0;

/// Where a plan reads a large table once per row of something else (rows × keys): a
/// sequential scan of it inside a correlated SubPlan (run per outer row; an InitPlan or a
/// hashed SubPlan runs once), or on the inner side of a Nested Loop (rescanned per outer
/// row) with no Materialize or Hash between them (those read it once).
pub fn plan_problems(plan: &Value, sizes: &BTreeMap<String, f64>) -> Vec<String> {
    let mut out = Vec::new();
    walk(plan, None, sizes, &mut out);
    out
}

/// `per_row`: the node (SubPlan, Nested Loop inner) that re-runs this subtree per row, if any.
fn walk(
    node: &Value,
    per_row: Option<String>,
    sizes: &BTreeMap<String, f64>,
    out: &mut Vec<String>,
) {
    let node_type = node["Node Type"].as_str().unwrap_or("");
    let mut per_row = per_row;
    if node["Parent Relationship"] == "SubPlan"
        && !node["Subplan Name"]
            .as_str()
            .is_some_and(|n| n.starts_with("hashed"))
    {
        per_row = Some(format!(
            "{} (run per outer row)",
            node["Subplan Name"].as_str().unwrap_or("SubPlan")
        ));
    }
    if matches!(node_type, "Materialize" | "Hash") && node["Parent Relationship"] != "SubPlan" {
        per_row = None;
    }
    if node_type == "Seq Scan" {
        if let (Some(why), Some(rel)) = (&per_row, node["Relation Name"].as_str()) {
            let rows = sizes.get(rel).copied().unwrap_or(0.0);
            if rows >= LARGE {
                out.push(format!("Seq Scan on {rel} ({rows:.0} rows) inside {why}"));
            }
        }
    }
    let Some(children) = node["Plans"].as_array() else {
        return;
    };
    for child in children {
        let inner_of_loop = node_type == "Nested Loop" && child["Parent Relationship"] == "Inner";
        let why = if inner_of_loop {
            Some("the inner side of a Nested Loop (rescanned per outer row)".to_string())
        } else {
            per_row.clone()
        };
        walk(child, why, sizes, out);
    }
}

/// Runs `sql` (several statements allowed), keeping nothing.
pub fn exec(conn: &mut Connection, sql: &str) -> Result<(), String> {
    db::run_file(conn, "(scale)", sql)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
