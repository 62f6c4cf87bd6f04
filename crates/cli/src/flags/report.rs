//! `hotbench report`, `compare`, `merge` and `usl`: commands that read result
//! files only (no database). Parsing only; `crate::report_cmd` does the work.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files: run results (--json), scenario ladders or sweeps
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,
    /// Write the HTML report here (default: the first file's name with .html, beside it);
    /// `--html FILE` as on `run` and `scenario run`
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "html",
        value_name = "FILE"
    )]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Run results to compare (ratios are to the first), or scenario ladder files (variants
    /// lined up by name)
    #[arg(value_name = "RESULT.json", required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// Also write the comparison as an HTML report (`--html FILE` as on `run`)
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "html",
        value_name = "FILE.html"
    )]
    pub output: Option<PathBuf>,
    /// Also write the comparison as JSON (values, ratios, 95% intervals, p-values, verdicts)
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The files are sides of N repeated runs each, in order (A1 A2 A3 B1 B2 B3): the
    /// perturbations' times to recover are compared across the repeats (mean, spread,
    /// Welch's t-test); the other metrics still file by file
    #[arg(long = "repeats", value_name = "N", default_value_t = 1, value_parser = repeats)]
    pub repeats: u32,
}

/// `--repeats N`: at least 1 (the message names the flag, as every value parser's does).
fn repeats(v: &str) -> Result<u32, String> {
    hotbench_settings::values::int_in(v, "--repeats", 1, i64::from(u32::MAX)).map(|n| n as u32)
}

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Results of the same workload run from several client machines at the same time
    #[arg(value_name = "RESULT.json", required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// Write the merged result here
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.json",
        required = true
    )]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct UslArgs {
    /// Measurements: CSV files of `clients,throughput` (header optional), or hotbench
    /// result, sweep or ladder JSON files
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Write the fit as JSON (sigma, kappa, lambda, n_max, x_max, r2, constraint, points)
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HTML page: the measured points and the fitted curve
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bad_repeats_names_its_flag() {
        assert_eq!(super::repeats("3"), Ok(3));
        for bad in ["0", "-1", "x", "4294967296"] {
            let e = super::repeats(bad).unwrap_err();
            assert!(e.contains("--repeats"), "{bad}: {e}");
        }
    }
}
