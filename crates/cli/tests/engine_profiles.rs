//! Engine profiles against a real PostgreSQL that raises YugabyteDB's and CockroachDB's exact
//! SQLSTATEs and messages from PL/pgSQL: conflicts are retried under the engine's documented
//! retry defaults, an ambiguous result (40003) never is. Neither engine's server runs here;
//! docs/engines.md says what has been run against the real ones.

mod common;

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
    let db = database("yb_profile");
    // Three kinds of YugabyteDB 40001 conflict, in turn; every third call commits.
    flaky_function(
        &db,
        3,
        "if n % 2 = 0 then raise exception 'Restart read required at: { read: { physical: 1 } }' using errcode = '40001';
         else raise exception 'could not serialize access due to concurrent update: Conflicts with higher priority transaction: 4ad0' using errcode = '40001'; end if",
    );
    let dir = temp_dir("yb_profile");
    let script = write_script(&dir, "flaky.sql", "begin;\nselect flaky();\ncommit;\n");
    let json_path = dir.join("yb.json");
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "5",
            "-c",
            "1",
            "--retry-profile",
            "yugabytedb",
            "-f",
            script.to_str().unwrap(),
            "--json",
            json_path.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // Each transaction failed twice and committed on its third try: within 10 tries.
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("5/5"),
        "{out}"
    );
    assert_eq!(line_value(&out, "maximum number of tries:"), Some("10"));
    assert_eq!(line_value(&out, "total number of retries:"), Some("10"));
    assert_eq!(psql(&db, "select count(*) from ledger").trim(), "5");
    let v = json(&json_path);
    assert_eq!(v["config"]["retry"]["max_tries"], 10);
    assert_eq!(v["config"]["retry"]["backoff"]["kind"], "exp");
    assert_eq!(v["config"]["retry"]["backoff"]["min_us"], 2000);
}

#[test]
fn pgbench_profile_keeps_one_try() {
    let db = database("pg_profile");
    flaky_function(
        &db,
        2,
        "raise exception 'Restart read required at: x' using errcode = '40001'",
    );
    let dir = temp_dir("pg_profile");
    let script = write_script(&dir, "flaky.sql", "select flaky();\n");
    let o = run(
        &db,
        &["-n", "-t", "4", "-c", "1", "-f", script.to_str().unwrap()],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // pgbench's default: a serialization failure is a failed transaction, not a retry.
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("2/4"),
        "{out}"
    );
    assert_eq!(psql(&db, "select count(*) from ledger").trim(), "2");
}

#[test]
fn cockroachdb_ambiguous_result_is_never_retried() {
    let db = database("crdb_profile");
    flaky_function(
        &db,
        1_000_000,
        "raise exception 'result is ambiguous: error=rpc error: code = Unavailable' using errcode = '40003'",
    );
    let dir = temp_dir("crdb_profile");
    let script = write_script(&dir, "flaky.sql", "begin;\nselect flaky();\ncommit;\n");
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "3",
            "-c",
            "1",
            "--retry-profile",
            "cockroachdb",
            "-f",
            script.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    // Not retryable: the client aborts as pgbench's would (exit 2) after exactly one call.
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(err.contains("result is ambiguous"), "{err}");
    assert_eq!(psql(&db, "select last_value from calls").trim(), "1");
    assert_eq!(psql(&db, "select count(*) from ledger").trim(), "0");

    // Asking to retry it is refused before anything runs.
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "1",
            "--retry-on",
            "55P03,40003",
            "-f",
            script.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("40003") && err.contains("never retried"),
        "{err}"
    );
    assert_eq!(psql(&db, "select last_value from calls").trim(), "1");
}
