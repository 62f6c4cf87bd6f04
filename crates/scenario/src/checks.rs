//! Checks: the values a check may use from the run (`{{committed}}`, `{{goodput:NAME}}`, …)
//! and the reading of check rows (`name`, `ok`, `detail`) from the check statements'
//! results, where a statement that answers nothing is an error rather than a silent pass.

use std::collections::BTreeMap;

use hotbench_results::RunRecord;

use crate::error::{Result, ScenarioError};
use hotbench_results::CheckResult;

/// Values checks may use: `{{committed}}`, `{{goodput}}`, `{{failed}}`, `{{unfinished}}`,
/// `{{in_doubt}}`, and per group or per script file `{{committed:NAME}}`, `{{goodput:NAME}}`,
/// `{{unfinished:NAME}}`, `{{in_doubt:NAME}}`. Unfinished transactions were cancelled at the
/// end of the run, and a cancel can lose the race with a commit; in-doubt ones are those and
/// the ones cut by a lost connection, which a restart can end after the commit: the server
/// may hold up to that many more results than the clients saw succeed, so exact-count checks
/// allow for them.
pub fn run_values(r: &RunRecord) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let c = &r.totals.counters;
    out.insert("committed".into(), c.cnt.to_string());
    out.insert("goodput".into(), c.goodput.to_string());
    out.insert("failed".into(), c.failures().to_string());
    out.insert("unfinished".into(), c.unfinished.to_string());
    out.insert("in_doubt".into(), in_doubt(c).to_string());
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    for g in &r.groups {
        per.entry(g.name.clone())
            .or_default()
            .add(&g.totals.counters);
        for s in &g.scripts {
            per.entry(s.name.clone())
                .or_default()
                .add(&s.totals.counters);
        }
    }
    for (name, n) in per {
        out.insert(format!("committed:{name}"), n.committed.to_string());
        out.insert(format!("goodput:{name}"), n.goodput.to_string());
        out.insert(format!("unfinished:{name}"), n.unfinished.to_string());
        out.insert(format!("in_doubt:{name}"), n.in_doubt.to_string());
    }
    out
}

/// A group's or script's counts as checks see them.
#[derive(Default)]
struct Counts {
    committed: u64,
    goodput: u64,
    unfinished: u64,
    in_doubt: u64,
}

/// Transactions whose outcome the client never learnt: cancelled at the end (the cancel may
/// come after the commit) or cut by a lost connection (a restart may end the session after
/// the commit and before its answer).
fn in_doubt(c: &hotbench_stats::TxnCounters) -> u64 {
    c.unfinished.saturating_add(c.connection_failures)
}

impl Counts {
    fn add(&mut self, c: &hotbench_stats::TxnCounters) {
        self.committed = self.committed.saturating_add(c.cnt);
        self.goodput = self.goodput.saturating_add(c.goodput);
        self.unfinished = self.unfinished.saturating_add(c.unfinished);
        self.in_doubt = self.in_doubt.saturating_add(in_doubt(c));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_transactions_are_a_run_value_overall_and_per_group() {
        let mut r = RunRecord::default();
        r.totals.counters.cnt = 10;
        r.totals.counters.unfinished = 3;
        let mut totals = r.totals.clone();
        totals.counters.unfinished = 2;
        r.groups
            .push(hotbench_results::GroupRecord::plain("consumer", 4, totals));
        let v = run_values(&r);
        assert_eq!(v["committed"], "10");
        assert_eq!(v["unfinished"], "3");
        assert_eq!(v["unfinished:consumer"], "2");
    }

    /// A restart cuts sessions, some after their commit: those transactions are in doubt
    /// with the ones cancelled at the end.
    #[test]
    fn transactions_cut_by_a_lost_connection_are_in_doubt() {
        let mut r = RunRecord::default();
        r.totals.counters.unfinished = 3;
        r.totals.counters.connection_failures = 4;
        let mut totals = r.totals.clone();
        totals.counters.unfinished = 1;
        totals.counters.connection_failures = 2;
        r.groups
            .push(hotbench_results::GroupRecord::plain("consumer", 4, totals));
        let v = run_values(&r);
        assert_eq!(v["in_doubt"], "7");
        assert_eq!(v["in_doubt:consumer"], "3");
    }
}
