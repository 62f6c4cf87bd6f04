//! `--pgbench-compat N`: which pgbench version `hotbench run` follows where versions differ
//! (the differences are one table, `hotbench_results::pgbench_format`). Here: reading the value,
//! and `-d`, which pgbench 15 and 16 read as `--debug`, pgbench 17 and later as `--dbname`.
//! The default stays 15 (the flags and report parsers of existing users keep working); the
//! command line is rewritten before parsing so clap sees the long, unambiguous form.

use hotbench_results::pgbench_format::{NEWEST, OLDEST};
use hotbench_results::PgbenchCompat;

use crate::fail::{Fail, Result};

/// The version asked for (`--pgbench-compat N` or `--pgbench-compat=N` anywhere in `argv`).
fn requested(argv: &[String]) -> Option<String> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == "--pgbench-compat" {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix("--pgbench-compat=") {
            return Some(v.to_string());
        }
    }
    None
}

/// A valid `--pgbench-compat` value, or pgbench's style of range message.
pub fn check(value: Option<&str>) -> Result<PgbenchCompat> {
    match value {
        None => Ok(PgbenchCompat::default()),
        Some(v) => v
            .trim()
            .parse::<u32>()
            .ok()
            .and_then(PgbenchCompat::new)
            .ok_or_else(|| {
                Fail::input(format!(
                    "--pgbench-compat must be in range {OLDEST}..{NEWEST}"
                ))
            }),
    }
}

/// For `run` with `--pgbench-compat 17` or later: a standalone `-d` becomes `--dbname`, and
/// `-dNAME` becomes `--dbname=NAME`. Everything else is left alone.
pub fn rewrite_argv(argv: Vec<String>) -> Vec<String> {
    let is_run = argv.get(1).is_some_and(|a| a == "run");
    let version = requested(&argv).and_then(|v| check(Some(&v)).ok());
    if !is_run || !version.is_some_and(|v| v.traits().d_is_dbname) {
        return argv;
    }
    let mut out = Vec::with_capacity(argv.len());
    let mut rest_positional = false;
    for a in argv {
        if rest_positional {
            out.push(a);
        } else if a == "--" {
            rest_positional = true;
            out.push(a);
        } else if a == "-d" {
            out.push("--dbname".to_string());
        } else if let Some(name) = a.strip_prefix("-d").filter(|n| !n.is_empty()) {
            out.push(format!("--dbname={name}"));
        } else {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn d_is_debug_until_17() {
        let argv = v(&["hotbench", "run", "-d", "-t", "1"]);
        assert_eq!(rewrite_argv(argv.clone()), argv);
        let argv = v(&["hotbench", "run", "--pgbench-compat", "16", "-d", "x"]);
        assert_eq!(rewrite_argv(argv.clone()), argv);
        assert_eq!(
            rewrite_argv(v(&[
                "hotbench",
                "run",
                "--pgbench-compat=17",
                "-d",
                "db",
                "-dother"
            ])),
            v(&[
                "hotbench",
                "run",
                "--pgbench-compat=17",
                "--dbname",
                "db",
                "--dbname=other"
            ])
        );
        // Only `run`, and nothing after `--`.
        let argv = v(&["hotbench", "sweep", "--pgbench-compat", "18", "-d"]);
        assert_eq!(rewrite_argv(argv.clone()), argv);
        assert_eq!(
            rewrite_argv(v(&[
                "hotbench",
                "run",
                "--pgbench-compat",
                "18",
                "--",
                "-d"
            ])),
            v(&["hotbench", "run", "--pgbench-compat", "18", "--", "-d"])
        );
    }

    #[test]
    fn range() {
        assert_eq!(check(None).unwrap().version(), 15);
        assert_eq!(check(Some("18")).unwrap().version(), 18);
        assert_eq!(check(Some("19")).unwrap().version(), 19);
        assert_eq!(
            check(Some("14")).unwrap_err().message,
            "--pgbench-compat must be in range 15..19"
        );
        assert!(check(Some("x")).is_err());
    }
}
