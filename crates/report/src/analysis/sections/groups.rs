//! One terminal line per client group when a run has several: its clients and rate, its
//! transactions, throughput, goodput, failures and latency (the page draws each group's
//! throughput on the timeline's chart).

use hotbench_stats::RunRecord;

use crate::analysis::section::Section;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("groups");
    if rec.groups.len() < 2 {
        return s;
    }
    for g in &rec.groups {
        let gt = &g.totals;
        let rate = g
            .rate
            .map(|r| format!(", rate {r} tps"))
            .unwrap_or_default();
        s.line(format!(
            "group {}: {} clients{rate}: {} transactions, tps = {:.6}, goodput = {:.6}, failed = {}, p50 = {:.3} ms, p99 = {:.3} ms",
            g.name,
            g.clients,
            gt.counters.cnt,
            gt.tps,
            gt.goodput_per_s,
            gt.counters.failures(),
            gt.latency.p50_ms,
            gt.latency.p99_ms
        ));
    }
    s
}
