//! The sweep document (`hotbench sweep --json`, format [`SWEEP_FORMAT`]): the same workload
//! at several client counts, or at several connection-pool sizes with the clients fixed
//! (`--pool-size 4,8,16`, [`SweepAxis::PoolSize`]: each run's pool size is its
//! `pooler.pool_size`; a run without a pooler is the no-pooler baseline), every run's full
//! record, grouped into series when a scenario's variants were swept. Declared once, here: the binary writes it, the report crate reads it
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
    /// What varies from run to run (absent: client counts, as before the axis existed).
    #[serde(default, skip_serializing_if = "SweepAxis::is_clients")]
    pub axis: SweepAxis,
}

/// What a sweep varies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepAxis {
    /// Client counts (`-c 1,2,4,8`), with a USL fit per series.
    #[default]
    Clients,
    /// Connection-pool sizes at fixed clients (`--pool-size 4,8,16`).
    PoolSize,
}

impl SweepAxis {
    fn is_clients(&self) -> bool {
        *self == SweepAxis::Clients
    }
}

/// One measured point of a series.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SweepPoint {
    pub clients: usize,
    /// The run's connection-pool size (`None`: no pooler).
    pub pool_size: Option<u32>,
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
                pool_size: r.pooler.as_ref().and_then(|p| p.pool_size),
                tps: r.totals.tps,
                goodput_per_s: r.totals.goodput_per_s,
                p99_ms: r.totals.latency.p99_ms,
            })
            .collect()
    }
}

impl SweepSeries<'_> {
    /// The pool size with the most goodput (ties: the lower p99), among the pooled runs.
    pub fn best_pool_size(&self) -> Option<SweepPoint> {
        self.points()
            .into_iter()
            .filter(|p| p.pool_size.is_some())
            .max_by(|a, b| {
                a.goodput_per_s
                    .total_cmp(&b.goodput_per_s)
                    .then(b.p99_ms.total_cmp(&a.p99_ms))
            })
    }

    /// The series' run without a pooler (the baseline of a pool-size sweep), if any.
    pub fn without_pooler(&self) -> Option<SweepPoint> {
        self.points().into_iter().find(|p| p.pool_size.is_none())
    }
}

impl SweepDoc {
    pub fn new(runs: Vec<RunRecord>) -> SweepDoc {
        SweepDoc {
            format: SWEEP_FORMAT.into(),
            runs,
            labels: Vec::new(),
            thresholds: Vec::new(),
            axis: SweepAxis::Clients,
        }
    }

    /// The same document over another axis.
    pub fn with_axis(mut self, axis: SweepAxis) -> SweepDoc {
        self.axis = axis;
        self
    }

    /// A sweep of several series: `runs[i]` belongs to `labels[i]`.
    pub fn labelled(runs: Vec<(String, RunRecord)>) -> SweepDoc {
        let (labels, runs) = runs.into_iter().unzip();
        SweepDoc {
            format: SWEEP_FORMAT.into(),
            runs,
            labels,
            thresholds: Vec::new(),
            axis: SweepAxis::Clients,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PoolerSetup;

    fn run(pool: Option<u32>, goodput: f64, p99: f64) -> RunRecord {
        let mut r = RunRecord::default();
        r.bench.clients = 100;
        r.totals.goodput_per_s = goodput;
        r.totals.latency.p99_ms = p99;
        r.pooler = pool.map(|n| PoolerSetup {
            pool_size: Some(n),
            ..Default::default()
        });
        r
    }

    #[test]
    fn the_best_pool_size_has_the_most_goodput_then_the_lowest_p99() {
        let doc = SweepDoc::new(vec![
            run(None, 500.0, 900.0),
            run(Some(4), 800.0, 300.0),
            run(Some(8), 1200.0, 200.0),
            run(Some(16), 1200.0, 150.0),
            run(Some(32), 700.0, 400.0),
        ])
        .with_axis(SweepAxis::PoolSize);
        let s = &doc.series()[0];
        let best = s.best_pool_size().expect("best");
        assert_eq!((best.pool_size, best.p99_ms), (Some(16), 150.0));
        assert_eq!(s.without_pooler().map(|p| p.goodput_per_s), Some(500.0));
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["axis"], "pool_size");
        let back: SweepDoc = serde_json::from_value(v).unwrap();
        assert_eq!(back.axis, SweepAxis::PoolSize);
        let old: SweepDoc =
            serde_json::from_str(r#"{"format": "hotbench-sweep/1", "runs": []}"#).unwrap();
        assert_eq!(
            old.axis,
            SweepAxis::Clients,
            "documents from before the axis"
        );
        assert!(serde_json::to_value(&old).unwrap().get("axis").is_none());
    }
}
