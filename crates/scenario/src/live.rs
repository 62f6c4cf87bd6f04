//! A ladder watched live (`scenario run --prometheus`): the binary's metrics endpoint is
//! told when each variant starts and, every interval, the variant's figures (its work
//! group's, as the progress line shows them) with the monitors' latest samples (a queue's
//! backlog and dead tuples), so a dashboard follows an hour-long ladder variant by variant;
//! at each variant's end, its judged perturbations (`--perturb`).

use hotbench_engine::RunObserver;
use hotbench_results::{IntervalRecord, IntervalStats, PerturbationRecord, RunRecord};

use crate::background::Monitors;

/// Where a ladder's live figures go (the binary's `--prometheus` endpoint).
pub trait LiveSink {
    /// A variant starts: its series begin (counters from zero).
    fn variant_started(&self, scenario: &str, variant: &str, clients: usize, server_version: &str);
    /// An interval of the running variant ended at `t` seconds.
    fn interval(&self, t: f64, work: &IntervalStats, monitors: &[(String, f64)]);
    /// The variant's run ended and its perturbations were judged (`--perturb`).
    fn perturbations_judged(&self, _entries: &[PerturbationRecord]) {}
}

/// The engine observer that feeds a [`LiveSink`] during one variant's run.
pub(crate) struct LiveObserver<'a> {
    pub sink: &'a dyn LiveSink,
    pub monitors: &'a Monitors,
    /// Index of the work group among the run's groups (`None`: the totals).
    pub work_group: Option<usize>,
}

impl RunObserver for LiveObserver<'_> {
    fn interval(&mut self, iv: &IntervalRecord) {
        let work = self
            .work_group
            .and_then(|g| iv.groups.get(g))
            .unwrap_or(&iv.totals);
        self.sink.interval(iv.t, work, &self.monitors.latest());
    }

    fn finish(&mut self, record: &mut RunRecord) {
        if !record.perturbations.is_empty() {
            self.sink.perturbations_judged(&record.perturbations);
        }
    }
}
