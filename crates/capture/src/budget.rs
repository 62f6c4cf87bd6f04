//! The activity sampler's server-time budget: its reads may take at most so many milliseconds
//! of the server's time per second (`--sample-budget`, [`DEFAULT_MS_PER_S`]), whatever one
//! read costs. A read of `pg_stat_activity` costs in proportion to the server's
//! `max_connections` (every read copies the status of every backend slot, used or not) and to
//! its sessions, not to what it selects: on a loaded 2-core machine with `max_connections =
//! 1200` one read took 250–300 µs of a core, and at 100 reads a second the sampler alone
//! took 1.2–1.5% of the machine. The budget spaces the reads so that their mean cost over the
//! last seconds fits: period = max(asked period, mean cost per read / budget share). The
//! cost is what the caller measured: the sampler backend's CPU time when the server is local
//! (read from `/proc` in 10 ms ticks: hence a mean over a window of seconds, not over a few
//! reads, whose costs are 0 or a whole tick), else the server's own time for the read.
//! Pure arithmetic: the clock and the costs come in as numbers.

use std::collections::VecDeque;

/// Milliseconds of the server's time per second the sampler may take by default: 12 (1.2% of
/// one core, 0.6% of a 2-core server). Its reads are also diagnose's probe's wait samples
/// (`hotbench_probe::WaitFeed`), so the probe's own cost is its stats rounds alone (about 0.3%
/// of a 2-core server under tpcb-like): together under 1%, where the sampler unbudgeted
/// took 1.38% (1.70% with the probe). The fewer samples no longer cost fidelity: the think
/// time is Little's law per gap (`capture::think`) and the statements' order does not hang
/// on a few heavily weighted sightings (`shapes`), so the Django counter and tpcb-like
/// captures whose twins missed at a 10 ms budget (Django idled 79% in its transactions
/// where the original idled 63%; tpcb-like's INSERT put before the branch UPDATE) come out
/// whole at this one (docs/capture.md, *What capture costs*).
pub const DEFAULT_MS_PER_S: f64 = 12.0;

/// Reads a capture takes at the least, however short, whatever the budget: a 4 s capture of a
/// loaded server at 12 ms/s held 61 samples of a kombu-like queue's UPDATE, too few to join
/// it to its shape. 400 reads is a 10 ms period over 4 s; a 60 s capture reads more than
/// that at the default budget unless one read costs over 1.8 ms of the server's time, and
/// bench/capture-overhead's 20 s captures unless one costs over 0.6 ms. A short capture's
/// cost is so bounded in all (400 reads), not per second.
pub const MIN_READS: f64 = 400.0;

/// Spaces the reads to fit the budget.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Share of one core (seconds of server time per second); 0 = unbounded.
    share: f64,
    /// Per read: (when it ended, s; its cost, s), the last [`Budget::SPAN_S`] of them.
    reads: VecDeque<(f64, f64)>,
    /// Costs of the reads dropped from the window, with their count: the mean falls back to
    /// all reads when the window saw too little time to count (ticks).
    total_cost: f64,
    total_reads: u64,
    /// The longest period the budget asked for, and the period it was asked to keep.
    widest: f64,
    asked: f64,
    /// The period that takes [`MIN_READS`] over the capture's duration (s; 0: none), and the
    /// widest period the budget alone asked for when it was kept shorter.
    floor: f64,
    floored: f64,
}

impl Budget {
    /// Seconds of reads the mean is taken over.
    pub const SPAN_S: f64 = 5.0;
    /// Reads before the budget judges (the first prepares its statement).
    const WARM_UP: u64 = 5;

    /// A budget of `ms_per_s` milliseconds of server time per second (0 or less: none).
    pub fn new(ms_per_s: f64) -> Budget {
        Budget {
            share: if ms_per_s.is_finite() && ms_per_s > 0.0 {
                ms_per_s / 1000.0
            } else {
                0.0
            },
            reads: VecDeque::new(),
            total_cost: 0.0,
            total_reads: 0,
            widest: 0.0,
            asked: 0.0,
            floor: 0.0,
            floored: 0.0,
        }
    }

    /// The same budget over a capture of `duration_s`: the reads are never spaced so far
    /// that fewer than [`MIN_READS`] fit in it.
    pub fn over(mut self, duration_s: f64) -> Budget {
        if duration_s.is_finite() && duration_s > 0.0 {
            self.floor = duration_s / MIN_READS;
        }
        self
    }

    /// The period until the next read, after a read that ended at `at_s` and cost `cost_s`
    /// (seconds of server time), for an asked period of `period_s`.
    pub fn period(&mut self, at_s: f64, cost_s: f64, period_s: f64) -> f64 {
        let cost_s = if cost_s.is_finite() {
            cost_s.max(0.0)
        } else {
            0.0
        };
        self.asked = period_s;
        self.total_reads += 1;
        self.total_cost += cost_s;
        self.reads.push_back((at_s, cost_s));
        while self
            .reads
            .front()
            .is_some_and(|&(t, _)| t < at_s - Self::SPAN_S)
        {
            self.reads.pop_front();
        }
        if self.share <= 0.0 || self.total_reads <= Self::WARM_UP {
            return period_s;
        }
        let budgeted = (self.mean_cost() / self.share).max(period_s);
        let p = if self.floor > 0.0 {
            budgeted.min(self.floor.max(period_s))
        } else {
            budgeted
        };
        if p < budgeted {
            self.floored = self.floored.max(budgeted);
        }
        self.widest = self.widest.max(p);
        p
    }

    /// The mean cost of a read (s): over the window, or over every read when the window's
    /// reads cost under two 10 ms ticks in all (a tick more or less would move it by half).
    pub fn mean_cost(&self) -> f64 {
        let (n, sum) = self
            .reads
            .iter()
            .fold((0usize, 0.0), |(n, s), &(_, c)| (n + 1, s + c));
        if n > 0 && sum >= 0.02 {
            sum / n as f64
        } else if self.total_reads > 0 {
            self.total_cost / self.total_reads as f64
        } else {
            0.0
        }
    }

    /// A note when the budget spaced the reads beyond the asked period, or when the capture's
    /// few reads were kept closer than the budget asked.
    pub fn note(&self) -> Option<String> {
        if self.floored > 0.0 {
            return Some(format!(
                "activity samples kept every {:.0} ms at most, where the sampler's budget of \
                 {:.1} ms of server time per second (--sample-budget; each read cost {:.2} ms) \
                 would have spaced them to {:.0} ms: a capture this short reads {MIN_READS} \
                 times at the least",
                self.widest * 1000.0,
                self.share * 1000.0,
                self.mean_cost() * 1000.0,
                self.floored * 1000.0,
            ));
        }
        (self.share > 0.0 && self.widest > self.asked * 1.05).then(|| {
            format!(
                "activity samples spaced to fit the sampler's budget of {:.1} ms of server \
                 time per second (--sample-budget): each read cost {:.2} ms, so at most every \
                 {:.0} ms instead of {:.0} ms",
                self.share * 1000.0,
                self.mean_cost() * 1000.0,
                self.widest * 1000.0,
                self.asked * 1000.0
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Budget;

    /// Reads every `period` returned, each costing `cost`, for `secs` seconds: the reads
    /// taken and the server time they cost.
    fn run(b: &mut Budget, cost: impl Fn(u64) -> f64, asked: f64, secs: f64) -> (u64, f64) {
        let (mut t, mut n, mut spent) = (0.0, 0u64, 0.0);
        while t < secs {
            let c = cost(n);
            n += 1;
            spent += c;
            t += b.period(t, c, asked);
        }
        (n, spent)
    }

    #[test]
    fn cheap_reads_keep_the_asked_period() {
        // 20 µs a read at 100 a second: 2 ms per second, under a 5 ms budget.
        let mut b = Budget::new(5.0);
        let (n, _) = run(&mut b, |_| 0.000_02, 0.01, 10.0);
        assert!((1000..=1001).contains(&n), "{n} reads");
        assert!(b.note().is_none());
    }

    #[test]
    fn costly_reads_are_spaced_to_the_budget() {
        // 280 µs a read (the loaded 2-core machine): 100 a second would be 28 ms per second.
        let mut b = Budget::new(5.0);
        let (n, spent) = run(&mut b, |_| 0.000_28, 0.01, 60.0);
        let per_s = spent / 60.0 * 1000.0;
        assert!(per_s < 5.2, "{per_s} ms per second");
        assert!(per_s > 4.5, "{per_s} ms per second: the budget is used");
        assert!(n > 900 && n < 1200, "{n} reads");
        let note = b.note().expect("a note");
        assert!(note.contains("5.0 ms of server time per second"), "{note}");
    }

    #[test]
    fn costs_in_cpu_ticks_average_out() {
        // A local backend's CPU time comes in 10 ms ticks: one read in 36 shows a tick, the
        // others nothing (a true 278 µs each). The mean over the window stays near the truth.
        let mut b = Budget::new(5.0);
        let (_, spent) = run(
            &mut b,
            |i| if i % 36 == 35 { 0.01 } else { 0.0 },
            0.01,
            60.0,
        );
        let per_s = spent / 60.0 * 1000.0;
        assert!(per_s < 6.0 && per_s > 4.0, "{per_s} ms per second");
    }

    #[test]
    fn a_short_capture_reads_at_least_min_reads_times_and_a_long_one_keeps_the_budget() {
        // 280 µs a read, 5 ms/s: the budget alone reads every 56 ms, 71 times in 4 s.
        let mut b = Budget::new(5.0).over(4.0);
        let (n, _) = run(&mut b, |_| 0.000_28, 0.01, 4.0);
        assert!((395..=401).contains(&n), "{n} reads: every 10 ms asked");
        let note = b.note().expect("a note");
        assert!(note.contains("400 times at the least"), "{note}");
        // 8 s: every 20 ms, 400 reads.
        let mut b = Budget::new(5.0).over(8.0);
        let (n, _) = run(&mut b, |_| 0.000_28, 0.01, 8.0);
        assert!((390..=410).contains(&n), "{n} reads");
        // 60 s: the budget's 56 ms already reads more than 400 times (the floor, 150 ms).
        let mut b = Budget::new(5.0).over(60.0);
        let (n, spent) = run(&mut b, |_| 0.000_28, 0.01, 60.0);
        assert!(spent / 60.0 * 1000.0 < 5.2 && n < 1200, "{n} reads");
        assert!(!b.note().expect("a note").contains("at the least"));
    }

    #[test]
    fn no_budget_is_the_asked_period() {
        let mut b = Budget::new(0.0);
        let (n, _) = run(&mut b, |_| 0.001, 0.01, 1.0);
        assert!((100..=101).contains(&n), "{n} reads");
        assert!(b.note().is_none());
        let mut b = Budget::new(f64::NAN);
        assert_eq!(b.period(0.0, 1.0, 0.01), 0.01);
    }
}
