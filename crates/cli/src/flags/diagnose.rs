//! `hotbench diagnose …`: parsing only; `crate::diagnose_cmd` samples and reports.

use std::path::PathBuf;

use clap::{ArgAction, Args};

use super::conn::{ConnArgs, EmbeddedArgs};

#[derive(Debug, Clone, Args)]
pub struct DiagnoseArgs {
    /// Database name or connection string of the server to diagnose
    pub dbname: Option<String>,
    /// How long to sample (e.g. 30s, 2m; a bare number is seconds)
    #[arg(short = 'T', long = "time", value_name = "DUR", default_value = "30s")]
    pub time: String,
    /// Wait-sampling period (statements, tables and the xmin horizon are read 10x less often)
    #[arg(long = "interval", value_name = "DUR", default_value = "100ms")]
    pub interval: String,
    /// Write the diagnosis (hotbench-diagnosis/1) as JSON
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Do not read hot rows' primary keys (the only read of your tables): show ctids
    #[arg(long = "no-keys")]
    pub no_keys: bool,
    /// Cores of the server's machine (known without it only for a local server)
    #[arg(long = "server-cores", value_name = "N")]
    pub server_cores: Option<String>,
    /// Also write the capture of what was sampled: a scenario directory, as `hotbench capture
    /// --out DIR` writes it (with --run, its ladder is the one that runs)
    #[arg(long = "capture", value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// Then run the first finding's ladder on the embedded server and add its ranking
    #[arg(long = "run")]
    pub run: bool,
    /// With --run: each variant's duration instead of the scenario's (e.g. 10s)
    #[arg(long = "run-time", value_name = "DUR", value_parser = run_time)]
    pub run_time: Option<u32>,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// `--run-time`: whole seconds, as `-T` takes them.
fn run_time(text: &str) -> crate::fail::Result<u32> {
    use crate::fail::Fail;
    let s = hotbench_engine::duration::parse_whole_seconds(text)
        .map_err(|e| Fail::input(format!("--run-time: {e}")))?;
    u32::try_from(s)
        .ok()
        .filter(|s| i64::from(*s) <= crate::option_ranges::INT_MAX)
        .ok_or_else(|| Fail::input("--run-time must be in range 1..2147483647 seconds"))
}
