//! A run's headline numbers: latency percentiles, goodput and the connection phase as the
//! terminal's first lines after pgbench's report; throughput, goodput, percentiles, failures,
//! retries and skips as the page's figures under its header.

use hotbench_stats::RunRecord;

use crate::analysis::number::num;
use crate::analysis::section::{Block, Section};

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("headline");
    let t = &rec.totals.counters;
    let p = &rec.totals.latency;
    if p.count > 0 {
        s.line(format!(
            "latency percentiles: p50 = {:.3} ms, p90 = {:.3} ms, p99 = {:.3} ms, p99.9 = {:.3} ms, max = {:.3} ms",
            p.p50_ms, p.p90_ms, p.p99_ms, p.p999_ms, p.max_ms
        ));
    }
    s.line(format!(
        "goodput = {:.6} per s ({} useful of {} committed transactions)",
        rec.totals.goodput_per_s, t.goodput, t.cnt
    ));
    let c = &rec.connect;
    if c.connections > 0 {
        s.line(format!(
            "connection phase: {} connections in {:.3} ms, up to {} at a time, {} retries",
            c.connections, c.duration_ms, c.concurrency, c.retries
        ));
    }
    let mut kpis = vec![
        (num(rec.totals.tps), "transactions/s"),
        (num(rec.totals.goodput_per_s), "goodput/s"),
    ];
    for (v, label) in [
        (p.p50_ms, "p50 ms"),
        (p.p99_ms, "p99 ms"),
        (p.p999_ms, "p99.9 ms"),
        (p.max_ms, "max ms"),
    ] {
        kpis.push((num(v), label));
    }
    kpis.push((t.failures().to_string(), "failed"));
    kpis.push((t.retries.to_string(), "retries"));
    if t.skipped > 0 {
        kpis.push((t.skipped.to_string(), "skipped"));
    }
    s.push(Block::Kpis(
        kpis.into_iter().map(|(v, l)| (v, l.to_string())).collect(),
    ));
    s
}
