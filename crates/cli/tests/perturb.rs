//! `--perturb` against a real server (docs/perturbations.md): a DDL lock held makes the
//! goodput dip and it recovers in a finite time; terminating every client backend is counted
//! (57P01, reconnects) and the run goes on; the other kinds are recorded, a failing one says
//! why, one due after the end says it did not run; bad specs are usage errors.

mod common;

use common::case::Case;
use common::*;
use hotbench_stats::PerturbationRecord;

/// A small table `acct` and a script that reads it (an ACCESS EXCLUSIVE lock stops it). The
/// runs that judge a recovery are throttled (`-R`) well below what a busy CI machine does, so
/// the baseline is the rate asked for, not the machine's noise; they leave several seconds
/// before the perturbation (a baseline of 3 s) and after it.
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
    let ran = case
        .run(
            "-n -c 4 -R 400 -T 10 --interval 100ms --perturb 3s:ddl-lock=acct,1s \
             --threshold ttr90<30s --threshold lost<1000000",
        )
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
    assert!(w.lock_waiting_max >= 4, "every client queued: {w:#?}");
    assert_eq!(v.thresholds.len(), 2, "{:?}", v.thresholds);
    assert!(v.thresholds.iter().all(|t| t.ok), "{:?}", v.thresholds);
}

#[test]
fn terminate_all_is_counted_and_the_run_goes_on() {
    let case = acct_case("pt_term");
    let ran = case
        .run("-n -c 3 -R 400 -T 9 --interval 100ms --perturb 3s:terminate-all")
        .expect_code(0);
    let v = case.record();
    let p = only(&v.perturbations, "terminate-all");
    assert_eq!(p.error, None, "{p:#?}");
    assert_eq!(p.detail.as_deref(), Some("terminated 3 backends"), "{p:#?}");
    let c = &v.totals.counters;
    assert_eq!(
        c.reconnects, 3,
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
    let ladder: hotbench_stats::LadderFile = read(&out);
    let v = &ladder.ladders[0].variants[0];
    assert!(v.checks.iter().all(|c| c.ok), "{:?}", v.checks);
    let rec = v.record.as_ref().expect("the variant's record");
    let p = only(&rec.perturbations, "ddl-lock");
    assert_eq!(p.error, None, "{p:#?}");
    assert!(p.end_s.is_some_and(|e| e - p.at_s >= 0.3), "{p:#?}");
    // --recovery-hold reaches a ladder's variants too.
    assert_eq!(p.rule.hold_s, 0.5, "{p:#?}");
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
