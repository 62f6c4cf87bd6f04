//! Checks: the values a check may use from the run (`{{committed}}`, `{{goodput:NAME}}`, …)
//! and the reading of check rows (`name`, `ok`, `detail`) from the check statements'
//! results, where a statement that answers nothing is an error rather than a silent pass.

use std::collections::BTreeMap;

use hotbench_stats::RunRecord;

use crate::error::{Result, ScenarioError};
use hotbench_stats::CheckResult;

/// Values checks may use: `{{committed}}`, `{{goodput}}`, `{{failed}}`, and per group or
/// per script file `{{committed:NAME}}`, `{{goodput:NAME}}`.
pub fn run_values(r: &RunRecord) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let c = &r.totals.counters;
    out.insert("committed".into(), c.cnt.to_string());
    out.insert("goodput".into(), c.goodput.to_string());
    out.insert("failed".into(), c.failures().to_string());
    let mut per: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for g in &r.groups {
        let e = per.entry(g.name.clone()).or_default();
        e.0 += g.totals.counters.cnt;
        e.1 += g.totals.counters.goodput;
        for s in &g.scripts {
            let e = per.entry(s.name.clone()).or_default();
            e.0 += s.totals.counters.cnt;
            e.1 += s.totals.counters.goodput;
        }
    }
    for (name, (cnt, good)) in per {
        out.insert(format!("committed:{name}"), cnt.to_string());
        out.insert(format!("goodput:{name}"), good.to_string());
    }
    out
}

/// One check per row of every row-returning statement. A statement that returns no rows
/// is an error, not a pass: a check that vanishes would show as `✔ 0/0`.
pub fn check_rows(file: &str, results: &[hotbench_wire::QueryResult]) -> Result<Vec<CheckResult>> {
    let mut out = Vec::new();
    for (i, r) in results.iter().filter(|r| !r.columns.is_empty()).enumerate() {
        if r.rows.is_empty() {
            return Err(ScenarioError::manifest(
                file,
                None,
                format!(
                    "check query {} returned no rows (each check must return a row: name, ok, detail; \
                     aggregate so that it always does)",
                    i + 1
                ),
            ));
        }
        let col = |n: &str| r.columns.iter().position(|c| c == n);
        let (Some(ni), Some(oi)) = (col("name"), col("ok")) else {
            return Err(ScenarioError::manifest(
                file,
                None,
                format!(
                    "a check must return columns name, ok, detail (got {})",
                    r.columns.join(", ")
                ),
            ));
        };
        let di = col("detail");
        for row in &r.rows {
            let get = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
            let ok = matches!(get(oi).as_str(), "t" | "true" | "1" | "on" | "yes");
            out.push(CheckResult {
                name: get(ni),
                ok,
                detail: di.map(get).unwrap_or_default(),
            });
        }
    }
    Ok(out)
}
