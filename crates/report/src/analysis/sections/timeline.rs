//! A run over time, drawn on the page: throughput and goodput (per client group when there
//! are several, with `--perturb`'s baselines marked), latency percentiles per interval, the
//! HDR percentile distribution of the whole run, failures and retries per interval. The
//! terminal has pgbench's `-P` lines and the totals instead. Also the same charts over
//! several runs, for pages that compare them.

use std::collections::BTreeMap;

use hotbench_stats::{IntervalStats, RunRecord};

use crate::analysis::chart::{Chart, Series};
use crate::analysis::section::Section;
use crate::analysis::sections::perturbations;
use crate::analysis::timeline::intervals;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("timeline");
    let mut throughput = throughput_chart(rec);
    perturbations::mark(&mut throughput, rec);
    s.chart(throughput);
    s.chart(latency_chart(rec));
    s.chart(hdr_chart(&[("latency", rec)]));
    s.chart(failures_chart(rec));
    s
}

fn xs(rec: &RunRecord) -> Vec<f64> {
    intervals(rec).iter().map(|i| i.t).collect()
}

fn col(rec: &RunRecord, f: impl Fn(&IntervalStats) -> f64) -> Vec<Option<f64>> {
    intervals(rec).iter().map(|i| Some(f(&i.totals))).collect()
}

pub fn throughput_chart(rec: &RunRecord) -> Chart {
    let mut c = Chart::new("Throughput and goodput", "time", "s", "per second");
    c.x = xs(rec);
    c.series.push(Series::line("tps", col(rec, |s| s.tps)));
    c.series
        .push(Series::line("goodput/s", col(rec, |s| s.goodput_per_s)));
    if rec.groups.len() > 1 {
        for (gi, g) in rec.groups.iter().enumerate() {
            let vals = intervals(rec)
                .iter()
                .map(|i| i.groups.get(gi).map(|s| s.tps))
                .collect();
            let mut s = Series::line(format!("tps {}", g.name), vals);
            s.dashed = true;
            c.series.push(s);
        }
    }
    c
}

pub fn latency_chart(rec: &RunRecord) -> Chart {
    let mut c = Chart::new("Latency percentiles per interval", "time", "s", "ms");
    c.x = xs(rec);
    let has = |s: &IntervalStats| s.cnt > 0;
    let pick = |f: fn(&IntervalStats) -> f64| -> Vec<Option<f64>> {
        intervals(rec)
            .iter()
            .map(|i| has(&i.totals).then(|| f(&i.totals)))
            .collect()
    };
    c.series.push(Series::line("p50", pick(|s| s.lat_p50_ms)));
    c.series.push(Series::line("p90", pick(|s| s.lat_p90_ms)));
    c.series.push(Series::line("p99", pick(|s| s.lat_p99_ms)));
    c.series.push(Series::line("max", pick(|s| s.lat_max_ms)));
    c.y_log = true;
    c
}

/// `(x = 1/(1−q), latency ms)` points of a run's whole-run histogram.
pub fn hdr_points(rec: &RunRecord) -> Vec<(f64, f64)> {
    let h = &rec.totals.counters.hist;
    let n = h.len();
    let mut pts: Vec<(f64, f64)> = h
        .distribution(5)
        .into_iter()
        .filter(|(_, p, _)| *p < 100.0)
        .map(|(v, p, _)| (1.0 / (1.0 - p / 100.0), v as f64 / 1000.0))
        .collect();
    if n > 0 {
        // The maximum, placed where the last sample's quantile is.
        let last = pts.last().map(|p| p.0).unwrap_or(1.0);
        pts.push(((n as f64).max(last * 1.0001), h.max_us() as f64 / 1000.0));
    }
    pts.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-12);
    pts
}

pub fn hdr_chart(runs: &[(&str, &RunRecord)]) -> Chart {
    let mut c = Chart::new(
        "Latency percentile distribution (HDR)",
        "quantile",
        "percentile",
        "ms",
    );
    let lines: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|(name, r)| (name.to_string(), hdr_points(r)))
        .collect();
    align_into(&mut c, lines);
    c
}

/// Puts several `(x, y)` lines on one shared x axis (missing points are gaps).
pub fn align_into(c: &mut Chart, lines: Vec<(String, Vec<(f64, f64)>)>) {
    let key = |x: f64| (x * 1e6).round() as i64;
    let mut all: BTreeMap<i64, f64> = BTreeMap::new();
    for (_, pts) in &lines {
        for (x, _) in pts {
            if x.is_finite() {
                all.insert(key(*x), *x);
            }
        }
    }
    let index: BTreeMap<i64, usize> = all.keys().enumerate().map(|(i, k)| (*k, i)).collect();
    c.x = all.values().copied().collect();
    for (label, pts) in lines {
        let mut vals = vec![None; c.x.len()];
        for (x, y) in pts {
            if let Some(&i) = index.get(&key(x)) {
                vals[i] = y.is_finite().then_some(y);
            }
        }
        c.series.push(Series::line(label, vals));
    }
}

pub fn failures_chart(rec: &RunRecord) -> Chart {
    let mut c = Chart::new("Failures and retries per interval", "time", "s", "count");
    c.x = xs(rec);
    c.series
        .push(Series::line("failed", col(rec, |s| s.failed as f64)));
    c.series
        .push(Series::line("retried txns", col(rec, |s| s.retried as f64)));
    c.series
        .push(Series::line("retries", col(rec, |s| s.retries as f64)));
    let any = |f: fn(&IntervalStats) -> u64| rec.timeline.iter().any(|i| f(&i.totals) > 0);
    if any(|s| s.skipped) {
        c.series
            .push(Series::line("skipped", col(rec, |s| s.skipped as f64)));
    }
    if any(|s| s.reconnects) {
        c.series.push(Series::line(
            "reconnects",
            col(rec, |s| s.reconnects as f64),
        ));
    }
    c
}

/// Throughput of several runs on one time axis.
pub fn throughput_overlay(runs: &[(&str, &RunRecord)], goodput: bool) -> Chart {
    let title = if goodput {
        "Goodput over time"
    } else {
        "Throughput over time"
    };
    let mut c = Chart::new(title, "time", "s", "per second");
    let lines = runs
        .iter()
        .map(|(name, r)| {
            (
                name.to_string(),
                intervals(r)
                    .iter()
                    .map(|i| {
                        (
                            i.t,
                            if goodput {
                                i.totals.goodput_per_s
                            } else {
                                i.totals.tps
                            },
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    align_into(&mut c, lines);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdr_points_rise_to_the_max() {
        let r = hotbench_stats::testdata::record("x", 1.0, 2, 400, 2.0);
        let pts = hdr_points(&r);
        assert!(pts.len() > 5);
        assert!(pts.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1));
        let max = r.totals.counters.hist.max_us() as f64 / 1000.0;
        assert_eq!(pts.last().unwrap().1, max);
    }
}
