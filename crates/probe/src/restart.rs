//! A probe that outlives its connection: when the server goes away (a `--perturb` restart, a
//! failover) the probe connects again with a bounded back-off ([`Backoff`]) while the run
//! lasts, and when the server restarted meanwhile its cumulative counters (`pg_stat_*`, the
//! WAL position, checkpoints, pg_stat_statements) may have been reset (a crash recovery
//! resets them; a clean shutdown keeps them): differencing across the restart would give
//! a negative or a too-small delta. So a restart is a new baseline: the counts before it are
//! carried ([`Carried`]) and the ones after it count from the reconnection. Pure, so the
//! arithmetic is tested without a server.

use std::collections::BTreeMap;
use std::time::Duration;

use hotbench_results::probe_record::{DatabaseDelta, ServerDelta, TableSummary};

use crate::statements::Snapshot;

/// When to try connecting again after the connection was lost: first after
/// [`Backoff::FIRST`], each failed try doubling the wait up to [`Backoff::MAX`]; at most
/// [`Backoff::RECONNECTS`] reconnections in a run (a server that keeps dropping the probe is
/// not worth a note per second).
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    reconnects: u32,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            next: Backoff::FIRST,
            reconnects: 0,
        }
    }
}

impl Backoff {
    pub const FIRST: Duration = Duration::from_millis(100);
    pub const MAX: Duration = Duration::from_secs(1);
    pub const RECONNECTS: u32 = 20;
    /// A reconnection's own connect timeout: a server starting up answers at once (refused,
    /// or 57P03); a longer wait only delays the run's end.
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

    /// The wait before the next try, and the one after it (doubled, bounded).
    pub fn failed(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 2).min(Backoff::MAX);
        now
    }

    /// A try succeeded: the next loss starts from [`Backoff::FIRST`] again.
    pub fn connected(&mut self) {
        self.next = Backoff::FIRST;
        self.reconnects += 1;
    }

    /// Whether another reconnection is allowed.
    pub fn may_try(&self) -> bool {
        self.reconnects < Backoff::RECONNECTS
    }
}

/// Whether the server restarted between two reads of `pg_postmaster_start_time()`; unknown
/// (either read failed) counts as a restart: a new baseline is always safe.
pub fn restarted(before: Option<&str>, after: Option<&str>) -> bool {
    match (before, after) {
        (Some(a), Some(b)) => a != b,
        _ => true,
    }
}

/// What the sampler keeps about its reconnections.
#[derive(Default)]
pub(crate) struct Restarts {
    /// The server's start time at the start (or the last reconnection).
    pub started: Option<String>,
    /// The counts before each restart, added up.
    pub carried: Option<Carried>,
    /// The next interval spans a restart.
    pub pending: bool,
    /// (lost, back, restarted), Unix seconds.
    pub gaps: Vec<(f64, f64, bool)>,
}

/// What the counters had added up to before the server's restarts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Carried {
    pub server: ServerDelta,
    pub tables: Vec<TableSummary>,
    pub statements: Snapshot,
}

impl Carried {
    /// These counts followed by a segment's (`server`, `tables`, `statements`).
    pub fn then(self, server: &ServerDelta, tables: &[TableSummary], stmts: &Snapshot) -> Carried {
        Carried {
            server: add_server(&self.server, server),
            tables: chain_tables(&self.tables, tables),
            statements: add_statements(&self.statements, stmts),
        }
    }
}

/// Two spans' server activity, one after the other: a part missing on one side is the other
/// side's (not a sum with an unknown).
pub fn add_server(a: &ServerDelta, b: &ServerDelta) -> ServerDelta {
    fn both<T: Copy>(a: Option<T>, b: Option<T>, f: impl Fn(T, T) -> T) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => Some(f(x, y)),
            (x, y) => x.or(y),
        }
    }
    let database = match (&a.database, &b.database) {
        (Some(x), Some(y)) => Some(DatabaseDelta {
            commits: x.commits.saturating_add(y.commits),
            rollbacks: x.rollbacks.saturating_add(y.rollbacks),
            deadlocks: x.deadlocks.saturating_add(y.deadlocks),
        }),
        (x, y) => x.clone().or_else(|| y.clone()),
    };
    ServerDelta {
        database,
        wal_bytes: both(a.wal_bytes, b.wal_bytes, u64::saturating_add),
        checkpoints: both(a.checkpoints, b.checkpoints, u64::saturating_add),
    }
}

/// Per table (by name), the counts of `before` and then `after` added, the gauges at the
/// start from `before` and at the end from `after`; a table on one side only is that
/// side's. Most written first, as [`crate::health::table_summaries`] orders them.
pub fn chain_tables(before: &[TableSummary], after: &[TableSummary]) -> Vec<TableSummary> {
    let mut out: BTreeMap<String, TableSummary> =
        before.iter().map(|t| (t.name.clone(), t.clone())).collect();
    for t in after {
        let merged = match out.remove(&t.name) {
            None => t.clone(),
            Some(b) => TableSummary {
                name: t.name.clone(),
                inserts: b.inserts.saturating_add(t.inserts),
                updates: b.updates.saturating_add(t.updates),
                hot_updates: b.hot_updates.saturating_add(t.hot_updates),
                deletes: b.deletes.saturating_add(t.deletes),
                autovacuums: b.autovacuums.saturating_add(t.autovacuums),
                live_tuples_end: t.live_tuples_end,
                dead_tuples_start: b.dead_tuples_start,
                dead_tuples_end: t.dead_tuples_end,
                size_bytes_start: b.size_bytes_start,
                size_bytes_end: t.size_bytes_end,
            },
        };
        out.insert(t.name.clone(), merged);
    }
    let mut v: Vec<TableSummary> = out.into_values().collect();
    v.sort_by(|a, b| {
        let w = |t: &TableSummary| t.inserts + t.updates + t.deletes;
        w(b).cmp(&w(a)).then_with(|| a.name.cmp(&b.name))
    });
    v
}

/// Two spans' statement counts added, statement by statement.
pub fn add_statements(a: &Snapshot, b: &Snapshot) -> Snapshot {
    let mut out = a.clone();
    for (id, c) in b {
        let e = out.entry(id.clone()).or_default();
        e.calls = e.calls.saturating_add(c.calls);
        e.total_ms += c.total_ms;
        e.rows = e.rows.saturating_add(c.rows);
        e.hit = e.hit.saturating_add(c.hit);
        e.read = e.read.saturating_add(c.read);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::{server_delta, table_summaries, TableSnap, TablesSnap};
    use crate::statements::Counters;

    #[test]
    fn the_backoff_doubles_to_its_bound_and_starts_again_after_a_reconnection() {
        let mut b = Backoff::default();
        let waits: Vec<u128> = (0..6).map(|_| b.failed().as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        b.connected();
        assert_eq!(b.failed(), Backoff::FIRST);
        for _ in 1..Backoff::RECONNECTS {
            assert!(b.may_try());
            b.connected();
        }
        assert!(!b.may_try(), "bounded");
    }

    #[test]
    fn an_unknown_start_time_counts_as_a_restart() {
        assert!(!restarted(
            Some("2026-11-28 11:00:00+00"),
            Some("2026-11-28 11:00:00+00")
        ));
        assert!(restarted(
            Some("2026-11-28 11:00:00+00"),
            Some("2026-11-28 11:00:03+00")
        ));
        assert!(restarted(None, Some("x")) && restarted(Some("x"), None));
    }

    fn table(ins: i64, dead: i64) -> TablesSnap {
        let mut t = TablesSnap::new();
        t.insert(
            7,
            TableSnap {
                name: "acct".into(),
                ins,
                dead,
                size: 8192,
                ..Default::default()
            },
        );
        t
    }

    /// An immediate restart resets every counter: read straight across it, the commits
    /// after it (500 < 100,000 before) would be counted "from zero" only by luck, and once
    /// past the old value (100,400 after 100,000) as a delta of 400. Carried over a new
    /// baseline, the run's totals are the work before plus the work after; WAL never goes
    /// backwards, checkpoints neither.
    #[test]
    fn counters_reset_by_a_restart_add_up_instead_of_giving_bogus_deltas() {
        // Before: commits 1,000 → 100,000; WAL 0 → 5,000; checkpoints 3 → 4; 10 → 60 inserts.
        let db = |c: i64| Some([c, 0, 0, 0, 0]);
        let first = (db(1_000), Some((0, Some(3))));
        let last_before = (db(100_000), Some((5_000, Some(4))));
        // After an immediate restart: everything from zero (WAL continues at a new position).
        let fresh = (db(0), Some((4_000, Some(0))));
        let end = (db(100_400), Some((9_000, Some(1))));
        let across = server_delta(last_before, end);
        assert_eq!(
            across.database.as_ref().map(|d| d.commits),
            Some(400),
            "straight across: far too few"
        );
        let carried = Carried::default().then(
            &server_delta(first, last_before),
            &table_summaries(&table(10, 0), &table(60, 40)),
            &Snapshot::new(),
        );
        let server = add_server(&carried.server, &server_delta(fresh, end));
        assert_eq!(server.database.map(|d| d.commits), Some(99_000 + 100_400));
        assert_eq!(server.wal_bytes, Some(5_000 + 5_000));
        assert_eq!(server.checkpoints, Some(1 + 1));
        // Tables: the counts add up; dead tuples from the run's start to its end.
        let tables = chain_tables(
            &carried.tables,
            &table_summaries(&table(0, 0), &table(25, 3)),
        );
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        assert_eq!(
            (t.inserts, t.dead_tuples_start, t.dead_tuples_end),
            (50 + 25, 0, 3)
        );
        // No restart: nothing carried, the totals are the segment's own.
        let alone = server_delta(first, last_before);
        assert_eq!(add_server(&ServerDelta::default(), &alone), alone);
        // A part read on one side only stays known, not summed with an unknown.
        let no_wal = ServerDelta {
            wal_bytes: None,
            ..alone.clone()
        };
        assert_eq!(add_server(&alone, &no_wal).wal_bytes, Some(5_000));
    }

    #[test]
    fn statements_add_up_across_a_restart() {
        let c = |calls, total_ms| Counters {
            calls,
            total_ms,
            rows: calls,
            hit: 0,
            read: 0,
        };
        let a: Snapshot = [("1".to_string(), c(10, 5.0))].into_iter().collect();
        let b: Snapshot = [("1".to_string(), c(4, 1.0)), ("2".to_string(), c(1, 0.5))]
            .into_iter()
            .collect();
        let s = add_statements(&a, &b);
        assert_eq!((s["1"].calls, s["1"].total_ms, s["2"].calls), (14, 6.0, 1));
    }
}
