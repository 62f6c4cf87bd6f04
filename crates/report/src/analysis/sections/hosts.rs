//! One terminal line per host a multi-host run's clients spread over (`-h a,b`): its
//! clients, those that moved in, its transactions, throughput, failures and latency.

use hotbench_stats::RunRecord;

use crate::analysis::section::Section;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("hosts");
    for h in &rec.hosts {
        let c = &h.totals.counters;
        s.line(format!(
            "host {}: {} clients ({} moved in): {} transactions, tps = {:.6}, failed = {}, p50 = {:.3} ms, p99 = {:.3} ms",
            h.host,
            h.clients,
            h.moved_in,
            c.cnt,
            h.totals.tps,
            c.failures(),
            h.totals.latency.p50_ms,
            h.totals.latency.p99_ms
        ));
    }
    s
}
