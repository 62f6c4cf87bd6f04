use super::*;
use crate::observed::{ObservedStatement, ObservedTransaction};
use crate::shapes::{build, Input};
use crate::tracker::SampledTransaction;

fn tx(session: &str, sql: &str, params: &[&str]) -> SampledTransaction {
    SampledTransaction {
        tx: ObservedTransaction {
            session: session.into(),
            statements: vec![ObservedStatement {
                sql: sql.into(),
                params: params.iter().map(|p| Some(p.to_string())).collect(),
                started_at_s: 0.0,
                duration_s: Some(0.0001),
            }],
            autocommit: true,
            complete: true,
            rolled_back: false,
        },
        weights: vec![1.0],
        gaps_s: vec![None],
        offsets_s: vec![Some(0.0)],
    }
}

const FETCH: &str = "SELECT id, status FROM \"my \"\"q\"\" schema\".fetch_job($1::varchar[], $2)";
const FINISH: &str = "SELECT \"my \"\"q\"\" schema\".finish_job($1, $2)";

/// A pool's sessions: fetches and finishes on whichever connection, defers between them;
/// `ids` gives the finished job of call `i`.
fn queue(ids: impl Fn(usize) -> String) -> Vec<ShapeModel> {
    let mut txs = Vec::new();
    for i in 0..40 {
        let s = format!("s{}", i % 3);
        txs.push(tx(&s, "SELECT defer_job($1)", &["{\"a\": 1}"]));
        txs.push(tx(&s, FETCH, &["{jobs}", "1"]));
        txs.push(tx(
            &format!("s{}", (i + 1) % 3),
            FINISH,
            &[&ids(i), "succeeded"],
        ));
    }
    build(&Input {
        transactions: &txs,
        counts: None,
        period_s: None,
    })
    .0
}

fn args() -> BTreeMap<String, Vec<String>> {
    function_args(
        "CREATE OR REPLACE FUNCTION \"my \"\"q\"\" schema\".finish_job(job_id bigint, OUT ok boolean, end_status text)\n RETURNS boolean\n LANGUAGE plpgsql\nAS $function$ begin end $function$;\n\
         CREATE FUNCTION public.defer_job(character varying, p jsonb) RETURNS bigint AS $$ select 1 $$ LANGUAGE sql;",
    )
}

#[test]
fn function_args_read_the_names_a_call_passes() {
    let a = args();
    assert_eq!(
        a["finish_job"],
        vec!["job_id", "end_status"],
        "OUT left out"
    );
    assert_eq!(a["defer_job"], vec!["", "p"], "an unnamed two-word type");
}

#[test]
fn a_fetched_id_finished_once_is_chained() {
    let shapes = queue(|i| (100 + i).to_string());
    let fetch = shapes
        .iter()
        .position(|s| s.statements[0].key.contains("fetch_job"))
        .unwrap();
    let finish = shapes
        .iter()
        .position(|s| s.statements[0].key.contains("finish_job"))
        .unwrap();
    let c = detect(&shapes, &args());
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].from, c[0].to), (fetch, finish));
    assert_eq!((c[0].statement, c[0].slot), (0, (0, 0)));
    assert_eq!(c[0].column, "id");
    assert_eq!(c[0].pairs, 40.0);
    assert!(
        c[0].evidence.contains("40 distinct values in 40 calls"),
        "{}",
        c[0].evidence
    );
}

#[test]
fn no_chain_without_the_evidence() {
    // The same id every time: a replayed value, not a carried one.
    assert!(detect(&queue(|_| "7".into()), &args()).is_empty());
    // Distinct ids drawn at random (a client's pick), not rising as a queue's are taken.
    assert!(detect(&queue(|i| ((i * 7919) % 1000).to_string()), &args()).is_empty());
    // A queue's ids, a little out of order (concurrent workers): still chained.
    let jittered = |i: usize| {
        let j = match i % 8 {
            0 => i + 1,
            1 => i - 1,
            _ => i,
        };
        (100 + j).to_string()
    };
    assert_eq!(detect(&queue(jittered), &args()).len(), 1);
    // Without the argument's name, nothing says the id is the fetched row's.
    assert!(detect(&queue(|i| i.to_string()), &BTreeMap::new()).is_empty());
    // A name the fetch does not return (nor names the prefix of).
    let mut other = args();
    other.insert("finish_job".into(), vec!["user_id".into(), "s".into()]);
    assert!(detect(&queue(|i| i.to_string()), &other).is_empty());
}

#[test]
fn the_chained_statement_always_returns_one_row() {
    let col = crate::script::escape_identifiers(&quote_ident("i\"d:x"));
    assert_eq!(col, "U&\"i\"\"d\\003Ax\"");
    assert_eq!(
        carry_statement("SELECT id FROM f(:p1);", &quote_ident("id")),
        "WITH hotbench_chain AS (SELECT id FROM f(:p1)) SELECT (SELECT hotbench_chain.\"id\" FROM hotbench_chain WHERE hotbench_chain.\"id\" IS NOT NULL LIMIT 1) AS hotbench_carry, (SELECT count(hotbench_chain.\"id\") FROM hotbench_chain) AS hotbench_found"
    );
    assert_eq!(
        block("shape_03.sql", "why\n{{x}}", &["\\set a 1".into()], "SELECT g(:hotbench_carry);\n"),
        "-- chained: shape_03.sql's transaction takes the value this one returned (why { {x}}); run when one came\n\\if :hotbench_found\n\\set a 1\nSELECT g(:hotbench_carry);\n\\endif\n"
    );
}

/// psycopg 3 binds server-side: sampling shows `$1`, never the values.
fn queue_unseen(finishes: usize) -> Vec<ShapeModel> {
    let mut txs = Vec::new();
    for i in 0..40 {
        let s = format!("s{}", i % 3);
        txs.push(tx(&s, "SELECT defer_job($1)", &[]));
        txs.push(tx(&s, FETCH, &[]));
        if i < finishes {
            txs.push(tx(&format!("s{}", (i + 1) % 3), FINISH, &[]));
        }
    }
    build(&Input {
        transactions: &txs,
        counts: None,
        period_s: None,
    })
    .0
}

#[test]
fn a_fetch_and_finish_bound_server_side_are_chained_by_names_and_counts() {
    let shapes = queue_unseen(40);
    let c = detect(&shapes, &args());
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(shapes[c[0].from].statements[0].key.contains("fetch_job"));
    assert!(shapes[c[0].to].statements[0].key.contains("finish_job"));
    assert_eq!((c[0].column.as_str(), c[0].slot), ("id", (0, 0)));
    assert!(
        c[0].evidence.contains("values never seen: weaker evidence"),
        "{}",
        c[0].evidence
    );
    // Without the function's argument names nothing ties the two.
    assert!(detect(&shapes, &BTreeMap::new()).is_empty());
    // A fetch run twice in its transaction: which value would the finish take? Not
    // chained (and so the finish keeps its own weight).
    let mut twice = shapes.clone();
    twice[c[0].from].statements[0].per_tx = 2.0;
    assert!(detect(&twice, &args()).is_empty());
    // A fetch whose calls were split among shapes a little short of one a transaction
    // (a short log's shares): still once, still chained.
    let mut short = shapes.clone();
    short[c[0].from].statements[0].per_tx = 0.9;
    assert_eq!(detect(&short, &args()).len(), 1);
    // Fewer finishes than fetches (0.7 a fetch): no values to show each fetched id is
    // finished, so no chain.
    assert!(detect(&queue_unseen(28), &args()).is_empty());
}
