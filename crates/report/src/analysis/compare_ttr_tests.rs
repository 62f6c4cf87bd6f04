//! TTRs compared: single runs against the resolution, repeats against their spread, and
//! firings that did not recover.

use super::*;
use hotbench_results::IntervalRecord;

/// A run with a timeline of `dt`-second intervals and one judged firing of `spec` per TTR90
/// given (`None`: not recovered).
fn run(dt: f64, spec: &str, ttrs: &[Option<f64>]) -> RunRecord {
    RunRecord {
        timeline: (1..=100)
            .map(|i| IntervalRecord {
                t: i as f64 * dt,
                ..Default::default()
            })
            .collect(),
        perturbations: ttrs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut p =
                    PerturbationRecord::new(spec.into(), "ddl-lock", String::new(), 3.0 + i as f64);
                p.baseline_per_s = Some(100.0);
                p.ttr90_s = *t;
                p.ttr99_s = t.map(|t| t + 0.5);
                p
            })
            .collect(),
        ..Default::default()
    }
}

fn named(runs: Vec<RunRecord>) -> Vec<(String, RunRecord)> {
    runs.into_iter()
        .enumerate()
        .map(|(i, r)| (format!("r{i}.json"), r))
        .collect()
}

const SPEC: &str = "3s:ddl-lock=acct,1s";

#[test]
fn single_runs_differ_only_beyond_their_resolution() {
    let rows = compare_ttr(
        &named(vec![
            run(0.1, SPEC, &[Some(1.3)]),
            run(0.1, SPEC, &[Some(2.4)]),
            run(0.1, SPEC, &[Some(1.45)]),
            run(1.0, SPEC, &[Some(2.0)]),
        ]),
        1,
    );
    assert_eq!(rows.len(), 2, "TTR90 and TTR99");
    let r = &rows[0];
    assert_eq!((r.perturbation.as_str(), r.level), (SPEC, "TTR90"));
    let v: Vec<&str> = r.cells.iter().map(|c| c.verdict).collect();
    // 1.1 s worse at 100 ms; 0.15 s is within 0.1 + 0.1 s; 0.7 s within 0.1 + 1 s.
    assert_eq!(
        v,
        [
            "reference",
            "worse",
            "within resolution",
            "within resolution"
        ]
    );
    assert!((r.cells[1].diff_s.unwrap_or(0.0) - 1.1).abs() < 1e-9);
    assert_eq!(r.cells[3].resolution_s, 1.0);
    assert_eq!(r.cells[0].side, "A");
    assert!(!r.rules_differ);
}

#[test]
fn repeats_are_compared_by_their_spread() {
    let a = [Some(2.0), Some(2.2), Some(2.1)];
    let slower = [Some(4.0), Some(4.3), Some(3.9)];
    let alike = [Some(2.6), Some(2.0), Some(2.9)];
    let mut runs: Vec<RunRecord> = a.iter().map(|t| run(0.1, SPEC, &[*t])).collect();
    runs.extend(slower.iter().map(|t| run(0.1, SPEC, &[*t])));
    runs.extend(alike.iter().map(|t| run(0.1, SPEC, &[*t])));
    let rows = compare_ttr(&named(runs), 3);
    let c = &rows[0].cells;
    assert_eq!(
        c.iter().map(|c| c.side.as_str()).collect::<Vec<_>>(),
        ["A–C", "D–F", "G–I"]
    );
    assert_eq!((c[0].firings, c[0].recovered), (3, 3));
    assert!((c[0].mean_s.unwrap_or(0.0) - 2.1).abs() < 1e-9);
    assert!((c[0].sd_s.unwrap_or(0.0) - 0.1).abs() < 1e-9);
    assert_eq!((c[0].min_s, c[0].max_s), (Some(2.0), Some(2.2)));
    let (lo, hi) = c[0].ci95.unwrap_or((0.0, 0.0));
    assert!(lo < 2.1 && hi > 2.1 && hi - lo < 1.0, "{lo}..{hi}");
    assert_eq!(c[1].verdict, "worse");
    assert!(c[1].p.is_some_and(|p| p < 0.05), "{:?}", c[1]);
    assert_eq!(c[2].verdict, "within noise", "{:?}", c[2]);
    // Every firing of an every… in one run is pooled the same way.
    let rows = compare_ttr(&named(vec![run(0.1, SPEC, &a), run(0.1, SPEC, &slower)]), 1);
    assert_eq!(
        (rows[0].cells[1].firings, rows[0].cells[1].verdict),
        (3, "worse")
    );
}

#[test]
fn a_firing_that_did_not_recover_is_worse_than_ones_that_did() {
    let rows = compare_ttr(
        &named(vec![
            run(0.1, SPEC, &[Some(1.0), Some(1.2)]),
            run(0.1, SPEC, &[Some(1.0), None]),
            run(0.1, "5s:checkpoint", &[Some(0.5)]),
        ]),
        1,
    );
    let c = &rows[0].cells;
    assert_eq!(
        (c[1].firings, c[1].recovered, c[1].verdict),
        (2, 1, "worse")
    );
    assert_eq!(
        (c[2].firings, c[2].verdict),
        (0, "untested"),
        "not perturbed so"
    );
    // The reverse: the first did not recover, the second did.
    let rows = compare_ttr(
        &named(vec![run(0.1, SPEC, &[None]), run(0.1, SPEC, &[Some(9.0)])]),
        1,
    );
    assert_eq!(rows[0].cells[1].verdict, "better");
    // Nothing perturbed: no rows.
    assert!(compare_ttr(&named(vec![RunRecord::default(), RunRecord::default()]), 1).is_empty());
}

#[test]
fn sides_judged_with_other_windows_are_flagged() {
    let mut b = run(0.1, SPEC, &[Some(1.0)]);
    b.perturbations[0].rule.rolling_s = 5.0;
    let rows = compare_ttr(&named(vec![run(0.1, SPEC, &[Some(1.0)]), b]), 1);
    assert!(rows[0].rules_differ);
}
