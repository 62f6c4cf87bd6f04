//! The resolved configuration of one run: what the CLI (pgbench flags, `--group`) and the
//! scenario runner both build (`RunConfig::build`, start.rs), and what the engine executes.
//! Recorded (password masked) as the result record's typed `config`.

use std::path::PathBuf;

use hotbench_stats::{ConfigGroup, ConfigRecord, ConfigScript, RetryRecord};

use crate::backoff::Backoff;
pub use hotbench_settings::{
    GoodputRule, Limit, OnDisconnect, Perturbation, QueryMode, RunSettings, ShardConfig,
    ThreadsDefault, GOODPUT_VARIABLE,
};

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

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// 0 = unlimited (only with -T or -L).
    pub max_tries: u32,
    pub backoff: Backoff,
    /// SQLSTATEs retried besides 40001 and 40P01.
    pub extra_codes: Vec<hotbench_wire::SqlState>,
    /// Count other SQL errors as failed transactions instead of aborting the client.
    pub continue_on_error: bool,
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

/// Per-transaction log (-l) options, pgbench's formats.
#[derive(Debug, Clone)]
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
    pub log: Option<LogConfig>,
    pub conn: hotbench_wire::Config,
    pub exit_on_abort: bool,
    /// -r: time every command (per-command latencies, failures and retries).
    pub report_per_command: bool,
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
    /// Common start (Unix µs, `--start-at`): connect first, then begin the benchmark at this
    /// instant, so several processes make one run.
    pub start_at_us: Option<i64>,
    /// The settings every command shares (`--rtt`, `--interval`, `--on-disconnect`, …), as
    /// given: read them here where they act.
    pub settings: RunSettings,
    /// What only changes what people see.
    pub display: DisplayConfig,
    /// Where perturbations connect: the server itself when the clients go through a pooler
    /// (their connection must neither take a pool slot nor queue behind the clients); `None`:
    /// as the clients do.
    pub perturb_conn: Option<hotbench_wire::Config>,
    /// The server's processes, when hotbench started it (`restart`, `pause`).
    pub server: Option<crate::server_process::ServerHandle>,
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
    pub fn record(&self) -> ConfigRecord {
        ConfigRecord {
            target: self.conn.masked(),
            clients: self.total_clients(),
            threads: self.threads,
            limit: self.limit,
            query_mode: self.query_mode,
            retry: RetryRecord {
                max_tries: self.retry.max_tries,
                backoff: self.retry.backoff,
                extra_codes: self
                    .retry
                    .extra_codes
                    .iter()
                    .map(|c| c.as_str().to_string())
                    .collect(),
                continue_on_error: self.retry.continue_on_error,
            },
            latency_limit_us: self.latency_limit_us,
            rate: self
                .is_throttled()
                .then(|| self.groups.iter().filter_map(|g| g.rate).sum::<f64>()),
            random_seed: self.random_seed,
            connect_each_txn: self.connect_each_txn,
            groups: self
                .groups
                .iter()
                .map(|g| ConfigGroup {
                    name: g.name.clone(),
                    clients: g.clients,
                    rate: g.rate,
                    goodput: g.goodput.clone(),
                    keys: g.keys.clone(),
                    scripts: g
                        .scripts
                        .iter()
                        .map(|s| ConfigScript {
                            name: s.script.name().to_string(),
                            weight: s.weight,
                        })
                        .collect(),
                })
                .collect(),
            defines: self
                .defines
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            shard: self.shard.clone(),
            load_balance: self.spread.name().to_string(),
            keys: self.keys.clone(),
            start_at_us: self.start_at_us,
            settings: self.settings.clone(),
            ..ConfigRecord::default()
        }
    }
}
