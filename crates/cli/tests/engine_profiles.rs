//! Engine profiles against a real PostgreSQL that raises YugabyteDB's and CockroachDB's exact
//! SQLSTATEs and messages from PL/pgSQL: conflicts are retried under the engine's documented
//! retry defaults, an ambiguous result (40003) never is. Neither engine's server runs here;
//! docs/engines.md says what has been run against the real ones.

mod common;

use common::case::Case;
use common::*;

/// A function that fails the way `engine` reports conflicts on the calls whose sequence value
/// is not a multiple of `every` (a sequence, because it survives the rollback of the failed
/// try), and a ledger of committed calls.
fn flaky_function(db: &hotbench_pgserver::ConnInfo, every: i64, raise: &str) {
    psql(
        db,
        &format!(
            "create sequence calls;
             create table ledger(n bigint primary key);
             create function flaky() returns bigint language plpgsql as $$
             declare n bigint := nextval('calls');
             begin
               if n % {every} <> 0 then {raise}; end if;
               insert into ledger values (n);
               return n;
             end $$;"
        ),
    );
}

#[test]
fn yugabytedb_conflicts_are_retried_with_its_defaults() {
    let case = Case::new("yb_profile", "begin;\nselect flaky();\ncommit;\n");
    let db = &case.db;
    // Three kinds of YugabyteDB 40001 conflict, in turn; every third call commits.
    flaky_function(
        db,
        3,
        "if n % 2 = 0 then raise exception 'Restart read required at: { read: { physical: 1 } }' using errcode = '40001';
         else raise exception 'could not serialize access due to concurrent update: Conflicts with higher priority transaction: 4ad0' using errcode = '40001'; end if",
    );
    let out = case
        .run("-n -t 5 -c 1 --retry-profile yugabytedb")
        .expect_code(0)
        .out;
    // Each transaction failed twice and committed on its third try: within 10 tries.
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("5/5"),
        "{out}"
    );
    assert_eq!(line_value(&out, "maximum number of tries:"), Some("10"));
    assert_eq!(line_value(&out, "total number of retries:"), Some("10"));
    assert_eq!(psql(db, "select count(*) from ledger").trim(), "5");
    let v = case.result();
    assert_eq!(v["config"]["retry"]["max_tries"], 10);
    assert_eq!(v["config"]["retry"]["backoff"]["kind"], "exp");
    assert_eq!(v["config"]["retry"]["backoff"]["min_us"], 2000);
}

#[test]
fn pgbench_profile_keeps_one_try() {
    let case = Case::new("pg_profile", "select flaky();\n");
    flaky_function(
        &case.db,
        2,
        "raise exception 'Restart read required at: x' using errcode = '40001'",
    );
    let out = case.run("-n -t 4 -c 1").expect_code(0).out;
    // pgbench's default: a serialization failure is a failed transaction, not a retry.
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("2/4"),
        "{out}"
    );
    assert_eq!(psql(&case.db, "select count(*) from ledger").trim(), "2");
}

#[test]
fn cockroachdb_ambiguous_result_is_never_retried() {
    let case = Case::new("crdb_profile", "begin;\nselect flaky();\ncommit;\n");
    let db = &case.db;
    flaky_function(
        db,
        1_000_000,
        "raise exception 'result is ambiguous: error=rpc error: code = Unavailable' using errcode = '40003'",
    );
    // Not retryable: the client aborts as pgbench's would (exit 2) after exactly one call.
    let err = case
        .run("-n -t 3 -c 1 --retry-profile cockroachdb")
        .expect_code(2)
        .err;
    assert!(err.contains("result is ambiguous"), "{err}");
    assert_eq!(psql(db, "select last_value from calls").trim(), "1");
    assert_eq!(psql(db, "select count(*) from ledger").trim(), "0");

    // Asking to retry it is refused before anything runs.
    let err = case
        .run("-n -t 1 --retry-on 55P03,40003")
        .expect_code(1)
        .err;
    assert!(
        err.contains("40003") && err.contains("never retried"),
        "{err}"
    );
    assert_eq!(psql(db, "select last_value from calls").trim(), "1");
}
