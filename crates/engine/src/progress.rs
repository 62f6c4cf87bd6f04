//! pgbench's `-P` progress lines, from the coordinator's merged intervals: one line every
//! `-P` seconds over the intervals since the last line; the run's trailing partial interval
//! gets none (as in pgbench).

use hotbench_results::record::IntervalStats;
use hotbench_stats::TxnCounters;

use crate::clock::to_unix_us;

pub struct Progress {
    every_us: Option<i64>,
    timestamp: bool,
    origin: i64,
    acc: TxnCounters,
    next: i64,
    last: i64,
}

impl Progress {
    /// Lines every `every_us` (none without -P) from `origin`; `timestamp`: Unix times.
    pub fn new(every_us: Option<i64>, timestamp: bool, origin: i64) -> Self {
        Progress {
            every_us,
            timestamp,
            origin,
            acc: TxnCounters::default(),
            next: origin + every_us.unwrap_or(0),
            last: origin,
        }
    }

    /// An interval ending at `end` was merged at `now` with `total`: the progress line due,
    /// if any (its time, in seconds since the start or Unix, and its statistics).
    pub fn interval(
        &mut self,
        end: i64,
        now: i64,
        total: &TxnCounters,
    ) -> Option<(f64, IntervalStats)> {
        let every = self.every_us?;
        self.acc.merge(total);
        if end < self.next || now < end {
            return None;
        }
        let span = (end - self.last) as f64 / 1e6;
        let stats = IntervalStats::from_counters(&self.acc, span);
        let at = if self.timestamp {
            to_unix_us(end) as f64 / 1e6
        } else {
            (end - self.origin) as f64 / 1e6
        };
        self.acc.clear();
        self.last = end;
        while self.next <= end {
            self.next += every;
        }
        Some((at, stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(cnt: u64) -> TxnCounters {
        TxnCounters {
            cnt,
            ..Default::default()
        }
    }

    #[test]
    fn a_line_every_period_over_the_intervals_since_the_last() {
        let mut p = Progress::new(Some(2_000_000), false, 0);
        assert!(p.interval(1_000_000, 1_000_000, &n(10)).is_none());
        let (at, s) = p
            .interval(2_000_000, 2_000_000, &n(30))
            .expect("a line at 2 s");
        assert_eq!(at, 2.0);
        assert_eq!(s.cnt, 40);
        assert!((s.tps - 20.0).abs() < 1e-9);
        assert!(p.interval(3_000_000, 3_000_000, &n(1)).is_none());
    }

    #[test]
    fn no_line_for_a_partial_interval_or_without_p() {
        let mut p = Progress::new(Some(1_000_000), false, 0);
        assert!(
            p.interval(1_000_000, 400_000, &n(5)).is_none(),
            "ended early"
        );
        let mut p = Progress::new(None, false, 0);
        assert!(p.interval(1_000_000, 1_000_000, &n(5)).is_none());
    }
}
