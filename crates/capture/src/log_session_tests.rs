//! Transactions from log excerpts PostgreSQL 15 wrote (`crates/capture/tests/log_server.rs`
//! makes them afresh from a real server; these are copies, so the rules are checked fast).

use crate::log::{read_log_from, LogOptions};
use crate::observed::ObservedTransaction;

fn read(text: &str, prefix: Option<&str>) -> Vec<ObservedTransaction> {
    let mut out = Vec::new();
    let opts = LogOptions {
        prefix: prefix.map(str::to_string),
        ..LogOptions::default()
    };
    read_log_from(text.as_bytes(), "pg.log", &opts, &mut |t| out.push(t)).expect("reads");
    out
}

fn sqls(t: &ObservedTransaction) -> Vec<&str> {
    t.statements.iter().map(|s| s.sql.as_str()).collect()
}

const SIMPLE: &str = "\
2026-11-28 08:02:28.255 UTC [18557] 6b0a8a94.487d 0 3/6 5 LOG:  duration: 0.018 ms  statement: begin
2026-11-28 08:02:28.255 UTC [18557] 6b0a8a94.487d 730 3/6 6 LOG:  duration: 0.229 ms  statement: select v from acct where id = 3 for update
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 730 3/6 7 LOG:  duration: 0.199 ms  statement: update acct
\t   set v = 95
\t where id = 3
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/0 8 LOG:  duration: 0.023 ms  statement: commit
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/7 9 LOG:  duration: 0.036 ms  parse <unnamed>: select v from acct where id = $1
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/7 10 LOG:  duration: 0.036 ms  bind <unnamed>: select v from acct where id = $1
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/7 11 DETAIL:  parameters: $1 = '4'
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/7 12 LOG:  duration: 0.007 ms  execute <unnamed>: select v from acct where id = $1
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/7 13 DETAIL:  parameters: $1 = '4'
2026-11-28 08:02:28.257 UTC [18557] 6b0a8a94.487d 0 3/8 14 LOG:  duration: 0.005 ms  statement: begin
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/8 18 LOG:  duration: 0.028 ms  execute <unnamed>: update acct set v = v - $1 where id = $2 and $3::text is null
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/8 19 DETAIL:  parameters: $1 = '5', $2 = '4', $3 = NULL
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/8 23 LOG:  duration: 0.003 ms  execute <unnamed>: select $1::text
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/8 24 DETAIL:  parameters: $1 = 'it''s
\ta tab\tx'
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/8 25 ERROR:  division by zero
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/8 26 STATEMENT:  select 1/0
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/0 27 ERROR:  current transaction is aborted, commands ignored until end of transaction block
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 731 3/0 28 STATEMENT:  select 1
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/0 29 LOG:  duration: 0.009 ms  statement: rollback
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/9 30 ERROR:  new row for relation \"acct\" violates check constraint \"acct_v_check\"
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/9 31 DETAIL:  Failing row contains (1, -1).
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/9 32 STATEMENT:  update acct set v = -1 where id = 1
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/0 33 LOG:  duration: 0.068 ms  statement: begin; update acct set v = v + 1 where id = 5; commit;
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/11 34 LOG:  duration: 0.015 ms  statement: start transaction isolation level repeatable read
2026-11-28 08:02:28.258 UTC [18557] 6b0a8a94.487d 0 3/0 35 LOG:  duration: 0.010 ms  statement: end
2026-11-28 08:02:28.259 UTC [18557] 6b0a8a94.487d 0  36 LOG:  disconnection: session time: 0:00:00.010 user=postgres database=app host=[local]
";

#[test]
fn simple_and_extended_protocol_blocks_errors_and_autocommit() {
    let t = read(SIMPLE, None);
    let shapes: Vec<Vec<&str>> = t.iter().map(sqls).collect();
    assert_eq!(
        shapes,
        [
            vec![
                "begin",
                "select v from acct where id = 3 for update",
                "update acct\n   set v = 95\n where id = 3",
                "commit"
            ],
            vec!["select v from acct where id = $1"],
            vec![
                "begin",
                "update acct set v = v - $1 where id = $2 and $3::text is null",
                "select $1::text",
                "select 1/0",
                "rollback"
            ],
            vec!["update acct set v = -1 where id = 1"],
            vec!["begin", "update acct set v = v + 1 where id = 5", "commit"],
            vec!["start transaction isolation level repeatable read", "end"],
        ]
    );
    assert!(t.iter().all(|t| t.complete && t.session == "6b0a8a94.487d"));
    assert_eq!(
        t.iter().map(|t| t.rolled_back).collect::<Vec<_>>(),
        [false, false, true, true, false, false]
    );
    assert_eq!(
        t.iter().map(|t| t.autocommit).collect::<Vec<_>>(),
        [false, true, false, true, false, false]
    );
    assert_eq!(t[1].statements[0].params, [Some("4".to_string())]);
    assert_eq!(
        t[2].statements[1].params,
        [Some("5".into()), Some("4".into()), None]
    );
    assert_eq!(t[2].statements[2].params, [Some("it's\na tab\tx".into())]);
    // Times: relative to the first message, start = logged end - duration; the extended
    // statement starts at its parse.
    let s = &t[0].statements;
    assert!(s[0].started_at_s >= 0.0 && s[0].started_at_s < 0.001);
    assert!(
        (s[2].started_at_s - (0.002 - 0.000199)).abs() < 1e-6,
        "{}",
        s[2].started_at_s
    );
    assert!((s[2].duration_s.unwrap() - 0.000199).abs() < 1e-6);
    let ext = &t[1].statements[0];
    assert!((ext.started_at_s - (0.002 - 0.000036)).abs() < 1e-6);
    assert!(ext.duration_s.unwrap() > 0.000036);
}

/// pgbench -M prepared (tpcb-like) as PostgreSQL logs it: named statements parsed once, then
/// bind/execute; `BEGIN;`/`END;` with their semicolons.
#[test]
fn pgbench_prepared_transactions() {
    let text = "\
2026-11-28 08:02:28.554 UTC [18563] 6b0a8a94.4883 0 3/48 2 LOG:  connection authorized: user=postgres database=app application_name=pgbench
2026-11-28 08:02:28.554 UTC [18563] 6b0a8a94.4883 0 3/49 3 LOG:  duration: 0.053 ms  parse P_0: BEGIN;
2026-11-28 08:02:28.554 UTC [18563] 6b0a8a94.4883 0 3/50 4 LOG:  duration: 0.017 ms  bind P_0: BEGIN;
2026-11-28 08:02:28.554 UTC [18563] 6b0a8a94.4883 0 3/50 5 LOG:  duration: 0.023 ms  execute P_0: BEGIN;
2026-11-28 08:02:28.555 UTC [18563] 6b0a8a94.4883 0 3/50 6 LOG:  duration: 0.236 ms  parse P_1: UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;
2026-11-28 08:02:28.555 UTC [18563] 6b0a8a94.4883 0 3/50 7 LOG:  duration: 0.306 ms  bind P_1: UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;
2026-11-28 08:02:28.555 UTC [18563] 6b0a8a94.4883 0 3/50 8 DETAIL:  parameters: $1 = '3800', $2 = '5059'
2026-11-28 08:02:28.555 UTC [18563] 6b0a8a94.4883 745 3/50 9 LOG:  duration: 0.149 ms  execute P_1: UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;
2026-11-28 08:02:28.555 UTC [18563] 6b0a8a94.4883 745 3/50 10 DETAIL:  parameters: $1 = '3800', $2 = '5059'
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 745 3/50 31 LOG:  duration: 0.005 ms  parse P_6: END;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 745 3/50 32 LOG:  duration: 0.002 ms  bind P_6: END;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 0 3/0 33 LOG:  duration: 0.014 ms  execute P_6: END;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 0 3/51 34 LOG:  duration: 0.002 ms  bind P_0: BEGIN;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 0 3/51 35 LOG:  duration: 0.001 ms  execute P_0: BEGIN;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 0 3/51 36 LOG:  duration: 0.024 ms  bind P_1: UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 0 3/51 37 DETAIL:  parameters: $1 = '-1543', $2 = '3711'
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 746 3/51 38 LOG:  duration: 0.046 ms  execute P_1: UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;
2026-11-28 08:02:28.556 UTC [18563] 6b0a8a94.4883 746 3/51 39 DETAIL:  parameters: $1 = '-1543', $2 = '3711'
";
    let t = read(text, Some("%m [%p] %c %x %v %l "));
    assert_eq!(t.len(), 2, "{t:#?}");
    assert_eq!(
        sqls(&t[0]),
        [
            "BEGIN",
            "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
            "END"
        ]
    );
    assert!(t[0].complete && !t[0].rolled_back);
    assert_eq!(
        t[0].statements[1].params,
        [Some("3800".into()), Some("5059".into())]
    );
    // Cut by the end of the log: incomplete.
    assert!(!t[1].complete);
    assert_eq!(
        t[1].statements[1].params,
        [Some("-1543".into()), Some("3711".into())]
    );
}

#[test]
fn a_log_that_begins_inside_a_transaction_and_pid_only_sessions() {
    // Two sessions by pid; 7 was inside a block when the log began; 8 did autocommit work.
    let text = "\
2024-05-01 10:00:00.100 UTC [7] LOG:  duration: 0.1 ms  statement: update t set n = n + 1 where id = 1
2024-05-01 10:00:00.150 UTC [8] LOG:  duration: 0.1 ms  statement: select 1
2024-05-01 10:00:00.200 UTC [7] LOG:  duration: 0.1 ms  statement: commit
2024-05-01 10:00:00.300 UTC [8] LOG:  duration: 0.1 ms  statement: begin
2024-05-01 10:00:00.400 UTC [8] LOG:  duration: 0.1 ms  statement: select 2
2024-05-01 10:00:00.500 UTC [8] FATAL:  terminating connection due to administrator command
some other program's line
2024-05-01 10:00:00.600 UTC [7] LOG:  duration: 0.1 ms  statement: select 3
";
    let t = read(text, None);
    let got: Vec<(String, Vec<&str>, bool, bool, bool)> = t
        .iter()
        .map(|t| {
            (
                t.session.clone(),
                sqls(t),
                t.autocommit,
                t.complete,
                t.rolled_back,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "7".into(),
                vec!["update t set n = n + 1 where id = 1", "commit"],
                false,
                false,
                false
            ),
            ("8".into(), vec!["select 1"], true, true, false),
            ("8".into(), vec!["begin", "select 2"], false, true, true),
            ("7".into(), vec!["select 3"], true, true, false),
        ]
    );
}

#[test]
fn log_statement_all_with_separate_durations_and_failures() {
    let text = "\
2024-05-01 10:00:00.000 UTC [7] LOG:  statement: begin
2024-05-01 10:00:00.001 UTC [7] LOG:  duration: 0.050 ms
2024-05-01 10:00:00.002 UTC [7] LOG:  execute S_1: update t set n = $1 where id = $2
2024-05-01 10:00:00.002 UTC [7] DETAIL:  parameters: $1 = '5', $2 = '1'
2024-05-01 10:00:00.004 UTC [7] LOG:  duration: 1.000 ms
2024-05-01 10:00:00.005 UTC [7] LOG:  statement: insert into u values (1)
2024-05-01 10:00:00.006 UTC [7] ERROR:  duplicate key value violates unique constraint \"u_pkey\"
2024-05-01 10:00:00.006 UTC [7] DETAIL:  Key (id)=(1) already exists.
2024-05-01 10:00:00.006 UTC [7] STATEMENT:  insert into u values (1)
2024-05-01 10:00:00.007 UTC [7] LOG:  statement: commit
2024-05-01 10:00:00.008 UTC [7] LOG:  duration: 0.010 ms
";
    let t = read(text, Some("%m [%p] "));
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(
        sqls(&t[0]),
        [
            "begin",
            "update t set n = $1 where id = $2",
            "insert into u values (1)",
            "commit"
        ]
    );
    assert!(t[0].rolled_back);
    assert_eq!(
        t[0].statements[1].params,
        [Some("5".into()), Some("1".into())]
    );
    assert!((t[0].statements[1].duration_s.unwrap() - 0.001).abs() < 1e-6);
}

#[test]
fn what_cannot_be_read_is_an_error_with_its_line() {
    let opts = LogOptions::default();
    let bad = "2024-05-01 10:00:00.000 UTC [7] LOG:  duration: x ms  statement: select 1\n";
    let err = read_log_from(bad.as_bytes(), "pg.log", &opts, &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().starts_with("pg.log:1: the duration \"x\""),
        "{err}"
    );
    let no_session = "2024-05-01 10:00:00.000 UTC LOG:  duration: 1 ms  statement: select 1\n";
    let opts = LogOptions {
        prefix: Some("%m ".into()),
        ..LogOptions::default()
    };
    let err = read_log_from(no_session.as_bytes(), "pg.log", &opts, &mut |_| {}).unwrap_err();
    assert!(
        err.to_string()
            .contains("has no a session id (%c) or process id (%p)"),
        "{err}"
    );
    let err = read_log_from(
        &b"hello\nworld\n"[..],
        "pg.log",
        &LogOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot tell this log's log_line_prefix"),
        "{err}"
    );
    let params = "2024-05-01 10:00:00.000 UTC [7] LOG:  duration: 1 ms  execute <unnamed>: select $1\n2024-05-01 10:00:00.000 UTC [7] DETAIL:  parameters: $1 = 'open\n";
    let err = read_log_from(
        params.as_bytes(),
        "pg.log",
        &LogOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("pg.log:1: the value of $1 has no closing quote"),
        "{err}"
    );
}

/// `log_statement = all` alone: a statement is logged before it runs, and nothing follows
/// the last one; a multi-statement string there is still split.
#[test]
fn the_last_statement_of_a_log_statement_log_is_read_like_the_others() {
    let text = "\
2024-05-01 10:00:00.000 UTC [7] app: LOG:  statement: begin read write; update t set n = 1; commit
";
    let t = read(text, Some("%m [%p] %a: "));
    assert_eq!(t.len(), 1, "{t:#?}");
    assert_eq!(
        sqls(&t[0]),
        ["begin read write", "update t set n = 1", "commit"]
    );
    assert!(t[0].complete && !t[0].autocommit);
}

#[test]
fn extended_protocol_autocommit_in_a_session_begun_before_the_log_is_cut_at_each_new_vxid() {
    // pgbench -M prepared, autocommit, in a session whose start the log does not hold (from
    // a CI run's log): each statement runs in a transaction id of its own (3/9, 3/10, 3/11),
    // and no `N/0` or BEGIN ever settles the session. Held until the log's end, the session's
    // 53 statements were one partial transaction, and its shape all three scripts in one.
    let text = "\
2026-11-28 20:11:54.482 UTC [17149] 6b0b358a.42fd 0 3/9 LOG:  duration: 0.464 ms  parse P0_0_0: SELECT q.defer_job('p');
2026-11-28 20:11:54.482 UTC [17149] 6b0b358a.42fd 0 3/9 LOG:  duration: 0.324 ms  bind P0_0_0: SELECT q.defer_job('p');
2026-11-28 20:11:54.483 UTC [17149] 6b0b358a.42fd 729 3/9 LOG:  duration: 0.485 ms  execute P0_0_0: SELECT q.defer_job('p');
2026-11-28 20:11:54.483 UTC [17149] 6b0b358a.42fd 0 3/10 LOG:  duration: 0.182 ms  parse P0_1_0: SELECT id, status FROM q.fetch_job(1)
2026-11-28 20:11:54.485 UTC [17149] 6b0b358a.42fd 0 3/10 LOG:  duration: 1.161 ms  bind P0_1_0: SELECT id, status FROM q.fetch_job(1)
2026-11-28 20:11:54.485 UTC [17149] 6b0b358a.42fd 731 3/10 LOG:  duration: 0.950 ms  execute P0_1_0: SELECT id, status FROM q.fetch_job(1)
2026-11-28 20:11:54.486 UTC [17149] 6b0b358a.42fd 0 3/11 LOG:  duration: 0.032 ms  bind P0_1_1: SELECT q.finish_job($1, 'done');
2026-11-28 20:11:54.486 UTC [17149] 6b0b358a.42fd 0 3/11 DETAIL:  parameters: $1 = '1'
2026-11-28 20:11:54.486 UTC [17149] 6b0b358a.42fd 732 3/11 LOG:  duration: 0.228 ms  execute P0_1_1: SELECT q.finish_job($1, 'done');
2026-11-28 20:11:54.486 UTC [17149] 6b0b358a.42fd 732 3/11 DETAIL:  parameters: $1 = '1'
";
    let t = read(text, None);
    let got: Vec<(Vec<&str>, bool, bool)> = t
        .iter()
        .map(|t| (sqls(t), t.autocommit, t.complete))
        .collect();
    assert_eq!(
        got,
        [
            (vec!["SELECT q.defer_job('p')"], true, true),
            (vec!["SELECT id, status FROM q.fetch_job(1)"], true, true),
            (vec!["SELECT q.finish_job($1, 'done')"], true, true),
        ]
    );
}
