//! The work of a multi-group run, told apart from its harness: the group that does the
//! workload's useful work (a queue's consumers, not its producer) and the rate-limited
//! groups that could not keep their schedule. Headline numbers (latency, ranking) come from
//! the work group alone, because a throttled group's latency is measured from its schedule
//! and, once it falls behind, is mostly lag the workload never saw.

use crate::record::{GroupRecord, RunRecord};

/// A rate-limited group more than this far behind its rate is flagged.
pub const BEHIND_TOLERANCE: f64 = 0.05;

/// A rate-limited group that fell behind its schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortfall {
    pub group: String,
    /// Transactions started per second (committed or failed).
    pub achieved_per_s: f64,
    /// The rate asked for (`rate`).
    pub asked_per_s: f64,
}

impl Shortfall {
    /// `producer: 83/s of 500/s asked`.
    pub fn describe(&self) -> String {
        format!(
            "{}: {:.0}/s of {:.0}/s asked",
            self.group, self.achieved_per_s, self.asked_per_s
        )
    }
}

impl GroupRecord {
    /// `Some` when the group has a rate and ran more than [`BEHIND_TOLERANCE`] below it.
    pub fn shortfall(&self, duration_s: f64) -> Option<Shortfall> {
        let asked = self.rate.filter(|r| *r > 0.0)?;
        if duration_s <= 0.0 {
            return None;
        }
        let c = &self.totals.counters;
        let achieved = (c.cnt + c.failures()) as f64 / duration_s;
        (achieved < asked * (1.0 - BEHIND_TOLERANCE)).then(|| Shortfall {
            group: self.name.clone(),
            achieved_per_s: achieved,
            asked_per_s: asked,
        })
    }
}

impl RunRecord {
    pub fn group(&self, name: &str) -> Option<&GroupRecord> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// Every rate-limited group that fell behind.
    pub fn shortfalls(&self) -> Vec<Shortfall> {
        self.groups
            .iter()
            .filter_map(|g| g.shortfall(self.duration_s))
            .collect()
    }

    /// A copy whose totals and per-interval totals are group `name`'s, so every renderer
    /// of a run shows the work group's throughput, goodput and latency; the groups (and
    /// their per-interval figures) stay as they were. `None` when there is no such group.
    pub fn focused_on(&self, name: &str) -> Option<RunRecord> {
        let gi = self.groups.iter().position(|g| g.name == name)?;
        let mut r = self.clone();
        r.totals = self.groups[gi].totals.clone();
        for iv in &mut r.timeline {
            if let Some(g) = iv.groups.get(gi) {
                iv.totals = g.clone();
            }
        }
        Some(r)
    }

    /// Useful work per timeline interval of group `name` (all groups when `None`): in the
    /// goodput rule's unit, so decay can be computed from the file.
    pub fn work_per_interval(&self, name: Option<&str>) -> Vec<u64> {
        let gi = name.and_then(|n| self.groups.iter().position(|g| g.name == n));
        self.timeline
            .iter()
            .map(|iv| match gi {
                Some(i) if !iv.groups.is_empty() => iv.groups.get(i).map_or(0, |g| g.goodput),
                _ => iv.totals.goodput,
            })
            .collect()
    }

    /// The work group's steady ratio: useful work per second in the last minute divided by
    /// that of the second minute (the first is warm-up). 1 is flat; a queue decaying under an
    /// old snapshot shows well below 1. `None` for runs shorter than three minutes.
    pub fn steady_ratio(&self, name: Option<&str>) -> Option<f64> {
        let end = self.timeline.last()?.t;
        if end < 180.0 {
            return None;
        }
        let work = self.work_per_interval(name);
        let rate = |from: f64, to: f64| {
            let sum = crate::saturating_sum(
                self.timeline
                    .iter()
                    .zip(&work)
                    .filter(|(iv, _)| iv.t > from && iv.t <= to)
                    .map(|(_, w)| *w),
            );
            sum as f64 / (to - from)
        };
        let second = rate(60.0, 120.0);
        (second > 0.0).then(|| rate(end - 60.0, end) / second)
    }

    /// Useful work per second of the work group `name`: `counted` (the work the database
    /// counted, in the same unit) over the run's duration when given, else the group's
    /// goodput; but when the work ran out at `ran_out_s` (a drained queue), the work done in
    /// the intervals up to then over their length, so a finished backlog does not cap it.
    pub fn useful_per_s(
        &self,
        name: Option<&str>,
        counted: Option<f64>,
        ran_out_s: Option<f64>,
    ) -> f64 {
        if let Some(at) = ran_out_s {
            let work = self.work_per_interval(name);
            if let Some(i) = self.timeline.iter().position(|iv| iv.t >= at) {
                let t = self.timeline[i].t;
                if t > 0.0 {
                    return crate::saturating_sum(work[..=i].iter().copied()) as f64 / t;
                }
            }
        }
        match counted {
            Some(w) if self.duration_s > 0.0 => w / self.duration_s,
            _ => match name.and_then(|n| self.group(n)) {
                Some(g) => g.totals.goodput_per_s,
                None => self.totals.goodput_per_s,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{IntervalRecord, IntervalStats, TotalsRecord};
    use crate::TxnCounters;

    fn group(name: &str, rate: Option<f64>, cnt: u64, p99_us: u64) -> GroupRecord {
        let mut c = TxnCounters::default();
        for _ in 0..cnt {
            c.record_success(p99_us, None, 2);
        }
        GroupRecord {
            rate,
            ..GroupRecord::plain(name, 1, TotalsRecord::from_counters(c, 10.0))
        }
    }

    fn record() -> RunRecord {
        let mut r = RunRecord {
            status: crate::RunStatus::Completed,
            duration_s: 10.0,
            ..Default::default()
        };
        r.groups = vec![
            group("producer", Some(500.0), 830, 5_000_000),
            group("consumer", None, 2000, 2_000),
        ];
        let mut all = r.groups[0].totals.counters.clone();
        all.merge(&r.groups[1].totals.counters);
        r.totals = TotalsRecord::from_counters(all, 10.0);
        let iv = |p: u64, c: u64| IntervalStats {
            goodput: p + c,
            ..Default::default()
        };
        r.timeline = (1..=3)
            .map(|t| IntervalRecord {
                t: t as f64,
                totals: iv(10, 20 * t),
                groups: vec![iv(10, 0), iv(0, 20 * t)],
            })
            .collect();
        r
    }

    #[test]
    fn a_producer_behind_its_rate_is_flagged_and_kept_out_of_the_work() {
        let r = record();
        let s = r.shortfalls();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].describe(), "producer: 83/s of 500/s asked");
        let f = r.focused_on("consumer").expect("consumer");
        assert!(
            r.totals.latency.p99_ms > 1000.0,
            "the mixed p99 has the lag"
        );
        assert!(f.totals.latency.p99_ms < 3.0, "{}", f.totals.latency.p99_ms);
        assert_eq!(f.totals.counters.goodput, 4000);
        assert_eq!(f.timeline[2].totals.goodput, 60);
        assert_eq!(r.work_per_interval(Some("consumer")), [20, 40, 60]);
        assert_eq!(r.work_per_interval(None), [30, 50, 70]);
        assert!(r.focused_on("nobody").is_none());
    }

    #[test]
    fn steady_ratio_is_the_last_minute_over_the_second() {
        let mut r = record();
        assert_eq!(r.steady_ratio(Some("consumer")), None, "too short");
        // 240 s: 100/s in the second minute, decaying to 50/s in the last one.
        r.timeline = (1..=240)
            .map(|t| IntervalRecord {
                t: t as f64,
                totals: IntervalStats::default(),
                groups: vec![
                    IntervalStats::default(),
                    IntervalStats {
                        goodput: if t > 180 { 50 } else { 100 },
                        ..Default::default()
                    },
                ],
            })
            .collect();
        assert_eq!(r.steady_ratio(Some("consumer")), Some(0.5));
    }

    #[test]
    fn useful_rate_stops_where_the_work_ran_out() {
        let r = record();
        // Ran out during the second interval: (20 + 40) jobs in 2 s.
        assert_eq!(
            r.useful_per_s(Some("consumer"), Some(5000.0), Some(1.4)),
            30.0
        );
        assert_eq!(r.useful_per_s(Some("consumer"), Some(5000.0), None), 500.0);
        assert_eq!(r.useful_per_s(Some("consumer"), None, None), 400.0);
    }

    #[test]
    fn a_group_on_schedule_is_not_flagged() {
        let mut r = record();
        r.groups[0] = group("producer", Some(500.0), 4800, 1000);
        assert!(r.shortfalls().is_empty());
    }
}
