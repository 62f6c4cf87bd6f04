//! Live metrics in Prometheus' text exposition format (version 0.0.4), for `run
//! --prometheus`: cumulative counters since the start of the benchmark and the last
//! interval's throughput and latency percentiles. A pure function of the numbers; serving
//! them over HTTP is the binary's job.

use std::fmt::Write as _;

use hotbench_stats::IntervalStats;

/// What the endpoint shows: running totals plus the last interval.
#[derive(Debug, Clone, Default)]
pub struct LiveMetrics {
    pub clients: usize,
    pub server_version: String,
    /// Seconds since the benchmark started (end of the last interval).
    pub elapsed_s: f64,
    pub transactions: u64,
    pub goodput: u64,
    pub failed: u64,
    pub retries: u64,
    pub skipped: u64,
    pub reconnects: u64,
    /// The last interval, when one has ended.
    pub last: Option<IntervalStats>,
    /// The last waits sample, `event → backends` (when probes report them live).
    pub waits: Vec<(String, f64)>,
}

impl LiveMetrics {
    /// Adds one interval to the running totals and makes it the last one.
    pub fn add_interval(&mut self, t: f64, s: &IntervalStats) {
        self.elapsed_s = t;
        self.transactions += s.cnt;
        self.goodput += s.goodput;
        self.failed += s.failed;
        self.retries += s.retries;
        self.skipped += s.skipped;
        self.reconnects += s.reconnects;
        self.last = Some(s.clone());
    }
}

/// A label value escaped as the format requires (`\`, `"`, newline).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn metric(o: &mut String, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "# TYPE {name} {kind}");
    for (labels, v) in samples {
        let v = if v.is_finite() { *v } else { 0.0 };
        let _ = writeln!(o, "{name}{labels} {v}");
    }
}

/// The exposition text.
pub fn exposition(m: &LiveMetrics) -> String {
    let mut o = String::new();
    let one = |v: f64| vec![(String::new(), v)];
    metric(
        &mut o,
        "hotbench_info",
        "gauge",
        "hotbench and server versions.",
        &[(
            format!(
                "{{version=\"{}\",server_version=\"{}\"}}",
                label(env!("CARGO_PKG_VERSION")),
                label(&m.server_version)
            ),
            1.0,
        )],
    );
    metric(
        &mut o,
        "hotbench_clients",
        "gauge",
        "Clients of the run.",
        &one(m.clients as f64),
    );
    metric(
        &mut o,
        "hotbench_elapsed_seconds",
        "gauge",
        "Seconds since the benchmark started.",
        &one(m.elapsed_s),
    );
    for (name, help, v) in [
        (
            "hotbench_transactions_total",
            "Committed transactions.",
            m.transactions,
        ),
        (
            "hotbench_goodput_total",
            "Committed transactions that did useful work.",
            m.goodput,
        ),
        ("hotbench_failures_total", "Failed transactions.", m.failed),
        ("hotbench_retries_total", "Retries.", m.retries),
        (
            "hotbench_skipped_total",
            "Transactions skipped under -R/-L.",
            m.skipped,
        ),
        (
            "hotbench_reconnects_total",
            "Connections re-established.",
            m.reconnects,
        ),
    ] {
        metric(&mut o, name, "counter", help, &one(v as f64));
    }
    if let Some(s) = &m.last {
        metric(
            &mut o,
            "hotbench_tps",
            "gauge",
            "Committed transactions per second over the last interval.",
            &one(s.tps),
        );
        metric(
            &mut o,
            "hotbench_goodput_per_second",
            "gauge",
            "Useful transactions per second over the last interval.",
            &one(s.goodput_per_s),
        );
        metric(
            &mut o,
            "hotbench_latency_milliseconds",
            "gauge",
            "Transaction latency percentiles over the last interval.",
            &[
                ("{quantile=\"0.5\"}".into(), s.lat_p50_ms),
                ("{quantile=\"0.9\"}".into(), s.lat_p90_ms),
                ("{quantile=\"0.99\"}".into(), s.lat_p99_ms),
                ("{quantile=\"1\"}".into(), s.lat_max_ms),
            ],
        );
    }
    if !m.waits.is_empty() {
        let samples: Vec<(String, f64)> = m
            .waits
            .iter()
            .map(|(e, v)| (format!("{{event=\"{}\"}}", label(e)), *v))
            .collect();
        metric(
            &mut o,
            "hotbench_server_waits",
            "gauge",
            "Run backends in each wait event (last sample).",
            &samples,
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_counters_gauges_and_escaped_labels() {
        let mut m = LiveMetrics {
            clients: 8,
            server_version: "17 \"beta\"\n".into(),
            ..Default::default()
        };
        let s = IntervalStats {
            cnt: 100,
            goodput: 90,
            failed: 2,
            retries: 5,
            tps: 100.0,
            goodput_per_s: 90.0,
            lat_p50_ms: 1.5,
            lat_p90_ms: 3.0,
            lat_p99_ms: 9.0,
            lat_max_ms: 20.0,
            ..Default::default()
        };
        m.add_interval(1.0, &s);
        m.add_interval(2.0, &s);
        m.waits.push(("Lock:tuple".into(), 3.5));
        let t = exposition(&m);
        assert!(
            t.contains(
                "# TYPE hotbench_transactions_total counter\nhotbench_transactions_total 200\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("hotbench_latency_milliseconds{quantile=\"0.99\"} 9\n"),
            "{t}"
        );
        assert!(t.contains("server_version=\"17 \\\"beta\\\"\\n\""), "{t}");
        assert!(
            t.contains("hotbench_server_waits{event=\"Lock:tuple\"} 3.5\n"),
            "{t}"
        );
        assert!(t.contains("hotbench_tps 100\n"));
    }
}
