//! `hotbench compare` on real runs against the harness server: a `\sleep` added to the
//! script is "worse" (text and `--json` verdicts), ladder files line up by variant name, and
//! (ignored: slow, load-sensitive) two runs of the same workload are "within noise" in most
//! of 20 pairs.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use hotbench_results::ComparisonDoc;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// A 2-second run of `script` at 2 clients, quarter-second intervals; returns its JSON path.
fn short_run(db: &hotbench_pgserver::ConnInfo, dir: &Path, script: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let o = run(
        db,
        &[
            "-n",
            "-T",
            "2",
            "--interval",
            "250ms",
            "-c",
            "2",
            "-f",
            s(script),
            "--json",
            s(&out),
        ],
    );
    assert!(o.status.success(), "{}", text(&o).1);
    out
}

fn verdict(v: &ComparisonDoc, metric: &str) -> String {
    let m = v
        .metrics
        .iter()
        .find(|m| m.metric == metric)
        .expect("metric present");
    m.cells[1].verdict.clone()
}

#[test]
fn sleep_added_is_worse() {
    let db = database("cmp_sleep");
    let dir = temp_dir("cmp-sleep");
    let fast = write_script(&dir, "fast.sql", "select 1;\n");
    let slow = write_script(&dir, "slow.sql", "\\sleep 20 ms\nselect 1;\n");
    let a = short_run(&db, &dir, &fast, "a.json");
    let b = short_run(&db, &dir, &slow, "b.json");
    let cmp = dir.join("cmp.json");
    let o = hotbench()
        .args(["compare", s(&a), s(&b), "--json", s(&cmp)])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("  tps ") && out.contains("worse"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
    let v: ComparisonDoc = read(&cmp);
    assert_eq!(v.format, hotbench_results::COMPARE_FORMAT);
    assert_eq!(verdict(&v, "tps"), "worse", "{v:?}");
    assert_eq!(verdict(&v, "p50 ms"), "worse", "{v:?}");
    let ci = v.metrics[2].cells[1].ci95.expect("p50 interval");
    assert!(ci[0] >= 20.0, "p50 interval of the slow run: {ci:?}");
}

#[test]
fn ladder_files_line_up_by_variant() {
    let db = database("cmp_ladder");
    let dir = temp_dir("cmp-ladder");
    let ladder = |variants: &str, name: &str| {
        let out = dir.join(name);
        let o = command_on(
            &db,
            &["scenario", "run", "queue"],
            &[
                "--variants",
                variants,
                "-T",
                "2",
                "-c",
                "2",
                "--param",
                "rate=100",
                "--param",
                "backlog=200",
                "--json",
                s(&out),
            ],
        )
        .output()
        .unwrap();
        assert!(o.status.success(), "{}\n{}", text(&o).0, text(&o).1);
        out
    };
    let a = ladder("for-update,skip-locked", "a.json");
    let b = ladder("skip-locked", "b.json");
    let cmp = dir.join("cmp.json");
    let page = dir.join("cmp.html");
    let o = hotbench()
        .args(["compare", s(&a), s(&b), "--json", s(&cmp), "-o", s(&page)])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("== queue / skip-locked =="), "{out}");
    assert!(
        out.contains("not in every file (not compared): queue/for-update"),
        "{out}"
    );
    let v: hotbench_results::LadderComparisonDoc = read(&cmp);
    assert_eq!(v.format, hotbench_results::COMPARE_FORMAT);
    assert_eq!(v.variants.len(), 1);
    assert_eq!(v.variants[0].variant, "skip-locked");
    assert_eq!(v.missing, ["queue/for-update"]);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("queue / skip-locked"));
}

#[test]
#[ignore = "slow (40 runs) and sensitive to machine load: run with --ignored on a quiet machine"]
fn same_workload_is_within_noise_in_most_of_20_pairs() {
    let db = database("cmp_same");
    let dir = temp_dir("cmp-same");
    let script = write_script(&dir, "w.sql", "select 1;\n");
    let mut noise = 0;
    for i in 0..20 {
        let a = short_run(&db, &dir, &script, &format!("a{i}.json"));
        let b = short_run(&db, &dir, &script, &format!("b{i}.json"));
        let cmp = dir.join(format!("c{i}.json"));
        let o = hotbench()
            .args(["compare", s(&a), s(&b), "--json", s(&cmp)])
            .output()
            .unwrap();
        assert!(o.status.success());
        if verdict(&read(&cmp), "tps") == "within noise" {
            noise += 1;
        }
    }
    eprintln!("within noise in {noise} of 20 pairs");
    assert!(noise > 10, "within noise in only {noise} of 20 pairs");
}
