//! What the server probes recorded during a run (`RunRecord::probes`): wait events sampled from
//! the run's own backends, lock waits, table health, WAL, statements, per timeline interval and
//! in total. Typed here so the text, HTML and ladder renderers read the same fields. Read
//! leniently: every field has a default, and a `probes` value that does not fit is dropped
//! rather than making the whole result unreadable.
//!
//! Times: every `t` is seconds since `origin` (Unix seconds). Once aligned with
//! [`align_probes`], `origin` is the run's `started_at` and `t` is on the run's timeline axis.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

pub use crate::sessions_record::{
    ActiveStatement, Blocker, RelationWaits, SessionsRecord, XminHolder,
};

/// The probes' record of one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProbeRecord {
    /// `postgresql`, `yugabytedb` or `cockroachdb` (from `version()`).
    pub engine: String,
    /// Where wait events came from: `pg_stat_activity` or `pg_wait_sampling`.
    pub wait_source: String,
    /// The `application_name` the run's backends were found by.
    pub application_name: String,
    /// Unix seconds every `t` is relative to.
    pub origin: f64,
    pub wait_interval_ms: f64,
    pub stats_interval_ms: f64,
    /// `"Lock:tuple 62%"`: the top wait and its share, for one-column displays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_wait: Option<String>,
    /// Sampling rounds of `pg_stat_activity`.
    pub samples: u64,
    /// Backend samples that counted (active, or idle inside a transaction).
    pub busy_samples: u64,
    /// Backend samples idle outside a transaction (client think time, not in `waits`).
    pub idle_samples: u64,
    /// Wait events over the whole run, most frequent first. `CPU` = active without a wait
    /// event; `Client:ClientRead` counts only backends idle *inside* a transaction (a client
    /// round trip while holding the transaction's locks).
    pub waits: Vec<WaitShare>,
    pub locks: LockSummary,
    /// Rows the run's backends queued on (tuple and transactionid lock waits), by key, most
    /// waited-on first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hot_rows: Vec<HotRow>,
    /// `pg_locks` reads the hot rows were counted at (about one a second while backends
    /// wait on locks; 0 in records written before it was kept).
    #[serde(skip_serializing_if = "is_zero")]
    pub lock_reads: u64,
    /// Those reads as independent observations: `(Σ waiters)² / Σ waiters²` over the reads
    /// (a read of many waiters weighs more in a row's share), at most `lock_reads`.
    #[serde(skip_serializing_if = "is_zero_f")]
    pub lock_reads_effective: f64,
    /// Per table: totals over the run and values at the end.
    pub tables: Vec<TableSummary>,
    /// Commits, rollbacks, deadlocks and WAL over the run.
    #[serde(flatten)]
    pub server: ServerDelta,
    /// Largest `age(backend_xmin)` seen (transactions), any session of the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_xmin_age: Option<i64>,
    /// pg_stat_statements differences over the run, top statements by total time.
    pub statements: Vec<StatementStats>,
    /// Engine-specific waits (YugabyteDB active session history, CockroachDB contention).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub engine_waits: Vec<WaitShare>,
    /// Per stats interval.
    pub timeline: Vec<ProbeInterval>,
    /// One line per thing that could not be measured, and why.
    pub notes: Vec<String>,
    /// What the probe itself cost the server.
    pub cost: ProbeCost,
    /// The connection pooler's admin console over the run, when the run went through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooler: Option<crate::pooler_record::PoolerSummary>,
    /// Who the sessions were (statements, blockers, xmin holders), when the probe observed
    /// them (`hotbench diagnose`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionsRecord>,
    /// Each time the probe's connection was lost and taken again (a server restart), in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reconnects: Vec<ProbeReconnect>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f(n: &f64) -> bool {
    *n == 0.0
}

/// The probe's connection lost and taken again while the run went on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProbeReconnect {
    /// When the probe found its connection lost, and when it had a new one, s since `origin`.
    pub lost_s: f64,
    pub back_s: f64,
    /// The server had restarted meanwhile (its start time changed, or could not be read): its
    /// cumulative counters (`pg_stat_*`, WAL position, checkpoints, statements) were read
    /// anew at the reconnection, a new baseline, so no delta spans the restart; the run's
    /// totals add the counts before it to those after.
    pub server_restarted: bool,
}

/// One wait event (or lock type) with its count and share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitShare {
    /// `wait_event_type:wait_event`, or `CPU`.
    pub event: String,
    pub count: u64,
    /// Percent of the counted samples.
    pub pct: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LockSummary {
    /// Backend samples waiting on a heavyweight lock, by lock type (`tuple`, `transactionid`…).
    pub by_type: Vec<WaitShare>,
    /// Most run backends waiting on locks at one sample.
    pub max_waiting: u32,
    /// Longest chain of blocked backends seen (1 = a waiter blocked by a non-waiting holder).
    pub longest_chain: u32,
    /// The relation most often involved in lock waits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_relation: Option<HotSpot>,
    /// The tuple most often queued on (`pg_locks` tuple locks), when visible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_tuple: Option<HotSpot>,
}

/// A contended object and how many lock entries on it were seen over the samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HotSpot {
    pub relation: String,
    /// `(page,tuple)` for tuples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctid: Option<String>,
    pub count: u64,
}

/// A contended row: its relation and key, read by ctid while backends waited on it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HotRow {
    pub relation: String,
    /// Primary key columns and values (`customer_id=1`), or `ctid=(page,tuple)` for a table
    /// without a primary key.
    pub key: String,
    /// Lock-waiting backend samples queued on this row.
    pub count: u64,
    /// Percent of all lock-waiting backend samples taken while reading `pg_locks`.
    pub pct: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableSummary {
    pub name: String,
    pub inserts: i64,
    pub updates: i64,
    pub hot_updates: i64,
    pub deletes: i64,
    pub autovacuums: i64,
    pub live_tuples_end: i64,
    pub dead_tuples_start: i64,
    pub dead_tuples_end: i64,
    pub size_bytes_start: i64,
    pub size_bytes_end: i64,
}

/// One table over one interval: deltas, and gauges at the interval's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableInterval {
    pub name: String,
    pub inserts: i64,
    pub updates: i64,
    pub hot_updates: i64,
    pub deletes: i64,
    pub autovacuums: i64,
    pub live_tuples: i64,
    pub dead_tuples: i64,
    pub size_bytes: i64,
}

/// Server-wide activity between two snapshots (a whole run's, or one interval's); either
/// part is absent when it could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerDelta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseDelta>,
    /// WAL written (bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<u64>,
    /// Checkpoints begun (timed and requested, server-wide): the full-page writes that
    /// follow one slow every writer for a while, so a dip in a long run may be one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseDelta {
    pub commits: i64,
    pub rollbacks: i64,
    pub deadlocks: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementStats {
    pub queryid: String,
    /// Normalized text (first 300 characters).
    pub query: String,
    pub calls: i64,
    pub total_ms: f64,
    pub mean_ms: f64,
    pub rows: i64,
    pub shared_blks_hit_per_call: f64,
    pub shared_blks_read_per_call: f64,
}

/// A top statement over one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementInterval {
    pub queryid: String,
    pub calls: i64,
    pub mean_ms: f64,
    pub shared_blks_hit_per_call: f64,
    pub shared_blks_read_per_call: f64,
}

/// One stats interval of the probe timeline, ending at `t`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProbeInterval {
    /// End of the interval, seconds since `origin`.
    pub t: f64,
    /// Length of the interval (s).
    pub dt: f64,
    /// Sampling rounds in the interval.
    pub samples: u32,
    /// Backend samples per wait event (same labels as `ProbeRecord::waits`).
    pub waits: BTreeMap<String, u64>,
    /// Most run backends waiting on locks at one sample of the interval.
    pub lock_waiting_max: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longest_chain: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xmin_age: Option<i64>,
    /// Age of the oldest open transaction on the server (s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest_xact_s: Option<f64>,
    /// Commits, rollbacks, deadlocks and WAL over the interval.
    #[serde(flatten)]
    pub server: ServerDelta,
    pub tables: Vec<TableInterval>,
    /// The run's top statements (by total time over the run) in this interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<StatementInterval>,
    /// The connection pooler over this interval, when the run went through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooler: Option<crate::pooler_record::PoolerInterval>,
    /// The server restarted in this interval: its counters' deltas (commits, WAL,
    /// checkpoints, tables, statements) count from the probe's reconnection, not from the
    /// interval's start ([`ProbeReconnect`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restarted: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProbeCost {
    /// Queries the probe sent.
    pub queries: u64,
    /// Time spent waiting for their answers (ms).
    pub busy_ms: f64,
    /// CPU time of the probe's server backend (ms), when the server runs on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_ms: Option<f64>,
    /// CPU time of the probe's own thread in hotbench (ms), on Linux.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_ms: Option<f64>,
}

impl ProbeRecord {
    /// The `n` most frequent waits.
    pub fn top_waits(&self, n: usize) -> &[WaitShare] {
        &self.waits[..self.waits.len().min(n)]
    }

    /// `Lock:tuple 61.2%, Lock:transactionid 20.1%, CPU 10.3%`: the `n` top waits (the text
    /// report's line and the comparison's "top waits").
    pub fn top_waits_text(&self, n: usize) -> String {
        self.top_waits(n)
            .iter()
            .map(|w| format!("{} {:.1}%", w.event, w.pct))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `"Lock:tuple 62%"`, or `"pooler wait 91%"` when the run's clients mostly waited in
    /// a connection pooler for a server connection; `None` when nothing was sampled.
    pub fn top_wait_label(&self) -> Option<String> {
        self.pooler
            .as_ref()
            .and_then(|p| p.top_wait_label())
            .or_else(|| self.waits.first().map(format_share))
    }

    /// Percent of counted samples waiting on heavyweight locks (`Lock:*`).
    pub fn lock_wait_pct(&self) -> f64 {
        self.waits
            .iter()
            .filter(|w| w.event.starts_with("Lock:"))
            .map(|w| w.pct)
            .sum()
    }

    /// Shifts every `t` so that it counts from `origin` (Unix seconds).
    pub fn rebase(&mut self, origin: f64) {
        if !(origin.is_finite() && origin > 0.0) {
            return;
        }
        let shift = self.origin - origin;
        for iv in &mut self.timeline {
            iv.t += shift;
        }
        for r in &mut self.reconnects {
            r.lost_s += shift;
            r.back_s += shift;
        }
        self.origin = origin;
    }
}

/// `"Lock:tuple 62%"`.
pub fn format_share(w: &WaitShare) -> String {
    format!("{} {:.0}%", w.event, w.pct)
}

/// Turns counts into shares, most frequent first (ties by name, for stable output).
pub fn shares(counts: &BTreeMap<String, u64>) -> Vec<WaitShare> {
    let total = crate::saturating_sum(counts.values().copied());
    let mut v: Vec<WaitShare> = counts
        .iter()
        .filter(|(_, &c)| c > 0)
        .map(|(e, &c)| WaitShare {
            event: e.clone(),
            count: c,
            pct: if total > 0 {
                c as f64 * 100.0 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.event.cmp(&b.event)));
    v
}

/// Reads a result's `probes` value: `None` if absent or malformed (results written before a
/// field changed shape stay readable, without their probes).
pub(crate) fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ProbeRecord>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(v.and_then(|v| serde_json::from_value(v).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sort_and_sum_to_100() {
        let mut m = BTreeMap::new();
        m.insert("CPU".to_string(), 10);
        m.insert("Lock:tuple".to_string(), 30);
        m.insert("Lock:transactionid".to_string(), 10);
        let s = shares(&m);
        assert_eq!(s[0].event, "Lock:tuple");
        assert_eq!(s[1].event, "CPU");
        assert!((s.iter().map(|w| w.pct).sum::<f64>() - 100.0).abs() < 1e-9);
        let rec = ProbeRecord {
            waits: s,
            ..Default::default()
        };
        assert_eq!(rec.top_wait_label().as_deref(), Some("Lock:tuple 60%"));
        assert!((rec.lock_wait_pct() - 80.0).abs() < 1e-9);
    }

    #[test]
    fn rebase_shifts_timeline() {
        let mut rec = ProbeRecord {
            origin: 100.0,
            timeline: vec![ProbeInterval {
                t: 2.0,
                ..Default::default()
            }],
            ..Default::default()
        };
        rec.rebase(101.5);
        assert_eq!(rec.origin, 101.5);
        assert!((rec.timeline[0].t - 0.5).abs() < 1e-9);
        let back: ProbeRecord =
            serde_json::from_value(serde_json::to_value(&rec).unwrap()).unwrap();
        assert_eq!(back.timeline.len(), 1);
    }

    #[test]
    fn malformed_probes_are_dropped_not_fatal() {
        #[derive(Deserialize)]
        struct Holder {
            #[serde(default, deserialize_with = "lenient")]
            probes: Option<ProbeRecord>,
        }
        let read = |text: &str| serde_json::from_str::<Holder>(text).expect(text).probes;
        assert!(read(r#"{"probes": {"waits": "not a list"}}"#).is_none());
        assert!(read(r#"{}"#).is_none() && read(r#"{"probes": null}"#).is_none());
        let p = read(r#"{"probes": {"waits": [{"event": "CPU", "count": 3, "pct": 100}]}}"#);
        assert_eq!(
            p.and_then(|p| p.top_wait_label()).as_deref(),
            Some("CPU 100%")
        );
    }

    #[test]
    fn server_deltas_stay_flat_fields_of_the_record_and_its_intervals() {
        let server = ServerDelta {
            database: Some(DatabaseDelta {
                commits: 7,
                ..Default::default()
            }),
            wal_bytes: Some(4096),
            checkpoints: Some(1),
        };
        let rec = ProbeRecord {
            server: server.clone(),
            timeline: vec![ProbeInterval {
                server: server.clone(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let v = serde_json::to_value(&rec).unwrap();
        assert_eq!(v["database"]["commits"], 7);
        assert_eq!(v["wal_bytes"], 4096);
        assert_eq!(v["timeline"][0]["wal_bytes"], 4096);
        assert_eq!(v["checkpoints"], 1);
        let back: ProbeRecord = serde_json::from_value(v).unwrap();
        assert_eq!(
            (back.server, &back.timeline[0].server),
            (server.clone(), &server)
        );
        let none = serde_json::to_value(ProbeRecord::default()).unwrap();
        assert!(none.get("database").is_none() && none.get("wal_bytes").is_none());
    }
}
