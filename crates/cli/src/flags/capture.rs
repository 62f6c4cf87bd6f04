//! `hotbench capture …`: parsing only; `crate::capture_cmd` samples, writes the scenario
//! directory and scores a twin (`--verify`).

use std::path::PathBuf;

use clap::{ArgAction, Args};

use super::conn::{ConnArgs, EmbeddedArgs};

#[derive(Debug, Clone, Args)]
pub struct CaptureArgs {
    /// Database name or connection string of the server to capture (with --verify: where
    /// to run the twin; default the embedded server)
    pub dbname: Option<String>,
    /// How long to sample (default 60s; with --verify, how long the twin runs, default 30s)
    #[arg(short = 'T', long = "time", value_name = "DUR")]
    pub time: Option<String>,
    /// The scenario directory to write (created; an existing one must be empty or an
    /// earlier capture)
    #[arg(long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not read hot rows' primary keys (the only read of your tables): show ctids
    #[arg(long = "no-keys")]
    pub no_keys: bool,
    /// Scale the generated data (0.5 = half the captured rows)
    #[arg(long = "scale", value_name = "F")]
    pub scale: Option<String>,
    /// Replace every captured literal with a generated one of the same type and distribution
    #[arg(long = "redact")]
    pub redact: bool,
    /// A server log (log_min_duration_statement = 0, session and transaction ids in
    /// log_line_prefix): exact shapes and values
    #[arg(long = "log", value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Per-session activity sampling period
    #[arg(long = "interval", value_name = "DUR", default_value = "10ms")]
    pub interval: String,
    /// Milliseconds of the server's time per second the activity sampler may take (its
    /// reads are spaced to fit; 12, the default, keeps a capture under 1% of a 2-core
    /// server with diagnose's probe beside it; 0: no budget, every --interval)
    #[arg(long = "sample-budget", value_name = "MS", default_value = "12")]
    pub sample_budget: String,
    /// Score a captured directory: run its twin and compare it with capture.json
    #[arg(long = "verify", value_name = "DIR")]
    pub verify: Option<PathBuf>,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}
