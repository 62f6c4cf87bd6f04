//! The result record: one versioned, self-describing document per run, written as JSON
//! progressively during the run and read back by `report`, `compare` and `merge`.
//! Documented field by field in `docs/results.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use hotbench_stats::counters::TxnCounters;
use hotbench_stats::histogram::Percentiles;
use hotbench_stats::latency_sketch::LatencySketch;

/// Bumped on any incompatible change of the record's shape.
pub const RESULT_FORMAT: &str = "hotbench-result/1";

/// The scenario ladders' document (`hotbench scenario run --json`), whose variants hold
/// run records: defined here so the writer (scenario) and the reader (report) share it.
pub const LADDER_FORMAT: &str = "hotbench-ladder/1";

/// Where a run stands, as the record's `status` says. Ordered from best to worst ending, so
/// the status of results merged from several processes is the greatest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every client ran to the end.
    Completed,
    /// The record exists; connections are being made.
    Starting,
    /// The benchmark is going (a snapshot written while it runs).
    Running,
    /// Every client had lost its server when the run ended (exit 2).
    Disconnected,
    /// Stopped by Ctrl-C or SIGTERM: the results so far.
    Interrupted,
    /// Clients aborted on errors (exit 2): the results so far.
    Aborted,
}

impl RunStatus {
    /// The word written in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Starting => "starting",
            RunStatus::Running => "running",
            RunStatus::Disconnected => "disconnected",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Aborted => "aborted",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub format: String,
    pub tool: String,
    pub tool_version: String,
    /// Unix time (s) when the benchmark started.
    pub started_at: f64,
    /// How far the run got (`starting`, `running`, then how it ended).
    pub status: RunStatus,
    pub command_line: Vec<String>,
    /// The resolved run configuration (passwords masked).
    pub config: crate::ConfigRecord,
    /// What pgbench prints in its report header, typed.
    pub bench: BenchInfo,
    pub server: ServerInfo,
    /// Benchmark duration (s), connection time excluded.
    pub duration_s: f64,
    pub conn_time_ms: f64,
    /// How the clients' connections were opened before the start.
    #[serde(default)]
    pub connect: ConnectPhase,
    pub totals: TotalsRecord,
    pub groups: Vec<GroupRecord>,
    pub timeline: Vec<IntervalRecord>,
    /// The first few distinct error messages, with SQLSTATE and count.
    pub errors: Vec<ErrorSample>,
    /// The connection pooler between the clients and the server, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooler: Option<crate::pooler_record::PoolerSetup>,
    /// Server-side samples, when probes ran.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::probe_record::lenient"
    )]
    pub probes: Option<crate::probe_record::ProbeRecord>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// The client process's own resource use (memory flat? CPU per transaction?).
    #[serde(default)]
    pub client: ClientUsage,
    /// Per host of a multi-host target (empty for one host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostRecord>,
    /// Per client: commits, failures, p99 (by `client_id`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_client: Vec<hotbench_stats::fairness::ClientRecord>,
    /// Per group: Jain's fairness index and starved clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fairness: Vec<hotbench_stats::fairness::GroupFairness>,
    /// `--key VAR`: per value, by share of transaction time (largest first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot_keys: Vec<hotbench_stats::hot_keys::HotKeyRecord>,
    /// For `--key` variables drawn by `random_zipfian`: the top-k values' observed share of
    /// the transactions against the share the parameter predicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot_key_zipf: Vec<hotbench_stats::zipf::ZipfShare>,
    /// `--threshold` outcomes, when any were given (the final file only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::ThresholdOutcome>,
    /// `--perturb`: what each perturbation did and how the workload recovered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perturbations: Vec<crate::perturbation_record::PerturbationRecord>,
}

impl Default for RunRecord {
    /// A record of this format and tool that has nothing yet (status `starting`): what a
    /// run fills in, and what tests start from, so a new field is defaulted in one place.
    fn default() -> RunRecord {
        RunRecord {
            format: RESULT_FORMAT.into(),
            tool: "hotbench".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            started_at: 0.0,
            status: RunStatus::Starting,
            command_line: Vec::new(),
            config: crate::ConfigRecord::default(),
            bench: BenchInfo::default(),
            server: ServerInfo::default(),
            duration_s: 0.0,
            conn_time_ms: 0.0,
            connect: ConnectPhase::default(),
            totals: TotalsRecord::default(),
            groups: Vec::new(),
            timeline: Vec::new(),
            errors: Vec::new(),
            pooler: None,
            probes: None,
            notes: Vec::new(),
            client: ClientUsage::default(),
            hosts: Vec::new(),
            per_client: Vec::new(),
            fairness: Vec::new(),
            hot_keys: Vec::new(),
            hot_key_zipf: Vec::new(),
            thresholds: Vec::new(),
            perturbations: Vec::new(),
        }
    }
}

/// What the connections to one host of a multi-host target did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostRecord {
    /// `host:port` (or `socket-dir:port`).
    pub host: String,
    /// Clients whose first connection went to this host.
    pub clients: u64,
    /// Reconnections that landed here after the client had been on another host.
    pub moved_in: u64,
    pub totals: TotalsRecord,
}

/// The connection phase before the benchmark starts (pgbench's "initial connection time").
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConnectPhase {
    /// From the first connection attempt until every client is connected, ms.
    pub duration_ms: f64,
    /// Connections opened (0 under -C, where every transaction connects).
    pub connections: usize,
    /// Start-ups in flight at most at a time (all threads together).
    pub concurrency: usize,
    /// Start-ups refused transiently (server starting up, listen queue full) and retried.
    pub retries: u64,
}

/// Resource use of the hotbench process during the benchmark.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientUsage {
    /// Resident set size when the benchmark started and when it ended, KiB.
    pub rss_start_kib: u64,
    pub rss_end_kib: u64,
    /// Highest resident set size of the process (VmHWM), KiB; 0 in records from before it.
    #[serde(default)]
    pub rss_peak_kib: u64,
    /// CPU time of the whole process during the benchmark, seconds.
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// (user + sys) / (committed + failed transactions), µs.
    pub cpu_us_per_txn: f64,
}

/// The run parameters pgbench's report prints, typed so renderers need no config parsing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BenchInfo {
    /// `<builtin: TPC-B (sort of)>`, a file name, or `multiple scripts`.
    pub transaction_type: String,
    pub scale: i64,
    pub query_mode: String,
    pub clients: usize,
    pub threads: usize,
    /// 0 = unlimited.
    pub max_tries: u32,
    /// -T in seconds, when the run was time-limited.
    pub duration_s: Option<u64>,
    /// -t, when the run was count-limited.
    pub transactions_per_client: Option<u64>,
    /// -R total rate, when throttled.
    pub rate: Option<f64>,
    pub latency_limit_ms: Option<f64>,
    /// -P was given (pgbench then prints latency stddev).
    pub progress: bool,
    /// -C.
    pub connect_each_txn: bool,
    pub failures_detailed: bool,
    pub report_per_command: bool,
    pub partition_method: Option<String>,
    pub partitions: u32,
    /// Added round-trip time, µs.
    pub rtt_us: i64,
    pub random_seed: u64,
    /// The pgbench version the report and logs follow (`--pgbench-compat`; absent in
    /// records written before it existed: 15).
    #[serde(default)]
    pub pgbench_compat: crate::PgbenchCompat,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `server_version` as reported at start-up.
    pub version: String,
    /// `postgresql`, `yugabytedb` or `cockroachdb`.
    pub engine: String,
    /// Masked connection target.
    pub target: String,
    /// True when hotbench started an embedded server for the run.
    pub embedded: bool,
    /// True when the embedded server ran with fsync/synchronous_commit off.
    pub fast: bool,
    pub settings: BTreeMap<String, String>,
    /// This client machine's wall clock minus the server's, ms, measured before the run
    /// (`--shard` and `--start-at` runs: the server is the clock every machine shares);
    /// `merge` compares the inputs' to find clock skew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TotalsRecord {
    pub counters: TxnCounters,
    pub tps: f64,
    pub goodput_per_s: f64,
    pub latency: Percentiles,
}

impl TotalsRecord {
    pub fn from_counters(counters: TxnCounters, duration_s: f64) -> Self {
        let per_s = |n: u64| {
            if duration_s > 0.0 {
                n as f64 / duration_s
            } else {
                0.0
            }
        };
        TotalsRecord {
            tps: per_s(counters.cnt),
            goodput_per_s: if duration_s > 0.0 {
                counters.goodput_units() / duration_s
            } else {
                0.0
            },
            latency: counters.hist.percentiles(),
            counters,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupRecord {
    pub name: String,
    #[serde(default)]
    pub threads: usize,
    pub clients: usize,
    /// Target rate (transactions/s) of the whole group, when throttled.
    pub rate: Option<f64>,
    pub totals: TotalsRecord,
    pub scripts: Vec<ScriptRecord>,
}

impl GroupRecord {
    /// A group of `clients` on one thread, with no rate and no per-script records: what a
    /// record built outside the engine (tests, a derived figure) knows of a group.
    pub fn plain(name: &str, clients: usize, totals: TotalsRecord) -> Self {
        GroupRecord {
            name: name.into(),
            threads: 1,
            clients,
            rate: None,
            totals,
            scripts: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScriptRecord {
    pub name: String,
    pub weight: u32,
    pub totals: TotalsRecord,
    pub commands: Vec<CommandRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandRecord {
    pub index: usize,
    pub line: usize,
    /// What pgbench's `-r` shows: a SQL command's first line (at most 127 bytes).
    pub text: String,
    /// The whole SQL text when it is longer than `text` (a multi-line statement), else empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub full_text: String,
    pub count: u64,
    pub mean_ms: f64,
    pub failures: u64,
    pub retries: u64,
    pub latency: Percentiles,
}

/// One interval of the timeline (1 s by default).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// End of the interval, seconds since the benchmark started.
    pub t: f64,
    pub totals: IntervalStats,
    /// Per group, in the order of `RunRecord::groups` (empty for a single group).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<IntervalStats>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalStats {
    pub cnt: u64,
    pub goodput: u64,
    pub failed: u64,
    pub retried: u64,
    pub retries: u64,
    pub skipped: u64,
    pub reconnects: u64,
    /// Client-seconds without a connection in this interval.
    #[serde(default)]
    pub disconnected_s: f64,
    pub tps: f64,
    pub goodput_per_s: f64,
    pub lat_mean_ms: f64,
    pub lat_stddev_ms: f64,
    pub lat_p50_ms: f64,
    pub lat_p90_ms: f64,
    pub lat_p99_ms: f64,
    pub lat_max_ms: f64,
    pub lag_mean_ms: f64,
    pub lag_max_ms: f64,
    /// Failed tries and failed transactions in this interval by SQLSTATE (retried errors
    /// included), as `TxnCounters::errors_by_sqlstate`; bounded by the codes the server sent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_sqlstate: BTreeMap<String, u64>,
    /// The committed transactions' latencies, coarse (at most 320 buckets): kept in the
    /// totals of each interval of a run with `--perturb`, so a perturbation's window and the
    /// rest of the run get their own percentiles; empty otherwise (and in older files).
    #[serde(default, skip_serializing_if = "LatencySketch::is_empty")]
    pub lat_sketch: LatencySketch,
}

impl IntervalStats {
    pub fn from_counters(c: &TxnCounters, dur_s: f64) -> Self {
        let p = c.hist.percentiles();
        let per_s = |n: u64| if dur_s > 0.0 { n as f64 / dur_s } else { 0.0 };
        IntervalStats {
            cnt: c.cnt,
            goodput: c.goodput,
            failed: c.failures(),
            retried: c.retried,
            retries: c.retries,
            skipped: c.skipped,
            reconnects: c.reconnects,
            disconnected_s: c.disconnected_us as f64 / 1e6,
            tps: per_s(c.cnt),
            goodput_per_s: if dur_s > 0.0 {
                c.goodput_units() / dur_s
            } else {
                0.0
            },
            lat_mean_ms: c.latency.mean() / 1000.0,
            lat_stddev_ms: c.latency.stddev() / 1000.0,
            lat_p50_ms: p.p50_ms,
            lat_p90_ms: p.p90_ms,
            lat_p99_ms: p.p99_ms,
            lat_max_ms: p.max_ms,
            lag_mean_ms: c.lag.mean() / 1000.0,
            lag_max_ms: if c.lag.count > 0 {
                c.lag.max / 1000.0
            } else {
                0.0
            },
            errors_by_sqlstate: c.errors_by_sqlstate.clone(),
            lat_sketch: LatencySketch::default(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorSample {
    pub sqlstate: String,
    pub message: String,
    pub count: u64,
}

impl RunRecord {
    /// The probes' record, when probes ran, with every `t` on the run's axis (seconds since
    /// `started_at`) even if the record was stored unaligned.
    pub fn probe_record(&self) -> Option<crate::probe_record::ProbeRecord> {
        let mut p = self.probes.clone()?;
        p.rebase(self.started_at);
        Some(p)
    }

    /// The run's top server wait with its share (`"Lock:tuple 62%"`), when probes sampled
    /// any: the "top wait" a ladder or comparison shows per run.
    pub fn top_wait(&self) -> Option<String> {
        self.probe_record()?.top_wait_label()
    }
}

/// Rewrites `record.probes` so its times count from the run's `started_at` (call after the
/// run, once `started_at` is known). No-op without probes.
pub fn align_probes(record: &mut RunRecord) {
    let started_at = record.started_at;
    if let Some(p) = &mut record.probes {
        p.rebase(started_at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_written_as_a_word_and_ordered_best_to_worst() {
        let text = serde_json::to_string(&RunStatus::Disconnected).unwrap();
        assert_eq!(text, "\"disconnected\"");
        let back: RunStatus = serde_json::from_str("\"starting\"").unwrap();
        assert_eq!(back, RunStatus::Starting);
        assert!(serde_json::from_str::<RunStatus>("\"finished\"").is_err());
        assert!(RunStatus::Completed < RunStatus::Running);
        assert!(RunStatus::Interrupted < RunStatus::Aborted);
        assert_eq!(RunStatus::Aborted.to_string(), "aborted");
    }

    #[test]
    fn record_round_trips_through_json() {
        let mut c = TxnCounters::default();
        for i in 0..100 {
            c.record_success(1000 + i, None, u64::from(i % 2 == 0));
        }
        let totals = TotalsRecord::from_counters(c.clone(), 2.0);
        assert_eq!(totals.tps, 50.0);
        assert_eq!(totals.goodput_per_s, 25.0);
        let rec = RunRecord {
            status: RunStatus::Completed,
            command_line: vec!["hotbench".into(), "run".into()],
            config: crate::ConfigRecord {
                clients: 1,
                ..Default::default()
            },
            duration_s: 2.0,
            conn_time_ms: 1.0,
            totals: totals.clone(),
            timeline: vec![IntervalRecord {
                t: 1.0,
                totals: IntervalStats::from_counters(&c, 1.0),
                groups: vec![],
            }],
            ..Default::default()
        };
        let text = serde_json::to_string(&rec).unwrap();
        let back: RunRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back.totals.counters.cnt, 100);
        assert_eq!(back.totals.counters.hist.len(), 100);
        assert_eq!(back.timeline[0].totals.cnt, 100);
        every_field_is_documented(&serde_json::to_value(&rec).unwrap());
    }

    /// docs/results.md describes every field the record writes: the top level and the
    /// typed `bench`, `server`, `connect`, `client`, `totals` and `config` objects. A field added to
    /// the structs without a line in the doc fails here.
    fn every_field_is_documented(rec: &serde_json::Value) {
        let doc = include_str!("../../../docs/results.md");
        let parts = ["bench", "server", "connect", "client", "totals", "config"]
            .map(|part| (format!("{part}."), &rec[part]));
        let mut scopes = vec![("", rec)];
        scopes.extend(parts.iter().map(|(scope, v)| (scope.as_str(), *v)));
        let missing = crate::doc_fields::undocumented(doc, &scopes);
        assert!(
            missing.is_empty(),
            "fields missing from docs/results.md: {missing:?}"
        );
    }
}
