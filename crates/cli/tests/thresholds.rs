//! `--threshold` against the harness server: a run that crosses one exits 3 with ✔/✘ lines
//! and `thresholds[]` in its JSON, one that meets all exits 0, a latency threshold of a run
//! that committed nothing fails (exit 3), a bad expression is exit 1 naming it before
//! anything runs, and a queue ladder checks per variant and best-vs-baseline.

mod common;

use common::case::{Case, Ran};
use common::*;

/// A script whose every transaction takes ≥ 20 ms.
const SLOW: &str = "\\sleep 20 ms\nselect 1;\n";

#[test]
fn crossed_threshold_exits_3_and_is_stored() {
    let case = Case::new("thr_run", SLOW);
    let Ran {
        out: stdout,
        err: stderr,
        ..
    } = case
        .run("-n -T 2 -c 2 --threshold tps>=1 --threshold p99<5ms --threshold failed=0")
        .expect_code(3);
    assert!(stdout.contains("✔ tps>=1"), "{stdout}");
    assert!(stdout.contains("✘ p99<5ms"), "{stdout}");
    assert!(stdout.contains("✔ failed=0"), "{stdout}");
    assert!(stderr.contains("thresholds crossed"), "{stderr}");
    let v = case.record();
    assert_eq!(v.format, hotbench_results::RESULT_FORMAT);
    let t = &v.thresholds;
    assert_eq!(t.len(), 3);
    assert_eq!(t[1].threshold, "p99<5ms");
    assert!(!t[1].ok);
    assert!(t[1].measured.unwrap() >= 20.0, "{:?}", t[1]);
    // The stored record still reads back as a result (hotbench report/compare accept it).
    let page = case.dir.join("r.html");
    let o = hotbench()
        .arg("report")
        .arg(&case.json)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
}

#[test]
fn met_thresholds_exit_0() {
    let stdout = Case::new("thr_ok", SLOW)
        .run("-n -T 1 -c 2 --threshold p50>=20ms --threshold retries<1%")
        .expect_code(0)
        .out;
    assert!(stdout.contains("✔ p50>=20ms"), "{stdout}");
    assert!(!stdout.contains('✘'), "{stdout}");
}

#[test]
fn latency_threshold_without_a_commit_fails() {
    // Every transaction fails (and the run goes on): nothing committed, so there is no
    // latency to hold under 1 ms — the threshold fails and says why, exit 3.
    let case = Case::new("thr_none", "select 1/0;\n");
    let Ran { out, .. } = case
        .run("-n -t 5 -c 2 --continue-on-error --threshold p99<1ms --threshold mean<1s")
        .expect_code(3);
    assert!(out.contains("✘ p99<1ms"), "{out}");
    assert!(
        out.contains("no transaction committed: 10 other failures"),
        "{out}"
    );
    let t = &case.record().thresholds;
    assert_eq!((t[0].ok, t[0].measured), (false, None), "{t:?}");
    assert!(!t[1].ok, "{t:?}");
}

#[test]
fn bad_threshold_is_exit_1_with_its_text() {
    // No database: the expression is refused before connecting.
    for args in [
        vec!["run", "-T", "1", "--threshold", "p99<<5ms", "nosuchdb"],
        vec![
            "scenario",
            "run",
            "queue",
            "--threshold",
            "tps>=x",
            "nosuchdb",
        ],
        vec!["sweep", "-c", "1,2,4", "--threshold", "p98<1ms", "nosuchdb"],
    ] {
        let o = hotbench().args(&args).output().unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("invalid --threshold \""), "{err}");
    }
    let o = hotbench()
        .args(["scenario", "run", "queue", "--threshold", "nope:tps>1", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("no variant \"nope\""), "{}", text(&o).1);
    let o = hotbench()
        .args(["sweep", "--scenario", "queue", "-c", "1,2,4"])
        .args(["--threshold", "nope:tps>1", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("no variant \"nope\""), "{}", text(&o).1);
    // Thresholds check a benchmark: -i refuses them as it refuses other benchmark options.
    let o = hotbench()
        .args(["run", "-i", "--threshold", "tps>1", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn sweep_checks_every_client_count() {
    let case = Case::new("thr_sweep", SLOW);
    let (script, out) = (case.script.to_str().unwrap(), case.json.to_str().unwrap());
    let args = [
        ["-n", "-T", "1", "-c", "1,2,3", "-f", script, "--json", out].as_slice(),
        &["--threshold", "p50>=20ms", "--threshold", "tps>=100000"],
    ]
    .concat();
    let o = command_on(&case.db, &["sweep"], &args).output().unwrap();
    let stdout = Ran::from(o).expect_code(3).out;
    assert!(stdout.contains("1 client: p50 = "), "{stdout}");
    assert!(stdout.contains("3 clients: tps = "), "{stdout}");
    let v: hotbench_results::SweepDoc = read(&case.json);
    assert_eq!(v.format, hotbench_results::SWEEP_FORMAT);
    let t = &v.thresholds;
    assert_eq!(t.len(), 6, "{t:?}");
    assert_eq!(t.iter().filter(|x| x.ok).count(), 3, "{t:?}");
}

#[test]
fn ladder_thresholds_per_variant_and_best() {
    let db = database("thr_ladder");
    let dir = temp_dir("thr-ladder");
    let out = dir.join("l.json");
    let args = [
        ["--json", out.to_str().unwrap()].as_slice(),
        &["--variants", "for-update,skip-locked", "-T", "2", "-c", "4"],
        &["--param", "rate=200", "--param", "backlog=500"],
        &["--threshold", "skip-locked:jobs/s>=1"],
        &["--threshold", "best:vs_baseline>=0.01"],
        &["--threshold", "checks=pass"],
        &["--threshold", "for-update:p99<0.001ms"],
    ]
    .concat();
    let o = command_on(&db, &["scenario", "run", "queue"], &args)
        .output()
        .unwrap();
    let stdout = Ran::from(o).expect_code(3).out;
    assert!(stdout.contains("✔ skip-locked:jobs/s>=1"), "{stdout}");
    assert!(stdout.contains("best:vs_baseline>=0.01"), "{stdout}");
    assert!(stdout.contains("✘ for-update:p99<0.001ms"), "{stdout}");
    let v: hotbench_results::LadderFile = read(&out);
    assert_eq!(v.format, hotbench_results::LADDER_FORMAT);
    let t = &v.thresholds;
    // checks=pass is checked on both variants.
    assert_eq!(t.len(), 5, "{t:?}");
    assert!(t
        .iter()
        .filter(|x| x.threshold == "checks=pass")
        .all(|x| x.ok));
}
