//! pg_stat_statements without resetting it: a snapshot of this database's counters at the
//! start, one per stats interval and one at the end; differences give per-statement calls,
//! mean time and shared blocks per call over the run and per interval (a FIFO dequeue reading
//! more blocks per call each interval shows on the timeline).

use std::collections::BTreeMap;

use hotbench_results::probe_record::{StatementInterval, StatementStats};
use hotbench_wire::QueryResult;

use crate::classify::{float, int};

/// Cumulative counters of one statement.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub calls: i64,
    pub total_ms: f64,
    pub rows: i64,
    pub hit: i64,
    pub read: i64,
}

/// By queryid (text).
pub type Snapshot = BTreeMap<String, Counters>;

/// The snapshot query; `total_exec_time` from PostgreSQL 13, `total_time` before. `schema`:
/// the extension's schema as a quoted identifier (every name is qualified: diagnose's
/// `search_path` is `pg_catalog` only).
pub fn snapshot_sql(server_version_num: u32, schema: &str) -> String {
    let total = if server_version_num >= 130000 || server_version_num == 0 {
        "total_exec_time"
    } else {
        "total_time"
    };
    format!(
        "select queryid::text, sum(calls)::int8, sum({total})::float8, sum(rows)::int8, \
         sum(shared_blks_hit)::int8, sum(shared_blks_read)::int8 \
         from {schema}.pg_stat_statements(false) \
         where dbid = (select oid from pg_database where datname = current_database()) \
         and queryid is not null group by queryid"
    )
}

/// The texts of statements `$1` (cut to 2,000 characters on the server: a text can be a
/// megabyte).
pub fn text_sql(schema: &str) -> String {
    format!(
        "select queryid::text, left(min(query), 2000) from {schema}.pg_stat_statements \
         where queryid = any($1::int8[]) group by queryid"
    )
}

/// The extension's version and schema, when it is installed in this database.
pub const INSTALLED_SQL: &str = "select e.extversion, n.nspname::text from pg_extension e \
     join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_stat_statements'";

pub const PRELOADED_SQL: &str = "select current_setting('shared_preload_libraries')";

pub fn parse(r: &QueryResult) -> Snapshot {
    let mut s = Snapshot::new();
    for row in &r.rows {
        let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
        let Some(id) = cell(0) else { continue };
        s.insert(
            id.to_string(),
            Counters {
                calls: int(cell(1)).unwrap_or(0),
                total_ms: float(cell(2)).unwrap_or(0.0),
                rows: int(cell(3)).unwrap_or(0),
                hit: int(cell(4)).unwrap_or(0),
                read: int(cell(5)).unwrap_or(0),
            },
        );
    }
    s
}

/// What changed between two snapshots (statements with new calls only). An entry that went
/// backwards (evicted and re-created) counts from zero.
pub fn diff(before: &Snapshot, now: &Snapshot) -> Snapshot {
    let mut out = Snapshot::new();
    for (id, n) in now {
        let b = before.get(id).copied().unwrap_or_default();
        let b = if n.calls < b.calls {
            Counters::default()
        } else {
            b
        };
        let c = Counters {
            calls: n.calls - b.calls,
            total_ms: (n.total_ms - b.total_ms).max(0.0),
            rows: (n.rows - b.rows).max(0),
            hit: (n.hit - b.hit).max(0),
            read: (n.read - b.read).max(0),
        };
        if c.calls > 0 {
            out.insert(id.clone(), c);
        }
    }
    out
}

fn per_call(x: i64, calls: i64) -> f64 {
    if calls > 0 {
        x as f64 / calls as f64
    } else {
        0.0
    }
}

/// The `n` statements with the most total time.
pub fn top(total: &Snapshot, n: usize) -> Vec<(String, Counters)> {
    let mut v: Vec<(String, Counters)> = total.iter().map(|(k, c)| (k.clone(), *c)).collect();
    v.sort_by(|a, b| {
        b.1.total_ms
            .partial_cmp(&a.1.total_ms)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
    v.truncate(n);
    v
}

pub fn stats(id: &str, query: &str, c: &Counters) -> StatementStats {
    StatementStats {
        queryid: id.to_string(),
        query: query.chars().take(300).collect(),
        calls: c.calls,
        total_ms: c.total_ms,
        mean_ms: if c.calls > 0 {
            c.total_ms / c.calls as f64
        } else {
            0.0
        },
        rows: c.rows,
        shared_blks_hit_per_call: per_call(c.hit, c.calls),
        shared_blks_read_per_call: per_call(c.read, c.calls),
    }
}

pub fn interval(id: &str, c: &Counters) -> StatementInterval {
    StatementInterval {
        queryid: id.to_string(),
        calls: c.calls,
        mean_ms: if c.calls > 0 {
            c.total_ms / c.calls as f64
        } else {
            0.0
        },
        shared_blks_hit_per_call: per_call(c.hit, c.calls),
        shared_blks_read_per_call: per_call(c.read, c.calls),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(calls: i64, total_ms: f64, hit: i64) -> Counters {
        Counters {
            calls,
            total_ms,
            hit,
            ..Default::default()
        }
    }

    #[test]
    fn diff_top_and_per_call() {
        let mut a = Snapshot::new();
        a.insert("1".into(), c(10, 10.0, 100));
        a.insert("2".into(), c(5, 1.0, 5));
        let mut b = Snapshot::new();
        b.insert("1".into(), c(30, 50.0, 500));
        b.insert("2".into(), c(5, 1.0, 5));
        b.insert("3".into(), c(2, 60.0, 2));
        let d = diff(&a, &b);
        assert_eq!(d.len(), 2, "unchanged statement dropped");
        assert_eq!(d["1"].calls, 20);
        let t = top(&d, 1);
        assert_eq!(t[0].0, "3");
        let s = stats("1", "select 1", &d["1"]);
        assert_eq!(s.mean_ms, 2.0);
        assert_eq!(s.shared_blks_hit_per_call, 20.0);
        // Evicted and re-created: counts from zero.
        let mut e = Snapshot::new();
        e.insert("1".into(), c(3, 1.0, 1));
        assert_eq!(diff(&b, &e)["1"].calls, 3);
    }
}
