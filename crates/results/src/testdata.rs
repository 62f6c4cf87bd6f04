//! Synthetic result records for unit tests, here and in the crates that read records
//! (`report`: enable this crate's `testing` feature in dev-dependencies only, so it is not
//! part of the binary).

use crate::{
    BenchInfo, GroupRecord, IntervalRecord, IntervalStats, RunRecord, ScriptRecord, ServerInfo,
    TotalsRecord, TxnCounters,
};

/// A completed run named `script` of `seconds` 1-second intervals with `count` transactions
/// in all, latencies around `lat_ms`.
pub fn record(script: &str, started_at: f64, seconds: usize, count: u64, lat_ms: f64) -> RunRecord {
    let mut all = TxnCounters::default();
    let mut timeline = Vec::new();
    for s in 0..seconds {
        let mut c = TxnCounters::default();
        for i in 0..count / seconds as u64 {
            let us = (lat_ms * 1000.0) as u64 + (i * 37 + s as u64 * 11) % 500;
            c.record_success(us, None, u64::from(i % 4 != 0));
        }
        c.retries += s as u64;
        all.merge(&c);
        timeline.push(IntervalRecord {
            t: (s + 1) as f64,
            totals: IntervalStats::from_counters(&c, 1.0),
            groups: vec![],
        });
    }
    let totals = TotalsRecord::from_counters(all.clone(), seconds as f64);
    RunRecord {
        started_at,
        status: crate::RunStatus::Completed,
        command_line: vec!["hotbench".into(), "run".into(), "-f".into(), script.into()],
        config: Default::default(),
        bench: BenchInfo {
            transaction_type: script.into(),
            clients: 4,
            threads: 1,
            duration_s: Some(seconds as u64),
            random_seed: 42,
            ..Default::default()
        },
        server: ServerInfo {
            version: "17.2".into(),
            engine: "postgresql".into(),
            target: "host=/tmp port=5432".into(),
            embedded: true,
            ..Default::default()
        },
        duration_s: seconds as f64,
        conn_time_ms: 1.0,
        totals: totals.clone(),
        groups: vec![GroupRecord {
            name: "default".into(),
            threads: 1,
            clients: 4,
            rate: None,
            totals: totals.clone(),
            scripts: vec![ScriptRecord {
                name: script.into(),
                weight: 1,
                totals,
                commands: vec![],
            }],
        }],
        timeline,
        ..Default::default()
    }
}
