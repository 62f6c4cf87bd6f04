//! The recovery judged while the run goes on, for live metrics (`run --prometheus`): the same
//! rule as [`crate::recovery`] applied to the timeline so far, at each perturbation's
//! *scheduled* time (the record's entries, judged at the end, use the time its statement was
//! sent, a few ms later, and replace these).
//!
//! A time to recover, once found, never changes as the timeline grows (the hold after it was
//! seen whole, and every earlier candidate was refused on a whole hold too), so a firing is
//! settled once both of its TTRs are found. What is still open is judged again at most once a
//! second, and less often the longer it has been open (every 1/60 of its age), over the
//! samples from the first open firing's baseline window on (or from the firing before it,
//! when that one had not recovered when the open one started, whose baseline it inherits):
//! the work stays small however long the run.

use crate::perturbation_record::PerturbationRecord;
#[cfg(test)]
use crate::recovery::recover;
use crate::recovery::{recover_acting, RecoveryRule, Sample};

/// One `--perturb` as scheduled: its spec and kind, first time and period (s), and how long
/// its action lasts when it has a duration (`ddl-lock=t,5s`: 5 s; the record's entry has the
/// real end, a lock's wait included).
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled {
    pub spec: String,
    pub kind: String,
    pub first_s: f64,
    pub every_s: Option<f64>,
    pub acts_s: Option<f64>,
}

#[derive(Debug, Clone)]
struct Firing {
    entry: PerturbationRecord,
    settled: bool,
}

/// The live judge of a run's perturbations.
#[derive(Debug, Clone)]
pub struct LiveRecovery {
    rule: RecoveryRule,
    schedule: Vec<Scheduled>,
    /// Each schedule entry's next due time (`None`: done).
    next_due: Vec<Option<f64>>,
    samples: Vec<Sample>,
    firings: Vec<Firing>,
    next_judge_s: f64,
}

impl LiveRecovery {
    pub fn new(schedule: Vec<Scheduled>, rule: RecoveryRule) -> LiveRecovery {
        let next_due = schedule.iter().map(|s| Some(s.first_s)).collect();
        LiveRecovery {
            rule,
            schedule,
            next_due,
            samples: Vec::new(),
            firings: Vec::new(),
            next_judge_s: 0.0,
        }
    }

    /// An interval ended at `t` (s into the run) with `goodput` units committed, `failed`
    /// transactions and `reconnects`.
    pub fn interval(&mut self, t: f64, goodput: f64, failed: u64, reconnects: u64) {
        let start = self.samples.last().map_or(0.0, |s| s.end_s);
        self.samples.push(Sample {
            start_s: start,
            end_s: t.max(start),
            goodput: goodput.max(0.0),
            failed,
            reconnects,
        });
        self.fire_due(t);
        self.judge(t);
    }

    /// The firings due by `t`, in time order.
    fn fire_due(&mut self, t: f64) {
        loop {
            let Some((i, due)) = self
                .next_due
                .iter()
                .enumerate()
                .filter_map(|(i, d)| d.map(|d| (i, d)))
                .filter(|&(_, d)| d <= t)
                .min_by(|a, b| a.1.total_cmp(&b.1))
            else {
                return;
            };
            let s = &self.schedule[i];
            self.next_due[i] = s.every_s.filter(|p| *p > 0.0).map(|p| due + p);
            let mut entry = PerturbationRecord::new(s.spec.clone(), &s.kind, String::new(), due);
            entry.rule = self.rule;
            entry.end_s = Some(due + s.acts_s.unwrap_or(0.0).max(0.0));
            self.firings.push(Firing {
                entry,
                settled: false,
            });
        }
    }

    fn judge(&mut self, t: f64) {
        let Some(open) = self.firings.iter().position(|f| !f.settled) else {
            return;
        };
        if t < self.next_judge_s {
            return;
        }
        // Back to the firing whose baseline the first open one inherits.
        let mut q = open;
        while q > 0 && inherits(&self.firings[q - 1], &self.firings[q]) {
            q -= 1;
        }
        let floor = if q > 0 {
            recovered_at(&self.firings[q - 1]).unwrap_or(0.0)
        } else {
            0.0
        };
        let from = (self.firings[q].entry.at_s - self.rule.baseline_s).max(floor);
        let lo = self.samples.partition_point(|s| s.start_s < from - 1e-6);
        let spans: Vec<(f64, f64)> = self.firings[q..]
            .iter()
            .map(|f| (f.entry.at_s, f.entry.end_s.unwrap_or(f.entry.at_s)))
            .collect();
        for (f, r) in self.firings[q..].iter_mut().zip(recover_acting(
            &self.samples[lo..],
            &spans,
            &self.rule,
        )) {
            let e = &mut f.entry;
            e.baseline_per_s = r.baseline_per_s;
            e.baseline_inherited = r.baseline_inherited;
            e.dip_per_s = r.dip_per_s;
            e.lost = r.lost;
            e.ttr90_s = r.ttr90_s;
            e.ttr99_s = r.ttr99_s;
            e.failed = r.failed;
            e.reconnects = r.reconnects;
            e.window_end_s = r.window_end_s;
            // Settled once both are found, or without a baseline (nothing committed before
            // it: it never will be judged).
            f.settled = (r.ttr90_s.is_some() && r.ttr99_s.is_some()) || r.baseline_per_s.is_none();
        }
        let age = self
            .firings
            .iter()
            .find(|f| !f.settled)
            .map_or(0.0, |f| t - f.entry.at_s);
        self.next_judge_s = t + (age / 60.0).max(1.0);
    }

    /// Every firing so far, as judged so far (TTRs absent: not recovered yet).
    pub fn entries(&self) -> Vec<PerturbationRecord> {
        self.firings.iter().map(|f| f.entry.clone()).collect()
    }
}

/// Where a firing's goodput was back to 90 % (s into the run), if it was.
fn recovered_at(f: &Firing) -> Option<f64> {
    f.entry.ttr90_s.map(|t| f.entry.at_s + t)
}

/// `next` keeps `prev`'s baseline (the rule of [`recover`]): `prev` had one and had not
/// recovered when `next` started.
fn inherits(prev: &Firing, next: &Firing) -> bool {
    prev.entry.baseline_per_s.is_some()
        && recovered_at(prev).is_none_or(|r| r > next.entry.at_s + 1e-6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(first: f64, every: Option<f64>) -> Scheduled {
        Scheduled {
            spec: format!("{first}s:checkpoint"),
            kind: "checkpoint".into(),
            first_s: first,
            every_s: every,
            acts_s: None,
        }
    }

    /// Feeds `rates` (1 s intervals) one at a time; returns the live entries at the end and
    /// checks that a TTR, once given, never changes.
    fn feed(live: &mut LiveRecovery, rates: &[f64]) -> Vec<PerturbationRecord> {
        let mut seen: Vec<(Option<f64>, Option<f64>)> = Vec::new();
        for (i, &r) in rates.iter().enumerate() {
            live.interval((i + 1) as f64, r, 0, 0);
            let now: Vec<_> = live
                .entries()
                .iter()
                .map(|e| (e.ttr90_s, e.ttr99_s))
                .collect();
            for (before, after) in seen.iter().zip(&now) {
                if before.0.is_some() {
                    assert_eq!(before.0, after.0, "TTR90 changed at {}", i + 1);
                }
                if before.1.is_some() {
                    assert_eq!(before.1, after.1, "TTR99 changed at {}", i + 1);
                }
            }
            seen = now;
        }
        live.entries()
    }

    fn timeline(rates: &[f64]) -> Vec<Sample> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &r)| Sample {
                start_s: i as f64,
                end_s: (i + 1) as f64,
                goodput: r,
                failed: 0,
                reconnects: 0,
            })
            .collect()
    }

    #[test]
    fn live_answers_are_the_final_ones_once_found() {
        let flat = |n, r| vec![r; n];
        let cases: Vec<(Vec<f64>, Vec<Scheduled>)> = vec![
            // A step; a slow ramp; a second perturbation before the first recovered.
            (
                [flat(10, 100.0), flat(3, 0.0), flat(10, 100.0)].concat(),
                vec![sched(10.0, None)],
            ),
            (
                [
                    flat(10, 100.0),
                    (0..=10).map(|k| 10.0 * k as f64).collect(),
                    flat(6, 100.0),
                ]
                .concat(),
                vec![sched(10.0, None)],
            ),
            (
                [flat(10, 100.0), flat(6, 0.0), flat(8, 100.0)].concat(),
                vec![sched(10.0, None), sched(12.0, None)],
            ),
            // Every 8 s, each a 2 s outage.
            (
                (0..48)
                    .map(|i| if i >= 8 && i % 8 < 2 { 0.0 } else { 100.0 })
                    .collect(),
                vec![sched(8.0, Some(8.0))],
            ),
        ];
        for (rates, schedule) in cases {
            let mut live = LiveRecovery::new(schedule, RecoveryRule::default());
            let got = feed(&mut live, &rates);
            let starts: Vec<f64> = got.iter().map(|e| e.at_s).collect();
            let want = recover(&timeline(&rates), &starts, &RecoveryRule::default());
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    (g.ttr90_s, g.ttr99_s),
                    (w.ttr90_s, w.ttr99_s),
                    "{g:?} vs {w:?}"
                );
                assert_eq!(
                    (g.lost, g.baseline_per_s),
                    (w.lost, w.baseline_per_s),
                    "{g:?}"
                );
            }
        }
    }

    #[test]
    fn an_open_firing_is_judged_less_often_as_it_ages() {
        // Never recovers: after an hour of 1 s intervals it was judged far fewer than 3600
        // times, and still reads as not recovered.
        let mut live = LiveRecovery::new(vec![sched(10.0, None)], RecoveryRule::default());
        let mut judged = 0;
        let mut last = 0.0;
        for i in 0..3600 {
            live.interval((i + 1) as f64, if i < 10 { 100.0 } else { 10.0 }, 0, 0);
            if live.next_judge_s != last {
                judged += 1;
                last = live.next_judge_s;
            }
        }
        assert!(judged < 400, "{judged}");
        let e = &live.entries()[0];
        assert_eq!((e.ttr90_s, e.baseline_per_s), (None, Some(100.0)));
        assert!(e.lost.is_some_and(|l| l > 90.0 * 3500.0), "{e:?}");
    }
}
