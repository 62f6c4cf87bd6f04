//! Shapes of very short transactions, which sampling sees one statement at a time: the
//! fragments are joined to their shape by `pg_stat_statements`' calls and by when each
//! statement began in its transaction, not by which statements sampling happened to see
//! together.

use super::*;
use crate::observed::{ObservedStatement, ObservedTransaction};

const LOOKUP: &str = "select id from queue where name = 'jobs' limit 1";
const INSERT: &str = "insert into message (queue_id, body) values (1, 'x')";
const CLAIM: &str = "select id from message where visible limit 1 for update";
const UPDATE: &str = "update message set visible = false where id = 7";

/// A transaction as the tracker hands it over: each statement with how long after the
/// transaction began it started (s); `autocommit` as the tracker judged it (a statement of a
/// 0.1 ms transaction seen alone starts within its slack, so it is judged autocommit).
fn seen(stmts: &[(&str, f64)], autocommit: bool) -> SampledTransaction {
    SampledTransaction {
        tx: ObservedTransaction {
            session: "1".into(),
            statements: stmts
                .iter()
                .map(|(s, _)| ObservedStatement {
                    sql: s.to_string(),
                    params: Vec::new(),
                    started_at_s: 0.0,
                    duration_s: None,
                })
                .collect(),
            autocommit,
            complete: false,
            rolled_back: false,
        },
        weights: vec![1.0; stmts.len()],
        gaps_s: vec![None; stmts.len()],
        offsets_s: stmts.iter().map(|(_, o)| Some(*o)).collect(),
    }
}

fn counts(c: &[(&str, u64)]) -> BTreeMap<String, Counts> {
    c.iter()
        .map(|(sql, calls)| {
            (
                crate::sql_text::key_of(sql),
                Counts {
                    calls: *calls,
                    total_ms: *calls as f64 * 0.05,
                    rows: *calls,
                },
            )
        })
        .collect()
}

fn shapes_of(
    txs: &[SampledTransaction],
    c: &BTreeMap<String, Counts>,
) -> (Vec<ShapeModel>, Vec<String>) {
    build(&Input {
        transactions: txs,
        counts: Some(c),
        period_s: Some(0.01),
    })
}

/// Each shape's statements (their first words) and its transactions.
fn summary(shapes: &[ShapeModel]) -> Vec<(Vec<String>, u64)> {
    shapes
        .iter()
        .map(|s| {
            let words = s
                .statements
                .iter()
                .map(|x| x.key.split(" where").next().unwrap_or("").to_string())
                .collect();
            (words, s.count.round() as u64)
        })
        .collect()
}

/// The get (lookup, claim, update) seen whole a few times.
fn gets(n: usize) -> Vec<SampledTransaction> {
    (0..n)
        .map(|_| {
            seen(
                &[(LOOKUP, 0.000_1), (CLAIM, 0.000_3), (UPDATE, 0.002)],
                false,
            )
        })
        .collect()
}

fn queue_counts() -> BTreeMap<String, Counts> {
    counts(&[
        (LOOKUP, 1000),
        (INSERT, 750),
        (CLAIM, 250),
        (UPDATE, 250),
        ("select count(*) from message", 740),
    ])
}

#[test]
fn a_statement_seen_alone_joins_the_one_shape_whose_calls_it_completes() {
    // kombu's publish (lookup, INSERT: 0.1 ms) is seen at its INSERT alone, 0.15 ms after
    // its transaction began (within the autocommit slack, so judged autocommit unless seen
    // idle in the transaction after it: 3 times in 10); a real autocommit count, called
    // about as often, began its own transaction.
    let mut txs = gets(5);
    for k in 0..10 {
        txs.push(seen(&[(INSERT, 0.000_15)], k >= 3));
        txs.push(seen(&[("select count(*) from message", 0.0)], true));
    }
    let (shapes, notes) = shapes_of(&txs, &queue_counts());
    assert!(notes.is_empty(), "{notes:?}");
    let lookup = "select id from queue";
    assert_eq!(
        summary(&shapes),
        [
            (
                vec![
                    lookup.into(),
                    "insert into message (queue_id, body) values (?, ?)".into()
                ],
                750
            ),
            (vec!["select count(*) from message".into()], 740),
            (
                vec![
                    lookup.into(),
                    "select id from message".into(),
                    "update message set visible = false".into()
                ],
                250
            ),
        ]
    );
    assert!(!shapes[0].autocommit && shapes[1].autocommit);
    // The lookup's calls are split: 750 in the publish, 250 in the get, once a transaction.
    assert!((shapes[0].statements[0].calls - 750.0).abs() < 1e-9);
    assert!(shapes[2]
        .statements
        .iter()
        .all(|s| (s.per_tx - 1.0).abs() < 1e-9));
}

#[test]
fn a_lookup_seen_alone_is_split_between_its_shapes_by_their_calls() {
    // Seen alone, the lookup both shapes begin with could be either's: its transactions are
    // counted 3 to 1, as the shapes' calls, not once in each.
    let mut txs = gets(4);
    for _ in 0..4 {
        txs.push(seen(&[(LOOKUP, 0.000_1), (INSERT, 0.000_3)], false));
    }
    for _ in 0..8 {
        txs.push(seen(&[(LOOKUP, 0.000_1)], false));
    }
    let (shapes, notes) = shapes_of(&txs, &queue_counts());
    assert!(notes.is_empty(), "{notes:?}");
    let observed: Vec<(usize, u64)> = shapes
        .iter()
        .map(|s| (s.statements.len(), s.observed))
        .collect();
    assert_eq!(observed, [(2, 4 + 6), (3, 4 + 2)]);
}

#[test]
fn fragments_that_fit_two_ways_stay_apart_and_are_named() {
    // Two statements seen alone, each called about as often as the lookup's calls the get
    // leaves over: which one the publish runs cannot be told, so neither is joined.
    let mut txs = gets(5);
    let other = "insert into archive (queue_id, body) values (1, 'x')";
    for _ in 0..5 {
        txs.push(seen(&[(INSERT, 0.000_3)], false));
        txs.push(seen(&[(other, 0.000_3)], false));
    }
    let c = counts(&[
        (LOOKUP, 1000),
        (INSERT, 750),
        (other, 745),
        (CLAIM, 250),
        (UPDATE, 250),
    ]);
    let (shapes, notes) = shapes_of(&txs, &c);
    assert_eq!(shapes.len(), 3, "{:?}", summary(&shapes));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("more than one way") && notes[0].contains("insert into archive"),
        "{notes:?}"
    );
}

#[test]
fn two_shapes_sharing_a_prefix_keep_it_and_a_partial_sequence_joins_its_own() {
    // P: lookup, check, insert (600); Q: lookup, check, claim, update (400). Q's claim and
    // update were seen together, never beside the prefix both begin with.
    let check = "select count(*) from quota where queue_id = 1";
    let mut txs = Vec::new();
    for _ in 0..5 {
        txs.push(seen(
            &[(LOOKUP, 0.000_1), (check, 0.000_2), (INSERT, 0.000_3)],
            false,
        ));
        txs.push(seen(&[(CLAIM, 0.000_4), (UPDATE, 0.002)], false));
    }
    let c = counts(&[
        (LOOKUP, 1000),
        (check, 1000),
        (INSERT, 600),
        (CLAIM, 400),
        (UPDATE, 400),
    ]);
    let (shapes, notes) = shapes_of(&txs, &c);
    assert!(notes.is_empty(), "{notes:?}");
    let prefix = ["select id from queue", "select count(*) from quota"];
    let s = summary(&shapes);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0].0[..2], prefix);
    assert_eq!(s[0].1, 600);
    assert_eq!(s[1].0[..2], prefix);
    assert_eq!(
        s[1].0[2..],
        [
            "select id from message",
            "update message set visible = false"
        ]
    );
    assert_eq!(s[1].1, 400);
}

#[test]
fn a_fragment_no_shapes_calls_explain_stays_a_shape_and_is_named() {
    // One shape whose statements all run once a transaction leaves no calls over: the
    // statement seen alone inside its transactions belongs to no shape seen.
    let a = "update acct set v = v - 1 where id = 3";
    let b = "update teller set v = v - 1 where id = 2";
    let mut txs = Vec::new();
    for _ in 0..5 {
        txs.push(seen(&[(a, 0.000_1), (b, 0.000_3)], false));
        txs.push(seen(&[(INSERT, 0.000_4)], false));
    }
    let c = counts(&[(a, 1000), (b, 1000), (INSERT, 300)]);
    let (shapes, notes) = shapes_of(&txs, &c);
    assert_eq!(shapes.len(), 2, "{:?}", summary(&shapes));
    assert_eq!(shapes[1].count.round() as u64, 300);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("insert into message") && notes[0].contains("seen only alone"),
        "{notes:?}"
    );
}

#[test]
fn statements_never_seen_together_are_linked_by_their_equal_calls() {
    // Sampled every 100 ms, no two statements of one transaction were seen: the claim and
    // the update are called equally often (one shape), the lookup as often as they and the
    // INSERT together.
    let mut txs = Vec::new();
    for _ in 0..5 {
        txs.push(seen(&[(LOOKUP, 0.000_1)], true));
        txs.push(seen(&[(INSERT, 0.000_3)], false));
        txs.push(seen(&[(CLAIM, 0.000_4)], false));
        txs.push(seen(&[(UPDATE, 0.002)], false));
    }
    let c = counts(&[(LOOKUP, 1000), (INSERT, 750), (CLAIM, 248), (UPDATE, 252)]);
    let (shapes, notes) = shapes_of(&txs, &c);
    assert!(notes.is_empty(), "{notes:?}");
    let lookup = "select id from queue";
    assert_eq!(
        summary(&shapes),
        [
            (
                vec![
                    lookup.into(),
                    "insert into message (queue_id, body) values (?, ?)".into()
                ],
                750
            ),
            (
                vec![
                    lookup.into(),
                    "select id from message".into(),
                    "update message set visible = false".into()
                ],
                252
            ),
        ]
    );
}

#[test]
fn a_prepared_autocommit_statement_is_not_a_fragment() {
    // Bound server-side, an autocommit statement starts a moment after its transaction (its
    // Bind planned it), and once in 20 its backend stalled past the slack: it is no
    // fragment, joined to nothing and named nowhere, though its calls fit the lookup's.
    let count = "select count(*) from message";
    let mut txs = gets(5);
    for k in 0..20 {
        txs.push(seen(
            &[(count, if k == 0 { 0.002 } else { 0.000_08 })],
            k != 0,
        ));
    }
    let c = counts(&[(LOOKUP, 1000), (count, 750), (CLAIM, 250), (UPDATE, 250)]);
    let (shapes, notes) = shapes_of(&txs, &c);
    assert!(notes.is_empty(), "{notes:?}");
    assert!(shapes
        .iter()
        .any(|s| s.autocommit && s.statements[0].key == count));
}

#[test]
fn a_logs_transactions_are_whole_and_nothing_is_joined_or_named() {
    // The same transactions read from a server log (no sampling period): each is whole, so
    // a statement that began late in its own transaction is no fragment (procrastinate's
    // calls under load: five "seen only alone" notes on a `--log` capture).
    let a = "update acct set v = v - 1 where id = 3";
    let b = "update teller set v = v - 1 where id = 2";
    let mut txs = Vec::new();
    for _ in 0..5 {
        txs.push(seen(&[(a, 0.000_1), (b, 0.000_3)], false));
        txs.push(seen(&[(INSERT, 0.000_4)], false));
    }
    let c = counts(&[(a, 1000), (b, 1000), (INSERT, 300)]);
    let (shapes, notes) = build(&Input {
        transactions: &txs,
        counts: Some(&c),
        period_s: None,
    });
    assert_eq!(shapes.len(), 2, "{:?}", summary(&shapes));
    assert!(notes.is_empty(), "{notes:?}");
}

/// psycopg 3's defer seen twice in a transaction now and then (its prepare round trip shows
/// the text ended, then running again), among many transactions where its one run was seen
/// at length: one run each, not two. A statement seen run twice about as often as seen at
/// length once is run twice.
#[test]
fn a_rare_repeat_among_runs_seen_at_length_is_not_a_second_run() {
    const DEFER: &str = "select defer_job($1)";
    let shape_of = |repeats: usize, once: usize| {
        let mut txs = vec![seen(&[(DEFER, 0.001), (DEFER, 0.003)], false); repeats];
        txs.extend(vec![seen(&[(DEFER, 0.001)], false); once]);
        let c = counts(&[(DEFER, 1000)]);
        let shapes = build(&Input {
            transactions: &txs,
            counts: Some(&c),
            period_s: None,
        })
        .0;
        (shapes[0].count, shapes[0].statements[0].per_tx)
    };
    assert_eq!(shape_of(3, 200), (1000.0, 1.0));
    assert_eq!(shape_of(40, 60), (500.0, 2.0));
}
