//! A ladder leaves the database as it found it: its `hb_NAME` schema is dropped at the end
//! (unless `--keep-schema`), so a later `hotbench run`'s probes report the run's own tables,
//! not a queue table an earlier ladder left behind.

mod common;

use std::process::Output;

use common::{command_on, database, psql, run, text};
use hotbench_pgserver::ConnInfo;

fn scenario_run(db: &ConnInfo, name: &str, args: &[&str]) -> Output {
    command_on(db, &["scenario", "run", name], args)
        .output()
        .expect("run hotbench")
}

fn hb_schemas(db: &ConnInfo) -> String {
    psql(
        db,
        "select coalesce(string_agg(nspname, ',' order by nspname), '') \
         from pg_namespace where nspname like 'hb\\_%'",
    )
    .trim()
    .to_string()
}

const QUEUE: &[&str] = &[
    "--variants",
    "skip-locked",
    "-T",
    "1",
    "-c",
    "2",
    "--param",
    "backlog=20000",
];

/// A plain `run` after `-i` (simple-update, 1 s): its output and "dead tuples at end:" line.
fn plain_run_dead_tuples(db: &ConnInfo) -> (String, String) {
    assert!(run(db, &["-i", "-q"]).status.success());
    let o = run(db, &["-n", "-b", "simple-update", "-T", "1", "-c", "2"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let dead = stdout
        .lines()
        .find(|l| l.starts_with("dead tuples at end:"))
        .unwrap_or_else(|| panic!("no dead-tuples line:\n{stdout}"))
        .to_string();
    (stdout, dead)
}

#[test]
fn ladder_drops_its_schema_and_the_next_run_reports_only_its_own_tables() {
    let db = database("cleanup");
    let o = scenario_run(&db, "queue", QUEUE);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(hb_schemas(&db), "", "a ladder left its schema behind");

    let (stdout, dead) = plain_run_dead_tuples(&db);
    assert!(dead.contains("pgbench_accounts"), "{dead}");
    assert!(!dead.contains("hb_"), "{dead}");
    assert!(!stdout.contains("largest of"), "{stdout}");
}

#[test]
fn keep_schema_keeps_it_and_an_untouched_table_is_not_reported() {
    let db = database("keep");
    let mut args = QUEUE.to_vec();
    args.push("--keep-schema");
    let o = scenario_run(&db, "queue", &args);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(hb_schemas(&db), "hb_queue");

    // The kept queue table has dead tuples but this run never writes it.
    let (_, dead) = plain_run_dead_tuples(&db);
    assert!(!dead.contains("hb_queue"), "{dead}");
}
