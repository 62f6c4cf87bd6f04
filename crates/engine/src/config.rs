//! The resolved configuration of one run: what the CLI (pgbench flags, `--group`) and the
//! scenario runner both build, and what the engine executes. Serialised (password masked)
//! into the result record.

use std::path::PathBuf;

use serde::Serialize;

use crate::backoff::Backoff;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryMode {
    Simple,
    Extended,
    Prepared,
}

impl QueryMode {
    pub fn parse(text: &str) -> Option<QueryMode> {
        match text {
            "simple" => Some(QueryMode::Simple),
            "extended" => Some(QueryMode::Extended),
            "prepared" => Some(QueryMode::Prepared),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// What counts as one unit of useful work (goodput).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum GoodputRule {
    /// Every committed transaction counts, unless the script sets the variable
    /// `hotbench_ok` to a false value (0, false, empty) during the transaction.
    Committed,
    /// A committed transaction counts when the named variable is true at its end.
    Variable(String),
    /// A committed transaction counts when its last SQL command returned or affected rows.
    Rows,
    /// A committed transaction counts as many units of work as the named variable's whole
    /// value at its end (a dequeue that took 10 jobs counts 10), so goodput is in the
    /// workload's own unit rather than in transactions.
    Sum(String),
}

impl GoodputRule {
    /// `committed`, `rows`, `var:NAME` or `sum:NAME`; the error says what is expected.
    pub fn parse(text: &str) -> Result<GoodputRule, String> {
        let named = |prefix: &str| text.strip_prefix(prefix).filter(|n| !n.is_empty());
        match text {
            "committed" => Ok(GoodputRule::Committed),
            "rows" => Ok(GoodputRule::Rows),
            _ => {
                if let Some(n) = named("var:") {
                    Ok(GoodputRule::Variable(n.into()))
                } else if let Some(n) = named("sum:") {
                    Ok(GoodputRule::Sum(n.into()))
                } else {
                    Err(format!(
                        "invalid goodput rule \"{text}\": expected committed, rows, var:NAME or sum:NAME"
                    ))
                }
            }
        }
    }
}

/// The conventional goodput variable a script may set.
pub const GOODPUT_VARIABLE: &str = "hotbench_ok";

/// A script with its weight, ready to run.
#[derive(Debug, Clone)]
pub struct WeightedScript {
    pub script: hotbench_script::Script,
    pub weight: u32,
}

/// A client group: its own scripts, number of clients and optional rate.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    pub name: String,
    pub scripts: Vec<WeightedScript>,
    pub clients: usize,
    /// Target transactions per second for the whole group (-R).
    pub rate: Option<f64>,
    pub goodput: GoodputRule,
    /// Key variables counted for this group's transactions only (`--group …,key=VAR`, a
    /// manifest's `key`), besides the run's [`RunConfig::keys`].
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// Transactions per client (-t).
    Transactions(u64),
    /// Duration in µs (-T).
    Duration(i64),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetryPolicy {
    /// 0 = unlimited (only with -T or -L).
    pub max_tries: u32,
    pub backoff: Backoff,
    /// SQLSTATEs retried besides 40001 and 40P01.
    #[serde(serialize_with = "codes_as_text")]
    pub extra_codes: Vec<hotbench_wire::SqlState>,
    /// Count other SQL errors as failed transactions instead of aborting the client.
    pub continue_on_error: bool,
}

/// SQLSTATEs are written as their five-character text in the result record.
fn codes_as_text<S: serde::Serializer>(
    codes: &[hotbench_wire::SqlState],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(codes.iter().map(|c| c.as_str()))
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: 1,
            backoff: Backoff::None,
            extra_codes: Vec::new(),
            continue_on_error: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDisconnect {
    Reconnect,
    Abort,
}

/// Per-transaction log (-l) options, pgbench's formats.
#[derive(Debug, Clone, Serialize)]
pub struct LogConfig {
    pub prefix: String,
    /// Seconds; 0 = one line per transaction.
    pub aggregate_interval: u32,
    /// Fraction of transactions logged (0 < r ≤ 1).
    pub sampling_rate: Option<f64>,
}

/// What only changes what people see of a run (ripgrep's split of low-level from high-level
/// arguments): progress lines, error and trace messages, how failures are labelled, the
/// result file's snapshots. Nothing here changes what is executed or measured.
#[derive(Debug, Clone, Default)]
pub struct DisplayConfig {
    /// -P in seconds.
    pub progress_s: Option<u32>,
    pub progress_timestamp: bool,
    /// `--verbose-errors`: every error and retry on stderr.
    pub verbose_errors: bool,
    /// `-d/--debug`: pgbench's per-client trace on stderr (executing, sending, receiving).
    pub debug: bool,
    /// Failures by kind in the report and the -l log.
    pub failures_detailed: bool,
    /// The pgbench version whose log layouts (and, through the record, report) to follow.
    pub pgbench_compat: hotbench_stats::PgbenchCompat,
    /// Result file, rewritten atomically every few intervals and at the end.
    pub json_path: Option<PathBuf>,
}

/// What the engine executes and measures, plus (in [`RunConfig::display`]) how it shows it.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub groups: Vec<GroupConfig>,
    pub limit: Limit,
    pub threads: usize,
    pub query_mode: QueryMode,
    pub retry: RetryPolicy,
    /// -L in µs.
    pub latency_limit_us: Option<i64>,
    /// -C: new connection per transaction.
    pub connect_each_txn: bool,
    pub random_seed: u64,
    /// Added to every round trip (µs).
    pub rtt_us: i64,
    pub log: Option<LogConfig>,
    pub conn: hotbench_wire::Config,
    pub exit_on_abort: bool,
    /// -r: time every command (per-command latencies, failures and retries).
    pub report_per_command: bool,
    /// Timeline granularity (µs), 1 s by default.
    pub interval_us: i64,
    pub on_disconnect: OnDisconnect,
    /// -D definitions, applied to every client.
    pub defines: Vec<(String, String)>,
    /// Value of the `scale` variable (from -s or the database).
    pub scale: i64,
    /// `application_name` given to the benchmark's connections (probes find them by it).
    pub application_name: String,
    /// This process's part of a run spread over several processes (`--shard I/N`).
    pub shard: Option<ShardConfig>,
    /// How clients are spread over the hosts of a multi-host target (`--load-balance`).
    pub spread: hotbench_wire::Spread,
    /// `--key VAR`: variables whose values' statistics are kept (hot keys), in every group.
    pub keys: Vec<String>,
    /// Distinct values kept per key variable before the table becomes a sketch.
    pub key_capacity: usize,
    /// Common start (Unix µs, `--start-at`): connect first, then begin the benchmark at this
    /// instant, so several processes make one run.
    pub start_at_us: Option<i64>,
    /// What only changes what people see.
    pub display: DisplayConfig,
}

/// This process's part of a run spread over several processes or machines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShardConfig {
    /// 0-based, as Kubernetes' `JOB_COMPLETION_INDEX`.
    pub index: usize,
    pub count: usize,
    /// Global id of this shard's first client: `client_id`s stay distinct across shards.
    pub first_client: usize,
    /// Clients of the whole run. Per-client random seeds are derived as for one process
    /// running them all, so a shard's client k draws what client `first_client + k` would.
    pub run_clients: usize,
    /// Identifies the run: equal in every shard of one run (`merge` checks it).
    pub run_key: String,
}

impl RunConfig {
    pub fn total_clients(&self) -> usize {
        self.groups.iter().map(|g| g.clients).sum()
    }

    pub fn is_throttled(&self) -> bool {
        self.groups.iter().any(|g| g.rate.is_some())
    }

    /// The configuration as stored in the result record (password masked): what every
    /// command that runs the engine records, so results compare field by field.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "target": self.conn.masked(),
            "clients": self.total_clients(),
            "threads": self.threads,
            "limit": self.limit,
            "query_mode": self.query_mode,
            "retry": self.retry,
            "latency_limit_us": self.latency_limit_us,
            "rate": self.is_throttled().then(|| self.groups.iter().filter_map(|g| g.rate).sum::<f64>()),
            "rtt_us": self.rtt_us,
            "random_seed": self.random_seed,
            "interval_us": self.interval_us,
            "on_disconnect": self.on_disconnect,
            "connect_each_txn": self.connect_each_txn,
            "groups": self.groups.iter().map(|g| serde_json::json!({
                "name": g.name,
                "clients": g.clients,
                "rate": g.rate,
                "goodput": g.goodput,
                "keys": g.keys,
                "scripts": g.scripts.iter().map(|s| serde_json::json!({
                    "name": s.script.name(), "weight": s.weight})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "defines": self.defines.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            "shard": self.shard,
            "load_balance": self.spread.name(),
            "keys": self.keys,
            "key_capacity": self.key_capacity,
            "start_at_us": self.start_at_us,
        })
    }
}
