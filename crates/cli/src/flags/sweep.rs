//! `hotbench sweep`: `hotbench run`'s options, with `-c/--clients` taking a list of client
//! counts, or `--scenario NAME` to sweep a scenario's variants. Parsing only;
//! `crate::sweep_cmd` runs the workload at each count and fits the USL.

use std::path::PathBuf;

use clap::Args;

use super::run::RunArgs;
use super::scenario::ScenarioPick;

#[derive(Debug, Clone, Args)]
#[command(
    disable_help_flag = true,
    disable_version_flag = true,
    // `-c` is the counts to sweep here, checked as one list.
    mut_arg("client", |a| a.value_parser(super::shared::Clients::list))
)]
pub struct SweepArgs {
    /// Write the sweep report (measured vs fitted throughput, every run) as HTML
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.html",
        help_heading = "sweep options"
    )]
    pub output: Option<PathBuf>,
    /// Sweep a scenario's variants instead of a script (`-T`, `--rtt`, `-j`, `--random-seed`
    /// and the connection options apply to every ladder)
    #[arg(long = "scenario", value_name = "NAME", help_heading = "sweep options")]
    pub scenario: Option<String>,
    /// With --scenario: set a scenario parameter (repeatable)
    #[arg(long = "param", value_name = "NAME=VALUE", action = clap::ArgAction::Append, value_parser = super::scenario::param, help_heading = "sweep options")]
    pub param: Vec<(String, String)>,
    #[command(flatten)]
    pub run: RunArgs,
    /// With --scenario (last: the heading applies to what follows it).
    #[command(flatten, next_help_heading = "sweep options")]
    pub pick: ScenarioPick,
}
