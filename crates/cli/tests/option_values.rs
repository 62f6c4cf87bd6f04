//! Option values get pgbench's one-line messages (issue 13, items 15 and 5): values starting
//! with `-` reach validation as with pgbench's getopt, non-finite or meaningless rates and
//! limits are refused, `--group` does not silently ignore `-c`/`-R` or duplicates, and more
//! clients than files can be opened is one error (exit 1), not an allocation abort.
//! No server needed: all of this is refused before connecting.

mod common;

use std::path::PathBuf;

use common::*;

fn refuse(args: &[&str]) -> String {
    let o = hotbench()
        .args(args)
        .env("PGHOST", "/nonexistent-hotbench-socket-dir")
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}\n{out}\n{err}");
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
    err
}

fn one_line(args: &[&str]) -> String {
    let err = refuse(args);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err.trim_end()
        .strip_prefix("hotbench: error: ")
        .unwrap_or_else(|| panic!("{args:?}: {err}"))
        .to_string()
}

fn pgbench() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/lib/postgresql/15/bin/pgbench");
    p.exists().then_some(p)
}

#[test]
fn dashed_values_get_pgbench_range_messages() {
    let cases: &[(&[&str], &str)] = &[
        (&["-T", "-1"], "-T/--time must be in range 1..2147483647"),
        (&["-c", "-5"], "-c/--clients must be in range 1..2147483647"),
        (&["-j", "-2"], "-j/--jobs must be in range 1..2147483647"),
        (
            &["-t", "-3"],
            "-t/--transactions must be in range 1..2147483647",
        ),
        (
            &["-P", "-1"],
            "-P/--progress must be in range 1..2147483647",
        ),
        (&["-s", "-1"], "-s/--scale must be in range 1..2147483647"),
        (
            &["--partitions", "-1"],
            "--partitions must be in range 0..2147483647",
        ),
        (
            &["-i", "--partitions=-1"],
            "--partitions must be in range 0..2147483647",
        ),
        (
            &["-i", "-F", "-5"],
            "-F/--fillfactor must be in range 10..100",
        ),
        (
            &["-i", "-T", "-1"],
            "-T/--time must be in range 1..2147483647",
        ),
        (
            &["--max-tries", "-10"],
            "invalid number of maximum tries: \"-10\"",
        ),
        (
            &["--aggregate-interval", "-5"],
            "--aggregate-interval must be in range 1..2147483647",
        ),
        (&["-R", "-5"], "invalid rate limit: \"-5\""),
        (&["--rate=-3"], "invalid rate limit: \"-3\""),
        (&["--sampling-rate", "-1"], "invalid sampling rate: \"-1\""),
    ];
    let oracle = pgbench();
    for (args, expected) in cases {
        let mut full = vec!["run"];
        full.extend_from_slice(args);
        assert_eq!(&one_line(&full), expected, "{args:?}");
        if let Some(pg) = &oracle {
            let o = std::process::Command::new(pg)
                .args(*args)
                .env("PGHOST", "/nonexistent-hotbench-socket-dir")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                err.lines().next(),
                Some(format!("pgbench: error: {expected}").as_str()),
                "pgbench disagrees on {args:?}"
            );
        }
    }
    // hotbench's own duration options and the scenario and sweep commands: one line too.
    for args in [
        vec!["run", "--rtt", "-1ms"],
        vec!["run", "--interval", "-1s"],
        vec!["run", "--retry-backoff", "-5"],
        vec!["scenario", "run", "queue", "-c", "-5"],
        vec!["scenario", "run", "queue", "-T", "-1"],
        vec!["scenario", "run", "queue", "--rtt", "-1ms"],
        vec!["sweep", "-c", "-1"],
    ] {
        let msg = one_line(&args);
        assert!(!msg.contains("unexpected argument"), "{args:?}: {msg}");
    }
}

#[test]
fn non_finite_or_meaningless_rates_and_limits_are_refused() {
    for v in ["nan", "inf", "1e-20", "-inf"] {
        assert_eq!(
            one_line(&["run", "-R", v]),
            format!("invalid rate limit: \"{v}\"")
        );
        assert_eq!(
            one_line(&["run", "-L", v]),
            format!("invalid latency limit: \"{v}\"")
        );
    }
    for v in ["nan", "inf", "-inf", "1.5"] {
        assert_eq!(
            one_line(&["run", "-l", "--sampling-rate", v]),
            format!("invalid sampling rate: \"{v}\"")
        );
    }
    for g in [
        "a:builtin=select-only,rate=nan",
        "a:builtin=select-only,rate=1e-20",
    ] {
        assert!(
            one_line(&["run", "--group", g]).contains("invalid rate"),
            "{g}"
        );
    }
}

#[test]
fn groups_refuse_bare_clients_rates_and_duplicates() {
    let g = "a:builtin=select-only,clients=2";
    for extra in [["-c", "5"], ["-R", "10"]] {
        let msg = one_line(&["run", "--group", g, extra[0], extra[1]]);
        assert!(
            msg.contains("--group cannot be combined with -c or -R"),
            "{msg}"
        );
    }
    let msg = one_line(&["run", "--group", g, "--group", "a:builtin=tpcb-like"]);
    assert!(msg.contains("given twice"), "{msg}");
    for dup in [
        "a:builtin=select-only,clients=2,clients=3",
        "a:builtin=select-only,rate=5,R=7",
    ] {
        let msg = one_line(&["run", "--group", dup]);
        assert!(msg.contains("twice"), "{dup}: {msg}");
    }
}

#[test]
fn more_clients_than_open_files_is_an_error_not_an_abort() {
    for args in [
        vec!["run", "-c", "2147483647"],
        vec!["run", "--group", "a:builtin=select-only,clients=2147483647"],
        vec!["scenario", "run", "queue", "-c", "2147483647"],
        vec!["scenario", "run", "queue", "--param", "clients=2147483647"],
    ] {
        let err = refuse(&args);
        // run needs one file per client plus its spare; a ladder counts its scenario's
        // background connections (the queue's producers) on top.
        let needed: u64 = err
            .split("need at least ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{args:?}: {err}"));
        assert!(err.contains("open files"), "{args:?}: {err}");
        if args[0] == "run" {
            assert_eq!(needed, 2147483650, "{args:?}: {err}");
        } else {
            assert!(needed > 2147483650, "{args:?}: {err}");
        }
    }
    // A lowered hard limit (which hotbench cannot raise): the same error at 5,000 clients.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 1024; exec \"$0\" run -c 5000")
        .arg(env!("CARGO_BIN_EXE_hotbench"))
        .env("PGHOST", "/nonexistent-hotbench-socket-dir")
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("need at least 5003 open files, but system limit is 1024"),
        "{err}"
    );
}
