//! PostgreSQL's own pgbench is the oracle: the same flags against the same database must give
//! the same report lines in the same order (numbers aside), and `-l` logs with the same fields.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::oracle::{pgbench, report_shapes, shape, NO_PGBENCH};
use common::*;
use hotbench_pgserver::ConnInfo;

#[test]
fn shapes_ignore_digit_counts_but_keep_columns() {
    assert_eq!(
        shape("         9.876  BEGIN;"),
        shape("        10.123  BEGIN;")
    );
    assert_ne!(shape("         9.876  BEGIN;"), shape("     9.876  BEGIN;"));
    assert_eq!(
        shape("latency average = 1.234 ms"),
        "latency average = # ms"
    );
    assert_eq!(shape("tps = 123.4 (x)"), shape("tps = 9.0 (x)"));
}

fn run_pgbench(
    bin: &PathBuf,
    db: &hotbench_pgserver::ConnInfo,
    args: &[&str],
    cwd: &std::path::Path,
) -> String {
    let o = Command::new(bin)
        .args(conn_args(db))
        .args(args)
        .arg(&db.dbname)
        .current_dir(cwd)
        .output()
        .expect("run pgbench");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run_hotbench(db: &hotbench_pgserver::ConnInfo, args: &[&str], cwd: &std::path::Path) -> String {
    let o = hotbench()
        .arg("run")
        .args(conn_args(db))
        .args(args)
        .arg(&db.dbname)
        .current_dir(cwd)
        .output()
        .expect("run hotbench");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The pgbench to compare with, and a database `tag` initialized by `hotbench run -i` with
/// a scratch directory of the same name.
fn initialized(tag: &str) -> (PathBuf, ConnInfo, PathBuf) {
    let bin = pgbench().expect(NO_PGBENCH);
    let db = database(tag);
    let dir = temp_dir(tag);
    assert!(run(&db, &["-i", "-q"]).status.success());
    (bin, db, dir)
}

#[test]
fn report_lines_match_pgbench() {
    let (bin, db, dir) = initialized("oracle");
    let cases: &[&[&str]] = &[
        &["-n", "-t", "20", "-c", "2", "-r"],
        &["-n", "-t", "20", "-c", "2", "-j", "2", "-M", "prepared"],
        &[
            "-n",
            "-T",
            "2",
            "-c",
            "2",
            "-P",
            "1",
            "--max-tries",
            "3",
            "--failures-detailed",
        ],
        // 40 transactions a client: a script drawn for none prints no skipped or latency
        // lines (in pgbench as here), and at 10 a CI run's hotbench drew simple-update for
        // none of its 20 (each -L skip spends the script already drawn, so fewer draws).
        &[
            "-n",
            "-b",
            "select-only@2",
            "-b",
            "simple-update",
            "-t",
            "40",
            "-c",
            "2",
            "-L",
            "50",
            "-R",
            "100",
            "-r",
        ],
        &["-n", "-S", "-t", "5", "-c", "2", "-C"],
    ];
    for args in cases {
        let p = report_shapes(&run_pgbench(&bin, &db, args, &dir));
        let h = report_shapes(&run_hotbench(&db, args, &dir));
        assert_eq!(p, h, "report shape differs for {args:?}");
    }
}

/// The `-r` rows of a report, each split on whitespace as a parser of pgbench output splits
/// them, numbers replaced by `#`, plus the whole line's shape (same columns, same spacing).
fn per_command_rows(stdout: &str) -> Vec<(Vec<String>, String)> {
    stdout
        .lines()
        .skip_while(|l| !l.contains("statement latencies in milliseconds"))
        .skip(1)
        .take_while(|l| l.starts_with("   "))
        .map(|l| {
            let fields = l.split_whitespace().map(shape).collect();
            (fields, shape(l))
        })
        .collect()
}

#[test]
fn per_command_lines_split_exactly_as_pgbench() {
    let (bin, db, dir) = initialized("oracle_r");
    let script = write_script(
        &dir,
        "multi.sql",
        "\\set aid random(1, 100000)\n\\set delta random(-5, 5)\nBEGIN;\nUPDATE pgbench_accounts\n   SET abalance = abalance + :delta\n WHERE aid = :aid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nEND;\n",
    );
    let script = script.to_string_lossy().into_owned();
    let cases: &[&[&str]] = &[
        &["-n", "-t", "20", "-c", "2", "-r", "-f", &script],
        &[
            "-n",
            "-t",
            "20",
            "-c",
            "2",
            "-r",
            "--max-tries",
            "3",
            "-f",
            &script,
        ],
        &["-n", "-S", "-t", "20", "-c", "2", "-r"],
    ];
    for args in cases {
        let p = per_command_rows(&run_pgbench(&bin, &db, args, &dir));
        let h = per_command_rows(&run_hotbench(&db, args, &dir));
        assert!(!p.is_empty(), "pgbench printed no -r rows for {args:?}");
        assert_eq!(p, h, "-r rows split differently for {args:?}");
    }
}

fn log_fields(dir: &std::path::Path, prefix: &str) -> Vec<usize> {
    let mut counts = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(prefix) {
            let text = std::fs::read_to_string(e.path()).unwrap();
            counts.extend(text.lines().map(|l| l.split_whitespace().count()));
            let _ = std::fs::remove_file(e.path());
        }
    }
    counts.sort();
    counts.dedup();
    counts
}

#[test]
fn transaction_logs_have_pgbench_fields() {
    let (bin, db, dir) = initialized("oracle_log");
    let cases: &[&[&str]] = &[
        &["-n", "-S", "-t", "10", "-c", "2", "-l"],
        &[
            "-n",
            "-S",
            "-t",
            "10",
            "-c",
            "2",
            "-l",
            "-R",
            "200",
            "--max-tries",
            "2",
        ],
        &[
            "-n",
            "-S",
            "-T",
            "2",
            "-c",
            "2",
            "-l",
            "--aggregate-interval",
            "1",
        ],
        &[
            "-n",
            "-S",
            "-T",
            "2",
            "-c",
            "2",
            "-l",
            "--aggregate-interval",
            "1",
            "-R",
            "200",
            "-L",
            "50",
            "--failures-detailed",
        ],
    ];
    for args in cases {
        let mut p_args = args.to_vec();
        p_args.extend(["--log-prefix", "p"]);
        run_pgbench(&bin, &db, &p_args, &dir);
        let p = log_fields(&dir, "p.");
        let mut h_args = args.to_vec();
        h_args.extend(["--log-prefix", "h"]);
        run_hotbench(&db, &h_args, &dir);
        let h = log_fields(&dir, "h.");
        assert!(!p.is_empty());
        assert_eq!(p, h, "log line field counts differ for {args:?}");
    }
}

/// `client transaction_no` pairs of a -l log, sorted (pgbench numbers from 1).
fn log_ids(dir: &std::path::Path, prefix: &str) -> Vec<(u64, u64)> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        if e.file_name().to_string_lossy().starts_with(prefix) {
            let text = std::fs::read_to_string(e.path()).unwrap();
            for l in text.lines() {
                let f: Vec<u64> = l
                    .split_whitespace()
                    .take(2)
                    .map(|v| v.parse().unwrap())
                    .collect();
                ids.push((f[0], f[1]));
            }
            let _ = std::fs::remove_file(e.path());
        }
    }
    ids.sort();
    ids
}

#[test]
fn transaction_log_numbers_match_pgbench() {
    let (bin, db, dir) = initialized("oracle_logno");
    let args = ["-n", "-S", "-t", "3", "-c", "2", "-l"];
    let mut p_args = args.to_vec();
    p_args.extend(["--log-prefix", "p"]);
    run_pgbench(&bin, &db, &p_args, &dir);
    let mut h_args = args.to_vec();
    h_args.extend(["--log-prefix", "h"]);
    run_hotbench(&db, &h_args, &dir);
    let p = log_ids(&dir, "p.");
    assert_eq!(p, vec![(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]);
    assert_eq!(log_ids(&dir, "h."), p);
}

/// Under a server error with a position, the `LINE n:` and caret lines libpq adds are
/// printed as pgbench prints them, in every query mode.
#[test]
fn server_error_position_lines_match_pgbench() {
    let bin = pgbench().expect(NO_PGBENCH);
    let db = database("oracle_errpos");
    let dir = temp_dir("oracle-errpos");
    let script = write_script(
        &dir,
        "err.sql",
        "select 1;\nselect *\n  from\tnosuch where x = 1;\n",
    );
    let script = script.to_str().expect("utf-8");
    // The error's message and the context lines after it, from stderr.
    let context = |o: std::process::Output| -> Vec<String> {
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let lines: Vec<&str> = err.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("does not exist"))
            .unwrap_or_else(|| panic!("no error in:\n{err}"));
        let msg = lines[at];
        let msg = &msg[msg.find("ERROR:").expect("ERROR:")..];
        std::iter::once(msg)
            .chain(lines[at + 1..].iter().take(2).copied())
            .map(String::from)
            .collect()
    };
    for mode in ["simple", "extended", "prepared"] {
        let args = ["-n", "-t", "1", "-M", mode, "-f", script];
        let theirs = Command::new(&bin)
            .args(conn_args(&db))
            .args(args)
            .arg(&db.dbname)
            .output()
            .expect("run pgbench");
        let ours = hotbench()
            .arg("run")
            .args(conn_args(&db))
            .args(args)
            .arg(&db.dbname)
            .output()
            .expect("run hotbench");
        let expected = context(theirs);
        assert!(expected[1].starts_with("LINE 2: "), "{expected:?}");
        assert_eq!(context(ours), expected, "-M {mode}");
    }
}
