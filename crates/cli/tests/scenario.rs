//! `hotbench scenario` and the built-in scenarios against the harness server: every
//! scenario's ladder runs briefly with all checks passing, a broken fixture scenario is
//! caught, a user's edited copy runs via `--dir`, and manifest errors point at file:line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{database, hotbench, json, temp_dir, text};
use hotbench_pgserver::ConnInfo;

/// `hotbench scenario run NAME` against `db`, with `args`.
fn scenario_run(db: &ConnInfo, name: &str, args: &[&str]) -> Output {
    let mut cmd = hotbench();
    cmd.args(["scenario", "run", name])
        .arg("-h")
        .arg(&db.socket_dir)
        .arg("-p")
        .arg(db.port.to_string())
        .arg("-U")
        .arg(&db.user)
        .args(args)
        .arg(&db.dbname);
    for v in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
        cmd.env_remove(v);
    }
    cmd.output().expect("run hotbench")
}

#[allow(dead_code)]
fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Runs a scenario briefly and asserts every variant ran and every check passed.
fn ladder_passes(name: &str, args: &[&str]) -> serde_json::Value {
    let db = database(&name.replace('-', "_"));
    let dir = temp_dir(&format!("scn-{name}"));
    let out_json = dir.join(format!("{name}.json"));
    let mut all: Vec<&str> = args.to_vec();
    let j = out_json.to_string_lossy().into_owned();
    all.extend(["--json", &j]);
    let o = scenario_run(&db, name, &all);
    let (stdout, stderr) = text(&o);
    eprintln!("{stdout}");
    assert_eq!(
        o.status.code(),
        Some(0),
        "scenario {name} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("vs baseline"), "{stdout}");
    let v = json(&out_json);
    assert_eq!(v["format"], "hotbench-ladder/1");
    let ladder = &v["ladders"][0];
    for variant in ladder["variants"].as_array().expect("variants") {
        if variant["skipped"].is_string() {
            continue;
        }
        let committed = variant["record"]["totals"]["counters"]["cnt"]
            .as_u64()
            .unwrap_or(0);
        assert!(
            committed > 0,
            "{name}/{}: nothing committed",
            variant["name"]
        );
        let checks = variant["checks"].as_array().expect("checks");
        assert!(
            !checks.is_empty(),
            "{name}/{}: no checks ran",
            variant["name"]
        );
        for c in checks {
            assert_eq!(c["ok"], true, "{name}/{}: {c}", variant["name"]);
        }
    }
    v
}

#[test]
fn daily_limit_ladder_checks_pass() {
    let v = ladder_passes("daily-limit", &["-T", "2", "-c", "8"]);
    let variants = v["ladders"][0]["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 5);
}

#[test]
fn daily_limit_tight_counts_refusals_as_refusals() {
    let v = ladder_passes(
        "daily-limit",
        &[
            "-T",
            "2",
            "-c",
            "4",
            "--variants",
            "select-for-update,update-returning",
            "--param",
            "tight=on",
            "--param",
            "max_amount=5000",
        ],
    );
    for variant in v["ladders"][0]["variants"].as_array().unwrap() {
        let c = &variant["record"]["totals"]["counters"];
        assert!(
            c["goodput"].as_u64() < c["cnt"].as_u64(),
            "refusals expected: {c}"
        );
        assert_eq!(c["other_failures"], 0);
    }
}

#[test]
fn queue_ladder_checks_pass() {
    ladder_passes("queue", &["-T", "2", "-c", "4", "--param", "rate=200"]);
}

#[test]
fn tpcb_hotspot_ladder_checks_pass() {
    ladder_passes("tpcb-hotspot", &["-T", "2", "-c", "4"]);
}

#[test]
fn counters_ladder_checks_pass() {
    ladder_passes("counters", &["-T", "2", "-c", "4"]);
}

#[test]
fn ycsb_ladder_checks_pass() {
    ladder_passes("ycsb", &["-T", "1", "-c", "4", "--param", "records=2000"]);
}
