//! Table and database health: cumulative counters read from `pg_stat_user_tables`,
//! `pg_stat_database` and the WAL position, turned into per-interval deltas and run totals.
//! The differencing is pure (tested without a server); the queries live next to it.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_results::probe_record::{
    DatabaseDelta, ProbeInterval, ServerDelta, TableInterval, TableSummary,
};
use hotbench_wire::QueryResult;

use crate::classify::int;

/// One table's cumulative counters and gauges at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableSnap {
    pub name: String,
    pub ins: i64,
    pub upd: i64,
    pub hot_upd: i64,
    pub del: i64,
    pub live: i64,
    pub dead: i64,
    pub autovacuum: i64,
    pub size: i64,
}

/// Tables by oid.
pub type TablesSnap = BTreeMap<i64, TableSnap>;

const TABLES_SQL: &str = "select relid::int8, relid::regclass::text, n_tup_ins, n_tup_upd, \
     n_tup_hot_upd, n_tup_del, n_live_tup, n_dead_tup, autovacuum_count, \
     coalesce(pg_relation_size(relid), 0) \
     from pg_stat_user_tables where relid = any($1::oid[])";

/// The same without locking the tables: `pg_relation_size` takes an ACCESS SHARE lock (it
/// would queue behind a user's ALTER TABLE or TRUNCATE); `pg_class.relpages` is the size as of
/// the table's last vacuum or analyze.
const TABLES_LOCK_FREE_SQL: &str = "select s.relid::int8, s.relid::regclass::text, \
     s.n_tup_ins, s.n_tup_upd, s.n_tup_hot_upd, s.n_tup_del, s.n_live_tup, s.n_dead_tup, \
     s.autovacuum_count, coalesce(c.relpages::int8 * current_setting('block_size')::int8, 0) \
     from pg_stat_user_tables s join pg_class c on c.oid = s.relid \
     where s.relid = any($1::oid[])";

/// The table-health query (`$1`: an oid array literal); `lock_free`: sizes from the catalog.
pub fn tables_sql(lock_free: bool) -> &'static str {
    if lock_free {
        TABLES_LOCK_FREE_SQL
    } else {
        TABLES_SQL
    }
}

/// Without a table list: the user tables with the most rows, at most `$1`.
pub const DEFAULT_TABLES_SQL: &str = "select relid::int8 from pg_stat_user_tables \
     order by n_live_tup + n_dead_tup desc, relid limit $1";

pub const COUNT_TABLES_SQL: &str = "select count(*) from pg_stat_user_tables";

/// Resolves names to oids (`NULL` when missing), in order.
pub const RESOLVE_SQL: &str = "select pg_catalog.to_regclass(n)::int8 \
     from pg_catalog.unnest($1::pg_catalog.text[]) as n";

pub const DATABASE_SQL: &str =
    "select xact_commit, xact_rollback, deadlocks from pg_stat_database \
     where datname = current_database()";

/// The WAL position (bytes) and the checkpoints begun so far (the counters moved from
/// pg_stat_bgwriter to pg_stat_checkpointer in PostgreSQL 17).
pub fn wal_sql(server_version_num: u32) -> &'static str {
    if server_version_num >= 170000 {
        "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8, \
         (select num_timed + num_requested from pg_stat_checkpointer)::int8"
    } else {
        "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8, \
         (select checkpoints_timed + checkpoints_req from pg_stat_bgwriter)::int8"
    }
}

/// `(WAL bytes, checkpoints)`; the checkpoint count may be missing on its own.
pub type WalSnap = (i64, Option<i64>);

pub fn parse_wal(r: &QueryResult) -> Option<WalSnap> {
    Some((int(r.get(0, 0))?, int(r.get(0, 1))))
}

pub const XMIN_SQL: &str = "select max(age(backend_xmin))::int8, \
     extract(epoch from now() - min(xact_start))::float8 \
     from pg_stat_activity where pid <> pg_backend_pid()";

/// `search_path`: the user's, names are shown as it sees them ([`crate::classify::display_relation`]).
pub fn parse_tables(r: &QueryResult, search_path: Option<&str>) -> TablesSnap {
    let mut out = TablesSnap::new();
    for row in &r.rows {
        let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
        let Some(oid) = int(cell(0)) else { continue };
        let n = |i| int(cell(i)).unwrap_or(0);
        out.insert(
            oid,
            TableSnap {
                name: crate::classify::display_relation(cell(1).unwrap_or("?"), search_path),
                ins: n(2),
                upd: n(3),
                hot_upd: n(4),
                del: n(5),
                live: n(6),
                dead: n(7),
                autovacuum: n(8),
                size: n(9),
            },
        );
    }
    out
}

/// PostgreSQL's text form of an oid array.
pub fn oid_array(oids: &[i64]) -> String {
    let items: Vec<String> = oids.iter().map(|o| o.to_string()).collect();
    format!("{{{}}}", items.join(","))
}

/// Counter difference; a counter that went backwards (stats reset) counts from zero.
fn d(now: i64, before: i64) -> i64 {
    if now >= before {
        now - before
    } else {
        now
    }
}

/// Per-table deltas between two snapshots (tables present in `now`).
pub fn table_intervals(before: &TablesSnap, now: &TablesSnap) -> Vec<TableInterval> {
    now.iter()
        .map(|(oid, n)| table_delta(&before.get(oid).cloned().unwrap_or_default(), n))
        .collect()
}

/// One table's counters between two of its rows, and its gauges at the second.
fn table_delta(b: &TableSnap, n: &TableSnap) -> TableInterval {
    TableInterval {
        name: n.name.clone(),
        inserts: d(n.ins, b.ins),
        updates: d(n.upd, b.upd),
        hot_updates: d(n.hot_upd, b.hot_upd),
        deletes: d(n.del, b.del),
        autovacuums: d(n.autovacuum, b.autovacuum),
        live_tuples: n.live,
        dead_tuples: n.dead,
        size_bytes: n.size,
    }
}

/// Run totals per table, most written first: the whole run as one interval, with the
/// gauges at its start beside those at its end.
pub fn table_summaries(first: &TablesSnap, last: &TablesSnap) -> Vec<TableSummary> {
    let mut v: Vec<TableSummary> = last
        .iter()
        .map(|(oid, n)| {
            let b = first.get(oid).cloned().unwrap_or_default();
            let t = table_delta(&b, n);
            TableSummary {
                name: t.name,
                inserts: t.inserts,
                updates: t.updates,
                hot_updates: t.hot_updates,
                deletes: t.deletes,
                autovacuums: t.autovacuums,
                live_tuples_end: t.live_tuples,
                dead_tuples_start: b.dead,
                dead_tuples_end: t.dead_tuples,
                size_bytes_start: b.size,
                size_bytes_end: t.size_bytes,
            }
        })
        .collect();
    v.sort_by(|a, b| {
        let w = |t: &TableSummary| t.inserts + t.updates + t.deletes;
        w(b).cmp(&w(a)).then_with(|| a.name.cmp(&b.name))
    });
    v
}

/// Keeps the tables the run wrote to (inserts, updates or deletes), in the summaries and on
/// the timeline. Used when no table was named: the probe then follows the database's largest
/// tables, and one left behind by an earlier run is not this workload's.
pub fn keep_written(summaries: &mut Vec<TableSummary>, timeline: &mut [ProbeInterval]) {
    summaries.retain(|t| t.inserts + t.updates + t.deletes > 0);
    let keep: BTreeSet<String> = summaries.iter().map(|t| t.name.clone()).collect();
    for iv in timeline {
        iv.tables.retain(|t| keep.contains(&t.name));
    }
}

/// `xact_commit, xact_rollback, deadlocks`.
/// Commits, rollbacks, deadlocks; then the reader's own commits and rollbacks (0 here: the
/// sampler fills them in, and deltas subtract them).
pub fn parse_database(r: &QueryResult) -> Option<DbSnap> {
    Some([
        int(r.get(0, 0))?,
        int(r.get(0, 1))?,
        int(r.get(0, 2))?,
        0,
        0,
    ])
}

/// See [`parse_database`].
pub type DbSnap = [i64; 5];

/// Database counters, WAL position and checkpoints between two snapshots (`None` where one
/// is missing).
pub fn server_delta(
    before: (Option<DbSnap>, Option<WalSnap>),
    now: (Option<DbSnap>, Option<WalSnap>),
) -> ServerDelta {
    ServerDelta {
        database: match (before.0, now.0) {
            (Some(b), Some(n)) => Some(database_delta(b, n)),
            _ => None,
        },
        wal_bytes: match (before.1, now.1) {
            (Some(b), Some(n)) => Some((n.0 - b.0).max(0) as u64),
            _ => None,
        },
        checkpoints: match (before.1.and_then(|w| w.1), now.1.and_then(|w| w.1)) {
            // A stats reset in between counts from zero.
            (Some(b), Some(n)) => Some(d(n, b).max(0) as u64),
            _ => None,
        },
    }
}

/// The delta less the reader's own transactions (never below 0: the server counts them up
/// to a stats flush late).
fn database_delta(before: DbSnap, now: DbSnap) -> DatabaseDelta {
    let less_own = |i: usize| (d(now[i], before[i]) - (now[i + 3] - before[i + 3])).max(0);
    DatabaseDelta {
        commits: less_own(0),
        rollbacks: less_own(1),
        deadlocks: d(now[2], before[2]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(name: &str, ins: i64, dead: i64) -> TableSnap {
        TableSnap {
            name: name.into(),
            ins,
            dead,
            ..Default::default()
        }
    }

    #[test]
    fn deltas_and_resets() {
        let mut a = TablesSnap::new();
        a.insert(1, snap("q", 10, 5));
        let mut b = TablesSnap::new();
        b.insert(1, snap("q", 25, 40));
        b.insert(2, snap("new", 3, 0));
        let iv = table_intervals(&a, &b);
        assert_eq!(iv[0].inserts, 15);
        assert_eq!(iv[0].dead_tuples, 40);
        assert_eq!(iv[1].inserts, 3);
        let s = table_summaries(&a, &b);
        assert_eq!(s[0].name, "q");
        assert_eq!(s[0].dead_tuples_start, 5);
        assert_eq!(s[0].dead_tuples_end, 40);
        // Reset: counts from zero.
        assert_eq!(
            database_delta([100, 5, 1, 0, 0], [7, 0, 0, 0, 0]).commits,
            7
        );
        // The reader's own transactions are not the user's, even when the server has not
        // counted them yet.
        let own = database_delta([100, 5, 1, 10, 0], [150, 6, 1, 30, 1]);
        assert_eq!((own.commits, own.rollbacks), (30, 0));
        assert_eq!(
            database_delta([100, 5, 1, 10, 0], [100, 5, 1, 30, 0]).commits,
            0
        );
        assert_eq!(oid_array(&[1, 2]), "{1,2}");
    }

    #[test]
    fn checkpoints_between_snapshots() {
        let s = server_delta((None, Some((100, Some(3)))), (None, Some((600, Some(5)))));
        assert_eq!((s.wal_bytes, s.checkpoints), (Some(500), Some(2)));
        // Counter reset: counts from zero; a missing count stays unknown, WAL still known.
        let s = server_delta((None, Some((0, Some(9)))), (None, Some((10, Some(1)))));
        assert_eq!(s.checkpoints, Some(1));
        let s = server_delta((None, Some((0, None))), (None, Some((10, Some(1)))));
        assert_eq!((s.wal_bytes, s.checkpoints), (Some(10), None));
    }

    #[test]
    fn only_written_tables_are_kept() {
        let mut a = TablesSnap::new();
        a.insert(1, snap("queue_left_behind", 0, 53475));
        a.insert(2, snap("accounts", 10, 0));
        let mut b = a.clone();
        b.insert(2, snap("accounts", 30, 4));
        let mut summaries = table_summaries(&a, &b);
        let mut timeline = vec![ProbeInterval {
            tables: table_intervals(&a, &b),
            ..Default::default()
        }];
        keep_written(&mut summaries, &mut timeline);
        let names: Vec<&str> = summaries.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["accounts"]);
        let names: Vec<&str> = timeline[0].tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["accounts"]);
    }
}
