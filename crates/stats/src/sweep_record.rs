//! The sweep document (`hotbench sweep --json`, format [`SWEEP_FORMAT`]): the same workload
//! at several client counts, every run's full record, grouped into series when a scenario's
//! variants were swept. Declared once, here: the binary writes it, the report crate reads it
//! (and fits the Universal Scalability Law to each series).

use serde::{Deserialize, Serialize};

use crate::record::RunRecord;

/// Bumped on any incompatible change of the sweep document's shape.
pub const SWEEP_FORMAT: &str = "hotbench-sweep/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepDoc {
    pub format: String,
    /// One run per client count (and variant), in the order they ran.
    pub runs: Vec<RunRecord>,
    /// The series (scenario variant) of each run, when a scenario was swept; empty for a
    /// single workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// `--threshold` outcomes, when any were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::ThresholdOutcome>,
}

/// One measured point of a series.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SweepPoint {
    pub clients: usize,
    pub tps: f64,
    pub goodput_per_s: f64,
    pub p99_ms: f64,
}

/// One curve of a sweep: a label (empty for a plain workload) and its runs.
pub struct SweepSeries<'a> {
    pub label: String,
    pub runs: Vec<&'a RunRecord>,
}

impl SweepSeries<'_> {
    pub fn points(&self) -> Vec<SweepPoint> {
        self.runs
            .iter()
            .map(|r| SweepPoint {
                clients: r.bench.clients,
                tps: r.totals.tps,
                goodput_per_s: r.totals.goodput_per_s,
                p99_ms: r.totals.latency.p99_ms,
            })
            .collect()
    }
}

impl SweepDoc {
    pub fn new(runs: Vec<RunRecord>) -> SweepDoc {
        SweepDoc {
            format: SWEEP_FORMAT.into(),
            runs,
            labels: Vec::new(),
            thresholds: Vec::new(),
        }
    }

    /// A sweep of several series: `runs[i]` belongs to `labels[i]`.
    pub fn labelled(runs: Vec<(String, RunRecord)>) -> SweepDoc {
        let (labels, runs) = runs.into_iter().unzip();
        SweepDoc {
            format: SWEEP_FORMAT.into(),
            runs,
            labels,
            thresholds: Vec::new(),
        }
    }

    /// The series in order of first appearance.
    pub fn series(&self) -> Vec<SweepSeries<'_>> {
        let mut out: Vec<SweepSeries<'_>> = Vec::new();
        for (i, r) in self.runs.iter().enumerate() {
            let label = self.labels.get(i).cloned().unwrap_or_default();
            match out.iter_mut().find(|s| s.label == label) {
                Some(s) => s.runs.push(r),
                None => out.push(SweepSeries {
                    label,
                    runs: vec![r],
                }),
            }
        }
        out
    }
}
