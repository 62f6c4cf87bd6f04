//! Command-line definition: one clap definition per subcommand. Parsing only; building the
//! real configuration from these plain values happens in the command modules.

pub mod capture;
pub mod conn;
pub mod diagnose;
pub mod null_server;
pub mod report;
pub mod run;
pub mod scenario;
pub mod server;
pub mod shared;
pub mod sweep;

use clap::{CommandFactory, Parser, Subcommand};

/// The whole command line. Every option's value may start with `-`, as with pgbench's
/// getopt: `-T -1` then reaches validation and gets pgbench's one-line range message
/// (`-T/--time must be in range 1..2147483647`) instead of clap's "unexpected argument".
pub fn command() -> clap::Command {
    getopt_values(Cli::command())
}

fn getopt_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        // -N/-S append a value each time but read none (num_args = 0).
        let reads_value = a.get_num_args().is_none_or(|r| r.max_values() > 0);
        if !a.is_positional() && a.get_action().takes_values() && reads_value {
            a.allow_hyphen_values(true)
        } else {
            a
        }
    })
    .mut_subcommands(getopt_values)
}

#[derive(Debug, Parser)]
#[command(
    name = "hotbench",
    version,
    about = "A contention lab for PostgreSQL-compatible databases",
    long_about = "hotbench reproduces high-contention write workloads, measures them honestly and \
                  shows which SQL pattern fixes them. `hotbench run` is a drop-in pgbench; \
                  `hotbench scenario` runs ladders of variants with correctness checks.",
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a pgbench workload: same flags, same report, plus percentiles, retries, JSON
    #[command(
        allow_hyphen_values = false,
        before_help = "hotbench run is a benchmarking tool for PostgreSQL, compatible with pgbench.",
        after_help = "Report bugs to the hotbench issue tracker (pgbench's own options keep pgbench's meaning)."
    )]
    Run(Box<run::RunArgs>),
    /// Manage the default embedded PostgreSQL (start, stop, status, url, reset)
    Server(server::ServerArgs),
    /// Scenario ladders: list, show, run (variants ranked, data checked)
    Scenario(scenario::ScenarioArgs),
    /// A two-minute tour: the daily-limit and queue ladders, written to hotbench-demo.json/.html
    Demo(Box<scenario::DemoArgs>),
    /// Write an HTML report from result files (runs, ladders, sweeps)
    Report(report::ReportArgs),
    /// Compare runs side by side: ratios to the first, and whether each is within noise
    Compare(report::CompareArgs),
    /// Merge results of the same run from several client machines (histograms exact)
    Merge(report::MergeArgs),
    /// Run a workload at several client counts and fit the Universal Scalability Law
    Sweep(Box<sweep::SweepArgs>),
    /// Fit the Universal Scalability Law to measurements (CSV of clients,tps or result files)
    Usl(report::UslArgs),
    /// A PostgreSQL-protocol responder with canned replies, for client benchmarks
    #[command(hide = true, name = "null-server")]
    NullServer(null_server::NullServerArgs),
    /// Sample a live server read-only, find its contention and name the ladder that fixes it
    #[command(disable_help_flag = true)]
    Diagnose(Box<diagnose::DiagnoseArgs>),
    /// Sample a live server's workload read-only and write it as a scenario directory (--verify: score its twin)
    #[command(disable_help_flag = true)]
    Capture(Box<capture::CaptureArgs>),
}
