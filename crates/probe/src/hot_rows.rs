//! Hot rows, server side: the tuples the run's lock-waiting backends queue on (`pg_locks`
//! tuple locks: held by a backend waiting on the locker's transactionid, awaited by those
//! waiting on the tuple) turned into the row's relation and primary key, with their share of
//! the lock-waiting samples.
//!
//! The key is read by ctid in the same statement that reads `pg_locks` (`query_to_xml` runs
//! the per-relation key query under that statement's snapshot): the locker has not committed
//! yet, so the locked row version is still visible — a second round trip often came too late.
//! Without XML support on the server, `ts_stat` runs the key query instead (in the same
//! statement; the key comes back hex-encoded as a text-search lexeme). Cheap and bounded: it runs only when the sampler reads `pg_locks` (lock
//! waits seen, about once a second), resolves at most [`ROWS_PER_READ`] tuples per read and keeps at most
//! [`MAX_ROWS`] distinct rows. Nothing is pasted into SQL by hotbench: the server builds the
//! key query with `format('%I')`/`%L` (identifiers quoted, the ctid a quoted literal).

use std::collections::BTreeMap;

use hotbench_stats::probe_record::{HotRow, RelationWaits};
use hotbench_wire::SqlState;

use crate::classify::int;
use crate::session::{first_line, Part, Session};

/// Tuples resolved per `pg_locks` read (the most queued-on first).
pub const ROWS_PER_READ: usize = 4;
/// Distinct rows remembered; later rows are counted only in the total.
pub const MAX_ROWS: usize = 1000;
/// Rows kept in the record.
pub const TOP_ROWS: usize = 10;
/// A key longer than this is cut (wide text keys).
const MAX_KEY_CHARS: usize = 200;

/// `{F}` selects the sampled backends (alias `a`). Each lock-waiting backend counts on the
/// tuple of its own tuple lock (held while waiting on the locker's transactionid, or awaited);
/// one waiting on a transactionid without a tuple lock (following an update chain) counts on
/// the tuple another waiter on the same transaction holds. The four most waited-on tuples:
/// relation, page, tuple, waiters.
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
       group by 1, 2, 3 order by 4 desc limit 4) ";

/// The primary key of `w.relation` as one text expression (`concat_ws(', ', 'id' || '=' || …)`),
/// built by the server with `%L`/`%I` quoting; NULL without a primary key.
const KEY_EXPR: &str = "left join lateral ( \
       select 'concat_ws('', '', ' || string_agg(format( \
         '%L || ''='' || coalesce(%I::text, ''NULL'')', a.attname, a.attname), ', ' \
         order by c.n) || ')' as expr \
       from pg_index i cross join lateral unnest(i.indkey::int2[]) with ordinality c(attnum, n) \
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = c.attnum \
       where i.indrelid = w.relation and i.indisprimary) k on true";

/// With the waited tuples, each row's key (`id=1`, or `a=x, b=2` for a composite key;
/// XML-escaped; NULL without a primary key or when the row version is no longer visible) and
/// whether the relation has a primary key.
const WITH_KEYS: &str = "select w.relation::regclass::text, w.page, w.tuple, w.n, \
       case when k.expr is not null then (xpath('/table/row/k/text()', query_to_xml(format( \
         'select %s as k from %s where ctid = %L::tid', k.expr, w.relation::regclass, \
         format('(%s,%s)', w.page, w.tuple)), false, false, '')))[1]::text end, \
       k.expr is not null from w ";

/// For a server without XML support: the same read through `ts_stat`, which also runs a
/// query the server built, in the same statement; the key travels as one hex-encoded lexeme
/// (lexemes are otherwise normalized), cut to 200 characters.
const WITH_KEYS_TS: &str = "select w.relation::regclass::text, w.page, w.tuple, w.n, \
       case when k.expr is not null then (select word from ts_stat(format( \
         'select array_to_tsvector(array[encode(convert_to(left(%s, 200), ''UTF8''), ''hex'')]) \
          from %s where ctid = %L::tid', k.expr, w.relation::regclass, \
         format('(%s,%s)', w.page, w.tuple))) limit 1) end, \
       k.expr is not null from w ";

/// Without reading any user table: the tuples' addresses only.
const WITHOUT_KEYS: &str =
    "select w.relation::regclass::text, w.page, w.tuple, w.n, null::text, false from w";

/// How hot rows' keys are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// In the `pg_locks` statement, through `query_to_xml` (one snapshot: the locked version
    /// is still visible).
    Xml,
    /// Through `ts_stat`, hex-encoded (no XML support on the server).
    TsStat,
    /// Not at all: rows are named by ctid.
    Off,
}

pub struct HotRows {
    counts: BTreeMap<(String, String), u64>,
    /// Lock-waiting backend samples at the `pg_locks` reads (the share's denominator).
    lock_waiters: u64,
    keys: Keys,
}

impl HotRows {
    /// `keys`: read each hot row's primary key by ctid (the one read of a user table).
    pub fn new(keys: bool) -> HotRows {
        HotRows {
            counts: BTreeMap::new(),
            lock_waiters: 0,
            keys: if keys { Keys::Xml } else { Keys::Off },
        }
    }

    /// One read, while `lock_waiting` of the sampled backends wait on locks (`filter`: which
    /// backends, see `WAITED_TUPLES`). A server without XML support gets the keys through
    /// `ts_stat`; a key read the role may not do (no SELECT on the table) turns key reads
    /// off with a note: rows are then named by their ctid.
    pub fn read(&mut self, s: &mut Session, filter: &str, lock_waiting: u32) {
        if !s.enabled(Part::HotRows) {
            return;
        }
        let (name, tail) = match self.keys {
            Keys::Xml => ("hotbench_probe_hot_rows", format!("{WITH_KEYS}{KEY_EXPR}")),
            Keys::TsStat => (
                "hotbench_probe_hot_row_keys",
                format!("{WITH_KEYS_TS}{KEY_EXPR}"),
            ),
            Keys::Off => ("hotbench_probe_hot_tuples", WITHOUT_KEYS.to_string()),
        };
        let sql = format!("{}{tail}", WAITED_TUPLES.replace("{F}", filter));
        let r = match s.prepared_raw(name, &sql) {
            Err(e)
                if self.keys == Keys::Xml
                    && e.sqlstate() == Some(SqlState::FEATURE_NOT_SUPPORTED) =>
            {
                self.keys = Keys::TsStat;
                return self.read(s, filter, lock_waiting);
            }
            Err(e)
                if self.keys != Keys::Off
                    && e.sqlstate() == Some(SqlState::INSUFFICIENT_PRIVILEGE) =>
            {
                self.keys_denied(s, &e);
                return;
            }
            r => r,
        };
        let Some(r) = s.outcome(Part::HotRows, r) else {
            return;
        };
        self.lock_waiters += u64::from(lock_waiting);
        for row in r.rows.iter().take(ROWS_PER_READ) {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let (Some(rel), Some(n)) = (cell(0), int(cell(3))) else {
                continue;
            };
            let key = match (cell(4), cell(5), cell(1), cell(2)) {
                (Some(k), _, _, _) if self.keys == Keys::TsStat => match unhex(k) {
                    Some(k) => cut(&k, MAX_KEY_CHARS),
                    None => continue,
                },
                (Some(k), _, _, _) => cut(&xml_unescape(k), MAX_KEY_CHARS),
                // A table without a primary key, or keys not read: the tuple's address.
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

    fn keys_denied(&mut self, s: &mut Session, e: &hotbench_wire::Error) {
        self.keys = Keys::Off;
        s.note(format!(
            "hot rows: keys not read ({}): rows are named by ctid, which changes with every \
             update (GRANT SELECT on the table to see its keys)",
            first_line(e)
        ));
    }

    /// The most waited-on rows with their share of lock-waiting samples.
    pub fn summary(&self) -> Vec<HotRow> {
        summarize(&self.counts, self.lock_waiters)
    }

    /// Lock waits and distinct rows per relation, most waited-on first.
    pub fn relations(&self) -> Vec<RelationWaits> {
        relations(&self.counts, self.lock_waiters)
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
        })
        .collect();
    v.sort_by(|a, b| {
        b.lock_waits
            .cmp(&a.lock_waits)
            .then_with(|| a.relation.cmp(&b.relation))
    });
    v
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

/// UTF-8 text from its hex encoding (`encode(…, 'hex')`).
fn unhex(h: &str) -> Option<String> {
    let b: Option<Vec<u8>> = (0..h.len() / 2)
        .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    String::from_utf8(b?)
        .ok()
        .filter(|_| h.len().is_multiple_of(2))
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
        m.insert(("jobs".to_string(), "id=7".to_string()), 1);
        let r = relations(&m, 20);
        assert_eq!(
            (r[0].relation.as_str(), r[0].lock_waits, r[0].rows),
            ("acct", 12, 2)
        );
        assert!((r[0].pct - 60.0).abs() < 1e-9 && r[1].rows == 1);
    }

    #[test]
    fn xml_text_is_unescaped() {
        assert_eq!(xml_unescape("a=x&lt;&amp;'y, B c=2"), "a=x<&'y, B c=2");
        assert_eq!(xml_unescape("&#233;&#x41;&bogus; & end"), "éA&bogus; & end");
    }

    #[test]
    fn hex_keys_decode() {
        assert_eq!(unhex("69643d31").as_deref(), Some("id=1"));
        assert_eq!(unhex("c3a9").as_deref(), Some("é"));
        assert_eq!(unhex("6"), None);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn long_keys_are_cut_at_a_character() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("ééé", 2), "éé…");
    }
}
