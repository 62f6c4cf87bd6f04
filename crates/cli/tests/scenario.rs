//! `hotbench scenario` and the built-in scenarios against the harness server: every
//! scenario's ladder runs briefly with all checks passing, a broken fixture scenario is
//! caught, a user's edited copy runs via `--dir`, and manifest errors point at file:line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{command_on, database, hotbench, json, temp_dir, text};
use hotbench_pgserver::ConnInfo;

/// `hotbench scenario run NAME` against `db`, with `args`.
fn scenario_run(db: &ConnInfo, name: &str, args: &[&str]) -> Output {
    command_on(db, &["scenario", "run", name], args)
        .output()
        .expect("run hotbench")
}

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
        // Every variant must have ended transactions; a variant whose point is failure
        // (for-share deadlocks) may legitimately commit none in a 2-second run.
        let counters = &variant["record"]["totals"]["counters"];
        let committed = counters["cnt"].as_u64().unwrap_or(0);
        let failed = [
            "serialization_failures",
            "deadlock_failures",
            "other_failures",
        ]
        .iter()
        .map(|k| counters[*k].as_u64().unwrap_or(0))
        .sum::<u64>();
        assert!(
            committed + failed > 0,
            "{name}/{}: no transaction ended",
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
        // The hot-row scenarios' ceiling: every variant that ran is a share of it.
        if ladder["ceiling"].is_object() {
            assert!(variant["pct_of_ceiling"].as_f64().is_some(), "{variant}");
        }
    }
    // The ceiling runs after a whole ladder, or when --variants names it.
    let selected = args
        .iter()
        .position(|a| *a == "--variants")
        .map(|i| args[i + 1]);
    let runs_ceiling = selected.is_none_or(|v| v.split(',').any(|x| x == "ceiling"));
    if !runs_ceiling {
        assert!(
            ladder["ceiling"].is_null(),
            "{name}: unexpected ceiling row"
        );
    }
    if runs_ceiling && ["daily-limit", "tpcb-hotspot", "counters", "ycsb"].contains(&name) {
        let c = &ladder["ceiling"];
        assert_eq!(c["name"], "ceiling", "{name}: no ceiling row");
        for check in c["checks"].as_array().expect("ceiling checks") {
            assert_eq!(check["ok"], true, "{name}/ceiling: {check}");
        }
        assert!(stdout.contains("\n% of ceiling: "), "{stdout}");
        assert!(stdout.contains("(not ranked)"), "{stdout}");
    }
    v
}

#[test]
fn daily_limit_ladder_checks_pass() {
    let v = ladder_passes("daily-limit", &["-T", "2", "-c", "8"]);
    let variants = v["ladders"][0]["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 6);
    // The manifest's key: every variant's record names the customers it paid from.
    for variant in variants {
        let keys = variant["record"]["hot_keys"].as_array().expect("hot_keys");
        assert!(!keys.is_empty(), "{}: no hot keys", variant["name"]);
        assert!(keys.iter().all(|k| k["variable"] == "customer"), "{keys:?}");
        let value: u64 = keys[0]["value"].as_str().unwrap().parse().unwrap();
        assert!((1..=4).contains(&value), "{keys:?}");
    }
    // FOR SHARE then UPDATE: lock upgrades deadlock, which is what the variant shows.
    let share = variants.iter().find(|v| v["name"] == "for-share").unwrap();
    let deadlocks = share["record"]["totals"]["counters"]["errors_by_sqlstate"]["40P01"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        deadlocks > 0,
        "for-share must deadlock: {}",
        share["record"]["totals"]
    );
    // The single-statement variants commit work.
    for name in [
        "select-for-update",
        "update-returning",
        "procedure",
        "escrow",
        "escrow-per-client",
    ] {
        let v = variants.iter().find(|v| v["name"] == name).unwrap();
        assert!(
            v["record"]["totals"]["counters"]["cnt"]
                .as_u64()
                .unwrap_or(0)
                > 0,
            "{name}"
        );
    }
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
            "select-for-update,update-returning,escrow-per-client,ceiling",
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
    ladder_passes(
        "queue",
        &[
            "-T",
            "2",
            "-c",
            "4",
            "--param",
            "rate=200",
            "--param",
            "backlog=500",
            "--param",
            "xmin_holder=on",
        ],
    );
}

/// Issue 12: at a target depth the queue never runs dry; killing a consumer's backend in
/// the middle of a job loses nothing and does nothing twice (every check passes), also
/// while the rotation variant truncates drained partitions under an old snapshot; and a
/// bystander group runs beside it, listed apart.
#[test]
fn queue_at_depth_survives_killed_consumers_with_a_bystander() {
    let v = ladder_passes(
        "queue",
        &[
            "-T",
            "4",
            "-c",
            "4",
            "--variants",
            "skip-locked,watermark,rotation",
            "--param",
            "xmin_holder=on",
            "--param",
            "rotate_jobs=200",
            "--param",
            "depth=300",
            "--param",
            "backlog=0",
            "--param",
            "kill_consumer=on",
            "--param",
            "bystanders=1",
            "--param",
            "bystander_rate=50",
            "--param",
            "sweep_s=1",
        ],
    );
    for variant in v["ladders"][0]["variants"].as_array().unwrap() {
        let name = &variant["name"];
        let monitor = |m: &str| {
            variant["monitors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == m)
                .unwrap_or_else(|| panic!("{name}: no monitor {m}"))["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[1].as_f64().unwrap())
                .collect::<Vec<f64>>()
        };
        let killed: f64 = monitor("consumers killed").iter().sum();
        assert!(killed >= 1.0, "{name}: no consumer was killed");
        let groups = variant["record"]["groups"].as_array().unwrap();
        let group = |g: &str| groups.iter().find(|x| x["name"] == g).unwrap();
        let consumer = &group("consumer")["totals"]["counters"];
        assert!(
            consumer["connection_failures"].as_u64().unwrap_or(0) >= 1,
            "{name}: the killed job's transaction must fail: {consumer}"
        );
        assert!(group("bystander")["totals"]["counters"]["cnt"].as_u64() > Some(0));
        if name == "rotation" {
            // 200 jobs a partition over seconds of consumers: drained ones were truncated.
            let rotator = &group("rotator")["totals"]["counters"];
            assert!(
                rotator["goodput"].as_u64() >= Some(1),
                "rotation: too few partitions truncated: {rotator}"
            );
        }
        // Topped up to the depth: after the first second the queue is never empty.
        let backlog = monitor("backlog");
        assert!(
            backlog.iter().skip(1).all(|b| *b > 0.0),
            "{name}: the queue ran dry: {backlog:?}"
        );
        assert_eq!(variant["work_group"], "consumer");
        let per_interval: u64 = variant["work_per_interval"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_u64().unwrap())
            .sum();
        assert_eq!(Some(per_interval), consumer["goodput"].as_u64());
    }
}

/// Issue 12: ladders print live progress lines (work/s in the scenario's unit, the work
/// group's p99, monitors, time left) unless --quiet.
#[test]
fn ladder_progress_lines_unless_quiet() {
    let db = database("progress");
    let args = [
        "-T",
        "3",
        "-c",
        "2",
        "--variants",
        "skip-locked",
        "--probe",
        "off",
    ];
    let o = scenario_run(&db, "queue", &args);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("  skip-locked ") && l.contains(" left"))
        .collect();
    assert!(lines.len() >= 2, "progress lines expected:\n{stderr}");
    assert!(
        lines[0].contains("jobs/s, p99 ") && lines[0].contains("backlog "),
        "{stderr}"
    );
    let mut quiet = args.to_vec();
    quiet.push("--quiet");
    let o = scenario_run(&db, "queue", &quiet);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        !stderr.contains(" left"),
        "--quiet still printed progress:\n{stderr}"
    );
    assert!(stderr.contains("jobs/s (consumer)"), "{stderr}");
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

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

#[test]
fn user_directory_runs_without_recompiling() {
    let db = database("userdir");
    let root = temp_dir("scn-userdir");
    let mine = root.join("daily-limit");
    let _ = std::fs::remove_dir_all(&mine);
    copy_dir(&repo_path("scenarios/daily-limit"), &mine);
    let checks = std::fs::read_to_string(mine.join("checks.sql")).unwrap();
    std::fs::write(
        mine.join("checks.sql"),
        format!("{checks}\nselect 'edited by the user' as name, true as ok, '' as detail;\n"),
    )
    .unwrap();
    let d = mine.to_string_lossy().into_owned();
    let o = scenario_run(
        &db,
        "daily-limit",
        &[
            "--dir",
            &d,
            "--variants",
            "update-returning",
            "-T",
            "1",
            "-c",
            "2",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("✔ 4/4"), "{stdout}");

    // A broken statement is named with its file, line and the server's message.
    std::fs::write(
        mine.join("schema.sql"),
        "create table daily_limit (x int);\n\ncreate tabel oops (x int);\n",
    )
    .unwrap();
    let o = scenario_run(&db, "daily-limit", &["--dir", &d, "-T", "1", "-c", "2"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("daily-limit/schema.sql:3: statement failed: ERROR:  syntax error"),
        "{stderr}"
    );
    assert!(stderr.contains("create tabel oops"), "{stderr}");
}

#[test]
fn list_show_and_input_errors() {
    let o = hotbench().args(["scenario", "list"]).output().unwrap();
    let (stdout, _) = text(&o);
    for name in ["counters", "daily-limit", "queue", "tpcb-hotspot", "ycsb"] {
        assert!(stdout.contains(name), "{stdout}");
    }
    let o = hotbench()
        .args(["scenario", "show", "queue"])
        .output()
        .unwrap();
    let (stdout, _) = text(&o);
    assert!(
        stdout.contains("skip-locked-batch") && stdout.contains("xmin_holder"),
        "{stdout}"
    );

    let db = database("scn_input");
    let o = scenario_run(&db, "nope", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("unknown scenario \"nope\""));
    let o = scenario_run(&db, "queue", &["--param", "colour=red"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("unknown parameter \"colour\""),
        "{}",
        text(&o).1
    );
    let o = scenario_run(&db, "queue", &["--variants", "fastest"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("has no variant \"fastest\""));
}

#[test]
fn demo_writes_both_ladders() {
    let db = database("demo");
    let dir = temp_dir("scn-demo");
    let mut cmd = hotbench();
    cmd.current_dir(&dir)
        .args(["demo", "-T", "1", "-c", "4", "--html", "x.html"])
        .arg("-h")
        .arg(&db.socket_dir)
        .arg("-p")
        .arg(db.port.to_string())
        .arg("-U")
        .arg(&db.user)
        .arg(&db.dbname);
    let o = cmd.output().unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("report written to x.html"), "{stdout}");
    let html = std::fs::read_to_string(dir.join("x.html")).unwrap();
    assert!(html.contains("daily-limit") && html.contains("queue"));
    let v = json(&dir.join("hotbench-demo.json"));
    let names: Vec<&str> = v["ladders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["daily-limit", "queue"]);
}
