//! Probe records built by hand for the findings' unit tests: statements with their samples,
//! hot rows with their waits, tables with their writes.

use std::collections::BTreeMap;

use hotbench_results::probe_record::{
    ActiveStatement, HotRow, ProbeRecord, RelationWaits, SessionsRecord, TableSummary, WaitShare,
};

/// A statement with `samples` busy samples, `lock_waits` of them waiting, seen in `sessions`.
pub fn stmt(query: &str, samples: u64, lock_waits: u64, sessions: u32) -> ActiveStatement {
    ActiveStatement {
        queryid: String::new(),
        query: query.into(),
        samples,
        lock_waits,
        idle_in_transaction: 0,
        sessions,
    }
}

/// A record of `statements` and `hot` rows `(relation, key, waits)`, 10 activity rounds.
pub fn record(statements: &[ActiveStatement], hot: &[(&str, &str, u64)]) -> ProbeRecord {
    let waiters: u64 = hot.iter().map(|h| h.2).sum::<u64>().max(1);
    let mut rel: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (r, _, n) in hot {
        let e = rel.entry(r).or_default();
        e.0 += n;
        e.1 += 1;
    }
    let busy: u64 = statements.iter().map(|s| s.samples).sum();
    let lock: u64 = statements.iter().map(|s| s.lock_waits).sum();
    ProbeRecord {
        samples: 100,
        busy_samples: busy,
        waits: vec![
            WaitShare {
                event: "Lock:tuple".into(),
                count: lock,
                pct: 0.0,
            },
            WaitShare {
                event: "CPU".into(),
                count: busy - lock,
                pct: 0.0,
            },
        ],
        hot_rows: hot
            .iter()
            .map(|(r, k, n)| HotRow {
                relation: r.to_string(),
                key: k.to_string(),
                count: *n,
                pct: *n as f64 * 100.0 / waiters as f64,
            })
            .collect(),
        sessions: Some(SessionsRecord {
            rounds: 10,
            busy_samples: busy,
            // Clients across a network (the gap below is then a network round trip).
            remote_client_samples: busy,
            statements: statements.to_vec(),
            xmin_rounds: 10,
            relation_waits: rel
                .into_iter()
                .map(|(r, (n, rows))| RelationWaits {
                    relation: r.to_string(),
                    lock_waits: n,
                    pct: n as f64 * 100.0 / waiters as f64,
                    rows,
                    ..Default::default()
                })
                .collect(),
            in_transaction_gap_ms: Some(1.3),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A table with these writes and dead tuples at the start and end.
pub fn table(name: &str, ins: i64, upd: i64, del: i64, dead: (i64, i64)) -> TableSummary {
    TableSummary {
        name: name.into(),
        inserts: ins,
        updates: upd,
        deletes: del,
        dead_tuples_start: dead.0,
        dead_tuples_end: dead.1,
        ..Default::default()
    }
}

/// The built-in scenarios' catalog, read once.
pub fn catalog() -> &'static crate::catalog::Catalog {
    static CATALOG: std::sync::LazyLock<crate::catalog::Catalog> =
        std::sync::LazyLock::new(crate::catalog::Catalog::builtin);
    &CATALOG
}
