//! The profile's pieces without a server: pg_stat_statements' cut texts, the hot rows.

use std::time::Duration;

use crate::sample::Options;

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
