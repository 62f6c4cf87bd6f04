//! The text report's lines for hot keys (`--key`), per-host results and fairness: who and
//! what the transactions were about, after pgbench's report and never inside it.

use std::fmt::Write as _;

use hotbench_stats::RunRecord;

/// Hot keys shown in the text report (all of them are in the JSON).
const TOP_KEYS: usize = 10;

pub fn key_and_fairness_lines(o: &mut String, rec: &RunRecord) {
    if !rec.hot_keys.is_empty() {
        let _ = writeln!(
            o,
            "hot keys (top {} of {} by share of transaction time):",
            TOP_KEYS.min(rec.hot_keys.len()),
            rec.hot_keys.len()
        );
        for k in rec.hot_keys.iter().take(TOP_KEYS) {
            let failed: u64 = k.failed.values().sum();
            let _ = writeln!(
                o,
                "  {}={}: {:.1}% of time, {} attempts, {} committed, {} failed, {} retries, p50 = {:.3} ms, p99 = {:.3} ms",
                k.variable,
                k.value,
                k.time_share * 100.0,
                k.attempts,
                k.committed,
                failed,
                k.retries,
                k.p50_ms,
                k.p99_ms
            );
        }
    }
    for f in &rec.fairness {
        if f.clients < 2 {
            continue;
        }
        let jain = f.jain_index.map_or("–".to_string(), |j| format!("{j:.3}"));
        let starved = if f.starved.is_empty() {
            String::new()
        } else {
            format!(
                "; starved: {} client(s) with < 1/4 of the median {:.0} commits (client {})",
                f.starved.len(),
                f.median_committed,
                f.starved
                    .iter()
                    .take(5)
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let _ = writeln!(
            o,
            "fairness of group {}: Jain's index = {jain} over {} clients{starved}",
            f.group, f.clients
        );
    }
}
