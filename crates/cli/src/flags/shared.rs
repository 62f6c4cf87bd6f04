//! Flags that `run`, `sweep`, `scenario run` and `demo` share besides the run settings
//! (`hotbench_settings::RunSettings`): how much load (`-c`, `-T`, read by each command in
//! its own way: a count, a sweep's list, a scenario parameter) and what to write (`--json`,
//! `--html`, `--threshold`). Declared once, flattened into each command.

use std::path::PathBuf;

use clap::{ArgAction, Args};
use hotbench_settings::run::{BENCHMARKING, HOTBENCH};

#[derive(Debug, Clone, Default, Args)]
pub struct LoadArgs {
    /// Number of concurrent database clients (default: 1; a scenario's `clients` parameter;
    /// sweep: the counts to sweep, e.g. 1,2,4,8)
    #[arg(
        short = 'c',
        long = "client",
        visible_alias = "clients",
        value_name = "NUM",
        help_heading = BENCHMARKING
    )]
    pub client: Option<String>,
    /// Duration of the benchmark (of each variant) in seconds; units too: 90s, 2m
    #[arg(short = 'T', long = "time", value_name = "NUM", help_heading = BENCHMARKING)]
    pub time: Option<String>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write the full result (config, timeline, histograms, errors; a ladder's every
    /// variant and check) as JSON, atomically
    #[arg(long = "json", value_name = "FILE", help_heading = HOTBENCH)]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report
    #[arg(long = "html", value_name = "FILE", help_heading = HOTBENCH)]
    pub html: Option<PathBuf>,
    /// Pass/fail check on the result, e.g. p99<50ms, tps>=1000, failed=0, retries<1%; in a
    /// ladder on every variant, one (skip-locked:jobs/s>=3000) or the best
    /// (best:vs_baseline>=3); repeatable; exit code 3 when one fails
    #[arg(long = "threshold", value_name = "EXPR", action = ArgAction::Append, help_heading = HOTBENCH)]
    pub threshold: Vec<String>,
    /// Serve live metrics for Prometheus at [HOST]:PORT/metrics (e.g. :9187) during the run
    /// (a ladder's series labelled by scenario and variant; deploy/grafana charts them)
    #[arg(long = "prometheus", value_name = "[HOST]:PORT", help_heading = HOTBENCH)]
    pub prometheus: Option<String>,
}
