//! Live metrics for `run --prometheus` and `scenario run --prometheus`: cumulative counters
//! since the start of the benchmark (of the variant, in a ladder) and the last interval's
//! throughput and latency percentiles, encoded by `prometheus-client` (OpenMetrics text,
//! which Prometheus scrapes natively). In a ladder every series also carries the
//! `scenario` and `variant` labels ([`LADDER_LABELS`]) and the scenario's monitors are
//! `hotbench_monitor{name="backlog"}`. A pure function of the numbers; serving them over
//! HTTP is the binary's job. `deploy/grafana/hotbench.json` charts them (a test keeps it to
//! what is exported here). With `--perturb`, each judged perturbation's baseline, dip, work
//! lost and TTR90/TTR99 are gauges labelled by its spec and start
//! (`hotbench_perturbation_ttr90_seconds{perturbation="10s:checkpoint",at="10.002"}`):
//! judged live in `run` (at the perturbations' scheduled times, `stats::recovery_live`),
//! replaced by the record's own judgement at the run's end; a ladder's at each variant's end,
//! kept for the rest of the ladder under the variant's labels.

use std::sync::atomic::AtomicU64;

use hotbench_results::recovery_live::LiveRecovery;
use hotbench_results::{IntervalStats, PerturbationRecord};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

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
    /// Labels on every series (a ladder's `scenario` and `variant`).
    pub labels: Vec<(String, String)>,
    /// A scenario's monitors, `name → last sample` (backlog, dead tuples, …).
    pub monitors: Vec<(String, f64)>,
    /// `--perturb`: judged while the run goes on (`run`), from the intervals' goodput.
    pub live_recovery: Option<LiveRecovery>,
    /// The perturbations judged so far, each with the labels of the run it belongs to (a
    /// ladder keeps its finished variants'), exported as `hotbench_perturbation_*`.
    pub perturbations: Vec<(Vec<(String, String)>, PerturbationRecord)>,
}

/// The labels a ladder's series carry.
pub const LADDER_LABELS: [&str; 2] = ["scenario", "variant"];

impl LiveMetrics {
    /// Fresh metrics for one variant of a ladder: its series are labelled
    /// [`LADDER_LABELS`] and its counters start from zero.
    pub fn for_variant(
        scenario: &str,
        variant: &str,
        clients: usize,
        server_version: &str,
    ) -> LiveMetrics {
        LiveMetrics {
            clients,
            server_version: server_version.to_string(),
            labels: LADDER_LABELS
                .iter()
                .map(|k| k.to_string())
                .zip([scenario.to_string(), variant.to_string()])
                .collect(),
            ..Default::default()
        }
    }

    /// Adds one interval to the running totals and makes it the last one.
    pub fn add_interval(&mut self, t: f64, s: &IntervalStats) {
        if let Some(live) = self.live_recovery.as_mut() {
            let units = s.goodput_per_s * (t - self.elapsed_s).max(0.0);
            live.interval(t, units, s.failed, s.reconnects);
            let entries = live.entries();
            self.set_perturbations(&entries);
        }
        self.elapsed_s = t;
        // Saturating: the totals of a run whose `sum:` work saturated stay at the top.
        self.transactions = self.transactions.saturating_add(s.cnt);
        self.goodput = self.goodput.saturating_add(s.goodput);
        self.failed = self.failed.saturating_add(s.failed);
        self.retries = self.retries.saturating_add(s.retries);
        self.skipped = self.skipped.saturating_add(s.skipped);
        self.reconnects = self.reconnects.saturating_add(s.reconnects);
        self.last = Some(s.clone());
    }
}

impl LiveMetrics {
    /// The run's perturbations as judged (live, or at its end), under the current labels;
    /// those of other labels (a ladder's earlier variants) stay.
    pub fn set_perturbations(&mut self, entries: &[PerturbationRecord]) {
        let labels = self.labels.clone();
        self.perturbations.retain(|(l, _)| *l != labels);
        self.perturbations.extend(
            entries
                .iter()
                .filter(|e| e.ran())
                .map(|e| (labels.clone(), e.clone())),
        );
    }

    /// The run's perturbations judged on its whole timeline (its record): they replace the
    /// live ones, and live judging stops.
    pub fn perturbations_judged(&mut self, entries: &[PerturbationRecord]) {
        self.live_recovery = None;
        self.set_perturbations(entries);
    }
}

/// The content type of [`exposition`]'s text (OpenMetrics, which Prometheus scrapes natively).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type FloatGauge = Gauge<f64, AtomicU64>;

/// A float for the exposition: non-finite values (no interval yet, a division by zero)
/// are shown as 0 rather than as NaN or Inf.
fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

fn float_gauge(v: f64) -> FloatGauge {
    let g = FloatGauge::default();
    g.set(finite(v));
    g
}

/// A labelled float gauge: one sample per `(label value, value)`.
fn float_family(
    label: &str,
    samples: &[(String, f64)],
) -> Family<Vec<(String, String)>, FloatGauge> {
    let family = Family::<Vec<(String, String)>, FloatGauge>::default();
    for (value, v) in samples {
        family
            .get_or_create(&vec![(label.to_string(), value.clone())])
            .set(finite(*v));
    }
    family
}

/// The exposition text (OpenMetrics, encoded by `prometheus-client`; the metric names and
/// labels are part of hotbench's interface: dashboards query them).
pub fn exposition(m: &LiveMetrics) -> String {
    let mut r = Registry::with_labels(
        m.labels
            .iter()
            .map(|(k, v)| (k.clone().into(), v.clone().into())),
    );
    r.register(
        "hotbench",
        "hotbench and server versions",
        Info::new(vec![
            ("version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
            ("server_version".to_string(), m.server_version.clone()),
        ]),
    );
    let clients = Gauge::<i64>::default();
    clients.set(i64::try_from(m.clients).unwrap_or(i64::MAX));
    r.register("hotbench_clients", "Clients of the run", clients);
    r.register(
        "hotbench_elapsed_seconds",
        "Seconds since the benchmark started",
        float_gauge(m.elapsed_s),
    );
    for (name, help, v) in [
        (
            "hotbench_transactions",
            "Committed transactions",
            m.transactions,
        ),
        (
            "hotbench_goodput",
            "Committed transactions that did useful work",
            m.goodput,
        ),
        ("hotbench_failures", "Failed transactions", m.failed),
        ("hotbench_retries", "Retries", m.retries),
        (
            "hotbench_skipped",
            "Transactions skipped under -R/-L",
            m.skipped,
        ),
        (
            "hotbench_reconnects",
            "Connections re-established",
            m.reconnects,
        ),
    ] {
        // A counter's samples get the `_total` suffix: `hotbench_transactions_total`.
        let c = Counter::<u64>::default();
        c.inc_by(v);
        r.register(name, help, c);
    }
    if let Some(s) = &m.last {
        r.register(
            "hotbench_tps",
            "Committed transactions per second over the last interval",
            float_gauge(s.tps),
        );
        r.register(
            "hotbench_goodput_per_second",
            "Useful transactions per second over the last interval",
            float_gauge(s.goodput_per_s),
        );
        let quantiles = [
            ("0.5", s.lat_p50_ms),
            ("0.9", s.lat_p90_ms),
            ("0.99", s.lat_p99_ms),
            ("1", s.lat_max_ms),
        ]
        .map(|(q, v)| (q.to_string(), v));
        r.register(
            "hotbench_latency_milliseconds",
            "Transaction latency percentiles over the last interval",
            float_family("quantile", &quantiles),
        );
    }
    if !m.waits.is_empty() {
        r.register(
            "hotbench_server_waits",
            "Run backends in each wait event (last sample)",
            float_family("event", &m.waits),
        );
    }
    if !m.monitors.is_empty() {
        r.register(
            "hotbench_monitor",
            "A scenario monitor's last sample (backlog, dead tuples, …)",
            float_family("name", &m.monitors),
        );
    }
    let mut out = String::new();
    // Writing into a String cannot fail; an encoder error would leave the text as far as it got.
    let _ = encode(&mut out, &r);
    if !m.perturbations.is_empty() {
        // Their own labels (a ladder's earlier variants too), so a registry without the
        // current variant's; one exposition: the first text's `# EOF` goes.
        let mut more = String::new();
        let _ = encode(&mut more, &perturbation_registry(&m.perturbations));
        if let Some(head) = out.strip_suffix("# EOF\n") {
            out.truncate(head.len());
        }
        out.push_str(&more);
    }
    out
}

/// `hotbench_perturbation_*{…labels, perturbation="10s:checkpoint", at="10.002"}` of each
/// judged perturbation: baseline, dip and work lost, `recovered` (1 once TTR90 was seen), and
/// TTR90/TTR99 once seen.
fn perturbation_registry(entries: &[(Vec<(String, String)>, PerturbationRecord)]) -> Registry {
    type Fam = Family<Vec<(String, String)>, FloatGauge>;
    let fams: [(&str, &str, Fam); 6] = [
        (
            "hotbench_perturbation_baseline_per_second",
            "Goodput per second before the perturbation",
            Fam::default(),
        ),
        (
            "hotbench_perturbation_dip_per_second",
            "Lowest rolling goodput per second after it, until TTR90 (or now)",
            Fam::default(),
        ),
        (
            "hotbench_perturbation_lost",
            "Goodput units short of the baseline after it, until TTR90 (or now)",
            Fam::default(),
        ),
        (
            "hotbench_perturbation_recovered",
            "1 once the goodput was back to 90% of the baseline (and held), else 0",
            Fam::default(),
        ),
        (
            "hotbench_perturbation_ttr90_seconds",
            "Time to recover to 90% of the baseline",
            Fam::default(),
        ),
        (
            "hotbench_perturbation_ttr99_seconds",
            "Time to recover to 99% of the baseline",
            Fam::default(),
        ),
    ];
    for (labels, e) in entries {
        let Some(baseline) = e.baseline_per_s else {
            continue;
        };
        let mut l = labels.clone();
        l.push(("perturbation".to_string(), e.spec.clone()));
        l.push(("at".to_string(), format!("{:.3}", e.at_s)));
        let values = [
            Some(baseline),
            e.dip_per_s,
            e.lost,
            Some(if e.ttr90_s.is_some() { 1.0 } else { 0.0 }),
            e.ttr90_s,
            e.ttr99_s,
        ];
        for ((_, _, fam), v) in fams.iter().zip(values) {
            if let Some(v) = v {
                fam.get_or_create(&l).set(finite(v));
            }
        }
    }
    let mut r = Registry::default();
    for (name, help, fam) in fams {
        r.register(name, help, fam);
    }
    r
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
            t.contains("# TYPE hotbench_transactions counter\nhotbench_transactions_total 200\n"),
            "{t}"
        );
        assert!(
            t.contains("hotbench_latency_milliseconds{quantile=\"0.99\"} 9.0\n"),
            "{t}"
        );
        assert!(t.contains("server_version=\"17 \\\"beta\\\"\\n\""), "{t}");
        assert!(
            t.contains("hotbench_server_waits{event=\"Lock:tuple\"} 3.5\n"),
            "{t}"
        );
        assert!(t.contains("hotbench_tps 100.0\n"), "{t}");
        assert!(t.ends_with("# EOF\n"), "{t}");
    }

    /// The sample names and labels are hotbench's interface (dashboards query them): the
    /// same as before the encoder was prometheus-client's.
    #[test]
    fn sample_names_and_labels_stay_as_dashboards_query_them() {
        let mut m = LiveMetrics::default();
        m.add_interval(1.0, &IntervalStats::default());
        m.waits.push(("Lock:tuple".into(), 1.0));
        let t = exposition(&m);
        let mut names: Vec<&str> = t
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split([' ', '{']).next().unwrap_or(""))
            .collect();
        names.dedup();
        assert_eq!(
            names,
            [
                "hotbench_info",
                "hotbench_clients",
                "hotbench_elapsed_seconds",
                "hotbench_transactions_total",
                "hotbench_goodput_total",
                "hotbench_failures_total",
                "hotbench_retries_total",
                "hotbench_skipped_total",
                "hotbench_reconnects_total",
                "hotbench_tps",
                "hotbench_goodput_per_second",
                "hotbench_latency_milliseconds",
                "hotbench_server_waits",
            ]
        );
        assert!(t.contains("hotbench_info{version=\""), "{t}");
        assert!(t.contains(",server_version=\"\"} 1\n"), "{t}");
        for q in ["0.5", "0.9", "0.99", "1"] {
            assert!(
                t.contains(&format!(
                    "hotbench_latency_milliseconds{{quantile=\"{q}\"}} "
                )),
                "{t}"
            );
        }
    }

    #[test]
    fn a_ladder_variant_labels_every_series_and_exports_its_monitors() {
        let mut m = LiveMetrics::for_variant("queue", "skip-locked", 10, "18.1");
        m.add_interval(
            1.0,
            &IntervalStats {
                tps: 50.0,
                ..Default::default()
            },
        );
        m.monitors = vec![("backlog".into(), 2000.0), ("dead tuples".into(), 5.0)];
        let t = exposition(&m);
        let q = "scenario=\"queue\",variant=\"skip-locked\"";
        assert!(t.contains(&format!("hotbench_tps{{{q}}} 50.0\n")), "{t}");
        assert!(t.contains("name=\"dead tuples\""), "{t}");
        let samples: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(samples.len() > 10, "{t}");
        for l in samples {
            assert!(
                l.contains("scenario=\"queue\"") && l.contains("variant=\"skip-locked\""),
                "{l}"
            );
        }
    }

    fn judged(spec: &str, at: f64, ttr90: Option<f64>) -> PerturbationRecord {
        let mut e = PerturbationRecord::new(spec.into(), "checkpoint", String::new(), at);
        e.baseline_per_s = Some(100.0);
        e.dip_per_s = Some(5.0);
        e.lost = Some(250.0);
        e.ttr90_s = ttr90;
        e.ttr99_s = ttr90.map(|t| t + 1.0);
        e
    }

    #[test]
    fn judged_perturbations_are_gauges_labelled_by_spec_and_start() {
        let mut m = LiveMetrics::default();
        m.add_interval(1.0, &IntervalStats::default());
        let mut failed = judged("1s:checkpoint", 1.0, None);
        failed.error = Some("42501: no".into());
        let mut unjudged = judged("0s:checkpoint", 0.0, None);
        unjudged.baseline_per_s = None;
        m.perturbations_judged(&[
            judged("10s:checkpoint", 10.0, Some(2.5)),
            judged("every30s:ddl-lock=t,5s", 30.0, None),
            failed,
            unjudged,
        ]);
        let t = exposition(&m);
        let a = "perturbation=\"10s:checkpoint\",at=\"10.000\"";
        for line in [
            format!("hotbench_perturbation_ttr90_seconds{{{a}}} 2.5\n"),
            format!("hotbench_perturbation_ttr99_seconds{{{a}}} 3.5\n"),
            format!("hotbench_perturbation_lost{{{a}}} 250.0\n"),
            format!("hotbench_perturbation_dip_per_second{{{a}}} 5.0\n"),
            format!("hotbench_perturbation_recovered{{{a}}} 1.0\n"),
        ] {
            assert!(t.contains(&line), "{line} in {t}");
        }
        let b = "perturbation=\"every30s:ddl-lock=t,5s\",at=\"30.000\"";
        assert!(
            t.contains(&format!("hotbench_perturbation_recovered{{{b}}} 0.0\n")),
            "{t}"
        );
        assert!(
            !t.contains(&format!("hotbench_perturbation_ttr90_seconds{{{b}}}")),
            "{t}"
        );
        assert!(
            !t.contains("\"1s:checkpoint\"") && !t.contains("\"0s:checkpoint\""),
            "{t}"
        );
        assert_eq!(t.matches("# EOF").count(), 1, "{t}");
        assert!(t.ends_with("# EOF\n"), "{t}");
    }

    #[test]
    fn a_run_judges_live_and_its_record_replaces_the_live_answers() {
        use hotbench_results::recovery_live::Scheduled;
        let mut m = LiveMetrics {
            live_recovery: Some(LiveRecovery::new(
                vec![Scheduled {
                    spec: "10s:ddl-lock=t,2s".into(),
                    kind: "ddl-lock".into(),
                    first_s: 10.0,
                    every_s: None,
                    acts_s: Some(2.0),
                }],
                Default::default(),
            )),
            ..Default::default()
        };
        let iv = |per_s: f64| IntervalStats {
            goodput_per_s: per_s,
            ..Default::default()
        };
        for i in 0..20 {
            m.add_interval(
                (i + 1) as f64,
                &iv(if (10..12).contains(&i) { 0.0 } else { 100.0 }),
            );
            if i == 10 {
                let t = exposition(&m);
                assert!(t.contains("hotbench_perturbation_recovered{perturbation=\"10s:ddl-lock=t,2s\",at=\"10.000\"} 0.0"), "{t}");
            }
        }
        assert!(
            exposition(&m).contains("hotbench_perturbation_ttr90_seconds{perturbation=\"10s:ddl-lock=t,2s\",at=\"10.000\"} 3.0"),
            "{}",
            exposition(&m)
        );
        // The record's entry (sent 2 ms late) replaces the scheduled one.
        m.perturbations_judged(&[judged("10s:ddl-lock=t,2s", 10.002, Some(2.998))]);
        let t = exposition(&m);
        assert!(
            t.contains("at=\"10.002\"} 2.998") && !t.contains("at=\"10.000\""),
            "{t}"
        );
        assert!(m.live_recovery.is_none());
    }

    #[test]
    fn a_ladder_keeps_its_finished_variants_perturbations_under_their_labels() {
        let mut m = LiveMetrics::for_variant("queue", "for-update", 10, "18.1");
        m.perturbations_judged(&[judged("5s:checkpoint", 5.0, Some(1.0))]);
        let kept = std::mem::take(&mut m.perturbations);
        m = LiveMetrics::for_variant("queue", "skip-locked", 10, "18.1");
        m.perturbations = kept;
        m.perturbations_judged(&[judged("5s:checkpoint", 5.0, Some(4.0))]);
        m.add_interval(1.0, &IntervalStats::default());
        let t = exposition(&m);
        for (variant, ttr) in [("for-update", "1.0"), ("skip-locked", "4.0")] {
            let want = format!(
                "hotbench_perturbation_ttr90_seconds{{scenario=\"queue\",variant=\"{variant}\",perturbation=\"5s:checkpoint\",at=\"5.000\"}} {ttr}\n"
            );
            assert!(t.contains(&want), "{want} in {t}");
        }
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            assert!(
                l.contains("scenario=\"queue\"") && l.contains("variant=\""),
                "{l}"
            );
        }
    }
}
