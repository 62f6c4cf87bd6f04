//! A command's output files (`--json`, `--html`, `-o`): checked before any work starts (a
//! missing or read-only directory, a directory or a block device is bad input, exit 1) and
//! written at the end, where a failed write is reported and fails the command (exit 2): a
//! measurement is never followed by a silent "written to" that did not happen.
//!
//! Every command checks its outputs here, against each other and against every file it
//! reads (scripts, result files, a `--dir` scenario's files), by the files' real paths: `x.json`,
//! `./x.json` and a symlink to it are one file, so no spelling lets an output replace an
//! input or another output.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use hotbench_results::output_path::OutputPath;
use serde::Serialize;

use crate::fail::{Fail, Result};

/// A file a command reads: a script, a result file, CSV measurements, each file of a
/// scenario's `--dir` directory (`-` and missing files are skipped: reading them fails on
/// its own).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a>(pub &'a Path);

/// An input as found on disk: its real path, and its inode (a hard link is the same file
/// under another name).
struct Known<'a> {
    given: &'a Path,
    real: PathBuf,
    inode: Option<(u64, u64)>,
}

fn known<'a>(given: &Input<'a>) -> Option<Known<'a>> {
    let path = given.0;
    if path.as_os_str() == "-" {
        return None;
    }
    let real = fs::canonicalize(path).ok()?;
    let inode = fs::metadata(&real)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| (m.dev(), m.ino()));
    Some(Known {
        given: path,
        real,
        inode,
    })
}

/// Checks every given output path, before the command reads or runs anything: each can be
/// written, no two name the same file, and none is one of the `inputs`.
pub fn check(outputs: &[Option<&Path>], inputs: &[Input<'_>]) -> Result<()> {
    let inputs: Vec<Known> = inputs.iter().filter_map(known).collect();
    let mut seen: Vec<(&Path, PathBuf)> = Vec::new();
    for p in outputs.iter().flatten() {
        let out =
            hotbench_results::output_path::check(p).map_err(|e| Fail::input(e.to_string()))?;
        let OutputPath::Regular(real) = out else {
            // A FIFO or device is written through, never replaced: it may be named twice.
            continue;
        };
        if let Some((first, _)) = seen.iter().find(|(_, r)| *r == real) {
            return Err(Fail::input(same_twice(first, p)));
        }
        let inode = fs::metadata(&real).ok().map(|m| (m.dev(), m.ino()));
        if let Some(i) = inputs
            .iter()
            .find(|i| i.real == real || (inode.is_some() && i.inode == inode))
        {
            return Err(Fail::input(format!(
                "output \"{}\" is the input \"{}\": writing it would destroy what this command reads; choose another output file",
                p.display(),
                i.given.display()
            )));
        }
        seen.push((p, real));
    }
    Ok(())
}

fn same_twice(first: &Path, second: &Path) -> String {
    if first == second {
        format!(
            "\"{}\" is given as two outputs; each output needs its own file",
            first.display()
        )
    } else {
        format!(
            "\"{}\" and \"{}\" are the same file, given as two outputs; each output needs its own file",
            first.display(),
            second.display()
        )
    }
}

/// The final write of a JSON document; prints `{what} written to PATH` when it succeeded.
pub fn write_json<T: Serialize>(path: &Path, value: &T, what: &str) -> Result<()> {
    save_json(path, value)?;
    println!("{what} written to {}", path.display());
    Ok(())
}

/// A JSON document written (atomically) before the final write replaces it, so a command
/// killed in between still leaves it; says nothing (the final write does).
pub fn save_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    hotbench_results::json_file::write_atomic(path, value).map_err(|e| Fail::run(e.to_string()))
}

/// Writes an HTML page (atomically for a regular file); prints `report written to PATH`.
pub fn write_html(path: &Path, page: &str) -> Result<()> {
    save_html(path, page)?;
    println!("report written to {}", path.display());
    Ok(())
}

/// As [`save_json`] for an HTML page.
pub fn save_html(path: &Path, page: &str) -> Result<()> {
    hotbench_results::json_file::write_bytes_atomic(path, page.as_bytes())
        .map_err(|e| Fail::run(e.to_string()))
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

/// An output directory (`capture --out DIR`), checked before anything runs: missing (then
/// its parent must be a directory; it is created at the end), or a directory that is empty or
/// that this command wrote before (`ours` recognises its marker file). Anything else — a
/// file, a directory of someone else's files — is refused: its contents are not ours to
/// overwrite.
pub fn check_dir(dir: &Path, ours: &dyn Fn(&Path) -> bool, inputs: &[Input<'_>]) -> Result<()> {
    let shown = dir.display();
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !parent.is_dir() {
                return Err(Fail::input(format!(
                    "could not write \"{shown}\": its parent \"{}\" is not a directory",
                    parent.display()
                )));
            }
        }
        Err(e) => return Err(Fail::input(format!("could not write \"{shown}\": {e}"))),
        Ok(_) => {
            let real = fs::metadata(dir).map_err(|e| Fail::input(format!("\"{shown}\": {e}")))?;
            if !real.is_dir() {
                return Err(Fail::input(format!(
                    "could not write \"{shown}\": it exists and is not a directory"
                )));
            }
            let empty = fs::read_dir(dir)
                .map_err(|e| Fail::input(format!("could not read \"{shown}\": {e}")))?
                .next()
                .is_none();
            if !empty && !ours(dir) {
                return Err(Fail::input(format!(
                    "\"{shown}\" is not empty and holds no earlier capture: its files are not ours to replace; choose a new directory"
                )));
            }
            let real =
                fs::canonicalize(dir).map_err(|e| Fail::input(format!("\"{shown}\": {e}")))?;
            if let Some(i) = inputs
                .iter()
                .filter_map(known)
                .find(|i| i.real.starts_with(&real))
            {
                return Err(Fail::input(format!(
                    "output directory \"{shown}\" holds the input \"{}\"; choose another directory",
                    i.given.display()
                )));
            }
        }
    }
    Ok(())
}

/// Writes `files` into `dir` (created when missing), each atomically; a name that exists as
/// anything but a regular file (a link, a directory) is refused and nothing replaces it.
pub fn write_dir(dir: &Path, files: &[(String, String)]) -> Result<()> {
    if !dir.exists() {
        fs::create_dir(dir)
            .map_err(|e| Fail::run(format!("could not create \"{}\": {e}", dir.display())))?;
    }
    for (name, text) in files {
        let path = dir.join(name);
        match fs::symlink_metadata(&path) {
            Ok(m) if !m.file_type().is_file() => {
                return Err(Fail::run(format!(
                    "could not write \"{}\": it exists and is not a regular file",
                    path.display()
                )))
            }
            _ => {}
        }
        hotbench_results::json_file::write_bytes_atomic(&path, text.trim_end().as_bytes())
            .map_err(|e| Fail::run(e.to_string()))?;
    }
    Ok(())
}
