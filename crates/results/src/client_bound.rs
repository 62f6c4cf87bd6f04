//! When a run measured its clients, not the server. N clients that each wait for one
//! transaction at a time, and whose fastest transaction took R_min (round trips, `--rtt`
//! included, and the client's own work), can complete at most N / R_min transactions per
//! second whatever the server (Little's law: throughput = clients / time per transaction).
//! A run that reaches 90% of that bound had transactions that hardly waited on the server:
//! raising `-c` is what would measure it. Seen on a 16-core server: the daily-limit ceiling
//! (91,720/s) was 100 clients over a 1.09 ms round trip with `--rtt 1ms`, and "escrow = 100%
//! of the ceiling" measured the clients.

use serde::{Deserialize, Serialize};

use crate::record::RunRecord;

/// A run at or above this share of its client-side bound is bound by its clients.
pub const BINDS_AT: f64 = 0.9;

/// The client-side bound of a closed-loop run, and how close the run came to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientBound {
    pub clients: usize,
    /// The fastest committed transaction, ms: no transaction takes less client-side time.
    pub floor_ms: f64,
    /// The emulated round trip (`--rtt`), ms; 0 without.
    pub rtt_ms: f64,
    /// clients ÷ floor, transactions per second.
    pub bound_per_s: f64,
    /// Transactions per second the run committed.
    pub tps: f64,
}

impl ClientBound {
    /// The bound of a run (its work group's record, for a ladder variant): `None` without
    /// committed transactions, or when a rate limit (`-R`, a group's `rate`) set the pace
    /// rather than the clients.
    pub fn of(r: &RunRecord, rtt_us: i64) -> Option<ClientBound> {
        let c = &r.totals.counters;
        if c.cnt == 0 || c.latency.min <= 0.0 || r.bench.rate.is_some() {
            return None;
        }
        if r.groups.iter().any(|g| g.rate.is_some()) {
            return None;
        }
        let clients = if r.groups.is_empty() {
            r.bench.clients
        } else {
            r.groups
                .iter()
                .fold(0usize, |n, g| n.saturating_add(g.clients))
        };
        let floor_ms = c.latency.min / 1000.0;
        Some(ClientBound {
            clients,
            floor_ms,
            rtt_ms: rtt_us as f64 / 1000.0,
            bound_per_s: clients as f64 * 1000.0 / floor_ms,
            tps: r.totals.tps,
        })
    }

    /// The run's throughput over the bound.
    pub fn share(&self) -> f64 {
        if self.bound_per_s > 0.0 {
            self.tps / self.bound_per_s
        } else {
            0.0
        }
    }

    /// At [`BINDS_AT`] of the bound or above.
    pub fn binds(&self) -> bool {
        self.share() >= BINDS_AT
    }

    /// `bound by clients × rtt (100 clients / 1.05 ms = 95238/s): raise -c to measure the
    /// server` (`by the clients` without `--rtt`).
    pub fn message(&self) -> String {
        let by = if self.rtt_ms > 0.0 {
            "clients × rtt"
        } else {
            "the clients"
        };
        format!(
            "bound by {by} ({} clients / {:.2} ms = {:.0}/s; {:.0}% of it reached): raise -c to \
             measure the server",
            self.clients,
            self.floor_ms,
            self.bound_per_s,
            self.share() * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GroupRecord, TotalsRecord, TxnCounters};

    fn run(clients: usize, cnt: u64, min_us: f64, duration_s: f64) -> RunRecord {
        let mut c = TxnCounters {
            cnt,
            ..Default::default()
        };
        c.latency.add(min_us);
        c.latency.add(min_us * 1.2);
        c.cnt = cnt;
        let totals = TotalsRecord::from_counters(c, duration_s);
        RunRecord {
            totals: totals.clone(),
            groups: vec![GroupRecord::plain("main", clients, totals)],
            ..Default::default()
        }
    }

    #[test]
    fn the_16_core_ceiling_was_its_clients() {
        // 100 clients, fastest payment 1.03 ms with --rtt 1ms, 91,720/s.
        let r = run(100, 458_600, 1030.0, 5.0);
        let b = ClientBound::of(&r, 1000).expect("bound");
        assert!((b.bound_per_s - 97_087.4).abs() < 1.0, "{b:?}");
        assert!(b.binds());
        assert_eq!(
            b.message(),
            "bound by clients × rtt (100 clients / 1.03 ms = 97087/s; 94% of it reached): \
             raise -c to measure the server"
        );
    }

    #[test]
    fn a_server_that_makes_clients_wait_is_not_client_bound() {
        // This machine's ceiling: 5,949/s at 100 clients whose fastest payment took 1.46 ms.
        let b = ClientBound::of(&run(100, 29_745, 1456.0, 5.0), 1000).expect("bound");
        assert!((b.share() - 0.0866).abs() < 0.001, "{b:?}");
        assert!(!b.binds());
        // Few clients without --rtt: they are the limit.
        let b = ClientBound::of(&run(2, 40_000, 240.0, 5.0), 0).expect("bound");
        assert!(b.binds() && b.message().starts_with("bound by the clients (2 clients"));
    }

    #[test]
    fn no_bound_without_commits_or_under_a_rate() {
        assert_eq!(ClientBound::of(&run(8, 0, 500.0, 5.0), 0), None);
        let mut r = run(8, 100, 500.0, 5.0);
        r.groups[0].rate = Some(20.0);
        assert_eq!(ClientBound::of(&r, 0), None);
    }
}
