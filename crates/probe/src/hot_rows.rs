//! Hot rows, server side: the tuples the run's lock-waiting backends queue on (`pg_locks`
//! tuple locks: held by a backend waiting on the locker's transactionid, awaited by those
//! waiting on the tuple) turned into the row's relation and primary key, with their share of
//! the lock-waiting samples.
//!
//! The key is read by ctid in the same statement that reads `pg_locks` (`query_to_xml` runs
//! the per-relation key query under that statement's snapshot): the locker has not committed
//! yet, so the locked row version is still visible — a second round trip often came too late.
//! Cheap and bounded: it runs only when the sampler reads `pg_locks` (lock waits seen, about
//! once a second), resolves at most [`ROWS_PER_READ`] tuples per read and keeps at most
//! [`MAX_ROWS`] distinct rows. Nothing is pasted into SQL by hotbench: the server builds the
//! key query with `format('%I')`/`%L` (identifiers quoted, the ctid a quoted literal).

use std::collections::BTreeMap;

use hotbench_stats::probe_record::HotRow;

use crate::classify::int;
use crate::session::{Part, Session};

/// Tuples resolved per `pg_locks` read (the most queued-on first).
pub const ROWS_PER_READ: usize = 4;
/// Distinct rows remembered; later rows are counted only in the total.
pub const MAX_ROWS: usize = 1000;
/// Rows kept in the record.
pub const TOP_ROWS: usize = 10;
/// A key longer than this is cut (wide text keys).
const MAX_KEY_CHARS: usize = 200;

/// `$1` is the run's application_name literal. Each lock-waiting backend counts on the tuple
/// of its own tuple lock (held while waiting on the locker's transactionid, or awaited); one
/// waiting on a transactionid without a tuple lock (following an update chain) counts on the
/// tuple another waiter on the same transaction holds. Rows: relation, page, tuple, waiters, key
/// (`id=1`, or `a=x, b=2` for a composite key; XML-escaped; NULL without a primary key or
/// when the row version is no longer visible), whether the relation has a primary key.
const HOT_ROWS_SQL: &str = "with waiting as (select pid from pg_stat_activity \
       where application_name = $1 and wait_event_type = 'Lock'), \
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
     select w.relation::regclass::text, w.page, w.tuple, w.n, \
       case when k.expr is not null then (xpath('/table/row/k/text()', query_to_xml(format( \
         'select %s as k from %s where ctid = %L::tid', k.expr, w.relation::regclass, \
         format('(%s,%s)', w.page, w.tuple)), false, false, '')))[1]::text end, \
       k.expr is not null \
     from w left join lateral ( \
       select 'concat_ws('', '', ' || string_agg(format( \
         '%L || ''='' || coalesce(%I::text, ''NULL'')', a.attname, a.attname), ', ' \
         order by c.n) || ')' as expr \
       from pg_index i cross join lateral unnest(i.indkey::int2[]) with ordinality c(attnum, n) \
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = c.attnum \
       where i.indrelid = w.relation and i.indisprimary) k on true";

#[derive(Default)]
pub struct HotRows {
    counts: BTreeMap<(String, String), u64>,
    /// Lock-waiting backend samples at the `pg_locks` reads (the share's denominator).
    lock_waiters: u64,
}

impl HotRows {
    /// One read, while `lock_waiting` of the run's backends wait on locks.
    pub fn read(&mut self, s: &mut Session, app_lit: &str, lock_waiting: u32) {
        if !s.enabled(Part::HotRows) {
            return;
        }
        let sql = HOT_ROWS_SQL.replace("$1", app_lit);
        let Some(r) = s.run_prepared(Part::HotRows, "hotbench_probe_hot_rows", &sql) else {
            return;
        };
        self.lock_waiters += u64::from(lock_waiting);
        for row in r.rows.iter().take(ROWS_PER_READ) {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let (Some(rel), Some(n)) = (cell(0), int(cell(3))) else {
                continue;
            };
            let key = match (cell(4), cell(5), cell(1), cell(2)) {
                (Some(k), _, _, _) => cut(&xml_unescape(k), MAX_KEY_CHARS),
                // A table without a primary key: the tuple's address.
                (None, Some("f"), Some(p), Some(t)) => format!("ctid=({p},{t})"),
                // The row version is gone (its locker committed meanwhile).
                _ => continue,
            };
            let slot = (rel.to_string(), key);
            if self.counts.len() < MAX_ROWS || self.counts.contains_key(&slot) {
                *self.counts.entry(slot).or_default() += n.max(0) as u64;
            }
        }
    }

    /// The most waited-on rows with their share of lock-waiting samples.
    pub fn summary(&self) -> Vec<HotRow> {
        summarize(&self.counts, self.lock_waiters)
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
            pct: if lock_waiters == 0 {
                0.0
            } else {
                (count as f64 * 100.0 / lock_waiters as f64).min(100.0)
            },
        })
        .collect();
    v.sort_by_key(|r| std::cmp::Reverse(r.count));
    v.truncate(TOP_ROWS);
    v
}

/// Text of an XML text node: the five predefined entities and numeric character references.
fn xml_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';') else {
            break;
        };
        let entity = &rest[1..end];
        let c = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|h| u32::from_str_radix(h, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
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
        assert_eq!(summarize(&m, 4)[0].pct, 100.0);
    }

    #[test]
    fn xml_text_is_unescaped() {
        assert_eq!(xml_unescape("a=x&lt;&amp;'y, B c=2"), "a=x<&'y, B c=2");
        assert_eq!(xml_unescape("&#233;&#x41;&bogus; & end"), "éA&bogus; & end");
    }

    #[test]
    fn long_keys_are_cut_at_a_character() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("ééé", 2), "éé…");
    }
}
