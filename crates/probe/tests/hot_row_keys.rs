//! Hot rows' keys read as diagnose reads them (database scope, read-only session), on rows a
//! test locks by hand (one holder idle in its transaction, waiters queued behind it): a table
//! owner's cast to text never runs (the key comes back decoded by hotbench), a control
//! character in a key keeps hot-row detection on, a partitioned table's rows count on the
//! partitioned table naming its partitions, and row-level security names rows by ctid with a
//! note, never a failed read; a function a table owner puts in `public` never stands in for
//! a built-in one.

use std::time::Duration;

use hotbench_pgserver::{testing, ConnInfo};
use hotbench_probe::{Probe, ProbeOptions, ProbeRecord};
use hotbench_wire::{Config, ConnectParams, Connection, Connector};

fn params(db: &ConnInfo, user: &str) -> ConnectParams {
    let mut p = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    p.application_name = Some("app".to_string());
    p.user = user.to_string();
    p
}

fn connect(db: &ConnInfo) -> Connection {
    Connector::new(params(db, &db.user))
        .connect()
        .expect("connect")
}

fn psql(db: &ConnInfo, sql: &str) -> String {
    hotbench_pgserver::server::psql(testing::shared().binaries(), db, sql).expect("psql")
}

/// [`testing::wait_until`] with the 60 s these tests allow.
fn wait_until(what: &str, done: impl FnMut() -> bool) {
    hotbench_pgserver::testing::wait_until(what, Duration::from_secs(60), done);
}

fn log_len() -> u64 {
    std::fs::metadata(testing::shared().log_file()).map_or(0, |m| m.len())
}

fn log_since(from: u64) -> String {
    let log = std::fs::read(testing::shared().log_file()).expect("server log");
    String::from_utf8_lossy(log.get(from as usize..).unwrap_or_default()).into_owned()
}

/// Locks each of `rows` (`select … for update` in one transaction left open), queues two
/// waiters on each (`waiter_sql` with `{}` = the row's condition), samples them as diagnose
/// does (as `user`) until a few `pg_locks` reads are done, and releases everything.
fn sample_waits_on(db: &ConnInfo, user: &str, table: &str, rows: &[&str]) -> ProbeRecord {
    let mut holder = connect(db);
    holder.simple_query("begin").expect("begin");
    for r in rows {
        holder
            .simple_query(&format!("select * from {table} where {r} for update"))
            .expect("hold");
    }
    let waiters: Vec<_> = rows
        .iter()
        .flat_map(|r| [r, r])
        .map(|r| {
            let mut c = connect(db);
            let sql = format!("select * from {table} where {r} for update");
            std::thread::spawn(move || {
                let _ = c.simple_query(&sql);
                c.close();
            })
        })
        .collect();
    let want = (2 * rows.len()).to_string();
    let mut watch = connect(db);
    wait_until("lock waiters", || {
        watch
            .simple_query(
                "select count(*) from pg_stat_activity \
                 where datname = current_database() and wait_event_type = 'Lock'",
            )
            .ok()
            .and_then(|r| r.first().and_then(|q| q.get(0, 0)).map(|v| v == want))
            .unwrap_or(false)
    });
    let mut opts = ProbeOptions::new("unused");
    opts.scope = hotbench_probe::Scope::Database;
    opts.connection_name = "hotbench diagnose".into();
    opts.observe_sessions = true;
    opts.read_only = true;
    opts.lock_timeout = Duration::from_millis(10);
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(100);
    let probe = Probe::start(&params(db, user), opts);
    // A pg_locks read (with the keys) every fifth sample.
    wait_until("four hot-row reads", || probe.progress().samples >= 21);
    let rec = probe.stop();
    holder.simple_query("commit").expect("commit");
    for w in waiters {
        w.join().expect("waiter");
    }
    holder.close();
    watch.close();
    eprintln!("hot rows {:?}\nnotes {:?}", rec.hot_rows, rec.notes);
    rec
}

#[test]
fn a_table_owners_cast_to_text_never_runs_when_keys_are_read() {
    let db = testing::fresh_database("keys_cast");
    let owner = format!("keys_owner_{}", std::process::id());
    let marker = format!("hotbench-attack-{}", std::process::id());
    // A table owner with no privileges beyond its own objects: an enum key whose cast to text
    // is its own function, which leaves a line in the server's log when it runs.
    psql(
        &db,
        &format!(
            "create role {owner} login; grant create on schema public to {owner};
             set role {owner};
             create type tier as enum ('gold', 'silver');
             create function tier_text(tier) returns text language plpgsql as
               $f$ begin raise log '{marker}'; return 'x'; end $f$;
             create cast (tier as text) with function tier_text(tier);
             create table acct (k tier primary key, v int not null);
             insert into acct values ('gold', 0), ('silver', 0);"
        ),
    );
    let from = log_len();
    let rec = sample_waits_on(&db, &db.user, "acct", &["k = 'gold'"]);
    assert_eq!(
        rec.hot_rows
            .first()
            .map(|r| (r.relation.as_str(), r.key.as_str())),
        Some(("acct", "k=gold")),
        "{:?} {:?}",
        rec.hot_rows,
        rec.notes
    );
    // The cast was never called (as a superuser, it would have run as one).
    let log = log_since(from);
    assert!(!log.contains(&marker), "the owner's function ran:\n{log}");
}

#[test]
fn a_control_character_in_a_key_keeps_hot_rows_on() {
    let db = testing::fresh_database("keys_ctl");
    psql(
        &db,
        "create table tags (name text primary key, n int not null);
         insert into tags values (E'a\\x01b', 0), ('plain', 0);",
    );
    let rec = sample_waits_on(&db, &db.user, "tags", &["name = E'a\\x01b'"]);
    assert_eq!(
        rec.hot_rows.first().map(|r| r.key.as_str()),
        Some("name=a\u{1}b"),
        "{:?} {:?}",
        rec.hot_rows,
        rec.notes
    );
}

#[test]
fn rows_of_two_partitions_count_on_the_partitioned_table() {
    let db = testing::fresh_database("keys_part");
    psql(
        &db,
        "create table \"Accounts\" (id int primary key, v int not null) partition by range (id);
         create table accounts_low partition of \"Accounts\" for values from (0) to (100);
         create table accounts_high partition of \"Accounts\" for values from (100) to (200);
         insert into \"Accounts\" select g, 0 from generate_series(1, 199) g;",
    );
    let rec = sample_waits_on(&db, &db.user, "\"Accounts\"", &["id = 1", "id = 150"]);
    let rels = &rec.sessions.as_ref().expect("sessions").relation_waits;
    assert_eq!(rels.len(), 1, "{rels:?}");
    assert_eq!(rels[0].relation, "\"Accounts\"");
    assert_eq!(rels[0].partitions, ["accounts_high", "accounts_low"]);
    let mut keys: Vec<(&str, &str)> = rec
        .hot_rows
        .iter()
        .map(|r| (r.relation.as_str(), r.key.as_str()))
        .collect();
    keys.sort();
    assert_eq!(keys, [("\"Accounts\"", "id=1"), ("\"Accounts\"", "id=150")]);
}

#[test]
fn row_level_security_names_rows_by_ctid_with_a_note_and_no_error() {
    let db = testing::fresh_database("keys_rls");
    let mon = format!("keys_mon_{}", std::process::id());
    psql(
        &db,
        &format!(
            "create table secrets (id int primary key, owner text not null);
             insert into secrets select g, 'x' from generate_series(1, 5) g;
             alter table secrets enable row level security;
             create policy mine on secrets using (owner = current_user);
             create role {mon} login in role pg_monitor;
             grant select on secrets to {mon};"
        ),
    );
    let from = log_len();
    let rec = sample_waits_on(&db, &mon, "secrets", &["id = 3"]);
    assert!(
        rec.hot_rows
            .first()
            .is_some_and(|r| r.relation == "secrets" && r.key.starts_with("ctid=(")),
        "{:?}",
        rec.hot_rows
    );
    assert!(
        rec.notes.iter().any(|n| n.contains("row-level security")),
        "{:?}",
        rec.notes
    );
    let log = log_since(from);
    assert!(
        !log.contains("ERROR:  permission denied")
            && !log.contains("ERROR:  query would be affected by row-level security"),
        "{log}"
    );
}

#[test]
fn a_table_owners_function_never_stands_in_for_a_builtin() {
    let db = testing::fresh_database("keys_path");
    let owner = format!("path_owner_{}", std::process::id());
    let marker = format!("hotbench-hijack-{}", std::process::id());
    // An aggregate over integer in public: a better match for `array_agg(a.pid)` than the
    // built-in polymorphic one, under any search_path that lists public.
    psql(
        &db,
        &format!(
            "create role {owner} login; grant create on schema public to {owner};
             set role {owner};
             create function public.hijack(int[], integer) returns int[] language plpgsql as
               $f$ begin raise log '{marker}'; return $1 || $2; end $f$;
             create aggregate public.array_agg(integer) (sfunc = public.hijack, stype = int[]);
             create table acct (id int primary key, v int not null);
             insert into acct values (1, 0);"
        ),
    );
    let from = log_len();
    let rec = sample_waits_on(&db, &db.user, "acct", &["id = 1"]);
    assert!(
        rec.sessions.as_ref().is_some_and(|s| s.rounds >= 2),
        "{:?}",
        rec.notes
    );
    let log = log_since(from);
    assert!(!log.contains(&marker), "the owner's aggregate ran:\n{log}");
}

#[test]
fn binary_values_decode_as_the_server_writes_them_in_text() {
    let db = testing::fresh_database("keys_decode");
    let mut c = connect(&db);
    c.simple_query("set timezone = 'UTC'; set extra_float_digits = 1")
        .expect("set");
    let exprs = [
        "32767::int2",
        "(-2147483648)::int4",
        "9223372036854775807::int8",
        "true",
        "'a''b\u{1}é'::text",
        "'pad'::char(5)",
        "'v'::varchar(3)",
        "'n'::name",
        "'0a0b0c0d-0e0f-1011-1213-141516171819'::uuid",
        "12345.678::numeric",
        "(-0.0500)::numeric",
        "100000000::numeric",
        "'NaN'::numeric",
        "0.000001::numeric",
        "'2026-11-28'::date",
        "'0044-03-15 BC'::date",
        "'infinity'::date",
        "'2000-01-02 01:02:03.5'::timestamp",
        "'1999-12-31 23:59:59.000001'::timestamptz",
        "4242::oid",
        "'\\xdead'::bytea",
        "1.5::float8",
    ];
    for e in exprs {
        // As the key read wrote keys before it decoded them itself: `k::text`.
        let sql = format!("select {e}");
        let text = c
            .simple_query(&format!("select ({e})::text"))
            .expect("text")[0]
            .get(0, 0)
            .map(str::to_string);
        let bin = c.query_binary(&sql, &[], &[]).expect("binary");
        let oid = bin.columns[0].1;
        let v = bin.rows[0][0].clone().expect("a value");
        let want = text.expect("a text value");
        let got = hotbench_probe::key_decode::decode(oid, "b", &v);
        assert_eq!(got, want, "{e} (type {oid})");
    }
    c.close();
}
