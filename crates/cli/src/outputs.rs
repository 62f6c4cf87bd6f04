//! A command's output files (`--json`, `--html`, `-o`): checked before any work starts (a
//! missing or read-only directory, a directory or a block device is bad input, exit 1) and
//! written at the end, where a failed write is reported and fails the command (exit 2): a
//! measurement is never followed by a silent "written to" that did not happen.

use std::path::Path;

use serde::Serialize;

use crate::fail::{Fail, Result};

/// Checks every given output path; two outputs naming the same file are refused too.
pub fn check(paths: &[Option<&Path>]) -> Result<()> {
    let mut seen: Vec<std::path::PathBuf> = Vec::new();
    for p in paths.iter().flatten() {
        let out = hotbench_stats::output_path::check(p).map_err(|e| Fail::input(e.to_string()))?;
        let real = out.path().to_path_buf();
        if seen.contains(&real)
            && matches!(out, hotbench_stats::output_path::OutputPath::Regular(_))
        {
            return Err(Fail::input(format!(
                "\"{}\" is given as two outputs; each output needs its own file",
                p.display()
            )));
        }
        seen.push(real);
    }
    Ok(())
}

/// The final write of a JSON document; prints `{what} written to PATH` when it succeeded.
pub fn write_json<T: Serialize>(path: &Path, value: &T, what: &str) -> Result<()> {
    hotbench_stats::json_file::write_atomic(path, value).map_err(|e| Fail::run(e.to_string()))?;
    println!("{what} written to {}", path.display());
    Ok(())
}

/// Writes an HTML page (atomically for a regular file); prints `report written to PATH`.
pub fn write_html(path: &Path, page: &str) -> Result<()> {
    hotbench_stats::json_file::write_bytes_atomic(path, page.as_bytes())
        .map_err(|e| Fail::run(e.to_string()))?;
    println!("report written to {}", path.display());
    Ok(())
}

/// Runs every final write even when one fails (each failure is printed), so one bad output
/// does not cost the others; the first failure is returned.
pub fn all(writes: Vec<Result<()>>) -> Result<()> {
    let mut first = None;
    for w in writes {
        if let Err(f) = w {
            match first {
                None => first = Some(f),
                Some(_) => f.print(),
            }
        }
    }
    first.map_or(Ok(()), Err)
}
