//! Transaction outcome counters, pgbench's `StatsData` plus what hotbench adds: goodput,
//! failures by SQLSTATE, connection failures and reconnects.
//!
//! Accounting identity (tested): every scheduled transaction is exactly one of
//! `cnt` (committed), `skipped` (too late under -R/-L) or failed
//! (`serialization + deadlock + other + connection`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::histogram::LatencyHistogram;
use crate::simple::SimpleStats;

/// Why a transaction failed, pgbench's classes plus lost connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Serialization,
    Deadlock,
    /// Any other SQL error (counted only under --continue-on-error, or for retriable codes
    /// added with --retry-on that ran out of tries).
    Other,
    /// The connection was lost during the transaction.
    Connection,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TxnCounters {
    /// Successful transactions (pgbench's `cnt`).
    pub cnt: u64,
    /// Successful transactions that did useful work (see the goodput rule), or whole units
    /// of work under a `sum:` rule (saturating at `u64::MAX`).
    pub goodput: u64,
    /// Under a `sum:` rule, the part of the work below one unit not yet in `goodput`
    /// (0 ≤ x < 1): fractional values add up instead of each being cut to its whole part.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub goodput_fraction: f64,
    pub skipped: u64,
    pub retries: u64,
    pub retried: u64,
    pub serialization_failures: u64,
    pub deadlock_failures: u64,
    pub other_failures: u64,
    pub connection_failures: u64,
    /// Transactions whose latency exceeded -L (pgbench's `latency_late`).
    pub late: u64,
    pub reconnects: u64,
    /// Transactions still in flight when the run ended (past -T plus a grace period, or at
    /// Ctrl-C): cancelled on the server and counted nowhere else.
    #[serde(default)]
    pub unfinished: u64,
    /// Transactions the -R schedule started before the end of a -T run (or Ctrl-C) that never
    /// began: the clients were held up (a stalled server, or one slower than the rate), so
    /// their scheduled start passed while every client was still busy. Counted nowhere else.
    #[serde(default)]
    pub unstarted: u64,
    /// Time clients spent without a connection (lost until re-established), µs.
    #[serde(default)]
    pub disconnected_us: u64,
    /// Clients still without a connection when the run ended (their server went away and
    /// did not come back): a run where every client ends so is not `completed`.
    #[serde(default)]
    pub ended_disconnected: u64,
    /// Failed tries and failed transactions by SQLSTATE (retried errors included).
    pub errors_by_sqlstate: BTreeMap<String, u64>,
    /// Latency of successful transactions, µs (pgbench's sums).
    pub latency: SimpleStats,
    /// Schedule lag under -R, µs.
    pub lag: SimpleStats,
    /// Latency of successful transactions, µs, from the scheduled start.
    pub hist: LatencyHistogram,
}

/// Sums counts read from a file without overflowing: a hostile or corrupt record's values
/// stop at `u64::MAX` (debug builds would panic, release builds wrap).
pub fn saturating_sum(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A counter that would pass `u64::MAX` when two records are summed (`merge` of files
/// whose counts cannot come from one run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} overflows when summed")]
pub struct CounterOverflow(pub &'static str);

impl TxnCounters {
    pub fn failures(&self) -> u64 {
        self.serialization_failures
            .saturating_add(self.deadlock_failures)
            .saturating_add(self.other_failures)
            .saturating_add(self.connection_failures)
    }

    /// Goodput with its fraction: the units of work done.
    pub fn goodput_units(&self) -> f64 {
        self.goodput as f64 + self.goodput_fraction
    }

    /// Adds `units` of work (negative or non-finite values count nothing): whole units to
    /// `goodput` (saturating), the rest carried in `goodput_fraction`.
    #[inline]
    pub fn add_work(&mut self, units: f64) {
        if !(units.is_finite() && units > 0.0) {
            return;
        }
        let sum = self.goodput_fraction + units;
        let whole = sum.floor();
        // `as` saturates: a value past u64::MAX adds u64::MAX.
        self.goodput = self.goodput.saturating_add(whole as u64);
        self.goodput_fraction = sum - whole;
    }

    /// Why a run has no latency or speed-up to show: `None` when it committed something,
    /// else what its transactions did instead (`no transaction committed: 12 deadlock
    /// failures, 4 unfinished`), so a report prints `–` and this, never `0.00` beside a ✔.
    pub fn no_commit_reason(&self) -> Option<String> {
        if self.cnt > 0 {
            return None;
        }
        let parts: Vec<String> = [
            (self.deadlock_failures, "deadlock failures"),
            (self.serialization_failures, "serialization failures"),
            (self.other_failures, "other failures"),
            (self.connection_failures, "connection failures"),
            (self.skipped, "skipped"),
            (self.unfinished, "unfinished (still running at the end)"),
            (self.unstarted, "unstarted (scheduled by -R, never begun)"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        Some(if parts.is_empty() {
            "no transaction committed (none ended)".to_string()
        } else {
            format!("no transaction committed: {}", parts.join(", "))
        })
    }

    /// All transactions that were scheduled: committed + skipped + failed.
    pub fn total(&self) -> u64 {
        self.cnt
            .saturating_add(self.skipped)
            .saturating_add(self.failures())
    }

    /// Records a committed transaction that did `useful` units of work (usually 0 or 1).
    #[inline]
    pub fn record_success(&mut self, latency_us: u64, lag_us: Option<u64>, useful: u64) {
        self.cnt += 1;
        self.goodput = self.goodput.saturating_add(useful);
        self.latency.add(latency_us as f64);
        if let Some(lag) = lag_us {
            self.lag.add(lag as f64);
        }
        self.hist.record_us(latency_us);
    }

    pub fn record_failure(&mut self, kind: FailureKind) {
        match kind {
            FailureKind::Serialization => self.serialization_failures += 1,
            FailureKind::Deadlock => self.deadlock_failures += 1,
            FailureKind::Other => self.other_failures += 1,
            FailureKind::Connection => self.connection_failures += 1,
        }
    }

    pub fn record_error_code(&mut self, sqlstate: &str) {
        if let Some(n) = self.errors_by_sqlstate.get_mut(sqlstate) {
            *n += 1;
        } else {
            self.errors_by_sqlstate.insert(sqlstate.to_string(), 1);
        }
    }

    /// Adds another thread's, interval's or group's counters; a count that would pass
    /// `u64::MAX` stays there (saturates).
    pub fn merge(&mut self, o: &TxnCounters) {
        let _ = self.combine(o, false);
    }

    /// Adds `o` as [`merge`](Self::merge) does, but refuses (leaving `self` partly summed) a
    /// count that would pass `u64::MAX`: records read from files, whose sum must describe a
    /// run.
    pub fn checked_merge(&mut self, o: &TxnCounters) -> Result<(), CounterOverflow> {
        self.combine(o, true)
    }

    fn combine(&mut self, o: &TxnCounters, checked: bool) -> Result<(), CounterOverflow> {
        let add = |a: u64, b: u64, name: &'static str| match a.checked_add(b) {
            Some(n) => Ok(n),
            None if checked => Err(CounterOverflow(name)),
            None => Ok(u64::MAX),
        };
        self.cnt = add(self.cnt, o.cnt, "cnt")?;
        self.goodput = add(self.goodput, o.goodput, "goodput")?;
        self.skipped = add(self.skipped, o.skipped, "skipped")?;
        self.retries = add(self.retries, o.retries, "retries")?;
        self.retried = add(self.retried, o.retried, "retried")?;
        self.serialization_failures = add(
            self.serialization_failures,
            o.serialization_failures,
            "serialization_failures",
        )?;
        self.deadlock_failures = add(
            self.deadlock_failures,
            o.deadlock_failures,
            "deadlock_failures",
        )?;
        self.other_failures = add(self.other_failures, o.other_failures, "other_failures")?;
        self.connection_failures = add(
            self.connection_failures,
            o.connection_failures,
            "connection_failures",
        )?;
        self.late = add(self.late, o.late, "late")?;
        self.reconnects = add(self.reconnects, o.reconnects, "reconnects")?;
        self.disconnected_us = add(self.disconnected_us, o.disconnected_us, "disconnected_us")?;
        self.ended_disconnected = add(
            self.ended_disconnected,
            o.ended_disconnected,
            "ended_disconnected",
        )?;
        self.unfinished = add(self.unfinished, o.unfinished, "unfinished")?;
        self.unstarted = add(self.unstarted, o.unstarted, "unstarted")?;
        for (k, v) in &o.errors_by_sqlstate {
            let n = self.errors_by_sqlstate.entry(k.clone()).or_insert(0);
            *n = add(*n, *v, "errors_by_sqlstate")?;
        }
        // Fractions of work carry into whole units.
        let fraction = self.goodput_fraction + o.goodput_fraction;
        if fraction.is_finite() && fraction >= 1.0 {
            self.goodput = add(self.goodput, fraction.floor() as u64, "goodput")?;
        }
        self.goodput_fraction = if fraction.is_finite() {
            fraction.fract().max(0.0)
        } else {
            0.0
        };
        self.latency.merge(&o.latency);
        self.lag.merge(&o.lag);
        // Both histograms share bounds; merge only fails on incompatible precision.
        let _ = self.hist.merge(&o.hist);
        Ok(())
    }

    /// Resets to zero, keeping allocations.
    pub fn clear(&mut self) {
        let mut hist = std::mem::take(&mut self.hist);
        hist.reset();
        let mut errors = std::mem::take(&mut self.errors_by_sqlstate);
        errors.clear();
        *self = TxnCounters {
            hist,
            errors_by_sqlstate: errors,
            ..TxnCounters::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_up() {
        let mut c = TxnCounters::default();
        c.record_success(1000, None, 1);
        c.record_success(3000, Some(10), 0);
        c.record_failure(FailureKind::Serialization);
        c.record_failure(FailureKind::Connection);
        c.skipped += 2;
        assert_eq!(c.cnt, 2);
        assert_eq!(c.goodput, 1);
        assert_eq!(c.failures(), 2);
        assert_eq!(c.total(), 6);
        assert_eq!(c.latency.mean(), 2000.0);
        assert_eq!(c.lag.count, 1);
    }

    #[test]
    fn merge_and_clear() {
        let mut a = TxnCounters::default();
        let mut b = TxnCounters::default();
        a.record_success(10, None, 1);
        a.record_error_code("40001");
        b.record_success(20, None, 1);
        b.record_error_code("40001");
        b.record_error_code("40P01");
        a.merge(&b);
        assert_eq!(a.cnt, 2);
        assert_eq!(a.hist.len(), 2);
        assert_eq!(a.errors_by_sqlstate["40001"], 2);
        assert_eq!(a.errors_by_sqlstate["40P01"], 1);
        a.clear();
        assert_eq!(a.total(), 0);
        assert!(a.hist.is_empty());
        assert!(a.errors_by_sqlstate.is_empty());
    }

    #[test]
    fn counts_near_the_top_saturate_or_are_refused_and_fractions_add_up() {
        let mut a = TxnCounters {
            cnt: u64::MAX - 1,
            ..TxnCounters::default()
        };
        let b = TxnCounters {
            cnt: 5,
            deadlock_failures: u64::MAX,
            other_failures: 3,
            ..TxnCounters::default()
        };
        assert_eq!(b.failures(), u64::MAX);
        assert_eq!(a.clone().checked_merge(&b), Err(CounterOverflow("cnt")));
        a.merge(&b);
        assert_eq!(a.cnt, u64::MAX);
        assert_eq!(a.total(), u64::MAX);
        // sum: values of a quarter each add up to whole units; huge ones saturate.
        let mut w = TxnCounters::default();
        for _ in 0..10 {
            w.add_work(0.25);
        }
        assert_eq!((w.goodput, w.goodput_fraction), (2, 0.5));
        let mut other = TxnCounters::default();
        other.add_work(0.75);
        w.merge(&other);
        assert_eq!((w.goodput, w.goodput_fraction), (3, 0.25));
        w.add_work(-4.0);
        w.add_work(f64::NAN);
        assert_eq!(w.goodput_units(), 3.25);
        w.add_work(2f64.powi(62));
        w.add_work(2f64.powi(63));
        w.add_work(1e300);
        assert_eq!(w.goodput, u64::MAX);
    }

    #[test]
    fn no_commit_reason_names_what_happened_instead() {
        let mut c = TxnCounters::default();
        assert_eq!(
            c.no_commit_reason().as_deref(),
            Some("no transaction committed (none ended)")
        );
        c.record_failure(FailureKind::Deadlock);
        c.unfinished = 4;
        assert_eq!(
            c.no_commit_reason().as_deref(),
            Some("no transaction committed: 1 deadlock failures, 4 unfinished (still running at the end)")
        );
        c.record_success(1000, None, 1);
        assert_eq!(c.no_commit_reason(), None);
    }
}
