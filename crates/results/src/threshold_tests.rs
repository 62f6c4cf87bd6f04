//! Unit tests of [`super`]: parsing (units, scopes, errors naming the text) and evaluation
//! on synthetic runs and ladders.

use super::*;
use crate::testdata::record;
use crate::{CheckResult, Ladder, VariantResult};

#[test]
fn parses_metrics_units_and_scopes() {
    let t = parse("p99<50ms").unwrap();
    assert_eq!(t.metric, Metric::Latency(Latency::P99));
    assert_eq!((t.op, t.limit), (Op::Lt, Limit::Number(50.0)));
    assert_eq!(parse("p50 <= 1.5s").unwrap().limit, Limit::Number(1500.0));
    assert_eq!(parse("p(99)<800us").unwrap().limit, Limit::Number(0.8));
    assert_eq!(parse("tps>=1000").unwrap().op, Op::Ge);
    assert_eq!(parse("goodput/s>=900").unwrap().metric, Metric::Goodput);
    assert_eq!(parse("failed=0").unwrap().limit, Limit::Number(0.0));
    assert_eq!(parse("retries<1%").unwrap().limit, Limit::Percent(1.0));
    assert_eq!(parse("checks=pass").unwrap().limit, Limit::Pass(true));
    let t = parse("skip-locked:jobs/s>=3000").unwrap();
    assert_eq!(t.scope, Scope::Variant("skip-locked".into()));
    assert_eq!(t.metric, Metric::WorkPerS("jobs".into()));
    let t = parse("best:vs_baseline>=3").unwrap();
    assert_eq!((t.scope, t.metric), (Scope::Best, Metric::VsBaseline));
    assert_eq!(parse("baseline:tps>1").unwrap().scope, Scope::Baseline);
}

#[test]
fn bad_expressions_name_the_offending_text() {
    for (bad, why) in [
        ("p99<<5ms", "malformed value"),
        ("p99 50ms", "no comparison"),
        ("p98<5ms", "unknown metric \"p98\""),
        ("p99<fast", "\"fast\" is not a duration"),
        ("tps>=lots", "\"lots\" is not a number"),
        ("checks=maybe", "pass or fail"),
        ("checks<pass", "checks take = or !="),
        (":tps>1", "empty variant name"),
        ("tps>=", "missing or malformed value"),
    ] {
        let e = parse(bad).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("invalid --threshold \"{bad}\": ")),
            "{msg}"
        );
        assert!(msg.contains(why), "{bad}: {msg}");
    }
}

#[test]
fn run_thresholds_pass_and_fail() {
    // 6000 transactions in 6 s, latencies 2.0..2.5 ms, retries 0+1+…+5 = 15.
    let r = record("a", 1.0, 6, 6000, 2.0);
    let ts = parse_all(
        &[
            "tps>=900",
            "tps>=1001",
            "p99<3ms",
            "p50<1ms",
            "failed=0",
            "retries<1%",
            "retries<10",
            "checks=pass",
        ]
        .map(String::from),
    )
    .unwrap();
    let out = evaluate(&ts, &[Subject::run("", &r)]);
    let ok: Vec<bool> = out.iter().map(|o| o.ok).collect();
    assert_eq!(
        ok,
        vec![true, false, true, false, true, true, false, false],
        "{out:#?}"
    );
    assert_eq!(out[5].measured, Some(0.25));
    assert_eq!(out[7].measured, None);
    assert!(out[7].shown.contains("no checks"));
    assert_eq!(out[3].shown, "p50 = 2.249 ms");
    assert!(!all_ok(&out));
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json[0]["threshold"], "tps>=900");
    assert_eq!(json[0]["ok"], true);
}

fn variant(name: &str, baseline: bool, count: u64, checks_ok: bool) -> VariantResult {
    VariantResult {
        name: name.into(),
        baseline,
        record: Some(record(name, 1.0, 4, count, 1.0)),
        checks: vec![CheckResult {
            name: "conserved".into(),
            ok: checks_ok,
            detail: String::new(),
        }],
        work: Some(count as f64),
        ..Default::default()
    }
}

#[test]
fn ladder_thresholds_by_variant_best_and_baseline() {
    let ladder = Ladder {
        scenario: "queue".into(),
        work_unit: Some("jobs".into()),
        variants: vec![
            variant("for-update", true, 400, true),
            variant("skip-locked", false, 4000, true),
            variant("advisory", false, 2000, false),
        ],
        ..Default::default()
    };
    let ladders = [ladder];
    let subjects = ladder_subjects(&ladders);
    let ts = parse_all(
        &[
            "skip-locked:jobs/s>=1000",
            "best:vs_baseline>=3",
            "baseline:tps<50",
            "checks=pass",
            "nope:tps>1",
            "skip-locked:items/s>1",
        ]
        .map(String::from),
    )
    .unwrap();
    let out = evaluate(&ts, &subjects);
    let summary: Vec<(String, String, bool)> = out
        .iter()
        .map(|o| (o.threshold.clone(), o.subject.clone(), o.ok))
        .collect();
    let row = |t: &str, s: &str, ok: bool| (t.to_string(), s.to_string(), ok);
    assert_eq!(
        summary,
        vec![
            row("skip-locked:jobs/s>=1000", "skip-locked", true),
            row("best:vs_baseline>=3", "skip-locked", true),
            row("baseline:tps<50", "for-update", false),
            row("checks=pass", "for-update", true),
            row("checks=pass", "skip-locked", true),
            row("checks=pass", "advisory", false),
            row("nope:tps>1", "", false),
            row("skip-locked:items/s>1", "skip-locked", false),
        ]
    );
    assert_eq!(out[1].measured, Some(10.0));
    assert!(out[6].shown.contains("no variant \"nope\" ran"));
    assert!(out[7].shown.contains("work is counted in jobs"));
}

#[test]
fn a_statistic_without_a_sample_fails_and_says_why() {
    // Nothing committed, everything failed: every latency is an empty histogram's 0.
    let mut r = record("a", 1.0, 10, 0, 1.0);
    for _ in 0..40 {
        r.totals
            .counters
            .record_failure(hotbench_stats::counters::FailureKind::Other);
    }
    r.totals = crate::TotalsRecord::from_counters(r.totals.counters.clone(), 10.0);
    let ts =
        parse_all(&["p99<1ms", "mean<=5s", "max<1s", "failed>=99%", "tps<1000"].map(String::from))
            .unwrap();
    let out = evaluate(&ts, &[Subject::run("", &r)]);
    let ok: Vec<bool> = out.iter().map(|o| o.ok).collect();
    assert_eq!(ok, vec![false, false, false, true, true], "{out:#?}");
    assert_eq!(out[0].measured, None);
    assert_eq!(
        out[0].shown,
        "p99 = not measured (no transaction committed: 40 other failures)"
    );
    // No transaction at all: a share of nothing is no measurement either.
    let empty = record("b", 1.0, 10, 0, 1.0);
    let ts = parse_all(&["failed<1%", "retries<=5%", "failed=0"].map(String::from)).unwrap();
    let out = evaluate(&ts, &[Subject::run("", &empty)]);
    let ok: Vec<bool> = out.iter().map(|o| o.ok).collect();
    assert_eq!(ok, vec![false, false, true], "{out:#?}");
    assert!(out[0].shown.contains("no transaction ended"), "{out:#?}");
}

#[test]
fn time_to_recover_and_work_lost_gate_perturbed_runs() {
    use crate::PerturbationRecord;
    let p = |at: f64, ttr90: Option<f64>, lost: f64| {
        let mut p = PerturbationRecord::new("x".into(), "checkpoint", String::new(), at);
        p.baseline_per_s = Some(100.0);
        p.ttr90_s = ttr90;
        p.lost = Some(lost);
        p
    };
    let run = |ps: Vec<PerturbationRecord>| RunRecord {
        perturbations: ps,
        ..Default::default()
    };
    let check = |expr: &str, rec: &RunRecord| {
        let t = parse(expr).unwrap();
        evaluate(&[t], &[Subject::run("", rec)]).remove(0)
    };
    let two = run(vec![p(1.0, Some(2.5), 300.0), p(5.0, Some(0.5), 40.0)]);
    let o = check("ttr90<3s", &two);
    assert!(o.ok && o.measured == Some(2.5), "the slowest: {o:?}");
    assert_eq!(o.shown, "ttr90 = 2.50 s");
    assert!(!check("ttr90<2000ms", &two).ok);
    let o = check("lost<5000", &two);
    assert!(o.ok && o.measured == Some(300.0), "{o:?}");
    let stuck = run(vec![p(1.0, None, 900.0)]);
    let o = check("ttr90<100s", &stuck);
    assert!(
        !o.ok && o.shown.contains("not recovered by the end of the run"),
        "{o:?}"
    );
    let o = check("ttr99<1s", &run(vec![]));
    assert!(!o.ok && o.shown.contains("no perturbation judged"), "{o:?}");
    assert!(parse("ttr90<soon")
        .unwrap_err()
        .why
        .contains("10s or 500ms"));
}
