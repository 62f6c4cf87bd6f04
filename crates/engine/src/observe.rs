//! Watching a run as it goes: progress lines, live Prometheus metrics and server probes are
//! all [`RunObserver`]s behind one interface, so the coordinator calls them the same way and
//! a new one is added without touching it. Called once per interval or period, never per
//! transaction (dynamic dispatch costs nothing that matters here).

use hotbench_results::{IntervalRecord, IntervalStats, RunRecord};

/// Something that follows a run. Every method has a do-nothing default.
pub trait RunObserver {
    /// Each `-P` period: seconds since the start (Unix seconds with `--progress-timestamp`)
    /// and the period's statistics.
    fn progress(&mut self, _at: f64, _stats: &IntervalStats) {}
    /// Each timeline interval, once every thread has reported it.
    fn interval(&mut self, _interval: &IntervalRecord) {}
    /// The run ended: add what the observer measured to the record before it is written.
    fn finish(&mut self, _record: &mut RunRecord) {}
}
