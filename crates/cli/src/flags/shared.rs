//! Flags that `run`, `sweep`, `scenario run` and `demo` share besides the run settings
//! (`hotbench_settings::RunSettings`): how much load (`-c`, `-T`, parsed and checked here
//! into typed values: a count, or a sweep's counts; whole seconds) and what to write
//! (`--json`, `--html`, `--threshold`). Declared once, flattened into each command.

use std::path::PathBuf;

use clap::{ArgAction, Args};
use hotbench_settings::run::{BENCHMARKING, HOTBENCH};

use crate::fail::{Fail, Result};
use crate::option_ranges::{parse_int, INT_MAX};

#[derive(Debug, Clone, Default, Args)]
pub struct LoadArgs {
    /// Number of concurrent database clients (default: 1; a scenario's `clients` parameter;
    /// sweep: the counts to sweep, e.g. 1,2,4,8)
    #[arg(
        short = 'c',
        long = "client",
        visible_alias = "clients",
        value_name = "NUM",
        value_parser = Clients::one,
        help_heading = BENCHMARKING
    )]
    pub client: Option<Clients>,
    /// Duration of the benchmark (of each variant) in seconds; units too: 90s, 2m
    #[arg(short = 'T', long = "time", value_name = "NUM", value_parser = seconds, help_heading = BENCHMARKING)]
    pub time: Option<u32>,
}

/// `-c`, checked as it is read: one count for `run`, `scenario run` and `demo` (pgbench's
/// range and message), the counts to sweep for `sweep` (whose flags parse `-c` with
/// [`Clients::list`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clients(Vec<usize>);

impl Clients {
    /// One count, 1..2147483647.
    pub fn one(text: &str) -> Result<Clients> {
        Ok(Clients(vec![
            parse_int(text, "-c/--clients", 1, INT_MAX)? as usize
        ]))
    }

    /// `1,2,4,8` (also `1 2 4`), each ≥ 1, in the order given, duplicates dropped; an empty
    /// entry (`1,,2`, a trailing comma) is a typo, not a count to skip.
    pub fn list(text: &str) -> Result<Clients> {
        let list = hotbench_settings::values::ListOption {
            what: "client count",
            option: "-c/--clients",
            example: "1,2,4,8",
        };
        if text.trim().is_empty() {
            return Err(Fail::input(
                "-c/--clients: give the client counts to sweep, e.g. 1,2,4,8",
            ));
        }
        let mut out: Vec<usize> = Vec::new();
        for part in list.entries(text).map_err(Fail::input)? {
            let n: usize = part
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| Fail::input(list.bad(part, text)))?;
            if !out.contains(&n) {
                out.push(n);
            }
        }
        Ok(Clients(out))
    }

    /// The count (the first of a list: never empty).
    pub fn count(&self) -> usize {
        self.0.first().copied().unwrap_or(1)
    }

    /// Every count, in the order given.
    pub fn counts(&self) -> &[usize] {
        &self.0
    }
}

/// `-T`: whole seconds, 1..2147483647 (pgbench's bare number, or a duration with a unit).
fn seconds(text: &str) -> Result<u32> {
    crate::option_ranges::parse_time(text).map(|s| s as u32)
}

#[derive(Debug, Clone, Default, PartialEq, Args)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_lists() {
        let counts = |t: &str| Clients::list(t).map(|c| c.counts().to_vec());
        assert_eq!(counts("1,2,4,8").unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(counts("4, 2 ,2").unwrap(), vec![4, 2]);
        let e = counts("1,x").unwrap_err();
        assert!(
            e.message.contains("invalid client count \"x\""),
            "{}",
            e.message
        );
        assert!(counts("0").is_err());
        assert!(counts(",").is_err());
        assert_eq!(counts("1 2, 4").unwrap(), vec![1, 2, 4]);
        for typo in ["1,,2", "1,2,", ",1", "1, ,2"] {
            let e = counts(typo).unwrap_err();
            assert!(
                e.message.contains("invalid client count"),
                "{typo}: {}",
                e.message
            );
        }
        assert_eq!(Clients::one("16").unwrap().count(), 16);
        assert_eq!(
            Clients::one("1,2").unwrap_err().message,
            "invalid value \"1,2\" for option -c/--clients"
        );
    }
}
