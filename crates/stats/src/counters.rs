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
    /// Successful transactions that did useful work (see the goodput rule), or units of
    /// work under a `sum:` rule.
    pub goodput: u64,
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

impl TxnCounters {
    pub fn failures(&self) -> u64 {
        self.serialization_failures
            + self.deadlock_failures
            + self.other_failures
            + self.connection_failures
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
        self.cnt + self.skipped + self.failures()
    }

    /// Records a committed transaction that did `useful` units of work (usually 0 or 1).
    #[inline]
    pub fn record_success(&mut self, latency_us: u64, lag_us: Option<u64>, useful: u64) {
        self.cnt += 1;
        self.goodput += useful;
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

    pub fn merge(&mut self, o: &TxnCounters) {
        self.cnt += o.cnt;
        self.goodput += o.goodput;
        self.skipped += o.skipped;
        self.retries += o.retries;
        self.retried += o.retried;
        self.serialization_failures += o.serialization_failures;
        self.deadlock_failures += o.deadlock_failures;
        self.other_failures += o.other_failures;
        self.connection_failures += o.connection_failures;
        self.late += o.late;
        self.reconnects += o.reconnects;
        self.disconnected_us += o.disconnected_us;
        self.ended_disconnected += o.ended_disconnected;
        self.unfinished += o.unfinished;
        for (k, v) in &o.errors_by_sqlstate {
            *self.errors_by_sqlstate.entry(k.clone()).or_insert(0) += v;
        }
        self.latency.merge(&o.latency);
        self.lag.merge(&o.lag);
        // Both histograms share bounds; merge only fails on incompatible precision.
        let _ = self.hist.merge(&o.hist);
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
