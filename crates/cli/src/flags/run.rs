//! `hotbench run`: pgbench's options, same names and meanings, plus hotbench's own.
//! Stage one (this file) parses; each numeric option is checked as clap reads it, in
//! command-line order as pgbench's getopt loop does (`crate::option_ranges`, pgbench's
//! messages); `crate::run_options` checks the options together into a typed `RunRequest`.

use clap::{ArgAction, Args};

use hotbench_settings::RunSettings;

use super::conn::{ConnArgs, EmbeddedArgs};
use super::shared::{LoadArgs, OutputArgs};

#[derive(Debug, Clone, Args)]
#[command(
    disable_help_flag = true,
    disable_version_flag = true,
    // pgbench (getopt) takes a repeated option, the last value winning: `-n -v -n`.
    args_override_self = true,
    about = "Run a pgbench workload (same flags, same report) with honest statistics"
)]
pub struct RunArgs {
    // ---- Initialization options ------------------------------------------------------
    /// Invoke initialization mode
    #[arg(
        short = 'i',
        long = "initialize",
        help_heading = "Initialization options"
    )]
    pub initialize: bool,
    /// Run selected initialization steps [dtgGvpf]+ (default "dtgvp")
    #[arg(
        short = 'I',
        long = "init-steps",
        value_name = "STEPS",
        help_heading = "Initialization options"
    )]
    pub init_steps: Option<String>,
    /// Set fill factor
    #[arg(
        short = 'F',
        long = "fillfactor",
        value_name = "NUM",
        value_parser = crate::option_ranges::fillfactor,
        help_heading = "Initialization options"
    )]
    pub fillfactor: Option<i32>,
    /// Do not run VACUUM (during initialization or before tests)
    #[arg(
        short = 'n',
        long = "no-vacuum",
        help_heading = "Initialization options"
    )]
    pub no_vacuum: bool,
    /// Quiet logging (one message each 5 seconds)
    #[arg(short = 'q', long = "quiet", help_heading = "Initialization options")]
    pub quiet: bool,
    /// Scaling factor (with -i), or the scale to report
    #[arg(
        short = 's',
        long = "scale",
        value_name = "NUM",
        value_parser = crate::option_ranges::scale,
        help_heading = "Initialization options"
    )]
    pub scale: Option<i32>,
    /// Create foreign key constraints between tables
    #[arg(long = "foreign-keys", help_heading = "Initialization options")]
    pub foreign_keys: bool,
    /// Create indexes in the specified tablespace
    #[arg(
        long = "index-tablespace",
        value_name = "TABLESPACE",
        help_heading = "Initialization options"
    )]
    pub index_tablespace: Option<String>,
    /// Partition pgbench_accounts with this method (range|hash)
    #[arg(
        long = "partition-method",
        value_name = "METHOD",
        help_heading = "Initialization options"
    )]
    pub partition_method: Option<String>,
    /// Partition pgbench_accounts into NUM parts (default: 0)
    #[arg(
        long = "partitions",
        value_name = "NUM",
        value_parser = crate::option_ranges::partitions,
        help_heading = "Initialization options"
    )]
    pub partitions: Option<i32>,
    /// Create tables in the specified tablespace
    #[arg(
        long = "tablespace",
        value_name = "TABLESPACE",
        help_heading = "Initialization options"
    )]
    pub tablespace: Option<String>,
    /// Create tables as unlogged tables
    #[arg(long = "unlogged-tables", help_heading = "Initialization options")]
    pub unlogged_tables: bool,

    // ---- What to run -----------------------------------------------------------------
    /// Add builtin script NAME weighted at W ("-b list" lists them)
    #[arg(short = 'b', long = "builtin", value_name = "NAME[@W]", action = ArgAction::Append, help_heading = "Options to select what to run")]
    pub builtin: Vec<String>,
    /// Add script FILENAME weighted at W
    #[arg(short = 'f', long = "file", value_name = "FILENAME[@W]", action = ArgAction::Append, help_heading = "Options to select what to run")]
    pub file: Vec<String>,
    /// Skip updates of pgbench_tellers and pgbench_branches (same as "-b simple-update")
    // Append (not Count): every -N is a script, and Count would be reset by args_override_self.
    #[arg(short = 'N', long = "skip-some-updates", action = ArgAction::Append, num_args = 0, default_missing_value = "simple-update", help_heading = "Options to select what to run")]
    pub skip_some_updates: Vec<String>,
    /// Perform SELECT-only transactions (same as "-b select-only")
    #[arg(short = 'S', long = "select-only", action = ArgAction::Append, num_args = 0, default_missing_value = "select-only", help_heading = "Options to select what to run")]
    pub select_only: Vec<String>,

    // ---- Benchmarking options --------------------------------------------------------
    #[command(flatten)]
    pub load: LoadArgs,
    /// Establish new connection for each transaction
    #[arg(short = 'C', long = "connect", help_heading = "Benchmarking options")]
    pub connect: bool,
    /// Define variable for use by custom script
    #[arg(short = 'D', long = "define", value_name = "VARNAME=VALUE", action = ArgAction::Append, help_heading = "Benchmarking options")]
    pub define: Vec<String>,
    /// Write transaction times to log file
    #[arg(short = 'l', long = "log", help_heading = "Benchmarking options")]
    pub log: bool,
    /// Count transactions lasting more than NUM ms as late
    #[arg(
        short = 'L',
        long = "latency-limit",
        value_name = "NUM",
        value_parser = crate::option_ranges::parse_latency_limit,
        help_heading = "Benchmarking options"
    )]
    pub latency_limit_us: Option<i64>,
    /// Protocol for submitting queries: simple|extended|prepared (default: simple)
    #[arg(
        short = 'M',
        long = "protocol",
        value_name = "MODE",
        help_heading = "Benchmarking options"
    )]
    pub protocol: Option<String>,
    /// Show thread progress report every NUM seconds
    #[arg(
        short = 'P',
        long = "progress",
        value_name = "NUM",
        value_parser = crate::option_ranges::progress,
        help_heading = "Benchmarking options"
    )]
    pub progress: Option<u32>,
    /// Report latencies, failures, and retries per command
    #[arg(
        short = 'r',
        long = "report-per-command",
        help_heading = "Benchmarking options"
    )]
    pub report_per_command: bool,
    /// Target rate in transactions per second
    #[arg(
        short = 'R',
        long = "rate",
        value_name = "NUM",
        value_parser = crate::option_ranges::parse_rate,
        help_heading = "Benchmarking options"
    )]
    pub rate: Option<f64>,
    /// Number of transactions each client runs (default: 10)
    #[arg(
        short = 't',
        long = "transactions",
        value_name = "NUM",
        value_parser = crate::option_ranges::transactions,
        help_heading = "Benchmarking options"
    )]
    pub transactions: Option<u64>,
    /// Vacuum all four standard tables before tests
    #[arg(
        short = 'v',
        long = "vacuum-all",
        help_heading = "Benchmarking options"
    )]
    pub vacuum_all: bool,
    /// Aggregate data over NUM seconds
    #[arg(
        long = "aggregate-interval",
        value_name = "NUM",
        value_parser = crate::option_ranges::aggregate_interval,
        help_heading = "Benchmarking options"
    )]
    pub aggregate_interval: Option<u32>,
    /// Report the failures grouped by basic types
    #[arg(long = "failures-detailed", help_heading = "Benchmarking options")]
    pub failures_detailed: bool,
    /// Prefix for transaction time log file (default: "pgbench_log")
    #[arg(
        long = "log-prefix",
        value_name = "PREFIX",
        help_heading = "Benchmarking options"
    )]
    pub log_prefix: Option<String>,
    /// Max number of tries to run transaction (default: 1)
    #[arg(
        long = "max-tries",
        value_name = "NUM",
        value_parser = crate::option_ranges::parse_max_tries,
        help_heading = "Benchmarking options"
    )]
    pub max_tries: Option<u32>,
    /// Use Unix epoch timestamps for progress
    #[arg(long = "progress-timestamp", help_heading = "Benchmarking options")]
    pub progress_timestamp: bool,
    /// Fraction of transactions to log (e.g., 0.01 for 1%)
    #[arg(
        long = "sampling-rate",
        value_name = "NUM",
        value_parser = crate::option_ranges::parse_sampling_rate,
        help_heading = "Benchmarking options"
    )]
    pub sampling_rate: Option<f64>,
    /// Show builtin script code, then exit
    #[arg(
        long = "show-script",
        value_name = "NAME",
        help_heading = "Benchmarking options"
    )]
    pub show_script: Option<String>,
    /// Print messages of all errors
    #[arg(long = "verbose-errors", help_heading = "Benchmarking options")]
    pub verbose_errors: bool,
    /// Exit as soon as any client aborts
    #[arg(long = "exit-on-abort", help_heading = "Benchmarking options")]
    pub exit_on_abort: bool,

    // ---- hotbench additions ----------------------------------------------------------
    #[command(flatten)]
    pub output: OutputArgs,
    // The settings every command that runs the engine shares (-j, --rtt, --interval, …).
    #[command(flatten)]
    pub settings: RunSettings,
    /// Back-off between retries: none | fixed:DUR | exp:MIN:MAX[:MULT] (full jitter)
    #[arg(
        long = "retry-backoff",
        value_name = "SPEC",
        help_heading = "hotbench options"
    )]
    pub retry_backoff: Option<String>,
    /// Retry defaults to follow: pgbench (1 try) | auto (the detected engine's) | postgresql | yugabytedb | cockroachdb
    #[arg(
        long = "retry-profile",
        value_name = "PROFILE",
        help_heading = "hotbench options"
    )]
    pub retry_profile: Option<String>,
    /// Also retry these SQLSTATEs (comma-separated, e.g. 55P03,57014)
    #[arg(long = "retry-on", value_name = "SQLSTATE,...", action = ArgAction::Append, help_heading = "hotbench options")]
    pub retry_on: Vec<String>,
    /// Count other SQL errors as failed transactions (by SQLSTATE) instead of aborting the client
    #[arg(long = "continue-on-error", help_heading = "hotbench options")]
    pub continue_on_error: bool,
    /// A client group NAME:file=F[@W],builtin=B[@W],clients=N,rate=R,goodput=RULE,key=VAR
    /// (repeatable)
    #[arg(long = "group", value_name = "SPEC", action = ArgAction::Append, help_heading = "hotbench options")]
    pub group: Vec<String>,
    /// What counts as useful work: committed | rows | var:NAME | sum:NAME (default: committed, honouring hotbench_ok)
    #[arg(
        long = "goodput",
        value_name = "RULE",
        help_heading = "hotbench options"
    )]
    pub goodput: Option<String>,
    /// With several hosts (-h a,b): first (default; libpq's order) | round-robin | random
    #[arg(
        long = "load-balance",
        value_name = "first|round-robin|random",
        help_heading = "hotbench options"
    )]
    pub load_balance: Option<String>,
    /// Hot keys: statistics per value of this script variable at the end of each transaction
    /// (repeatable)
    #[arg(long = "key", value_name = "VAR", action = ArgAction::Append, help_heading = "hotbench options")]
    pub key: Vec<String>,
    /// Run this process's part I/N (0-based) of a run spread over N processes or machines
    #[arg(long = "shard", value_name = "I/N", help_heading = "hotbench options")]
    pub shard: Option<String>,
    /// Connect, then start the benchmark at this time (RFC 3339 with its zone, e.g.
    /// 2026-11-23T17:00:00Z, or @UNIX_SECONDS), as the other shards do
    #[arg(
        long = "start-at",
        value_name = "TIME",
        help_heading = "hotbench options"
    )]
    pub start_at: Option<String>,

    // ---- Embedded server -------------------------------------------------------------
    #[command(flatten)]
    pub embedded: EmbeddedArgs,

    // ---- Common options --------------------------------------------------------------
    /// Print debugging output (-d too, unless --pgbench-compat 17 or later)
    #[arg(short = 'd', long = "debug", help_heading = "Common options")]
    pub debug: bool,
    /// Database name to connect to (pgbench 17's option; same as the DBNAME argument)
    #[arg(
        long = "dbname",
        value_name = "DBNAME",
        help_heading = "Common options"
    )]
    pub dbname_option: Option<String>,
    /// Behave as this pgbench version where versions differ (15 to 19; default 15): from 17
    /// on, -d is --dbname instead of --debug; 18 and 19 change the report and logs
    #[arg(
        long = "pgbench-compat",
        value_name = "VERSION",
        help_heading = "Common options"
    )]
    pub pgbench_compat: Option<String>,
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Output version information, then exit
    #[arg(short = 'V', long = "version", help_heading = "Common options")]
    pub version: bool,
    /// Show this help, then exit
    #[arg(short = '?', long = "help", action = ArgAction::Help, help_heading = "Common options")]
    pub help: Option<bool>,

    /// Database name, conninfo string or postgresql:// URL
    #[arg(value_name = "DBNAME")]
    pub dbname: Vec<String>,
}
