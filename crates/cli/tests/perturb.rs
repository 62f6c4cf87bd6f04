//! `--perturb` against a real server (docs/perturbations.md): a DDL lock held makes the
//! goodput dip and it recovers in a finite time; terminating every client backend is counted
//! (57P01, reconnects, in the window's errors) and the run goes on; the other kinds are
//! recorded, a failing one says why, one due after the end says it did not run; a queue's
//! backlog drain is timed; bad specs are usage errors.

mod common;

use common::case::Case;
use common::*;
use hotbench_results::PerturbationRecord;

/// A small table `acct` and a script that reads it (an ACCESS EXCLUSIVE lock stops it). The
/// runs that judge a recovery are throttled (`-R`) well below what a busy CI machine does, so
/// the baseline is the rate asked for, not the machine's noise; they leave several seconds
/// before the perturbation (a baseline of 3 s) and after it. The rate is 1000/s: the arrivals
/// are Poisson, and a 3 s baseline against a 2 s hold after the perturbation differ by ±2.9%
/// there (±6.4% at 200/s), so the hold's 90% line is about 3.5 sigma below the noise.
fn acct_case(tag: &str) -> Case {
    let case = Case::new(
        tag,
        "select v from acct where id = 1 + :client_id % 10;\nselect pg_sleep(0.002);\n",
    );
    psql(
        &case.db,
        "create table acct(id int primary key, v int); \
         insert into acct select g, 0 from generate_series(1, 10) g;",
    );
    case
}

fn only(entries: &[PerturbationRecord], kind: &str) -> PerturbationRecord {
    let found: Vec<_> = entries.iter().filter(|p| p.kind == kind).collect();
    assert_eq!(found.len(), 1, "one {kind}: {entries:#?}");
    found[0].clone()
}

#[test]
fn a_ddl_lock_dips_the_goodput_and_the_recovery_is_timed() {
    let case = acct_case("pt_ddl");
    let html = case.dir.join("ddl.html");
    let ran = case
        .run(&format!(
            "-n -c 8 -R 1000 -T 10 --interval 100ms --perturb 3s:ddl-lock=acct,1s \
             --threshold ttr90<30s --threshold lost<1000000 --html {}",
            html.display()
        ))
        .expect_code(0);
    for l in ran.out.lines().filter(|l| l.starts_with("perturbation")) {
        eprintln!("{l}");
    }
    let v = case.record();
    assert_eq!(
        v.config
            .settings
            .perturb
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>(),
        ["3s:ddl-lock=acct,1s"]
    );
    let p = only(&v.perturbations, "ddl-lock");
    assert_eq!(p.error, None, "{p:#?}");
    assert!((2.9..3.5).contains(&p.at_s), "{p:#?}");
    assert!(
        p.end_s.is_some_and(|e| e - p.at_s >= 1.0),
        "held 1 s: {p:#?}"
    );
    let b = p.baseline_per_s.unwrap_or(0.0);
    assert!(b > 0.0, "{p:#?}");
    assert!(
        p.dip_per_s.is_some_and(|d| d < 0.25 * b),
        "nothing commits while the lock is held: {p:#?}"
    );
    assert!(
        p.lost.is_some_and(|l| l > 0.5 * b),
        "about a second's work lost: {p:#?}"
    );
    let ttr = p.ttr90_s.unwrap_or(f64::NAN);
    assert!(
        (1.0..5.0).contains(&ttr),
        "TTR90 finite and after the lock: {p:#?}\n{}",
        ran.out
    );
    assert!(
        ran.out.contains("perturbation 3s:ddl-lock=acct,1s at ") && ran.out.contains("TTR90 "),
        "{}",
        ran.out
    );
    // The probes (on by default) saw the queue behind the lock in its window.
    let w = p.server.as_ref().expect("the probes' view of the window");
    assert_eq!(
        w.top_waits.first().map(|t| t.event.as_str()),
        Some("Lock:relation"),
        "{w:#?}"
    );
    assert!(w.lock_waiting_max >= 8, "every client queued: {w:#?}");
    assert_eq!(v.thresholds.len(), 2, "{:?}", v.thresholds);
    assert!(v.thresholds.iter().all(|t| t.ok), "{:?}", v.thresholds);
    // The clients' side: the queue behind the lock is in the window's latency (under -R,
    // from each transaction's scheduled start), not in the rest of the run's.
    let (inside, outside) = (
        p.inside.clone().unwrap_or_default(),
        p.outside.clone().unwrap_or_default(),
    );
    let (p99_in, p99_out) = (
        inside.p99_ms.unwrap_or(0.0),
        outside.p99_ms.unwrap_or(f64::MAX),
    );
    assert!(
        p99_in > 300.0 && p99_in > 2.0 * p99_out,
        "{inside:#?}\n{outside:#?}"
    );
    assert!(
        inside.committed > 0 && outside.committed > inside.committed,
        "{inside:#?}"
    );
    assert!(ran.out.contains("; in the window p50/p99 "), "{}", ran.out);
    // The HTML shades the lock on the timeline charts and marks its recovery.
    let page = std::fs::read_to_string(&html).unwrap_or_default();
    assert!(
        page.contains("\"bands\":[{\"from\":") && page.contains("ddl-lock TTR90"),
        "no shading"
    );
}

#[test]
fn terminate_all_is_counted_and_the_run_goes_on() {
    let case = acct_case("pt_term");
    let ran = case
        .run(
            "-n -c 6 -R 1000 -T 9 --interval 100ms --perturb 3s:terminate-all \
             --threshold ttr90<1ms --threshold lost<1000000",
        )
        .expect_code(3);
    let v = case.record();
    // The recovery gates CI: no TTR90 is under one interval (exit 3), the work lost is.
    let gates: Vec<(&str, bool)> = v
        .thresholds
        .iter()
        .map(|t| (t.threshold.as_str(), t.ok))
        .collect();
    assert_eq!(
        gates,
        [("ttr90<1ms", false), ("lost<1000000", true)],
        "{:?}",
        v.thresholds
    );
    let p = only(&v.perturbations, "terminate-all");
    assert_eq!(p.error, None, "{p:#?}");
    assert_eq!(p.detail.as_deref(), Some("terminated 6 backends"), "{p:#?}");
    let c = &v.totals.counters;
    assert_eq!(
        c.reconnects, 6,
        "every client reconnects once:\n{}",
        ran.out
    );
    assert!(
        p.reconnects >= 1,
        "the reconnects fall in its window: {p:#?}"
    );
    assert!(
        c.errors_by_sqlstate.get("57P01").is_some_and(|n| *n >= 1),
        "{:?}",
        c.errors_by_sqlstate
    );
    assert!(p.ttr90_s.is_some(), "recovered: {p:#?}\n{}", ran.out);
    // The terminations' errors are the window's, not the rest of the run's.
    let inside = p.inside.clone().unwrap_or_default();
    assert!(
        inside
            .errors_by_sqlstate
            .get("57P01")
            .is_some_and(|n| *n >= 1),
        "{inside:#?}"
    );
    let outside = p.outside.clone().unwrap_or_default();
    assert_eq!(
        outside.errors_by_sqlstate.get("57P01"),
        None,
        "{outside:#?}"
    );
}

/// Backends named by the user's own `application_name` may be anybody's of that name: the
/// run's are not told apart, so `terminate` refuses rather than kill somebody else's.
#[test]
fn terminate_refuses_when_the_application_name_is_not_the_runs_own() {
    let case = acct_case("pt_appname");
    let o = case
        .command("-n -c 2 -T 2 --perturb 1s:terminate-all")
        .env("PGAPPNAME", "payments")
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let v = case.record();
    let p = only(&v.perturbations, "terminate-all");
    assert!(
        p.error
            .as_deref()
            .is_some_and(|e| e.starts_with("not run: the connection options set application_name")),
        "{p:#?}"
    );
    assert_eq!(v.totals.counters.reconnects, 0, "nobody was terminated");
}

#[test]
fn other_kinds_are_recorded_and_failures_say_why() {
    let case = acct_case("pt_kinds");
    let filenode = psql(&case.db, "select pg_relation_filenode('acct')");
    let ran = case
        .run(
            "-n -c 2 -T 3 --interval 100ms --perturb 1s:checkpoint --perturb every1s:analyze=acct \
             --perturb 1s:vacuum=acct --perturb 1200ms:xmin-hold=300ms \
             --perturb 1s:ddl-lock=nosuch,1s --perturb 100s:vacuum \
             --perturb 1s:vacuum-full=acct --perturb 1200ms:long-read=acct,300ms",
        )
        .expect_code(0);
    let v = case.record();
    // every1s fires at 1 s and 2 s (at 3 s too if the run has not ended by then).
    let every: Vec<_> = v
        .perturbations
        .iter()
        .filter(|p| p.spec == "every1s:analyze=acct")
        .collect();
    assert!(
        (2..=3).contains(&every.len()) && v.perturbations.len() == 7 + every.len(),
        "{:#?}",
        v.perturbations
    );
    for (k, p) in every.iter().take(2).enumerate() {
        let due = (k + 1) as f64;
        assert!(
            (due..due + 0.5).contains(&p.at_s) && p.error.is_none(),
            "{p:#?}"
        );
    }
    for kind in ["checkpoint", "xmin-hold", "vacuum-full", "long-read"] {
        let p = only(&v.perturbations, kind);
        assert_eq!(p.error, None, "{p:#?}");
        assert!(p.at_s >= 1.0 && p.baseline_per_s.is_some(), "{p:#?}");
    }
    let x = only(&v.perturbations, "xmin-hold");
    assert!(x.end_s.is_some_and(|e| e - x.at_s >= 0.3), "{x:#?}");
    let scans = only(&v.perturbations, "long-read");
    assert!(
        scans
            .detail
            .as_deref()
            .is_some_and(|d| d.ends_with(" scans")),
        "{scans:#?}"
    );
    let missing = only(&v.perturbations, "ddl-lock");
    assert!(
        missing
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("42P01: ")),
        "{missing:#?}"
    );
    assert_eq!(missing.ttr90_s, None);
    let late: Vec<_> = v
        .perturbations
        .iter()
        .filter(|p| p.spec == "100s:vacuum")
        .collect();
    assert!(
        late[0]
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("not run: the run ended")),
        "{late:#?}"
    );
    assert!(
        ran.out.contains("perturbation 1s:ddl-lock=nosuch,1s at "),
        "{}",
        ran.out
    );
    // Each did what it says to the server: the table rewritten by VACUUM FULL, vacuumed and
    // analyzed, a checkpoint begun during the run (the probes' count, server-wide).
    assert_ne!(
        psql(&case.db, "select pg_relation_filenode('acct')"),
        filenode,
        "VACUUM FULL rewrote the table"
    );
    let counts = psql(
        &case.db,
        "select vacuum_count > 0, analyze_count > 0 from pg_stat_user_tables \
         where relid = 'acct'::regclass",
    );
    assert_eq!(counts.trim(), "t|t", "vacuumed and analyzed");
    let checkpoints = v.probes.as_ref().and_then(|p| p.server.checkpoints);
    assert!(checkpoints.is_some_and(|n| n >= 1), "{checkpoints:?}");
}

/// A ladder's variant runs its perturbations too, on the scenario's schema (the table is
/// found on the clients' `search_path`), and its checks still pass.
#[test]
fn a_scenario_variant_is_perturbed_on_its_own_schema() {
    let db = database("pt_scn");
    let dir = temp_dir("pt_scn");
    let out = dir.join("ladder.json");
    let o = command_on(
        &db,
        &["scenario", "run", "counters"],
        &[
            "--variants",
            "direct",
            "-T",
            "3",
            "-c",
            "2",
            "--probe",
            "off",
            "--interval",
            "100ms",
            "--perturb",
            "1s:ddl-lock=post,300ms",
            "--recovery-hold",
            "500ms",
            "--json",
            &out.to_string_lossy(),
        ],
    )
    .output()
    .expect("run hotbench");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let ladder: hotbench_results::LadderFile = read(&out);
    let v = &ladder.ladders[0].variants[0];
    assert!(v.checks.iter().all(|c| c.ok), "{:?}", v.checks);
    let rec = v.record.as_ref().expect("the variant's record");
    let p = only(&rec.perturbations, "ddl-lock");
    assert_eq!(p.error, None, "{p:#?}");
    assert!(p.end_s.is_some_and(|e| e - p.at_s >= 0.3), "{p:#?}");
    // --recovery-hold reaches a ladder's variants too.
    assert_eq!(p.rule.hold_s, 0.5, "{p:#?}");
}

/// A queue whose consumers wait behind a lock while its producers go on: its backlog grows,
/// and its drain after the lock is timed from the scenario's backlog monitor.
#[test]
fn a_queue_backlog_drain_is_timed_after_its_consumers_were_held_up() {
    let db = database("pt_queue");
    let dir = temp_dir("pt_queue");
    let out = dir.join("ladder.json");
    let o = command_on(
        &db,
        &["scenario", "run", "queue"],
        &[
            "--variants",
            "skip-locked",
            "-T",
            "8",
            "-c",
            "4",
            "--param",
            "mode=steady",
            "--param",
            "rate=200",
            "--probe",
            "off",
            "--interval",
            "200ms",
            "--perturb",
            "3s:ddl-lock=job_done,1s",
            "--json",
            &out.to_string_lossy(),
        ],
    )
    .output()
    .expect("run hotbench");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let ladder: hotbench_results::LadderFile = read(&out);
    let v = &ladder.ladders[0].variants[0];
    assert!(
        v.checks.iter().all(|c| c.ok),
        "nothing lost, nothing doubled: {:?}",
        v.checks
    );
    let rec = v.record.as_ref().expect("the variant's record");
    let p = only(&rec.perturbations, "ddl-lock");
    assert_eq!(p.error, None, "{p:#?}");
    let b = p.backlog.clone().expect("the backlog's drain");
    assert_eq!(b.monitor, "backlog");
    // About a second of the producers' 200 jobs/s queued behind the lock, then drained.
    assert!(b.peak > b.before + 50.0, "{b:#?}");
    assert!(
        b.drained_s.is_some_and(|t| (1.0..6.0).contains(&t)),
        "{b:#?}\n{stdout}"
    );
}

#[test]
fn bad_perturbations_are_usage_errors_and_ladders_take_the_flag() {
    let db = database("pt_usage");
    for (spec, msg) in [
        ("2s:explode", "unknown kind \"explode\" (kinds: checkpoint"),
        ("2s:ddl-lock=acct", "ddl-lock needs =TABLE,DURATION"),
        ("soon:checkpoint", "invalid --perturb \"soon:checkpoint\""),
    ] {
        let o = run(&db, &["-T", "1", "--perturb", spec]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{spec}: {err}");
        assert!(err.contains(msg), "{spec}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    let o = hotbench()
        .args(["scenario", "run", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("--perturb"));
}

/// A result file of a run perturbed at 3 s whose goodput was back `ttr` s later (`None`: not
/// recovered), on a timeline of 100 ms intervals.
fn perturbed_file(dir: &std::path::Path, name: &str, ttr: Option<f64>) -> String {
    let mut rec = hotbench_results::testdata::record("s.sql", 1.0e9, 10, 1000, 2.0);
    rec.timeline = (1..=100)
        .map(|i| hotbench_results::IntervalRecord {
            t: i as f64 * 0.1,
            totals: hotbench_results::IntervalStats {
                goodput_per_s: 100.0,
                ..Default::default()
            },
            groups: vec![],
        })
        .collect();
    let mut p = PerturbationRecord::new("3s:ddl-lock=t,1s".into(), "ddl-lock", "t,1s".into(), 3.0);
    p.baseline_per_s = Some(100.0);
    p.ttr90_s = ttr;
    p.ttr99_s = ttr;
    rec.perturbations = vec![p];
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&rec).expect("json")).expect("write");
    path.to_string_lossy().into_owned()
}

#[test]
fn compare_lines_up_times_to_recover_with_their_uncertainty() {
    let dir = temp_dir("pt_compare");
    let _ = std::fs::create_dir_all(&dir);
    let a: Vec<String> = [1.0, 1.1, 1.05]
        .iter()
        .enumerate()
        .map(|(i, t)| perturbed_file(&dir, &format!("a{i}.json"), Some(*t)))
        .collect();
    let b: Vec<String> = [2.0, 2.2, 2.1]
        .iter()
        .enumerate()
        .map(|(i, t)| perturbed_file(&dir, &format!("b{i}.json"), Some(*t)))
        .collect();
    let json = dir.join("cmp.json");
    let mut args: Vec<&str> = vec!["compare"];
    args.extend(a.iter().chain(&b).map(String::as_str));
    args.extend([
        "--repeats",
        "3",
        "--json",
        json.to_str().unwrap_or_default(),
    ]);
    let o = hotbench().args(&args).output().expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("time to recover, s"), "{out}");
    assert!(out.contains("D–F 2.10 ±0.10 sd 0.10 CI "), "{out}");
    let doc: serde_json::Value = read(&json);
    let cell = &doc["ttr"][0]["cells"][1];
    assert_eq!(doc["ttr"][0]["perturbation"], "3s:ddl-lock=t,1s");
    assert_eq!(
        (cell["side"].as_str(), cell["verdict"].as_str()),
        (Some("D–F"), Some("worse"))
    );
    assert!(cell["p"].as_f64().is_some_and(|p| p < 0.05), "{cell}");
    // Each file its own side: one firing each, judged against the resolution.
    let o = hotbench()
        .args(["compare", &a[0], &a[1]])
        .output()
        .expect("run hotbench");
    let (out, _) = text(&o);
    assert!(
        out.contains("B   1.10 ±0.10 (1/1 recovered): within resolution, +0.10 s"),
        "{out}"
    );
    // Files that are not whole sides are a usage error.
    let o = hotbench()
        .args(["compare", &a[0], &a[1], &b[0], "--repeats", "2"])
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("--repeats 2: 3 files are not sides of 2 runs each"),
        "{err}"
    );
}

/// `--prometheus` with `--perturb`: the recovery is judged while the run goes on and served.
#[test]
fn prometheus_serves_each_perturbations_recovery_while_the_run_goes_on() {
    use std::io::{BufRead, BufReader, Read, Write};
    let case = acct_case("pt_prom");
    let mut child = case
        .command(
            "-n -c 4 -R 1000 -T 12 --interval 100ms --perturb 2s:checkpoint --prometheus 127.0.0.1:0",
        )
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run hotbench");
    let stderr = child.stderr.take().expect("stderr piped");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the prometheus line")
            .expect("read stderr");
        if let Some(rest) = line.strip_prefix("prometheus metrics at http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    let scrape = || {
        let Ok(mut conn) = std::net::TcpStream::connect(&addr) else {
            return String::new();
        };
        let _ = write!(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut body = String::new();
        let _ = conn.read_to_string(&mut body);
        body
    };
    let mut body = String::new();
    wait_until(
        "a scrape with the checkpoint's TTR90",
        std::time::Duration::from_secs(30),
        || {
            body = scrape();
            body.contains(
                "hotbench_perturbation_ttr90_seconds{perturbation=\"2s:checkpoint\",at=\"2.000\"}",
            )
        },
    );
    assert!(
        body.contains(
            "hotbench_perturbation_recovered{perturbation=\"2s:checkpoint\",at=\"2.000\"} 1.0"
        ),
        "{body}"
    );
    assert!(
        body.contains("hotbench_perturbation_baseline_per_second{"),
        "{body}"
    );
    let out = child.wait_with_output().expect("the run ends");
    assert!(out.status.success());
}
