//! `hotbench sweep`: the same workload at several client counts, and the Universal
//! Scalability Law fitted to each series' measured throughput. The sweep document
//! (`hotbench_results::SweepDoc`) keeps every run's full record; `text::sweep` and
//! `html::sweep` render it.

use hotbench_results::{SweepDoc, SweepSeries};

use crate::analysis::usl::{self, UslFit};

/// The USL fitted to a series' tps by client count.
pub fn fit(series: &SweepSeries<'_>) -> Result<UslFit, usl::UslError> {
    let pts: Vec<(f64, f64)> = series
        .points()
        .iter()
        .map(|p| (p.clients as f64, p.tps))
        .collect();
    usl::fit(&pts)
}

/// The first series' fit (the only one for a plain workload).
pub fn first_fit(doc: &SweepDoc) -> Result<UslFit, usl::UslError> {
    match doc.series().first() {
        Some(s) => fit(s),
        None => Err(usl::UslError::TooFewPoints(0)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hotbench_results::testdata::record;
    use hotbench_results::RunRecord;

    /// Runs at 1, 2, 4 and 8 clients scaling with σ = 0.1.
    pub(crate) fn sweep() -> SweepDoc {
        let runs: Vec<RunRecord> = [1usize, 2, 4, 8]
            .iter()
            .map(|&n| {
                let x = 100.0 * n as f64 / (1.0 + 0.1 * (n as f64 - 1.0));
                let mut r = record("s", 1.0, 2, (x * 2.0) as u64, 1.0);
                r.bench.clients = n;
                r
            })
            .collect();
        SweepDoc::new(runs)
    }

    /// Two labelled series, "hot" (σ = 0.3) and "spread" (σ = 0.01).
    pub(crate) fn labelled_sweep() -> SweepDoc {
        let mut runs = Vec::new();
        for (label, sigma) in [("hot", 0.3), ("spread", 0.01)] {
            for n in [1usize, 2, 4, 8, 16] {
                let x = 100.0 * n as f64 / (1.0 + sigma * (n as f64 - 1.0));
                let mut r = record("s", 1.0, 2, (x * 2.0) as u64, 1.0);
                r.bench.clients = n;
                runs.push((label.to_string(), r));
            }
        }
        SweepDoc::labelled(runs)
    }

    #[test]
    fn sweep_is_fitted() {
        let f = first_fit(&sweep()).unwrap();
        assert!((f.sigma - 0.1).abs() < 0.02, "{f:?}");
    }

    #[test]
    fn labelled_series_are_fitted_separately() {
        let doc = labelled_sweep();
        let fits: Vec<(String, f64)> = doc
            .series()
            .iter()
            .map(|s| (s.label.clone(), fit(s).unwrap().sigma))
            .collect();
        assert_eq!(fits[0].0, "hot");
        assert!(fits[0].1 > 0.25 && fits[1].1 < 0.05, "{fits:?}");
        let json = serde_json::to_string(&doc).unwrap();
        let back: SweepDoc = serde_json::from_str(&json).unwrap();
        assert_eq!(back.series().len(), 2);
    }
}
