//! The probe against a real PostgreSQL from the harness, driven by plain connections (no
//! engine): a blocked update shows as a lock wait with its chain and hot relation, table and
//! database deltas (a checkpoint counted) add up, and failures (no server, no pg_stat_statements) are notes.

use std::time::Duration;

use hotbench_pgserver::{testing, ConnInfo};
use hotbench_probe::{Probe, ProbeOptions};
use hotbench_wire::{Config, ConnectParams, Connection, Connector};

fn params(db: &ConnInfo, app: &str) -> ConnectParams {
    let mut p = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    p.application_name = Some(app.to_string());
    p
}

fn connect(db: &ConnInfo, app: &str) -> Connection {
    Connector::new(params(db, app)).connect().expect("connect")
}

fn psql(db: &ConnInfo, sql: &str) -> String {
    hotbench_pgserver::server::psql(testing::shared().binaries(), db, sql).expect("psql")
}

/// [`testing::wait_until`] with the 60 s these tests allow.
fn wait_until(what: &str, done: impl FnMut() -> bool) {
    hotbench_pgserver::testing::wait_until(what, Duration::from_secs(60), done);
}

/// Checkpoints begun so far on the server, as the probe counts them.
fn checkpoints(db: &ConnInfo) -> i64 {
    let mut c = connect(db, "checkpoints");
    let sql = hotbench_probe::health::wal_sql(c.server_version_num());
    let r = c.simple_query(sql).expect("checkpoint count");
    c.close();
    r.first()
        .and_then(|r| r.get(0, 1))
        .and_then(|v| v.parse().ok())
        .expect("a checkpoint count")
}

#[test]
fn a_blocked_update_is_a_lock_wait_with_its_chain_and_relation() {
    let db = testing::fresh_database("probe_lock");
    psql(
        &db,
        "drop extension if exists pg_stat_statements;
         create table acct(id int primary key, v int not null);
         insert into acct select g, 0 from generate_series(1, 10) g;",
    );
    let app = hotbench_probe::unique_application_name();
    let mut opts = ProbeOptions::new(&app);
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(300);
    opts.tables = vec!["acct".into(), "no_such_table".into()];
    let probe = Probe::start(&params(&db, "setup"), opts);

    // Holder: row 1 locked in an open transaction. Waiters: two backends blocked on it,
    // from threads (their UPDATE returns once the holder commits).
    let mut holder = connect(&db, &app);
    holder
        .simple_query("begin; update acct set v = v + 1 where id = 1;")
        .expect("hold");
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let mut c = connect(&db, &app);
            std::thread::spawn(move || {
                c.simple_query("update acct set v = v + 1 where id = 1")
                    .expect("waiter");
                c.close();
            })
        })
        .collect();
    // Both waiters queued behind the holder, then 25 samples and 3 stats intervals of it.
    wait_until("both waiters blocked on the lock", || {
        psql(
            &db,
            &format!(
                "select count(*) from pg_stat_activity \
                 where application_name = '{app}' and wait_event_type = 'Lock'"
            ),
        )
        .trim()
            == "2"
    });
    let blocked = probe.progress();
    wait_until("25 samples and 3 intervals of blocked waiters", || {
        let p = probe.progress();
        p.samples >= blocked.samples + 25 && p.intervals >= blocked.intervals + 3
    });
    holder.simple_query("commit").expect("commit");
    for w in waiters {
        w.join().expect("waiter thread");
    }
    holder.close();
    // A checkpoint during the run is counted (server-wide: other tests may add more). The
    // checkpointer reports its count after releasing the CHECKPOINT command: wait for it.
    let before = checkpoints(&db);
    psql(&db, "checkpoint");
    wait_until("the checkpoint counted", || checkpoints(&db) > before);
    let rec = probe.stop();

    eprintln!("{}", serde_json::to_string_pretty(&rec).unwrap_or_default());
    assert!(rec.samples >= 20, "{}", rec.samples);
    // The holder idles in its transaction (a round trip), the first waiter waits for its
    // transaction, the second queues on the tuple: a third each.
    assert!(rec.lock_wait_pct() > 60.0, "{:?}", rec.waits);
    for e in ["Client:ClientRead", "Lock:transactionid", "Lock:tuple"] {
        let w = rec.waits.iter().find(|w| w.event == e);
        assert!(w.is_some_and(|w| w.pct > 25.0), "{e}: {:?}", rec.waits);
    }
    assert_eq!(rec.locks.max_waiting, 2);
    assert!(rec.locks.longest_chain >= 1, "{:?}", rec.locks);
    let hot = rec.locks.hot_relation.as_ref().map(|h| h.relation.as_str());
    assert_eq!(hot, Some("acct"), "{:?}", rec.locks);
    // Table and database deltas: three updates of acct, committed.
    let t = rec.tables.iter().find(|t| t.name == "acct").expect("acct");
    assert_eq!(t.updates, 3, "{t:?}");
    assert!(rec.server.database.as_ref().is_some_and(|d| d.commits >= 3));
    assert!(rec.server.wal_bytes.unwrap_or(0) > 0);
    assert!(rec.server.checkpoints.unwrap_or(0) >= 1, "{:?}", rec.server);
    assert!(rec.timeline.len() >= 3, "{:?}", rec.timeline.len());
    assert!(rec
        .timeline
        .iter()
        .any(|iv| iv.waits.keys().any(|k| k.starts_with("Lock:"))));
    // Degradations are single-line notes.
    assert!(
        rec.notes
            .iter()
            .any(|n| n == "tables not found: no_such_table"),
        "{:?}",
        rec.notes
    );
    assert!(
        rec.notes
            .iter()
            .any(|n| n.starts_with("statements: pg_stat_statements is not installed")),
        "{:?}",
        rec.notes
    );
    assert!(rec.notes.iter().all(|n| !n.contains('\n')));
    assert!(rec.cost.queries > 0);
    if cfg!(target_os = "linux") {
        // The harness server is local: its backend's CPU time is readable.
        assert!(rec.cost.server_cpu_ms.is_some(), "{:?}", rec.cost);
        assert!(rec.cost.client_cpu_ms.is_some(), "{:?}", rec.cost);
    }
}

#[test]
fn statements_are_diffed_without_reset() {
    let db = testing::fresh_database("probe_stmts");
    psql(
        &db,
        "create extension if not exists pg_stat_statements;
         create table q(id bigserial primary key, v int);",
    );
    let app = hotbench_probe::unique_application_name();
    let mut c = connect(&db, &app);
    // Calls before the probe starts are not counted.
    for _ in 0..5 {
        c.simple_query("insert into q(v) values (1)")
            .expect("insert");
    }
    let mut opts = ProbeOptions::new(&app);
    opts.stats_interval = Duration::from_millis(200);
    let probe = Probe::start(&params(&db, "setup"), opts);
    for _ in 0..40 {
        c.simple_query("insert into q(v) values (1)")
            .expect("insert");
    }
    // pg_stat_statements counts a statement before its result reaches the client; the
    // probe's final snapshot at stop sees all 40.
    c.close();
    let rec = probe.stop();
    let s = rec
        .statements
        .iter()
        .find(|s| s.query.starts_with("insert into q"))
        .unwrap_or_else(|| panic!("{:?} {:?}", rec.statements, rec.notes));
    assert_eq!(s.calls, 40, "{s:?}");
    assert!(s.shared_blks_hit_per_call > 0.0);
    assert!(
        rec.statements
            .iter()
            .all(|s| !s.query.contains("hotbench-probe")),
        "{:?}",
        rec.statements
    );
}

#[test]
fn an_unreachable_server_is_a_note_not_an_error() {
    let db = testing::shared().conninfo().clone();
    let mut p = params(&db, "x");
    for t in &mut p.targets {
        t.port = 1;
        t.host = hotbench_wire::Host::Tcp("127.0.0.1".into());
        t.hostaddr = None;
    }
    p.connect_timeout = Some(Duration::from_secs(2));
    let rec = Probe::start(&p, ProbeOptions::new("nobody")).stop();
    assert_eq!(rec.notes.len(), 1, "{:?}", rec.notes);
    assert!(
        rec.notes[0].starts_with("probe could not connect"),
        "{:?}",
        rec.notes
    );
    assert!(rec.waits.is_empty() && rec.top_wait_label().is_none());
}

#[test]
fn another_load_is_observed_read_only_with_its_statements_blockers_and_xmin_holder() {
    let db = testing::fresh_database("probe_observe");
    psql(
        &db,
        "create table acct(id int primary key, v int not null);
         insert into acct select g, 0 from generate_series(1, 10) g;
         create table other(id int);",
    );
    // Somebody else's sessions (any application_name): a snapshot held idle in a
    // transaction, a row lock held the same way, two updates queued behind it.
    let mut snapshot = connect(&db, "reporting");
    snapshot
        .simple_query("begin isolation level repeatable read; select count(*) from other;")
        .expect("snapshot");
    let mut holder = connect(&db, "app");
    holder
        .simple_query("begin; update acct set v = v + 1 where id = 1;")
        .expect("hold");
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let mut c = connect(&db, "app");
            std::thread::spawn(move || {
                c.simple_query("update acct set v = v + 1 where id = 1")
                    .expect("waiter");
                c.close();
            })
        })
        .collect();
    let mut watch = connect(&db, "watch");
    wait_until("two lock waiters", || {
        watch
            .simple_query(
                "select count(*) from pg_stat_activity \
                 where datname = current_database() and wait_event_type = 'Lock'",
            )
            .ok()
            .and_then(|r| r.first().and_then(|q| q.get(0, 0)).map(|v| v == "2"))
            .unwrap_or(false)
    });
    let mut opts = ProbeOptions::new("not-used-by-database-scope");
    opts.scope = hotbench_probe::Scope::Database;
    opts.connection_name = "observer under test".into();
    opts.observe_sessions = true;
    opts.read_only = true;
    opts.lock_timeout = Duration::from_millis(10);
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(100);
    let probe = Probe::start(&params(&db, "ignored"), opts);
    wait_until("four stats rounds", || probe.progress().intervals >= 4);
    let holder_pid = i64::from(holder.backend_pid());
    let snapshot_pid = snapshot.backend_pid().to_string();
    holder.simple_query("commit").expect("commit");
    for w in waiters {
        w.join().expect("waiter thread");
    }
    let rec = probe.stop();
    snapshot.simple_query("rollback").expect("rollback");
    for c in [snapshot, holder, watch] {
        c.close();
    }
    let s = rec.sessions.clone().expect("sessions observed");
    eprintln!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
    assert!(
        rec.notes.iter().all(|n| !n.contains("refusing")),
        "{:?}",
        rec.notes
    );
    // The two waiters' statement, normalized, with its lock waits and both sessions (by
    // query_id, the holder's last statement is the same one).
    let upd = s
        .statements
        .iter()
        .find(|st| st.query.contains("update acct set v = v + ? where id = ?"))
        .unwrap_or_else(|| panic!("{:?}", s.statements));
    assert!(upd.lock_waits > 0 && upd.sessions >= 2, "{upd:?}");
    // The holder blocks them, idle in its transaction; the row is acct's id=1.
    let b = &s.blockers[0];
    assert_eq!(b.state, "idle in transaction", "{:?}", s.blockers);
    assert_eq!(b.pids, [holder_pid]);
    assert_eq!(rec.hot_rows[0].key, "id=1", "{:?}", rec.hot_rows);
    assert_eq!(s.relation_waits[0].relation, "acct");
    assert!(rec.locks.longest_chain >= 1, "{:?}", rec.locks);
    // The snapshot is the oldest xmin at every read.
    let h = &s.xmin_holders[0];
    assert_eq!(
        (h.kind.as_str(), h.id.as_str()),
        ("session", snapshot_pid.as_str()),
        "{:?}",
        s.xmin_holders
    );
    assert_eq!(h.seen, s.xmin_rounds);
    assert_eq!(h.application_name, "reporting");
    // The observer's own and the watching sessions are apart from the sampled ones only by
    // scope: every busy sample is one of the test's sessions.
    assert!(s.busy_samples >= 4 * 3, "{}", s.busy_samples);
    assert!(s.in_transaction_gap_ms.is_none_or(|g| g < 1000.0 * 2.0));
}

/// The probe's connection ended under it (its backend terminated, the server still up): it
/// connects again after its back-off and samples on; the server did not restart, so its
/// counters carry on from the first baseline (the inserts before and after both counted)
/// and the record says when it was away.
#[test]
fn a_dropped_connection_is_taken_again_and_the_counters_carry_on() {
    let db = testing::fresh_database("probe_reconnect");
    psql(
        &db,
        "create table acct(id int primary key, v int not null);",
    );
    let app = hotbench_probe::unique_application_name();
    let mut opts = ProbeOptions::new(&app);
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(200);
    opts.tables = vec!["acct".into()];
    opts.connection_name = format!("hotbench-probe-{app}");
    let probe = Probe::start(&params(&db, "setup"), opts.clone());
    wait_until("a stats interval", || probe.progress().intervals >= 1);
    psql(
        &db,
        "insert into acct select g, 0 from generate_series(1, 10) g",
    );
    let ended = psql(
        &db,
        &format!(
            "select count(pg_terminate_backend(pid)) from pg_stat_activity \
             where application_name = '{}'",
            opts.connection_name
        ),
    );
    assert_eq!(ended.trim(), "1", "the probe's backend");
    psql(
        &db,
        "insert into acct select g, 0 from generate_series(11, 15) g",
    );
    let from = probe.progress().intervals;
    wait_until("intervals after the reconnection", || {
        probe.progress().intervals >= from + 5 && !probe.is_lost()
    });
    let rec = probe.stop();
    assert_eq!(
        rec.reconnects.len(),
        1,
        "{:?}\n{:?}",
        rec.reconnects,
        rec.notes
    );
    let r = &rec.reconnects[0];
    assert!(!r.server_restarted && r.back_s >= r.lost_s, "{r:?}");
    assert!(
        rec.notes
            .iter()
            .any(|n| n.ends_with("(the server had not restarted)"))
            && !rec.notes.iter().any(|n| n.contains("sampling stopped")),
        "{:?}",
        rec.notes
    );
    assert!(
        !rec.timeline.iter().any(|iv| iv.restarted),
        "no new baseline"
    );
    let t = rec.tables.first().expect("acct");
    assert_eq!(
        (t.name.as_str(), t.inserts),
        ("acct", 15),
        "{:?}",
        rec.tables
    );
}
