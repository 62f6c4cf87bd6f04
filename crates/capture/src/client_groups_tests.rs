//! The client groups from sessions and from busy sessions, without a server: kombu's
//! publish and get as the capture saw them (20 s at 364 tps: publish 225/s at 3.9 ms, get
//! 74/s at 79 ms, 10.2 of 12 sessions busy).

use super::*;

const LOOKUP: &str = "select kombu_queue.id from kombu_queue where kombu_queue.name = ? limit ?";
const INSERT: &str =
    "insert into kombu_message (id, visible, payload) values (nextval(?), true, ?)";
const CLAIM: &str = "select kombu_message.id as kombu_message_id from kombu_message where kombu_message.queue_id = ? order by kombu_message.timestamp, kombu_message.id limit ? for update";
const UPDATE: &str = "update kombu_message set visible=false where kombu_message.id = ?";

fn kombu() -> Vec<ShapeFacts> {
    let keys = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    vec![
        ShapeFacts {
            script: "shape_01.sql".into(),
            keys: keys(&[LOOKUP, INSERT]),
            tps: 224.6,
            latency_ms: Some(3.93),
            claim: false,
        },
        ShapeFacts {
            script: "shape_02.sql".into(),
            keys: keys(&[LOOKUP, CLAIM, UPDATE]),
            tps: 74.4,
            latency_ms: Some(79.1),
            claim: true,
        },
    ]
}

fn tx<'a>(session: &'a str, keys: &[&str]) -> (&'a str, Vec<String>) {
    (session, keys.iter().map(|s| s.to_string()).collect())
}

fn input<'a>(
    shapes: &'a [ShapeFacts],
    transactions: Vec<(&'a str, Vec<String>)>,
) -> GroupInput<'a> {
    GroupInput {
        shapes,
        transactions,
        seen: 12,
        mean_busy: 10.2,
        open_arrivals: false,
    }
}

fn summary(g: &[(Vec<usize>, ClientGroup)]) -> Vec<(String, Vec<usize>, u32, String)> {
    g.iter()
        .map(|(s, c)| (c.name.clone(), s.clone(), c.clients, c.sized_by.clone()))
        .collect()
}

#[test]
fn dedicated_sessions_are_groups_sized_by_the_sessions_seen() {
    let shapes = kombu();
    let names: Vec<String> = (0..12).map(|i| format!("pid{i}")).collect();
    let mut txs = Vec::new();
    for (i, s) in names.iter().enumerate() {
        for _ in 0..3 {
            if i < 4 {
                txs.push(tx(s, &[LOOKUP, INSERT]));
                txs.push(tx(s, &[INSERT]));
            } else {
                txs.push(tx(s, &[CLAIM]));
                txs.push(tx(s, &[LOOKUP, CLAIM, UPDATE]));
            }
        }
        // The lookup both shapes run, seen alone: either shape's, so no evidence.
        txs.push(tx(s, &[LOOKUP]));
    }
    let g = groups(&input(&shapes, txs));
    assert_eq!(
        summary(&g),
        [
            ("producers".into(), vec![0], 4, "sessions".into()),
            ("consumers".into(), vec![1], 8, "sessions".into())
        ]
    );
    // Each group idles (clients − busy) / tps: the producers most of their time.
    let producers = &g[0].1;
    assert_eq!(producers.scripts, ["shape_01.sql"]);
    // Busy: publish 225/s × (3.9 ms + 11.5 ms a transaction the latencies leave out: 10.2
    // sampled busy − 6.8 by the latencies, over 299 transactions/s) = 3.5, get 6.7.
    let idle = producers.idle_between_ms.unwrap_or_default();
    assert!(idle > 1.5 && idle < 3.5, "{producers:?}");
    assert!(g[1].1.busy > 6.5 && g[1].1.busy < 7.0, "{:?}", g[1].1);
}

#[test]
fn pooled_sessions_that_mix_shapes_group_a_claims_workers_by_the_sessions_busy_in_it() {
    // Through SQLAlchemy's pool every backend served producers and consumers alike.
    let shapes = kombu();
    let names: Vec<String> = (0..12).map(|i| format!("pid{i}")).collect();
    let mut txs = Vec::new();
    for s in &names {
        txs.push(tx(s, &[LOOKUP, INSERT]));
        txs.push(tx(s, &[CLAIM, UPDATE]));
    }
    let g = groups(&input(&shapes, txs));
    // Busy: publish 225/s × 3.9 ms = 0.88, get 74/s × 79 ms = 5.9, and 11.5 ms a
    // transaction the latencies leave out (10.2 sampled busy − 6.8, over 299/s): 3.5 and
    // 6.7 sessions.
    assert_eq!(
        summary(&g),
        [
            ("producers".into(), vec![0], 5, "busy".into()),
            ("consumers".into(), vec![1], 7, "busy".into())
        ]
    );
    let consumers = &g[1].1;
    assert!(
        consumers.idle_between_ms.unwrap_or(1.0) < 5.0,
        "{consumers:?}"
    );
}

#[test]
fn sessions_that_mix_shapes_without_a_claim_stay_one_weighted_group() {
    let mut shapes = kombu();
    shapes[1].claim = false;
    let txs = vec![
        tx("a", &[LOOKUP, INSERT]),
        tx("a", &[CLAIM, UPDATE]),
        tx("b", &[INSERT]),
    ];
    assert!(groups(&input(&shapes, txs)).is_empty());
}

#[test]
fn open_arrivals_a_single_shape_or_a_shape_no_session_showed_stay_as_they_were() {
    let shapes = kombu();
    let txs = || vec![tx("a", &[INSERT]), tx("b", &[CLAIM])];
    let mut open = input(&shapes, txs());
    open.open_arrivals = true;
    assert!(groups(&open).is_empty());
    assert!(groups(&input(&shapes[..1], txs())).is_empty());
    // The get never seen in a session of its own: not by sessions, but by its claim.
    let g = groups(&input(
        &shapes,
        vec![tx("a", &[INSERT]), tx("b", &[LOOKUP])],
    ));
    assert_eq!(
        g.iter()
            .map(|(_, c)| c.sized_by.as_str())
            .collect::<Vec<_>>(),
        ["busy", "busy"]
    );
}

#[test]
fn a_claim_is_told_by_its_limit_and_lock() {
    use crate::shapes::{ShapeModel, ShapeStatement};
    let model = |keys: &[&str]| ShapeModel {
        together: Default::default(),
        statements: keys
            .iter()
            .map(|k| ShapeStatement {
                key: k.to_string(),
                text: crate::sql_text::StatementText::parse(k, &[]),
                per_tx: 1.0,
                values: Vec::new(),
                mean_ms: None,
                calls: 0.0,
            })
            .collect(),
        autocommit: false,
        count: 0.0,
        observed: 0,
        gaps_s: Vec::new(),
        edge_gap_s: None,
        commit_gap_s: None,
        agreements: Default::default(),
    };
    let shapes = vec![Default::default(), Default::default()];
    let f = facts(
        &[model(&[LOOKUP, INSERT]), model(&[LOOKUP, CLAIM, UPDATE])],
        &shapes,
    );
    assert_eq!(f.iter().map(|s| s.claim).collect::<Vec<_>>(), [false, true]);
}

#[test]
fn clients_are_shared_in_proportion_at_least_one_each() {
    let parts = vec![(vec![0], 1.0), (vec![1], 30.0)];
    let out: Vec<u32> = apportion(&parts, 12).into_iter().map(|p| p.1).collect();
    assert_eq!(out, [1, 11]);
    let parts = vec![(vec![0], 4.0), (vec![1], 8.0)];
    let out: Vec<u32> = apportion(&parts, 12).into_iter().map(|p| p.1).collect();
    assert_eq!(out, [4, 8]);
}

#[test]
fn sessions_seen_too_few_times_are_no_evidence_of_their_kind() {
    // Twelve sessions seen once each always look dedicated: not grouped by sessions (the
    // claim's workers are still grouped by busy sessions; without a claim, one group).
    let mut shapes = kombu();
    let names: Vec<String> = (0..12).map(|i| format!("pid{i}")).collect();
    let txs: Vec<(&str, Vec<String>)> = names
        .iter()
        .enumerate()
        .map(|(i, s)| {
            tx(
                s,
                if i < 4 {
                    &[INSERT][..]
                } else {
                    &[CLAIM, UPDATE][..]
                },
            )
        })
        .collect();
    let g = groups(&input(&shapes, txs.clone()));
    assert!(g.iter().all(|(_, c)| c.sized_by == "busy"), "{g:?}");
    shapes[1].claim = false;
    assert!(groups(&input(&shapes, txs)).is_empty());
}
