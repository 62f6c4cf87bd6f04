//! The profile's pieces without a server: pg_stat_statements' cut texts, the hot rows, the
//! sampler's notes, values bound unseen.

use std::time::Duration;

use crate::sample::{Options, Sample};

#[test]
fn a_cut_pg_stat_statements_text_is_listed_once_under_the_sampled_statement() {
    // kombu's claim (over 300 characters) was in the statement mix twice: the cut text
    // pg_stat_statements' record holds and the sampled statement it was aliased to.
    use crate::observed::{ObservedStatement, ObservedTransaction};
    let cols: Vec<String> = (0..60).map(|i| format!("m.c{i} as m_c{i}")).collect();
    let full = format!(
        "select {} from m where m.q = 1 order by m.t limit 1 for update",
        cols.join(", ")
    );
    let key = crate::sql_text::key_of(&full);
    let mut counts = std::collections::BTreeMap::new();
    let cut: String = key.chars().take(300).collect();
    counts.insert(
        cut,
        crate::shapes::Counts {
            calls: 7,
            total_ms: 1.0,
            rows: 7,
        },
    );
    let tx = crate::tracker::SampledTransaction {
        tx: ObservedTransaction {
            session: "1".into(),
            statements: vec![ObservedStatement {
                sql: full,
                params: vec![],
                started_at_s: 0.0,
                duration_s: None,
            }],
            autocommit: false,
            complete: false,
            rolled_back: false,
        },
        weights: vec![1.0],
        gaps_s: vec![None],
        offsets_s: vec![None],
    };
    super::alias_cut_texts(&mut counts, &[tx]);
    let keys: Vec<&String> = counts.keys().collect();
    assert_eq!(keys, [&key]);
    assert_eq!(counts[&key].calls, 7);
}

#[test]
fn no_hottest_key_is_named_when_no_row_was_waited_on_twice() {
    // A queue's head row moves with every claim: kombu's 10 rows were each waited on
    // once, and the capture named one of them (3%) as the hottest key.
    use hotbench_results::probe_record::HotRow;
    let row = |id: u32, count: u64| HotRow {
        relation: "kombu_message".into(),
        key: format!("id={id}"),
        count,
        pct: 10.0,
    };
    let mut d = hotbench_results::diagnosis_record::Diagnosis::default();
    d.probe.hot_rows = (1..=10).map(|i| row(i, 1)).collect();
    let opts = Options::new(Duration::from_secs(1));
    let doc = super::observed(&d, &opts);
    assert!(doc.hot_keys.is_empty(), "{:?}", doc.hot_keys);
    assert!(
        doc.notes
            .iter()
            .any(|n| n.starts_with("no row was waited on twice")),
        "{:?}",
        doc.notes
    );
    d.probe.hot_rows[3].count = 2;
    let doc = super::observed(&d, &opts);
    assert_eq!(doc.hot_keys.len(), 10);
}

use crate::activity::Sampled;
use crate::tracker::Tracker;

#[test]
fn the_activity_samplers_notes_reach_capture_json() {
    // The sampler's note that its reads were slowed (a loaded server: 32 samples in 20 s)
    // was dropped, so a capture that saw little did not say why.
    let slowed = "activity samples slowed to every 400 ms: each took 8.0 ms";
    let sample = Sample {
        diagnosis: Default::default(),
        activity: Some(Sampled {
            tracker: Tracker::new(0.01),
            notes: vec![slowed.into()],
            busy_s: 0.0,
            reads: 0,
        }),
        notes: vec![],
    };
    let c = super::profile(sample, &Options::new(Duration::from_secs(1)));
    assert!(c.doc.notes.iter().any(|n| n == slowed), "{:?}", c.doc.notes);
}

/// The profile of 20 logged transactions in two sessions, 10 ms apart, each the `sqls` 2 ms
/// apart (one statement: autocommit).
fn logged(sqls: &[&str]) -> super::Capture {
    use crate::observed::{ObservedStatement, ObservedTransaction};
    let tx = |i: usize| ObservedTransaction {
        session: format!("{}", i % 2),
        statements: sqls
            .iter()
            .enumerate()
            .map(|(k, sql)| ObservedStatement {
                sql: sql.to_string(),
                params: vec![],
                started_at_s: i as f64 * 0.01 + k as f64 * 0.002,
                duration_s: Some(0.001),
            })
            .collect(),
        autocommit: sqls.len() == 1,
        complete: true,
        rolled_back: false,
    };
    let mut opts = Options::new(Duration::from_secs(1));
    opts.log = Some((0..20).map(tx).collect());
    let sample = Sample {
        diagnosis: Default::default(),
        activity: None,
        notes: vec![],
    };
    super::profile(sample, &opts)
}

#[test]
fn values_bound_unseen_are_named_as_not_reproduced() {
    // procrastinate's calls as sampling sees them: `$1`, no value; the script wrote `1`
    // (`'1'::procrastinate_job_to_defer_v1[]`, refused by the twin) and said so only in
    // a comment.
    let c = logged(&["SELECT unnest(defer_jobs($1::job_to_defer[])) AS id"]);
    let note = c
        .doc
        .notes
        .iter()
        .find(|n| n.starts_with("values not seen: "));
    assert!(
        note.is_some_and(|n| n.contains("shape_01.sql: statement 1 value 1 were bound")),
        "{:?}",
        c.doc.notes
    );
}

#[test]
fn redact_leaves_the_fallbacks_values_as_the_redacted_tables_made_them() {
    // A composite the fallback built from the (redacted) tables' most common values was
    // redacted again, as one string: procrastinate's defer call then passed a random string
    // as `procrastinate_job_to_defer_v1[]`, which its twin refused.
    use crate::params::{Fit, Fitted};
    use crate::sql_text::Value;
    let mut c = logged(&[
        "SELECT unnest(defer_jobs($1::job_to_defer[])) AS id",
        "SELECT id FROM jobs WHERE queue_name = 'secret_queue'",
    ]);
    let composite = r#"{"(stand_in,task_x,0)"}"#;
    let fallback = |statement: &str, _: (usize, usize), _: Option<&str>| {
        statement.contains("defer_jobs").then(|| Fitted {
            fit: Fit::Constant(Value::Text(composite.into())),
            observations: 0,
            distinct: 0,
            why: "one row of job_to_defer".into(),
        })
    };
    crate::keys::redact(&mut c, &[], 7, Some(&fallback));
    let script = &c.scripts[0].1;
    // `{` is written `\x7b` (a pgbench script would read `{…}` as a variable).
    assert!(
        script.contains(r#"(E'\x7b"(stand_in,task_x,0)"}'::job_to_defer[])"#),
        "{script}"
    );
    assert!(!script.contains("secret_queue"), "{script}");
    assert!(
        script.contains("WHERE queue_name = E'") || script.contains("WHERE queue_name = '"),
        "the sampled constant has a stand-in: {script}"
    );
}
