//! Time to recover: how a run's goodput answered a perturbation, computed from the timeline
//! alone (pure, no server), so every run, merged or read back, is judged by the same rule.
//!
//! For a perturbation starting at `at`:
//! - the **baseline** is the goodput rate over the complete intervals of the window before it
//!   (`baseline_s` long, never reaching back before the previous perturbation's recovery); a
//!   perturbation that starts before the previous one recovered keeps that one's baseline;
//! - the **rolling goodput** at the end of an interval is the rate over the `rolling_s` before
//!   it, never reaching back before `at` (so a perturbation without effect reads as recovered
//!   after its first interval);
//! - **TTR90 / TTR99**: from `at` to the end of the first interval, no earlier than the one
//!   the perturbation's action ends in (nothing recovers while a lock or a snapshot is still
//!   held), whose rolling goodput is at least 90 % / 99 % of the baseline and stays so for
//!   `hold_s` after it (the goodput over the hold averages that much); `None` when that never
//!   happens before the run's end (a hold cut short by the end does not count);
//! - the **dip** is the lowest rolling goodput from `at` until the TTR90 point (or the end);
//! - **work lost** is what fell short of the baseline rate over the same window, interval by
//!   interval (more than the baseline never pays a shortfall back);
//! - failed transactions and reconnects are those of the intervals in that window.

pub use crate::perturbation_record::RecoveryRule;
use crate::perturbation_record::{PerturbationRecord, ServerWindow};
use crate::probe_record::{shares, ProbeRecord};
use crate::record::{IntervalRecord, RunRecord};

/// Slack for comparing interval boundaries, which come from float seconds.
const EPS: f64 = 1e-6;

/// One interval of the timeline as the recovery reads it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sample {
    pub start_s: f64,
    pub end_s: f64,
    /// Goodput units committed in the interval.
    pub goodput: f64,
    pub failed: u64,
    pub reconnects: u64,
}

impl Sample {
    fn duration(&self) -> f64 {
        (self.end_s - self.start_s).max(0.0)
    }

    /// The share of the interval that lies in `[from, to)`, assuming an even rate inside it.
    fn share(&self, from: f64, to: f64) -> f64 {
        let d = self.duration();
        if d <= 0.0 {
            return 0.0;
        }
        ((to.min(self.end_s) - from.max(self.start_s)).max(0.0) / d).min(1.0)
    }
}

/// The timeline's intervals as samples: each starts where the previous ended (the first at 0).
pub fn samples(timeline: &[IntervalRecord]) -> Vec<Sample> {
    let mut start = 0.0;
    timeline
        .iter()
        .map(|iv| {
            let end = iv.t.max(start);
            let s = Sample {
                start_s: start,
                end_s: end,
                goodput: iv.totals.goodput_per_s * (end - start),
                failed: iv.totals.failed,
                reconnects: iv.totals.reconnects,
            };
            start = end;
            s
        })
        .collect()
}

/// How the goodput answered one perturbation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recovery {
    /// Goodput rate before it (per s); `None` when nothing was committed in the window before.
    pub baseline_per_s: Option<f64>,
    /// The baseline is the previous perturbation's: this one started before that recovered.
    pub baseline_inherited: bool,
    /// Lowest rolling goodput (per s) from the start until the TTR90 point or the end.
    pub dip_per_s: Option<f64>,
    /// Goodput units short of the baseline over the same window.
    pub lost: Option<f64>,
    pub ttr90_s: Option<f64>,
    pub ttr99_s: Option<f64>,
    /// Failed transactions and reconnects in the intervals of that window.
    pub failed: u64,
    pub reconnects: u64,
    /// Where that window ends, s into the run (the TTR90 point, else the timeline's end).
    pub window_end_s: Option<f64>,
}

/// The recovery from each perturbation starting at `starts` (seconds into the run), in the
/// order given, each over as soon as it started (see [`recover_acting`]).
pub fn recover(samples: &[Sample], starts: &[f64], rule: &RecoveryRule) -> Vec<Recovery> {
    let spans: Vec<(f64, f64)> = starts.iter().map(|&s| (s, s)).collect();
    recover_acting(samples, &spans, rule)
}

/// The recovery from each perturbation acting over `(start, end)` (seconds into the run), in
/// the order given: nothing has recovered while it still acts (a held xmin, a lock, a pause
/// whose effect builds up), so its recovery point is no earlier than the interval its end
/// falls in.
pub fn recover_acting(
    samples: &[Sample],
    spans: &[(f64, f64)],
    rule: &RecoveryRule,
) -> Vec<Recovery> {
    let starts: Vec<f64> = spans.iter().map(|s| s.0).collect();
    let mut order: Vec<usize> = (0..starts.len()).collect();
    order.sort_by(|&a, &b| starts[a].total_cmp(&starts[b]));
    let mut out = vec![Recovery::default(); starts.len()];
    // The previous perturbation (in time): its baseline and when it recovered (None: never).
    let mut prev: Option<(Option<f64>, Option<f64>)> = None;
    for i in order {
        let at = starts[i];
        let (baseline, inherited) = match prev {
            // One without a baseline (nothing committed before it) passes none on.
            Some((Some(b), recovered)) if recovered.is_none_or(|r| r > at + EPS) => (Some(b), true),
            _ => {
                let floor = prev.and_then(|p| p.1).unwrap_or(0.0);
                (
                    baseline(samples, (at - rule.baseline_s).max(floor), at),
                    false,
                )
            }
        };
        let r = one(samples, at, spans[i].1.max(at), baseline, rule);
        prev = Some((baseline, r.ttr90_s.map(|t| at + t)));
        out[i] = Recovery {
            baseline_inherited: inherited,
            ..r
        };
    }
    out
}

/// The goodput rate over the complete intervals inside `[from, to)`.
fn baseline(samples: &[Sample], from: f64, to: f64) -> Option<f64> {
    let (mut units, mut secs) = (0.0, 0.0);
    for s in samples
        .iter()
        .filter(|s| s.start_s >= from - EPS && s.end_s <= to + EPS)
    {
        units += s.goodput;
        secs += s.duration();
    }
    (secs > 0.0 && units > 0.0).then(|| units / secs)
}

/// The recovery from one perturbation at `at`, acting until `until`, against `baseline`.
fn one(
    samples: &[Sample],
    at: f64,
    until: f64,
    baseline: Option<f64>,
    rule: &RecoveryRule,
) -> Recovery {
    let Some(k0) = samples.iter().position(|s| s.end_s > at + EPS) else {
        return Recovery {
            baseline_per_s: baseline,
            ..Recovery::default()
        };
    };
    let after = &samples[k0..];
    let rolling: Vec<f64> = (0..after.len())
        .map(|i| rolling_rate(after, at, i, rule.rolling_s))
        .collect();
    let Some(b) = baseline else {
        return Recovery {
            dip_per_s: rolling.iter().copied().reduce(f64::min),
            failed: after.iter().map(|s| s.failed).sum(),
            reconnects: after.iter().map(|s| s.reconnects).sum(),
            ..Recovery::default()
        };
    };
    // The first interval a recovery may end in: the one the action's end falls in.
    let first = after
        .iter()
        .position(|s| s.end_s + EPS >= until)
        .unwrap_or(after.len());
    let r90 = recovered_at(after, &rolling, first, 0.90 * b, rule.hold_s);
    let r99 = recovered_at(after, &rolling, first, 0.99 * b, rule.hold_s);
    let last = r90.unwrap_or(after.len() - 1);
    let window = &after[..=last];
    let lost = window
        .iter()
        .map(|s| {
            let part = s.share(at, s.end_s);
            (b * s.duration() * part - s.goodput * part).max(0.0)
        })
        .sum();
    Recovery {
        baseline_per_s: Some(b),
        baseline_inherited: false,
        dip_per_s: rolling[..=last].iter().copied().reduce(f64::min),
        lost: Some(lost),
        ttr90_s: r90.map(|i| (after[i].end_s - at).max(0.0)),
        ttr99_s: r99.map(|i| (after[i].end_s - at).max(0.0)),
        failed: window.iter().map(|s| s.failed).sum(),
        reconnects: window.iter().map(|s| s.reconnects).sum(),
        window_end_s: Some(after[last].end_s),
    }
}

/// The rate over the `rolling_s` before the end of `after[i]`, not before `at`.
fn rolling_rate(after: &[Sample], at: f64, i: usize, rolling_s: f64) -> f64 {
    let end = after[i].end_s;
    let from = at.max(end - rolling_s);
    let secs = end - from;
    if secs <= EPS {
        return 0.0;
    }
    let units: f64 = after[..=i]
        .iter()
        .rev()
        .take_while(|s| s.end_s > from + EPS)
        .map(|s| s.goodput * s.share(from, end))
        .sum();
    units / secs
}

/// The first interval from `first` on whose rolling rate is at least `level` and after which
/// the goodput over the next `hold_s` averages at least `level` too (the timeline must reach
/// that far).
/// The hold is judged on its mean, not on every rolling value inside it: at a few hundred
/// transactions per second the 1 s rolling rate of a steady Poisson load varies by ±6 %, and a
/// hold broken by any window below 90 % would time the noise, not the recovery.
fn recovered_at(
    after: &[Sample],
    rolling: &[f64],
    first: usize,
    level: f64,
    hold_s: f64,
) -> Option<usize> {
    let end = after.last()?.end_s;
    for (i, &r) in rolling.iter().enumerate().skip(first) {
        if r + EPS < level {
            continue;
        }
        let from = after[i].end_s;
        let to = from + hold_s;
        if end + EPS < to {
            // The run ended before the hold was over: not a recovery anyone saw.
            return None;
        }
        if hold_s <= EPS {
            return Some(i);
        }
        let units: f64 = after[i + 1..]
            .iter()
            .take_while(|s| s.start_s < to - EPS)
            .map(|s| s.goodput * s.share(from, to))
            .sum();
        if units / hold_s + EPS >= level {
            return Some(i);
        }
    }
    None
}

/// Fills the recovery of every entry that ran from `timeline`, with `rule`; entries that
/// failed keep none. Sorted by start.
pub fn judge(entries: &mut [PerturbationRecord], timeline: &[IntervalRecord], rule: RecoveryRule) {
    entries.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let samples = samples(timeline);
    let ran: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].ran()).collect();
    let spans: Vec<(f64, f64)> = ran
        .iter()
        .map(|&i| (entries[i].at_s, entries[i].end_s.unwrap_or(entries[i].at_s)))
        .collect();
    for (i, r) in ran.into_iter().zip(recover_acting(&samples, &spans, &rule)) {
        let e = &mut entries[i];
        e.rule = rule;
        e.baseline_per_s = r.baseline_per_s;
        e.baseline_inherited = r.baseline_inherited;
        e.dip_per_s = r.dip_per_s;
        e.lost = r.lost;
        e.ttr90_s = r.ttr90_s;
        e.ttr99_s = r.ttr99_s;
        e.failed = r.failed;
        e.reconnects = r.reconnects;
        e.window_end_s = r.window_end_s;
    }
    crate::perturbation_window::fill(entries, timeline);
}

/// Fills each perturbation's [`ServerWindow`] from the record's probes (aligned on the run's
/// timeline, `align_probes`); nothing without probes or for a perturbation that did not run.
pub fn server_side(rec: &mut RunRecord) {
    let Some(p) = rec.probes.as_ref() else {
        return;
    };
    let run_end = rec.timeline.last().map_or(rec.duration_s, |iv| iv.t);
    for e in rec.perturbations.iter_mut().filter(|e| e.ran()) {
        let to = e.window_end_s.or(e.end_s).unwrap_or(run_end).max(e.at_s);
        e.server = window(p, e.at_s, to);
    }
}

/// The probe intervals overlapping `[from, to]`, summed.
fn window(p: &ProbeRecord, from: f64, to: f64) -> Option<ServerWindow> {
    let ivs: Vec<_> = p
        .timeline
        .iter()
        .filter(|iv| iv.t > from && iv.t - iv.dt < to.max(from + 1e-6))
        .collect();
    let first = ivs.first()?;
    let mut waits = std::collections::BTreeMap::new();
    for iv in &ivs {
        for (event, n) in &iv.waits {
            let c: &mut u64 = waits.entry(event.clone()).or_default();
            *c = c.saturating_add(*n);
        }
    }
    let sum = |f: &dyn Fn(&&crate::probe_record::ProbeInterval) -> Option<u64>| {
        let v: Vec<u64> = ivs.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| crate::saturating_sum(v))
    };
    let mut top_waits = shares(&waits);
    top_waits.truncate(3);
    Some(ServerWindow {
        from_s: first.t - first.dt,
        to_s: ivs.last().map_or(first.t, |iv| iv.t),
        top_waits,
        lock_waiting_max: ivs.iter().map(|iv| iv.lock_waiting_max).max().unwrap_or(0),
        wal_bytes: sum(&|iv| iv.server.wal_bytes),
        checkpoints: sum(&|iv| iv.server.checkpoints),
        xmin_age_max: ivs.iter().filter_map(|iv| iv.xmin_age).max(),
        dead_tuples_max: ivs
            .iter()
            .filter(|iv| !iv.tables.is_empty())
            .map(|iv| {
                iv.tables
                    .iter()
                    .fold(0i64, |a, t| a.saturating_add(t.dead_tuples))
            })
            .max(),
        server_restarted: ivs.iter().any(|iv| iv.restarted),
    })
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
