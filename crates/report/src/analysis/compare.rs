//! `hotbench compare`: several runs side by side (tps, goodput, p50/p99/p99.9, failures,
//! retries, top waits), each with its ratio to the first run, a 95% confidence interval (tps
//! and goodput from the per-interval means, p50/p99 from the histogram's order statistics),
//! and a verdict: `better`, `worse` or `within noise`. Noise is judged per metric by Welch's
//! t-test on the runs' per-interval values corrected for autocorrelation (effective sample
//! sizes, [`crate::analysis::noise`]): p > 0.05 is "within noise". Each metric knows which direction is
//! better. The runs' times to recover are compared apart (`analysis::compare_ttr`).
//! Shown by `analysis::documents::compare` (the TTRs by `documents::compare_ttr`).

use hotbench_results::{CellComparison, ComparisonDoc, IntervalStats, MetricComparison, RunRecord};
use serde::Serialize;

use crate::analysis::compare_ttr::{compare_ttr, TtrRow};
use crate::analysis::noise::{effective_n, mean_ci95, welch_p, welch_p_corrected};

const ALPHA: f64 = 0.05;

/// Fewest full intervals per run for a noise verdict.
pub const MIN_INTERVALS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// The first run, everything is compared with it.
    Reference,
    Noise,
    Better,
    Worse,
    /// Different, without a per-interval series to test (p99.9, counts).
    Untested,
}

impl Verdict {
    /// The verdict in words, as printed and stored in the JSON.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Reference => "reference",
            Verdict::Noise => "within noise",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Untested => "untested",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub value: f64,
    /// Value / the first run's value.
    pub ratio: Option<f64>,
    /// p-value of the autocorrelation-corrected test against the first run.
    pub p: Option<f64>,
    /// The same test counting every interval as an independent sample.
    pub p_uncorrected: Option<f64>,
    pub verdict: Verdict,
    /// 95% confidence interval of the value.
    pub ci95: Option<(f64, f64)>,
    /// Full intervals of this run's series, and their effective sample size.
    pub intervals: usize,
    pub n_eff: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// The metric has a per-interval series (so a noise test is possible).
    pub tested: bool,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub names: Vec<String>,
    pub rows: Vec<Row>,
    /// Top three waits per run, when probes ran.
    pub waits: Vec<Option<String>>,
    /// Times to recover of the runs' perturbations, each run a side (`with_repeats` groups
    /// them); empty when none was perturbed.
    pub ttr: Vec<TtrRow>,
}

impl Comparison {
    /// The TTRs compared with the runs taken `repeats` at a time (`compare --repeats N`).
    pub fn with_repeats(mut self, runs: &[(String, RunRecord)], repeats: usize) -> Comparison {
        self.ttr = compare_ttr(runs, repeats);
        self
    }
}

/// Per-interval values of full intervals (a last, partial interval is left out).
fn series(r: &RunRecord, f: fn(&IntervalStats) -> f64) -> Vec<f64> {
    let tl = &r.timeline;
    let mut widths: Vec<f64> = tl
        .iter()
        .scan(0.0, |prev, i| {
            let w = i.t - *prev;
            *prev = i.t;
            Some(w)
        })
        .collect();
    let nominal = {
        let mut w = widths.clone();
        w.sort_by(f64::total_cmp);
        w.get(w.len() / 2).copied().unwrap_or(1.0)
    };
    widths.truncate(tl.len());
    tl.iter()
        .zip(widths)
        .filter(|(_, w)| *w >= nominal * 0.5)
        .map(|(i, _)| f(&i.totals))
        .collect()
}

/// One compared metric: how to read it from a run and from an interval.
struct MetricSpec {
    name: &'static str,
    higher_is_better: bool,
    total: fn(&RunRecord) -> f64,
    per_interval: Option<fn(&IntervalStats) -> f64>,
    /// A latency quantile: its confidence interval comes from the histogram's order
    /// statistics (else from the per-interval series' mean).
    quantile: Option<f64>,
}

const METRICS: [MetricSpec; 7] = [
    MetricSpec {
        name: "tps",
        higher_is_better: true,
        total: |r| r.totals.tps,
        per_interval: Some(|s| s.tps),
        quantile: None,
    },
    MetricSpec {
        name: "goodput/s",
        higher_is_better: true,
        total: |r| r.totals.goodput_per_s,
        per_interval: Some(|s| s.goodput_per_s),
        quantile: None,
    },
    MetricSpec {
        name: "p50 ms",
        higher_is_better: false,
        total: |r| r.totals.latency.p50_ms,
        per_interval: Some(|s| s.lat_p50_ms),
        quantile: Some(0.50),
    },
    MetricSpec {
        name: "p99 ms",
        higher_is_better: false,
        total: |r| r.totals.latency.p99_ms,
        per_interval: Some(|s| s.lat_p99_ms),
        quantile: Some(0.99),
    },
    MetricSpec {
        name: "p99.9 ms",
        higher_is_better: false,
        total: |r| r.totals.latency.p999_ms,
        per_interval: None,
        quantile: None,
    },
    MetricSpec {
        name: "failed",
        higher_is_better: false,
        total: |r| r.totals.counters.failures() as f64,
        per_interval: None,
        quantile: None,
    },
    MetricSpec {
        name: "retries",
        higher_is_better: false,
        total: |r| r.totals.counters.retries as f64,
        per_interval: None,
        quantile: None,
    },
];

/// 95% interval of latency quantile `q` (ms) from the run's histogram: the order statistics
/// at q ± 1.96·sqrt(q(1−q)/n), with n the transactions divided by the autocorrelation time
/// `tau` of the per-interval series (neighbouring transactions share a server state).
fn quantile_ci(r: &RunRecord, q: f64, tau: f64) -> Option<(f64, f64)> {
    let h = &r.totals.counters.hist;
    let n = h.len() as f64 / tau.max(1.0);
    if n < 2.0 {
        return None;
    }
    let half = 1.96 * (q * (1.0 - q) / n).sqrt();
    let at = |q: f64| h.value_at_quantile_us(q.clamp(0.0, 1.0)) as f64 / 1000.0;
    Some((at(q - half), at(q + half)))
}

fn verdict(value: f64, base: f64, p: Option<f64>, higher_is_better: bool) -> Verdict {
    if value == base {
        return Verdict::Noise;
    }
    match p {
        Some(p) if p > ALPHA => Verdict::Noise,
        None => Verdict::Untested,
        Some(_) if (value > base) == higher_is_better => Verdict::Better,
        Some(_) => Verdict::Worse,
    }
}

pub fn compare(runs: &[(String, RunRecord)]) -> Comparison {
    let mut rows = Vec::new();
    let first = runs.first().map(|(_, r)| r);
    for m in &METRICS {
        let base_series = match (first, m.per_interval) {
            (Some(r), Some(f)) => series(r, f),
            _ => Vec::new(),
        };
        let cells = runs
            .iter()
            .enumerate()
            .map(|(i, (_, r))| {
                let value = (m.total)(r);
                let own = m.per_interval.map(|f| series(r, f)).unwrap_or_default();
                let n_eff = (own.len() >= 2).then(|| effective_n(&own));
                let ci95 = match (m.quantile, n_eff) {
                    (Some(q), Some(n)) => quantile_ci(r, q, own.len() as f64 / n),
                    (None, Some(_)) => mean_ci95(&own),
                    _ => None,
                }
                // Every compared metric is a rate or a latency: never below 0, whatever a
                // noisy series' normal approximation says.
                .map(|(lo, hi)| (lo.max(0.0), hi.max(0.0)));
                let mut cell = Cell {
                    value,
                    ratio: None,
                    p: None,
                    p_uncorrected: None,
                    verdict: Verdict::Reference,
                    ci95,
                    intervals: own.len(),
                    n_eff,
                };
                let Some(first) = first.filter(|_| i > 0) else {
                    return cell;
                };
                let base = (m.total)(first);
                cell.ratio = (base != 0.0).then(|| value / base);
                // Two or three intervals say nothing about noise: no verdict.
                if base_series.len() >= MIN_INTERVALS && own.len() >= MIN_INTERVALS {
                    cell.p = welch_p_corrected(&base_series, &own);
                    cell.p_uncorrected = welch_p(&base_series, &own);
                }
                cell.verdict = verdict(value, base, cell.p, m.higher_is_better);
                cell
            })
            .collect();
        rows.push(Row {
            metric: m.name,
            higher_is_better: m.higher_is_better,
            tested: m.per_interval.is_some(),
            cells,
        });
    }
    let waits = runs
        .iter()
        .map(|(_, r)| {
            let p = r.probe_record()?;
            (!p.waits.is_empty()).then(|| p.top_waits_text(3))
        })
        .collect();
    Comparison {
        names: runs.iter().map(|(n, _)| n.clone()).collect(),
        rows,
        waits,
        ttr: compare_ttr(runs, 1),
    }
}

/// The comparison as data (`compare --json`).
pub fn to_json(c: &Comparison) -> ComparisonDoc {
    ComparisonDoc {
        format: String::new(),
        runs: c.names.clone(),
        metrics: c
            .rows
            .iter()
            .map(|r| MetricComparison {
                metric: r.metric.into(),
                higher_is_better: r.higher_is_better,
                cells: r
                    .cells
                    .iter()
                    .zip(&c.names)
                    .map(|(cell, name)| CellComparison {
                        run: name.clone(),
                        value: cell.value,
                        ratio: cell.ratio,
                        ci95: cell.ci95.map(|(a, b)| [a, b]),
                        intervals: cell.intervals,
                        n_eff: cell.n_eff,
                        p: cell.p,
                        p_uncorrected: cell.p_uncorrected,
                        verdict: cell.verdict.word().into(),
                    })
                    .collect(),
            })
            .collect(),
        top_waits: c.waits.clone(),
        ttr: c.ttr.iter().map(ttr_to_json).collect(),
    }
}

fn ttr_to_json(r: &TtrRow) -> hotbench_results::TtrComparison {
    hotbench_results::TtrComparison {
        perturbation: r.perturbation.clone(),
        level: r.level.to_lowercase(),
        rules_differ: r.rules_differ,
        cells: r
            .cells
            .iter()
            .map(|c| hotbench_results::TtrCellComparison {
                side: c.side.clone(),
                firings: c.firings,
                recovered: c.recovered,
                mean_s: c.mean_s,
                sd_s: c.sd_s,
                min_s: c.min_s,
                max_s: c.max_s,
                ci95: c.ci95.map(|(a, b)| [a, b]),
                resolution_s: c.resolution_s,
                diff_s: c.diff_s,
                p: c.p,
                verdict: c.verdict.into(),
            })
            .collect(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hotbench_results::testdata::record;

    /// Runs a and b alike, c twice as fast (also for the renderers' tests).
    pub(crate) fn three_runs() -> Vec<(String, RunRecord)> {
        let a = record("a", 1.0, 6, 6000, 2.0);
        let b = record("b", 1.0, 6, 6000, 2.0);
        let mut c = record("c", 1.0, 6, 12000, 1.0);
        for (i, iv) in c.timeline.iter_mut().enumerate() {
            iv.totals.tps += (i % 3) as f64 * 10.0;
        }
        vec![
            ("a".to_string(), a),
            ("b".to_string(), b),
            ("c".to_string(), c),
        ]
    }

    /// Two runs too short for a noise verdict.
    pub(crate) fn short() -> Comparison {
        compare(&[
            ("x".to_string(), record("x", 1.0, 2, 200, 1.0)),
            ("y".to_string(), record("y", 1.0, 2, 400, 1.0)),
        ])
    }

    #[test]
    fn intervals_of_rates_never_go_below_zero() {
        // A stalling run: most intervals commit nothing, a few a lot.
        let mut r = record("s", 1.0, 8, 8000, 2.0);
        for (i, iv) in r.timeline.iter_mut().enumerate() {
            iv.totals.tps = if i % 4 == 0 { 4000.0 } else { 0.0 };
            iv.totals.goodput_per_s = iv.totals.tps;
        }
        let cmp = compare(&[("s".into(), r.clone()), ("t".into(), r)]);
        for row in &cmp.rows {
            for c in &row.cells {
                if let Some((lo, hi)) = c.ci95 {
                    assert!(lo >= 0.0 && hi >= lo, "{}: {lo}..{hi}", row.metric);
                }
            }
        }
    }

    #[test]
    fn ratios_and_noise() {
        let cmp = compare(&three_runs());
        let tps = &cmp.rows[0];
        assert_eq!(tps.cells[0].verdict, Verdict::Reference);
        assert_eq!(tps.cells[1].verdict, Verdict::Noise);
        assert_eq!(tps.cells[2].verdict, Verdict::Better);
        assert!((tps.cells[2].ratio.unwrap() - 2.0).abs() < 1e-9);
        let p50 = &cmp.rows[2];
        assert_eq!(p50.metric, "p50 ms");
        let json = serde_json::to_value(to_json(&cmp)).unwrap();
        assert_eq!(json["metrics"][0]["cells"][1]["verdict"], "within noise");
        assert_eq!(json["metrics"][0]["cells"][2]["verdict"], "better");
        assert_eq!(json["metrics"][0]["cells"][0]["verdict"], "reference");
        let ci = &json["metrics"][0]["cells"][0]["ci95"];
        assert!(
            ci[0].as_f64().unwrap() <= 1000.0 && ci[1].as_f64().unwrap() >= 1000.0,
            "{ci}"
        );
        let p50_ci = cmp.rows[2].cells[0].ci95.unwrap();
        assert!(p50_ci.0 <= cmp.rows[2].cells[0].value && cmp.rows[2].cells[0].value <= p50_ci.1);
        assert_eq!(short().rows[0].cells[1].verdict, Verdict::Untested);
    }
}
