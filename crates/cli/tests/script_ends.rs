//! How a script's end counts, as in pgbench: a script of meta-commands only still ends one
//! transaction per run through it, and a script that leaves a `BEGIN` block open counts that
//! transaction before the client is aborted.

mod common;

use common::*;

#[test]
fn meta_command_only_scripts_count_a_transaction_per_script_end() {
    let db = database("metaonly");
    let dir = temp_dir("metaonly");
    let f = write_script(&dir, "meta.sql", "\\set x debug(mod(-7, 3))\n");
    let o = run(
        &db,
        &["-n", "-t", "3", "-c", "2", "-f", f.to_str().unwrap()],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("6/6"),
        "{out}"
    );
    assert_eq!(
        err.matches("debug(script=0,command=1): int -1").count(),
        6,
        "{err}"
    );
}

#[test]
fn sleep_only_script_runs_for_a_duration() {
    let db = database("sleeponly");
    let dir = temp_dir("sleeponly");
    let f = write_script(&dir, "idle.sql", "\\sleep 10 ms\n");
    let o = run(&db, &["-n", "-T", "1", "-f", f.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let processed = line_value(&out, "number of transactions actually processed:")
        .and_then(|v| v.parse::<u64>().ok())
        .expect("processed line");
    assert!((5..=100).contains(&processed), "{out}");
}

#[test]
fn open_block_at_script_end_counts_then_aborts() {
    let db = database("openblock");
    let dir = temp_dir("openblock");
    let f = write_script(&dir, "open.sql", "BEGIN;SELECT 1;");
    let o = run(&db, &["-n", "-t", "10", "-f", f.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.contains("processed: 1/10"), "{out}");
    assert!(
        err.contains(
            "client 0 aborted: end of script reached without completing the last transaction"
        ),
        "{err}"
    );
}
