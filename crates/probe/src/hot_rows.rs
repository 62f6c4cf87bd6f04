//! Hot rows, server side: the tuples the run's lock-waiting backends queue on (`pg_locks`
//! tuple locks: held by a backend waiting on the locker's transactionid, awaited by those
//! waiting on the tuple) turned into the row's relation and primary key, with their share of
//! the lock-waiting samples. A partition's rows count on its partitioned table (statements
//! name the root), which records the partitions seen.
//!
//! The key is read by hotbench with a plain prepared `SELECT "pk", … FROM "schema"."table"
//! WHERE ctid OPERATOR(pg_catalog.=) $1` ([`crate::row_keys`]): names read from the catalog as data and quoted
//! here, values in binary format decoded here (built-in types and enums only: nothing the
//! table's owner could define runs), never through a view, a cast or a function. The tuples
//! and the keys are read in one `REPEATABLE READ` transaction, so the keys are read in the
//! snapshot of the `pg_locks` read: the locked row version is still visible even when its
//! locker commits in between. Cheap and bounded: it runs only when the sampler reads
//! `pg_locks` (lock waits seen, about once a second), resolves at most [`ROWS_PER_READ`]
//! tuples per read and keeps at most [`MAX_ROWS`] distinct rows.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_results::probe_record::{HotRow, RelationWaits};

use crate::classify::{display_relation, int};
use crate::row_keys::RowKeys;
use crate::session::{Part, Session};

/// Tuples resolved per `pg_locks` read (the most queued-on first).
pub const ROWS_PER_READ: usize = 4;
/// Distinct rows remembered; later rows are counted only in the total.
pub const MAX_ROWS: usize = 1000;
/// Rows kept in the record.
pub const TOP_ROWS: usize = 10;

/// `{F}` selects the sampled backends (alias `a`). Each lock-waiting backend counts on the
/// tuple of its own tuple lock (held while waiting on the locker's transactionid, or awaited);
/// one waiting on a transactionid without a tuple lock (following an update chain) counts on
/// the tuple another waiter on the same transaction holds. The four most waited-on tuples:
/// relation (oid, name, its partition root's name or ''), page, tuple, waiters.
const WAITED_TUPLES: &str = "with waiting as (select a.pid from pg_stat_activity a \
       where {F} and a.wait_event_type = 'Lock'), \
     locks as materialized (select l.* from pg_locks l \
       where l.locktype in ('tuple', 'transactionid') and l.pid in (select pid from waiting)), \
     tl as (select pid, relation, page, tuple from locks where locktype = 'tuple'), \
     xw as (select pid, transactionid from locks \
       where locktype = 'transactionid' and not granted), \
     xrow as (select distinct on (x.transactionid::text) x.transactionid, t.relation, t.page, \
         t.tuple from xw x join tl t on t.pid = x.pid \
       order by x.transactionid::text, t.relation, t.page, t.tuple), \
     per_pid as (select relation, page, tuple from tl \
       union all select r.relation, r.page, r.tuple from xw x join xrow r using (transactionid) \
       where x.pid not in (select pid from tl)), \
     w as (select relation, page, tuple, count(*)::int8 as n from per_pid \
       group by 1, 2, 3 order by 4 desc limit 4) \
     select w.relation::int8, w.relation::regclass::text, {ROOT}, w.page, w.tuple, w.n from w";

/// The partition root's name (PostgreSQL 12 and later).
const ROOT: &str = "coalesce(pg_partition_root(w.relation)::regclass::text, '')";

pub struct HotRows {
    counts: BTreeMap<(String, String), u64>,
    /// Partitions seen per partitioned table.
    partitions: BTreeMap<String, BTreeSet<String>>,
    /// Lock-waiting backend samples at the `pg_locks` reads (the share's denominator).
    lock_waiters: u64,
    /// Reads made, and the sum of their waiters' squares (the reads' effective count).
    reads: u64,
    waiters_sq: f64,
    /// How keys are read; `None`: rows are named by ctid.
    keys: Option<RowKeys>,
    root: &'static str,
}

impl HotRows {
    /// `keys`: read each hot row's primary key by ctid (the one read of a user table), on a
    /// server of `server_version_num`.
    pub fn new(keys: bool, server_version_num: u32) -> HotRows {
        HotRows {
            counts: BTreeMap::new(),
            partitions: BTreeMap::new(),
            lock_waiters: 0,
            reads: 0,
            waiters_sq: 0.0,
            keys: keys.then(RowKeys::new),
            root: if server_version_num >= 120000 || server_version_num == 0 {
                ROOT
            } else {
                "''::text"
            },
        }
    }

    /// One read, while `lock_waiting` of the sampled backends wait on locks (`filter`: which
    /// backends, see `WAITED_TUPLES`). With keys, the tuples and their keys are read in one
    /// repeatable-read transaction (one snapshot).
    pub fn read(&mut self, s: &mut Session, filter: &str, lock_waiting: u32) {
        if !s.enabled(Part::HotRows) {
            return;
        }
        let snapshot = self.keys.is_some() && s.begin_snapshot();
        self.read_in(s, filter, lock_waiting);
        if snapshot {
            s.end_snapshot();
        }
    }

    fn read_in(&mut self, s: &mut Session, filter: &str, lock_waiting: u32) {
        let sql = WAITED_TUPLES
            .replace("{F}", filter)
            .replace("{ROOT}", self.root);
        let Some(r) = s.run_prepared(Part::HotRows, "hotbench_probe_hot_tuples", &sql) else {
            return;
        };
        self.lock_waiters += u64::from(lock_waiting);
        self.reads += 1;
        self.waiters_sq += f64::from(lock_waiting).powi(2);
        for row in r.rows.iter().take(ROWS_PER_READ) {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let (Some(oid), Some(rel), Some(page), Some(tuple), Some(n)) =
                (int(cell(0)), cell(1), cell(3), cell(4), int(cell(5)))
            else {
                continue;
            };
            let ctid = format!("({page},{tuple})");
            let key = match self.keys.as_mut() {
                Some(k) => match k.key(s, oid, &ctid) {
                    Some(k) => k,
                    // The row version is gone, or the read was skipped.
                    None => continue,
                },
                None => format!("ctid={ctid}"),
            };
            let rel = display_relation(rel, s.user_search_path.as_deref());
            let relation = match cell(2).filter(|r| !r.is_empty()) {
                Some(root) => {
                    let root = display_relation(root, s.user_search_path.as_deref());
                    if root != rel {
                        let seen = self.partitions.entry(root.clone()).or_default();
                        if seen.len() < 100 {
                            seen.insert(rel);
                        }
                    }
                    root
                }
                None => rel,
            };
            let slot = (relation, key);
            if self.counts.len() < MAX_ROWS || self.counts.contains_key(&slot) {
                *self.counts.entry(slot).or_default() += n.max(0) as u64;
            }
        }
    }

    /// The most waited-on rows with their share of lock-waiting samples.
    pub fn summary(&self) -> Vec<HotRow> {
        summarize(&self.counts, self.lock_waiters)
    }

    /// The `pg_locks` reads made, and their effective count as independent observations of
    /// the rows' shares: `(Σ waiters)² / Σ waiters²` (each read is one cluster: the backends
    /// queued behind one row at one read are not independent samples).
    pub fn reads(&self) -> (u64, f64) {
        (
            self.reads,
            effective_reads(self.lock_waiters, self.waiters_sq),
        )
    }

    /// Lock waits and distinct rows per relation, most waited-on first.
    pub fn relations(&self) -> Vec<RelationWaits> {
        let mut v = relations(&self.counts, self.lock_waiters);
        for r in &mut v {
            if let Some(p) = self.partitions.get(&r.relation) {
                r.partitions = p.iter().cloned().collect();
            }
        }
        v
    }
}

/// [`HotRows::relations`] of a count map.
pub fn relations(
    counts: &BTreeMap<(String, String), u64>,
    lock_waiters: u64,
) -> Vec<RelationWaits> {
    let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for ((rel, _), &n) in counts {
        let e = by.entry(rel.as_str()).or_default();
        e.0 += n;
        e.1 += 1;
    }
    let mut v: Vec<RelationWaits> = by
        .into_iter()
        .map(|(relation, (lock_waits, rows))| RelationWaits {
            relation: relation.to_string(),
            lock_waits,
            pct: pct_of_waiters(lock_waits, lock_waiters),
            rows,
            partitions: Vec::new(),
        })
        .collect();
    v.sort_by(|a, b| {
        b.lock_waits
            .cmp(&a.lock_waits)
            .then_with(|| a.relation.cmp(&b.relation))
    });
    v
}

/// Kish's effective sample size of reads weighted by their waiters.
pub fn effective_reads(waiters: u64, waiters_sq: f64) -> f64 {
    if waiters_sq <= 0.0 {
        0.0
    } else {
        (waiters as f64).powi(2) / waiters_sq
    }
}

/// `n` as a percentage of `lock_waiters`, at most 100 (a backend counted on a row or a
/// relation was a lock waiter); 0 when nobody waited.
fn pct_of_waiters(n: u64, lock_waiters: u64) -> f64 {
    if lock_waiters == 0 {
        0.0
    } else {
        (n as f64 * 100.0 / lock_waiters as f64).min(100.0)
    }
}

/// Rows sorted by count (ties by relation and key), top [`TOP_ROWS`], with percentages of
/// `lock_waiters` (at most 100: a backend counted on a row was a lock waiter).
pub fn summarize(counts: &BTreeMap<(String, String), u64>, lock_waiters: u64) -> Vec<HotRow> {
    let mut v: Vec<HotRow> = counts
        .iter()
        .map(|((relation, key), &count)| HotRow {
            relation: relation.clone(),
            key: key.clone(),
            count,
            pct: pct_of_waiters(count, lock_waiters),
        })
        .collect();
    v.sort_by_key(|r| std::cmp::Reverse(r.count));
    v.truncate(TOP_ROWS);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_ranked_by_waiters_with_their_share() {
        let mut m = BTreeMap::new();
        m.insert(("acct".to_string(), "id=2".to_string()), 3);
        m.insert(("acct".to_string(), "id=1".to_string()), 9);
        let v = summarize(&m, 20);
        assert_eq!(v[0].key, "id=1");
        assert!((v[0].pct - 45.0).abs() < 1e-9);
        assert_eq!(v[1].count, 3);
        assert_eq!(summarize(&m, 0)[0].pct, 0.0);
        // Reads of 2, 2 and 8 waiters: 144 / 72 = 2 effective reads; equal reads count whole.
        assert_eq!(effective_reads(12, 72.0), 2.0);
        assert_eq!(effective_reads(9, 27.0), 3.0);
        assert_eq!(effective_reads(0, 0.0), 0.0);
        assert_eq!(summarize(&m, 4)[0].pct, 100.0);
        m.insert(("jobs".to_string(), "id=7".to_string()), 1);
        let r = relations(&m, 20);
        assert_eq!(
            (r[0].relation.as_str(), r[0].lock_waits, r[0].rows),
            ("acct", 12, 2)
        );
        assert!((r[0].pct - 60.0).abs() < 1e-9 && r[1].rows == 1);
    }
}
