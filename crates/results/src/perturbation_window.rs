//! What the clients saw inside each perturbation's window against the rest of the run
//! ([`SpanStats`]: committed and failed transactions, latency p50/p99, errors by SQLSTATE),
//! and for a queue how long its backlog took to drain ([`BacklogDrain`]), both read from the
//! record alone (the timeline's per-interval SQLSTATE counts and latency sketches, a ladder's
//! backlog monitor), so a record read back gives the same answer.
//!
//! A perturbation's window is the timeline intervals overlapping `[at, to]`, `to` the later
//! of the end of its action (`end_s`) and its recovery window's end (`window_end_s`: its TTR90
//! point, else the run's end), so a restart's reconnect errors and a lock's queue both fall
//! inside. *Outside* is every interval overlapping no perturbation's window (the same for
//! every entry of a run). Intervals are counted whole: `--interval 100ms` draws a tighter
//! window than the default 1 s.
use crate::ladder_record::MonitorSeries;
use crate::perturbation_record::{BacklogDrain, PerturbationRecord, SpanStats};
use crate::record::IntervalRecord;
use hotbench_stats::latency_sketch::LatencySketch;

/// One interval with its start.
struct Span<'a> {
    from: f64,
    to: f64,
    iv: &'a IntervalRecord,
}

fn spans(timeline: &[IntervalRecord]) -> Vec<Span<'_>> {
    let mut from = 0.0;
    timeline
        .iter()
        .map(|iv| {
            let to = iv.t.max(from);
            let s = Span { from, to, iv };
            from = to;
            s
        })
        .collect()
}

/// Where `e`'s window ends: the later of its action's end and its recovery window's end, else
/// the run's end.
fn window_end(e: &PerturbationRecord, run_end: f64) -> f64 {
    match (e.end_s, e.window_end_s) {
        (None, None) => run_end,
        (a, b) => a.unwrap_or(f64::MIN).max(b.unwrap_or(f64::MIN)),
    }
    .max(e.at_s)
}

fn overlaps(s: &Span<'_>, from: f64, to: f64) -> bool {
    s.from < to.max(from + 1e-6) && s.to > from
}

fn sum<'a>(spans: impl Iterator<Item = &'a Span<'a>>) -> SpanStats {
    let mut out = SpanStats::default();
    let mut sketch = LatencySketch::default();
    for s in spans {
        let t = &s.iv.totals;
        out.seconds += s.to - s.from;
        out.committed = out.committed.saturating_add(t.cnt);
        out.failed = out.failed.saturating_add(t.failed);
        for (code, n) in &t.errors_by_sqlstate {
            let c = out.errors_by_sqlstate.entry(code.clone()).or_default();
            *c = c.saturating_add(*n);
        }
        sketch.merge(&t.lat_sketch);
    }
    out.p50_ms = sketch.quantile_ms(0.50);
    out.p99_ms = sketch.quantile_ms(0.99);
    out
}

/// Fills `inside` and `outside` of every entry that ran, from `timeline`.
pub fn fill(entries: &mut [PerturbationRecord], timeline: &[IntervalRecord]) {
    let spans = spans(timeline);
    let run_end = spans.last().map_or(0.0, |s| s.to);
    let windows: Vec<(f64, f64)> = entries
        .iter()
        .filter(|e| e.ran())
        .map(|e| (e.at_s, window_end(e, run_end)))
        .collect();
    if windows.is_empty() || spans.is_empty() {
        return;
    }
    let outside = sum(spans
        .iter()
        .filter(|s| !windows.iter().any(|&(a, b)| overlaps(s, a, b))));
    for e in entries.iter_mut().filter(|e| e.ran()) {
        let (a, b) = (e.at_s, window_end(e, run_end));
        e.inside = Some(sum(spans.iter().filter(|s| overlaps(s, a, b))));
        e.outside = Some(outside.clone());
    }
}

/// Fills each entry's [`BacklogDrain`] from the backlog monitor `series`, whose sample times
/// are `offset_s` ahead of the run's (a ladder's monitors start before the clients connect).
pub fn backlog(entries: &mut [PerturbationRecord], series: &MonitorSeries, offset_s: f64) {
    let samples: Vec<(f64, f64)> = series
        .samples
        .iter()
        .map(|&(t, v)| (t - offset_s, v))
        .filter(|(t, v)| t.is_finite() && v.is_finite())
        .collect();
    let starts: Vec<f64> = entries.iter().filter(|e| e.ran()).map(|e| e.at_s).collect();
    for e in entries.iter_mut().filter(|e| e.ran()) {
        let next = starts
            .iter()
            .copied()
            .filter(|&s| s > e.at_s + 1e-9)
            .fold(f64::INFINITY, f64::min);
        e.backlog = drain(&samples, e.at_s, next, e.rule.baseline_s, &series.name);
    }
}

/// The drain of the backlog `samples` after a perturbation at `at` (until `next`).
fn drain(
    samples: &[(f64, f64)],
    at: f64,
    next: f64,
    window: f64,
    name: &str,
) -> Option<BacklogDrain> {
    let before: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| *t >= at - window && *t < at)
        .map(|&(_, v)| v)
        .collect();
    if before.is_empty() {
        return None;
    }
    let n = before.len() as f64;
    let mean = before.iter().sum::<f64>() / n;
    let sd = (before.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let level = mean + (0.1 * mean).max(2.0 * sd).max(1.0);
    let after: Vec<(f64, f64)> = samples
        .iter()
        .copied()
        .filter(|&(t, _)| t >= at && t < next)
        .collect();
    let rose = after.iter().position(|&(_, v)| v > level);
    let drained_at = match rose {
        None => Some(at),
        Some(i) => after[i..]
            .iter()
            .find(|&&(_, v)| v <= level)
            .map(|&(t, _)| t),
    };
    let until = drained_at.unwrap_or(f64::INFINITY);
    let (peak_at_s, peak) = after
        .iter()
        .copied()
        .filter(|&(t, _)| t <= until)
        .fold((at, mean), |best, s| if s.1 > best.1 { s } else { best });
    Some(BacklogDrain {
        monitor: name.to_string(),
        before: mean,
        peak,
        peak_at_s,
        drained_s: drained_at.map(|t| (t - at).max(0.0)),
    })
}

#[cfg(test)]
#[path = "perturbation_window_tests.rs"]
mod tests;
