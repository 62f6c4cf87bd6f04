//! What `hotbench run` and scenario ladders watch a run with, as engine observers: pgbench's
//! `-P` progress lines, the live Prometheus metrics, and the server probes (told when the
//! benchmark started, then stored in the record at the end).

use hotbench_engine::RunObserver;
use hotbench_results::{IntervalRecord, IntervalStats, RunRecord};

/// pgbench's `progress: …` line on stderr at each `-P` period.
pub struct ProgressLines {
    pub timestamp: bool,
    pub throttled: bool,
    pub latency_limit: bool,
    pub retries: bool,
}

impl RunObserver for ProgressLines {
    fn progress(&mut self, at: f64, stats: &IntervalStats) {
        eprintln!(
            "{}",
            hotbench_report::progress_line(
                at,
                self.timestamp,
                stats,
                self.throttled,
                self.latency_limit,
                self.retries
            )
        );
    }
}

/// `--prometheus`: each interval updates the served metrics; the perturbations are judged
/// live, then as the record has them.
pub struct LiveMetrics(pub crate::metrics_server::MetricsServer);

impl RunObserver for LiveMetrics {
    fn interval(&mut self, iv: &IntervalRecord) {
        self.0.update(|l| l.add_interval(iv.t, &iv.totals));
    }

    fn finish(&mut self, record: &mut RunRecord) {
        self.0
            .update(|l| l.perturbations_judged(&record.perturbations));
    }
}

/// The live judge of `--perturb` (none without it), at the perturbations' scheduled times.
pub fn live_recovery(
    perturb: &[hotbench_settings::perturb::Perturbation],
) -> Option<hotbench_results::recovery_live::LiveRecovery> {
    use hotbench_results::recovery_live::{LiveRecovery, Scheduled};
    use hotbench_settings::perturb::At;
    if perturb.is_empty() {
        return None;
    }
    let schedule = perturb
        .iter()
        .map(|p| Scheduled {
            spec: p.to_string(),
            kind: p.kind.name().to_string(),
            first_s: p.first_us() as f64 / 1e6,
            every_s: match p.at {
                At::Every(us) => Some(us as f64 / 1e6),
                At::Once(_) => None,
            },
            acts_s: p.kind.hold_us().map(|us| us as f64 / 1e6),
        })
        .collect();
    Some(LiveRecovery::new(schedule, Default::default()))
}

/// `scenario run --prometheus`: each variant's series, labelled by scenario and variant, with
/// the scenario's monitors.
pub struct LadderMetrics(pub crate::metrics_server::MetricsServer);

impl hotbench_scenario::LiveSink for LadderMetrics {
    fn variant_started(&self, scenario: &str, variant: &str, clients: usize, server: &str) {
        self.0.update(|l| {
            // The earlier variants' judged perturbations stay, under their labels.
            let judged = std::mem::take(&mut l.perturbations);
            *l = hotbench_report::text::prometheus::LiveMetrics::for_variant(
                scenario, variant, clients, server,
            );
            l.perturbations = judged;
        });
    }

    fn perturbations_judged(&self, entries: &[hotbench_results::PerturbationRecord]) {
        self.0.update(|l| l.perturbations_judged(entries));
    }

    fn interval(&self, t: f64, work: &IntervalStats, monitors: &[(String, f64)]) {
        self.0.update(|l| {
            l.add_interval(t, work);
            l.monitors = monitors.to_vec();
        });
    }
}

/// The server probes over their own connection; their record joins the run's at the end.
pub struct ProbeObserver {
    handle: Option<hotbench_probe::ProbeHandle>,
    /// Tell the probe when the benchmark started (from the first intervals' arrival).
    follow_origin: bool,
    origin_est: f64,
}

impl ProbeObserver {
    pub fn new(handle: hotbench_probe::ProbeHandle, follow_origin: bool) -> Self {
        ProbeObserver {
            handle: Some(handle),
            follow_origin,
            origin_est: f64::INFINITY,
        }
    }
}

impl RunObserver for ProbeObserver {
    fn interval(&mut self, iv: &IntervalRecord) {
        // Intervals arrive a little after they end: the earliest of the first few tells the
        // probe when the benchmark started, so its intervals end on the run's (exact t later).
        let est = unix_now() - iv.t;
        if let (Some(p), true) = (
            &self.handle,
            self.follow_origin && iv.t <= 5.0 && est < self.origin_est - 0.002,
        ) {
            p.set_origin(est);
            self.origin_est = est;
        }
    }

    fn finish(&mut self, record: &mut RunRecord) {
        if let Some(p) = self.handle.take() {
            record.probes = Some(p.stop());
            hotbench_results::align_probes(record);
            hotbench_results::recovery::server_side(record);
        }
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
