//! The readers of result files on hostile input (issue 29): run results, ladders, sweeps and
//! CSV measurements, as random text and as valid documents with fields mutated (extreme
//! numbers, wrong types, missing keys, shortened lists), read and then rendered, compared,
//! merged, fitted and judged as the commands do. Nothing may panic (tests build with
//! overflow checks, so an unchecked sum of a file's counters fails here); what is refused is
//! refused with a message. Bounded case counts keep it to a few seconds of `cargo test`.

use hotbench_report::analysis::{compare, compare_ladder, usl_input, usl_series};
use hotbench_report::{html, parse_document, render_documents, text, Document};
use hotbench_results::testdata::record;
use hotbench_results::{CheckResult, Ladder, LadderFile, RunRecord, SweepDoc, VariantResult};
use proptest::prelude::*;
use serde_json::Value;

/// Cases per property: `default`, or `HOTBENCH_FUZZ_CASES` when set (a longer hunt).
fn cases(default: u32) -> u32 {
    std::env::var("HOTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A ladder of two variants and a ceiling, from synthetic runs.
fn ladder_file() -> LadderFile {
    let variant = |name: &str, baseline: bool, count: u64| VariantResult {
        name: name.into(),
        baseline,
        record: Some(record(name, 1.0e9, 4, count, 2.0)),
        checks: vec![CheckResult {
            name: "c".into(),
            ok: true,
            detail: String::new(),
        }],
        work: Some(count as f64),
        work_per_interval: vec![count / 4; 4],
        ..VariantResult::default()
    };
    LadderFile::new(vec![Ladder {
        scenario: "s".into(),
        title: "t".into(),
        variants: vec![variant("a", true, 400), variant("b", false, 800)],
        ceiling: Some(variant("ceiling", false, 1200)),
        work_unit: Some("items".into()),
        ..Ladder::default()
    }])
}

/// Valid documents of every kind, as JSON values (made once: synthetic records take
/// milliseconds in a debug build).
fn seeds() -> &'static [Value] {
    static SEEDS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(make_seeds)
}

/// A second run to compare and merge the mutated ones with.
fn other() -> &'static RunRecord {
    static OTHER: std::sync::OnceLock<RunRecord> = std::sync::OnceLock::new();
    OTHER.get_or_init(|| record("o.sql", 1.0e9 + 0.5, 5, 400, 3.0))
}

fn make_seeds() -> Vec<Value> {
    let run = record("s.sql", 1.0e9, 5, 500, 2.0);
    let sweep = SweepDoc::new(vec![
        record("s.sql", 1.0e9, 3, 300, 1.0),
        record("s.sql", 1.0e9 + 10.0, 3, 500, 1.5),
        record("s.sql", 1.0e9 + 20.0, 3, 600, 2.0),
    ]);
    vec![
        serde_json::to_value(&run).unwrap(),
        serde_json::to_value(ladder_file()).unwrap(),
        serde_json::to_value(&sweep).unwrap(),
    ]
}

/// Every path to a value in `v` (object keys and array indexes).
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(k.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = v;
    for p in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(p)?,
            Value::Array(a) => a.get_mut(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// What a mutation puts in place of a value.
fn replacement(kind: u8) -> Option<Value> {
    Some(match kind % 16 {
        0 => Value::from(u64::MAX),
        1 => Value::from(u64::MAX - 1),
        2 => Value::from(-1),
        3 => Value::from(0),
        4 => Value::from(1e308),
        5 => Value::from(-1e308),
        6 => Value::from(1e-308),
        7 => Value::from(i64::MIN),
        8 => Value::from("x"),
        9 => Value::Null,
        10 => Value::from(true),
        11 => Value::Array(vec![]),
        12 => Value::Object(Default::default()),
        13 => Value::from(0.5),
        14 => Value::from("hotbench-result/1"),
        _ => return None, // remove the key, or empty the list
    })
}

/// `seed` with each `(path index, kind)` mutation applied.
fn mutate(seed: &Value, muts: &[(usize, u8)]) -> Value {
    let mut v = seed.clone();
    for &(i, kind) in muts {
        let mut all = Vec::new();
        paths(&v, &mut Vec::new(), &mut all);
        let path = &all[i % all.len()];
        match replacement(kind) {
            Some(r) => {
                if let Some(slot) = at_mut(&mut v, path) {
                    *slot = r;
                }
            }
            None => {
                let Some((last, parent)) = path.split_last() else {
                    continue;
                };
                match at_mut(&mut v, parent) {
                    Some(Value::Object(m)) => {
                        m.remove(last);
                    }
                    Some(Value::Array(a)) => a.truncate(last.parse().unwrap_or(0)),
                    _ => {}
                }
            }
        }
    }
    v
}

/// Reads `text` as each command does and renders, compares, merges, fits and judges what
/// it read.
fn exercise(text_in: &str, other: Option<&RunRecord>) {
    if let Ok(points) = usl_input::read_points("f", text_in) {
        let fits: Vec<_> = usl_input::group(points)
            .into_iter()
            .filter_map(|s| usl_series::SeriesFit::new(s).ok())
            .collect();
        let _ = usl_series::to_json(&fits);
        let _ = text::usl::render_text(&fits);
        let _ = html::usl::render_html(&fits);
    }
    let doc = match parse_document("f.json", text_in) {
        Ok(d) => d,
        Err(e) => {
            assert!(e.to_string().starts_with("f.json"), "{e}");
            return;
        }
    };
    let _ = render_documents(std::slice::from_ref(&doc));
    match doc {
        Document::Run(name, r) => {
            let _ = hotbench_report::pgbench_report(&r);
            let _ = hotbench_report::extra_lines(&r);
            let mut runs = vec![(name, *r)];
            if let Some(o) = other {
                runs.push(("other".into(), o.clone()));
            }
            let c = compare::compare(&runs);
            let _ = text::compare::render_text(&c);
            let _ = html::compare::render_html(&c, &runs);
            let _ = compare::to_json(&c);
            if let Ok(m) = hotbench_results::merge::merge(&runs) {
                let _ = hotbench_report::pgbench_report(&m);
            }
            judge(&[hotbench_results::threshold::Subject::run("", &runs[0].1)]);
        }
        Document::Ladders(ladders) => {
            let _ = hotbench_report::render_ladders(&ladders);
            let files = vec![
                ("a".to_string(), ladders.clone()),
                ("b".into(), ladders.clone()),
            ];
            let c = compare_ladder::compare_ladders(&files);
            let _ = text::compare_ladder::render_text(&c);
            let _ = html::compare_ladder::render_html(&c);
            judge(&hotbench_results::threshold::ladder_subjects(&ladders));
        }
        Document::Sweep(s) => {
            let _ = text::sweep::render_text(&s);
            let _ = html::sweep::render_html(&s);
        }
    }
}

/// Every kind of `--threshold` on what was read.
fn judge(subjects: &[hotbench_results::threshold::Subject<'_>]) {
    let t = hotbench_results::threshold::parse_all(&[
        "tps>1".to_string(),
        "p99<1s".into(),
        "retries<1%".into(),
        "checks=pass".into(),
        "best:vs_baseline>=2".into(),
    ]);
    if let Ok(t) = t {
        let out = hotbench_results::threshold::evaluate(&t, subjects);
        let _ = hotbench_results::threshold::all_ok(&out);
    }
}

fn mutations() -> impl Strategy<Value = (usize, Vec<(usize, u8)>)> {
    (
        0usize..3,
        prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    )
}

proptest! {
    // 128 cases each by default: about a second per test in a debug build on an idle
    // 2-core machine; HOTBENCH_FUZZ_CASES=N for a longer hunt.
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn mutated_documents_are_read_or_refused_never_a_panic((which, muts) in mutations()) {
        let doc = mutate(&seeds()[which], &muts);
        exercise(&doc.to_string(), Some(other()));
    }

    #[test]
    fn two_mutated_runs_merge_or_are_refused((a, b) in (mutations(), mutations())) {
        let seed = &seeds()[0];
        let ra: Result<RunRecord, _> = serde_json::from_value(mutate(seed, &a.1));
        let rb: Result<RunRecord, _> = serde_json::from_value(mutate(seed, &b.1));
        if let (Ok(ra), Ok(rb)) = (ra, rb) {
            let runs = vec![("a".to_string(), ra), ("b".to_string(), rb)];
            match hotbench_results::merge::merge(&runs) {
                Ok(m) => {
                    let _ = hotbench_report::pgbench_report(&m);
                    let _ = render_documents(&[Document::Run("m".into(), Box::new(m))]);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    #[test]
    fn random_text_is_read_or_refused(s in "\\PC{0,200}") {
        exercise(&s, None);
    }

    #[test]
    fn csv_shaped_text_is_read_or_refused(
        lines in prop::collection::vec("[ 0-9eE.+-]{0,10}(,[ 0-9eE.+-]{0,10}){0,2}", 0..12),
        header in prop::bool::ANY,
    ) {
        let mut s = if header { "clients,tps\n".to_string() } else { String::new() };
        s.push_str(&lines.join("\n"));
        exercise(&s, None);
    }
}

#[test]
fn the_seeds_are_valid_documents() {
    for seed in seeds() {
        let d = parse_document("seed.json", &seed.to_string()).expect("seed parses");
        let _ = render_documents(&[d]);
    }
}

/// What the mutations above found (each panicked with "attempt to add with overflow" in
/// a debug build): counts near `u64::MAX` summed by the pgbench report (`cnt + skipped`),
/// a threshold's share of transactions (`cnt + failures`), pooled latency stats (`count`)
/// and the rendering of hot keys' and waits' totals.
#[test]
fn counts_near_the_top_are_rendered_compared_and_judged() {
    let mut r = record("s.sql", 1.0e9, 5, 500, 2.0);
    let c = &mut r.totals.counters;
    c.cnt = u64::MAX;
    c.skipped = u64::MAX;
    c.deadlock_failures = u64::MAX;
    c.latency.count = u64::MAX;
    r.hot_keys.push(hotbench_stats::hot_keys::HotKeyRecord {
        variable: "k".into(),
        value: "1".into(),
        failed: [("40001".to_string(), u64::MAX), ("40P01".to_string(), 2)].into(),
        ..Default::default()
    });
    for iv in &mut r.timeline {
        iv.totals.goodput = u64::MAX;
    }
    let text = serde_json::to_string(&r).unwrap();
    exercise(&text, Some(&r));
    let mut other = r.clone();
    other.started_at += 1.0;
    other.totals.counters.latency.count = 7;
    let merged = hotbench_results::merge::merge(&[("a".into(), r), ("b".into(), other)]);
    assert!(merged.is_err(), "counts past u64::MAX are refused");
}
