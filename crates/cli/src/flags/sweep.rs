//! `hotbench sweep`: `hotbench run`'s options, with `-c/--clients` taking a list of client
//! counts. Parsing only; `crate::sweep_cmd` runs the workload at each count and fits the USL.

use std::path::PathBuf;

use clap::Args;

use super::run::RunArgs;

#[derive(Debug, Clone, Args)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub struct SweepArgs {
    /// Write the sweep report (measured vs fitted throughput, every run) as HTML
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.html",
        help_heading = "sweep options"
    )]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}
