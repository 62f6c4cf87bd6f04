//! `hotbench scenario` and the built-in scenarios against the harness server: every
//! scenario's ladder runs briefly with all checks passing, a broken fixture scenario is
//! caught, a user's edited copy runs via `--dir`, and manifest errors point at file:line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{command_on, database, hotbench, read, temp_dir, text};
use hotbench_pgserver::ConnInfo;
use hotbench_results::{LadderFile, TxnCounters, VariantResult};

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
fn ladder_passes(name: &str, args: &[&str]) -> LadderFile {
    // A directory of its own per call: several tests run the same scenario at once (the
    // queue's three did, and one read another's JSON under four test threads in CI).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let db = database(&name.replace('-', "_"));
    let dir = temp_dir(&format!("scn-{name}-{call}"));
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
    let v: LadderFile = read(&out_json);
    assert_eq!(v.format, hotbench_results::LADDER_FORMAT);
    let ladder = &v.ladders[0];
    for variant in &ladder.variants {
        if variant.skipped.is_some() {
            continue;
        }
        // Every variant must have ended transactions; a variant whose point is failure
        // (for-share deadlocks) may legitimately commit none in a 2-second run.
        let c = &counters(variant);
        let failed = c.serialization_failures + c.deadlock_failures + c.other_failures;
        assert!(
            c.cnt + failed > 0,
            "{name}/{}: no transaction ended",
            variant.name
        );
        assert!(
            !variant.checks.is_empty(),
            "{name}/{}: no checks ran",
            variant.name
        );
        for c in &variant.checks {
            assert!(c.ok, "{name}/{}: {c:?}", variant.name);
        }
        // The hot-row scenarios' ceiling: every variant that ran is a share of it.
        if ladder.ceiling.is_some() {
            assert!(variant.pct_of_ceiling.is_some(), "{}", variant.name);
        }
    }
    // The ceiling runs after a whole ladder, or when --variants names it.
    let selected = args
        .iter()
        .position(|a| *a == "--variants")
        .map(|i| args[i + 1]);
    let runs_ceiling = selected.is_none_or(|v| v.split(',').any(|x| x == "ceiling"));
    if !runs_ceiling {
        assert!(ladder.ceiling.is_none(), "{name}: unexpected ceiling row");
    }
    if runs_ceiling && ["daily-limit", "tpcb-hotspot", "counters", "ycsb"].contains(&name) {
        let c = ladder.ceiling.as_ref().expect("a ceiling row");
        assert_eq!(c.name, "ceiling", "{name}: no ceiling row");
        for check in &c.checks {
            assert!(check.ok, "{name}/ceiling: {check:?}");
        }
        assert!(stdout.contains("\n% of ceiling: "), "{stdout}");
        assert!(stdout.contains("(not ranked)"), "{stdout}");
    }
    v
}

/// A variant's totals (zero when it did not run).
fn counters(v: &VariantResult) -> TxnCounters {
    v.record
        .as_ref()
        .map(|r| r.totals.counters.clone())
        .unwrap_or_default()
}

#[test]
fn daily_limit_ladder_checks_pass() {
    let v = ladder_passes("daily-limit", &["-T", "2", "-c", "8"]);
    let variants = &v.ladders[0].variants;
    assert_eq!(variants.len(), 6);
    // The manifest's key: every variant's record names the customers it paid from.
    for variant in variants {
        let keys = &variant.record.as_ref().expect("record").hot_keys;
        assert!(!keys.is_empty(), "{}: no hot keys", variant.name);
        assert!(keys.iter().all(|k| k.variable == "customer"), "{keys:?}");
        let value: u64 = keys[0].value.parse().unwrap();
        assert!((1..=4).contains(&value), "{keys:?}");
        // The run's configuration names the scenario and variant it ran.
        let config = &variant.record.as_ref().expect("record").config;
        assert_eq!(config.scenario.as_deref(), Some("daily-limit"));
        assert_eq!(config.variant.as_deref(), Some(variant.name.as_str()));
    }
    let by_name = |n: &str| variants.iter().find(|v| v.name == n).unwrap();
    // FOR SHARE then UPDATE: lock upgrades deadlock, which is what the variant shows.
    let share = counters(by_name("for-share"));
    let deadlocks = share.errors_by_sqlstate.get("40P01").copied().unwrap_or(0);
    assert!(deadlocks > 0, "for-share must deadlock: {share:?}");
    // The single-statement variants commit work.
    for name in [
        "select-for-update",
        "update-returning",
        "procedure",
        "escrow",
        "escrow-per-client",
    ] {
        assert!(counters(by_name(name)).cnt > 0, "{name}");
    }
}

#[test]
fn daily_limit_tight_counts_refusals_as_refusals() {
    let v = ladder_passes(
        "daily-limit",
        &[
            "-T",
            "1",
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
    for variant in &v.ladders[0].variants {
        let c = counters(variant);
        assert!(c.goodput < c.cnt, "refusals expected: {c:?}");
        assert_eq!(c.other_failures, 0);
    }
}

#[test]
fn queue_ladder_checks_pass() {
    ladder_passes(
        "queue",
        &[
            "-T",
            "1",
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
    for variant in &v.ladders[0].variants {
        let name = &variant.name;
        let monitor = |m: &str| {
            variant
                .monitors
                .iter()
                .find(|s| s.name == m)
                .unwrap_or_else(|| panic!("{name}: no monitor {m}"))
                .samples
                .iter()
                .map(|p| p.1)
                .collect::<Vec<f64>>()
        };
        let record = variant.record.as_ref().expect("record");
        // The manifest's [[perturbation]]s: the snapshot held from the start, a consumer
        // killed every second.
        let kills = record
            .perturbations
            .iter()
            .filter(|p| p.spec == "every1s:sql=select kill_a_consumer()")
            .filter(|p| p.detail.as_deref() == Some("returned 1"))
            .count();
        assert!(
            kills >= 1,
            "{name}: no consumer was killed: {:#?}",
            record.perturbations
        );
        assert!(
            record
                .perturbations
                .iter()
                .any(|p| p.spec == "0s:xmin-hold=86400s" && p.error.is_none()),
            "{name}: {:#?}",
            record.perturbations
        );
        let groups = &record.groups;
        let group = |g: &str| &groups.iter().find(|x| x.name == g).unwrap().totals.counters;
        let consumer = group("consumer");
        assert!(
            consumer.connection_failures >= 1,
            "{name}: the killed job's transaction must fail: {consumer:?}"
        );
        assert!(group("bystander").cnt > 0);
        if name == "rotation" {
            // 200 jobs a partition over seconds of consumers: drained ones were truncated.
            let rotator = group("rotator");
            assert!(
                rotator.goodput >= 1,
                "rotation: too few partitions truncated: {rotator:?}"
            );
        }
        // Topped up to the depth: after the first second the queue is never empty.
        let backlog = monitor("backlog");
        assert!(
            backlog.iter().skip(1).all(|b| *b > 0.0),
            "{name}: the queue ran dry: {backlog:?}"
        );
        assert_eq!(variant.work_group.as_deref(), Some("consumer"));
        let per_interval: u64 = variant.work_per_interval.iter().sum();
        assert_eq!(per_interval, consumer.goodput);
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
    ladder_passes("tpcb-hotspot", &["-T", "1", "-c", "4"]);
}

#[test]
fn counters_ladder_checks_pass() {
    ladder_passes("counters", &["-T", "1", "-c", "4"]);
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
        // Every variant of both ladders is perturbed (docs/perturbations.md).
        .args(["--perturb", "500ms:checkpoint"])
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
    let v: LadderFile = read(&dir.join("hotbench-demo.json"));
    let names: Vec<&str> = v.ladders.iter().map(|l| l.scenario.as_str()).collect();
    assert_eq!(names, ["daily-limit", "queue"]);
    for l in &v.ladders {
        for variant in l.variants.iter().filter(|v| v.record.is_some()) {
            let rec = variant.record.as_ref().expect("a record");
            let kinds: Vec<(&str, Option<&str>)> = rec
                .perturbations
                .iter()
                .map(|p| (p.kind.as_str(), p.error.as_deref()))
                .collect();
            assert_eq!(kinds, [("checkpoint", None)], "{}", variant.name);
        }
    }
    assert_eq!(
        stdout.matches("  recovery\n").count(),
        2,
        "each ladder's table ranks the recovery: {stdout}"
    );
}

/// Above scale 1 pgbench's teller is not its branch's: the ladder's balance checks still
/// pass (they compare each branch and teller with the history rows naming it).
#[test]
fn tpcb_hotspot_checks_pass_at_scale_3() {
    ladder_passes(
        "tpcb-hotspot",
        &[
            "-T",
            "1",
            "-c",
            "4",
            "--variants",
            "tpcb,bucketed",
            "--param",
            "scale=3",
        ],
    );
}

/// The queue's NOTIFY variants: producers that notify per job or per batch (as pgqueuer's
/// and procrastinate's triggers do) keep every check; per job their commits queue on the
/// database's notification lock (wait event Lock:object), the lock diagnose names.
#[test]
fn queue_notify_variants_pass_and_per_job_waits_on_the_notify_lock() {
    let v = ladder_passes(
        "queue",
        &[
            "-T",
            "2",
            "-c",
            "4",
            "--variants",
            "skip-locked,notify-per-job,notify-per-batch",
            "--param",
            "depth=0",
            "--param",
            "producers=12",
            "--param",
            "backlog=0",
        ],
    );
    let variants = &v.ladders[0].variants;
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["skip-locked", "notify-per-job", "notify-per-batch"]);
    // Per-job NOTIFY waits on the notification lock, skip-locked does not: judged by the
    // lock's share, not as the top wait (a loaded machine starves the sessions or their
    // clients first: CPU 67%, Client:ClientRead 40% in fresh-clone CI runs).
    let object = |i: usize| {
        variants[i]
            .record
            .as_ref()
            .and_then(|r| r.probe_record())
            .map(|p| {
                p.waits
                    .iter()
                    .filter(|w| w.event == "Lock:object")
                    .map(|w| w.pct)
                    .sum::<f64>()
            })
            .unwrap_or_default()
    };
    assert!(
        object(1) > 0.0 && object(1) > object(0),
        "{} vs {}",
        object(1),
        object(0)
    );
}
