//! Diagnosis files (`hotbench-diagnosis/1`) on hostile input: a valid document with fields
//! mutated (extreme numbers, wrong types, missing keys, shortened lists) and random text, read
//! as the typed document and, when read, rendered as text and HTML. Nothing may panic.
//! Bounded case counts (`HOTBENCH_FUZZ_CASES=N` for a longer hunt) keep it under a second or
//! two of `cargo test`.

use hotbench_report::{html, text};
use hotbench_results::diagnosis_record::{
    Check, Diagnosis, Evidence, Finding, FindingKind, FindingStatement, KeyShare, LabRun,
    LabVariant,
};
use hotbench_results::probe_record::{HotRow, ProbeInterval, RelationWaits, SessionsRecord};
use proptest::prelude::*;
use serde_json::Value;

fn cases(default: u32) -> u32 {
    std::env::var("HOTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A diagnosis with every part filled: a finding with keys, statements and evidence, a
/// check, notes, the probe's hot rows, relations, timeline and a lab ranking.
fn seed() -> &'static Value {
    static SEED: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let mut d = Diagnosis::new();
        d.target = "host=db user=monitor".into();
        d.duration_s = 30.0;
        d.interval_ms = 100.0;
        d.stats_interval_ms = 1000.0;
        d.server_cores = Some(4);
        d.notes
            .push("hot rows: keys of \"Accounts\" not read".into());
        d.findings.push(Finding {
            kind: FindingKind::HotRow,
            title: "hot row: \"Accounts\" (id=1)".into(),
            relation: Some("\"Accounts\"".into()),
            keys: vec![KeyShare {
                key: "id=1".into(),
                count: 40,
                pct: 66.7,
            }],
            share: 0.7,
            statements: vec![FindingStatement {
                role: "waiting".into(),
                query: "select * from \"Accounts\" where id in (?, …) for update".into(),
                samples: 12,
                ..Default::default()
            }],
            command: Some("hotbench scenario run daily-limit -c 8".into()),
            command_args: vec!["scenario".into(), "run".into()],
            evidence: vec![Evidence::new(
                "in partitions",
                "accounts_low, accounts_high",
            )],
            advice: "one statement per payment".into(),
            ..Default::default()
        });
        d.looked_at.push(Check {
            what: "lock waits".into(),
            value: "70%".into(),
            found: true,
        });
        d.probe.samples = 300;
        d.probe.hot_rows.push(HotRow {
            relation: "\"Accounts\"".into(),
            key: "id=1".into(),
            count: 40,
            pct: 66.7,
        });
        d.probe.timeline.push(ProbeInterval {
            t: 1.0,
            dt: 1.0,
            samples: 10,
            ..Default::default()
        });
        d.probe.sessions = Some(SessionsRecord {
            rounds: 30,
            busy_samples: 200,
            relation_waits: vec![RelationWaits {
                relation: "\"Accounts\"".into(),
                lock_waits: 40,
                pct: 66.7,
                rows: 2,
                partitions: vec!["accounts_low".into(), "accounts_high".into()],
            }],
            ..Default::default()
        });
        d.lab = Some(LabRun {
            command: "hotbench scenario run daily-limit".into(),
            scenario: "daily-limit".into(),
            ranking: vec![LabVariant {
                name: "select-for-update".into(),
                baseline: true,
                per_s: 100.0,
                vs_baseline: Some(1.0),
                checks_ok: true,
                ..Default::default()
            }],
            error: None,
        });
        serde_json::to_value(&d).expect("a diagnosis serializes")
    })
}

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

fn replacement(kind: u8) -> Option<Value> {
    Some(match kind % 14 {
        0 => Value::from(u64::MAX),
        1 => Value::from(-1),
        2 => Value::from(0),
        3 => Value::from(1e308),
        4 => Value::from(-1e308),
        5 => Value::from(i64::MIN),
        6 => Value::from("x\u{1b}]0;t\u{7}\n"),
        7 => Value::Null,
        8 => Value::from(true),
        9 => Value::Array(vec![]),
        10 => Value::Object(Default::default()),
        11 => Value::from(0.5),
        12 => Value::from(""),
        _ => return None, // remove the key, or shorten the list
    })
}

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

/// Reads `text` as a diagnosis and renders what it read.
fn exercise(text_in: &str) {
    if let Ok(d) = serde_json::from_str::<Diagnosis>(text_in) {
        let _ = text::diagnosis::render_text(&d);
        let _ = html::diagnosis::render_html(&d);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), ..ProptestConfig::default() })]

    #[test]
    fn mutated_diagnoses_are_read_or_refused_never_a_panic(
        muts in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6)
    ) {
        exercise(&mutate(seed(), &muts).to_string());
    }

    #[test]
    fn random_text_is_read_or_refused(s in "\\PC{0,200}") {
        exercise(&s);
    }
}

#[test]
fn the_seed_is_read_and_rendered() {
    let d: Diagnosis = serde_json::from_value(seed().clone()).expect("the seed reads");
    assert!(text::diagnosis::render_text(&d).contains("\"Accounts\""));
    assert!(html::diagnosis::render_html(&d).contains("data-kind=\"hot_row\""));
}
