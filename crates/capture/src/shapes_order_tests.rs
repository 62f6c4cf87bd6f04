//! The order of a shape's statements from few sightings, as a sparse sampling period leaves
//! them: each transaction seen at one statement, rarely two, each sighting weighted by the
//! inverse of its chance to be seen (at one read in 170 ms, from 1 to 340). Synthetic
//! sightings; no server.

use crate::observed::{ObservedStatement, ObservedTransaction};
use crate::shapes::{build, Input};
use crate::tracker::SampledTransaction;

const BRANCH: &str = "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1";
const INSERT: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 7, 1, CURRENT_TIMESTAMP)";

/// One explicit transaction seen at `seen`: (text, offset from its start in s, weight).
fn tx(seen: &[(&str, f64, f64)]) -> SampledTransaction {
    SampledTransaction {
        tx: ObservedTransaction {
            session: "1".into(),
            statements: seen
                .iter()
                .map(|(sql, o, _)| ObservedStatement {
                    sql: sql.to_string(),
                    params: Vec::new(),
                    started_at_s: *o,
                    duration_s: None,
                })
                .collect(),
            autocommit: false,
            complete: false,
            rolled_back: false,
        },
        weights: seen.iter().map(|s| s.2).collect(),
        gaps_s: vec![None; seen.len()],
        offsets_s: seen.iter().map(|s| Some(s.1)).collect(),
    }
}

/// tpcb-like's branch UPDATE (which queues on the one branch row) and the INSERT after it.
/// The branch UPDATE seen 20 times 5 ms into its transaction, old (weight 4), and once 60 ms
/// in, a moment after it began (weight 340: one read in 170 ms, a 0.25 ms age); the INSERT 20
/// times 25 ms in (weight 170); once both in one transaction, the UPDATE first. The mean
/// offsets weighted without a bound (49.5 ms against 25 ms) put the INSERT first; each
/// weight at most 20 (16.2 ms against 25.1 ms), and the one transaction seen in order, say
/// otherwise.
#[test]
fn a_few_heavy_sightings_do_not_reorder_what_one_transaction_showed_in_order() {
    let mut all = Vec::new();
    for _ in 0..20 {
        all.push(tx(&[(BRANCH, 0.005, 4.0)]));
        all.push(tx(&[(INSERT, 0.025, 170.0)]));
    }
    all.push(tx(&[(BRANCH, 0.060, 340.0)]));
    all.push(tx(&[(BRANCH, 0.040, 1.0), (INSERT, 0.080, 1.0)]));
    let (shapes, _) = build(&Input {
        transactions: &all,
        counts: None,
        period_s: Some(0.17),
    });
    let keys: Vec<&str> = shapes[0]
        .statements
        .iter()
        .map(|s| s.key.as_str())
        .collect();
    assert_eq!(shapes.len(), 1, "{keys:?}");
    assert!(
        keys[0].starts_with("update pgbench_branches") && keys[1].starts_with("insert"),
        "{keys:?}"
    );
}
