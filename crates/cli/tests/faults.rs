//! Faults during a run (issue: keep measuring, lose nothing): backends terminated mid-run,
//! a server crash-restart, a stalled server under -R, Ctrl-C twice. Each test checks that the
//! run finished, that the counts add up against the database, and that the JSON parses.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::case::{Case, Ran};
use common::*;
use hotbench_pgserver::{testing, ConnInfo};
use hotbench_results::{RunRecord, RunStatus};

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}
const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGCONT: i32 = 18;
const SIGSTOP: i32 = 19;

/// Backends of the benchmark's clients: those whose last query is `query_like`.
fn backend_pids(db: &ConnInfo, query_like: &str) -> Vec<i32> {
    psql(
        db,
        &format!(
            "select pid from pg_stat_activity where datname = '{}' and pid <> pg_backend_pid() and backend_type = 'client backend' and query like '{query_like}'",
            db.dbname
        ),
    )
    .lines()
    .filter_map(|l| l.trim().parse().ok())
    .collect()
}

/// A run whose every commit leaves a row in `ledger`, to compare with the client's counts.
fn ledger(db: ConnInfo, tag: &str) -> Case {
    psql(
        &db,
        "create table ledger(id bigserial primary key, client int not null);",
    );
    Case::on(
        db,
        tag,
        "begin;\ninsert into ledger(client) values (:client_id);\nselect pg_sleep(0.005);\ncommit;\n",
    )
}

/// Committed rows are in the ledger; a failed transaction may be in doubt only if the
/// connection died during COMMIT, never counted twice.
fn assert_ledger_matches(db: &ConnInfo, cnt: u64, conn_failed: u64) {
    let rows: u64 = psql(db, "select count(*) from ledger")
        .trim()
        .parse()
        .unwrap();
    assert!(
        rows >= cnt && rows <= cnt + conn_failed,
        "rows {rows}, cnt {cnt}, failed {conn_failed}"
    );
}

/// Transactions committed in the timeline's intervals ending after `t` seconds.
fn committed_after(v: &RunRecord, t: f64) -> u64 {
    v.timeline
        .iter()
        .filter(|i| i.t > t)
        .map(|i| i.totals.cnt)
        .sum()
}

fn counters(v: &RunRecord) -> (u64, u64, u64, u64) {
    let c = &v.totals.counters;
    (
        c.cnt,
        c.connection_failures,
        c.reconnects,
        c.disconnected_us,
    )
}

#[test]
fn terminated_backends_reconnect_and_nothing_is_double_counted() {
    let case = ledger(database("terminate"), "terminate");
    let db = &case.db;
    let child = case.spawn("-n -T 5 -c 4");
    wait_for_transactions(&case.json);
    let killed = psql(
        db,
        &format!(
            "select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = '{}' and pid <> pg_backend_pid() and backend_type = 'client backend'",
            db.dbname
        ),
    );
    let killed: u32 = killed.trim().parse().unwrap();
    assert!(
        killed >= 4,
        "four clients (and maybe a probe) were connected: {killed}"
    );
    let out = Ran::wait(child).expect_code(0).out;
    let v = case.record();
    let (cnt, conn_failed, reconnects, gap_us) = counters(&v);
    assert_eq!(reconnects, 4, "every client reconnects once:\n{out}");
    assert!(
        conn_failed >= 1,
        "transactions in flight fail as connection failures"
    );
    assert!(gap_us > 0);
    assert_ledger_matches(db, cnt, conn_failed);
    assert!(
        v.totals
            .counters
            .errors_by_sqlstate
            .get("57P01")
            .is_some_and(|n| *n >= 1),
        "{:?}",
        v.totals.counters.errors_by_sqlstate
    );
    assert!(out.contains("reconnects: 4"), "{out}");
    // Work went on after the reconnects.
    assert!(
        committed_after(&v, 3.0) > 0,
        "transactions after the reconnect"
    );
}

#[test]
fn server_crash_restart_mid_run_is_survived() {
    // Durable commits: with synchronous_commit off a crash legitimately loses acknowledged
    // transactions, and the ledger could not be compared with the client's count.
    let options = hotbench_pgserver::ClusterOptions {
        fast: false,
        ..testing::test_cluster_options()
    };
    let server = match testing::try_private(options) {
        Ok(s) => s,
        Err(e) => panic!("private server: {e}"),
    };
    let case = ledger(server.conninfo().clone(), "crash");
    let child = case.spawn("-n -T 7 -c 4");
    wait_for_transactions(&case.json);
    // Killing one backend makes the postmaster drop every session and recover: a restart.
    let pids = backend_pids(&case.db, "%");
    assert!(!pids.is_empty());
    unsafe { kill(pids[0], SIGKILL) };
    let out = Ran::wait(child).expect_code(0).out;
    let v = case.record();
    let (cnt, conn_failed, reconnects, gap_us) = counters(&v);
    assert!(
        reconnects >= 4,
        "all clients reconnect after the restart ({reconnects})\n{out}"
    );
    assert!(conn_failed >= 1);
    assert!(gap_us > 0);
    assert_ledger_matches(&case.db, cnt, conn_failed);
    assert!(
        committed_after(&v, 4.0) > 0,
        "transactions after the restart:\n{out}"
    );
}

#[test]
fn abort_on_disconnect_reproduces_pgbench() {
    let case = ledger(database("abortdisc"), "abortdisc");
    let db = &case.db;
    let child = case.spawn("-n -T 4 -c 2 --on-disconnect abort");
    wait_until(
        "both clients' first commits",
        Duration::from_secs(60),
        || psql(db, "select count(distinct client) from ledger").trim() == "2",
    );
    psql(
        db,
        &format!(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = '{}' and pid <> pg_backend_pid() and backend_type = 'client backend'",
            db.dbname
        ),
    );
    let err = Ran::wait(child).expect_code(2).err;
    assert!(err.contains("connection lost"), "{err}");
    assert!(err.contains("Run was aborted"), "{err}");
}

#[test]
fn a_stalled_server_shows_in_latency_and_schedule_lag() {
    let case = Case::new("stall", "select 1;\n");
    let db = &case.db;
    let child = case.spawn("-n -T 5 -c 2 -R 100");
    // Both clients are running once their backends have run the script's statement.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let pids = loop {
        let pids = backend_pids(db, "select 1;%");
        if pids.len() == 2 {
            break pids;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the clients never started: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    for p in &pids {
        unsafe { kill(*p, SIGSTOP) };
    }
    // The stall itself (the fault under test), not a wait for something to happen.
    std::thread::sleep(Duration::from_millis(1000));
    for p in &pids {
        unsafe { kill(*p, SIGCONT) };
    }
    Ran::wait(child).expect_code(0);
    let v = case.record();
    let c = &v.totals.counters;
    let max_lat_ms = v.totals.latency.max_ms;
    let lag_max_ms = c.lag.max / 1000.0;
    assert!(
        max_lat_ms >= 900.0,
        "the 1 s stall must show in latency: max {max_lat_ms} ms"
    );
    assert!(
        lag_max_ms >= 700.0,
        "and in schedule lag: max {lag_max_ms} ms"
    );
    // The schedule was kept: late transactions ran late instead of being dropped.
    let cnt = c.cnt;
    assert!(
        (400..=600).contains(&cnt),
        "about 500 transactions at 100/s for 5 s, got {cnt}"
    );
    let p99 = v.totals.latency.p99_ms;
    assert!(
        p99 >= 100.0,
        "the stall affects more than 1% of transactions: p99 {p99}"
    );
}

#[test]
fn second_ctrl_c_exits_at_once_and_json_stays_valid() {
    let case = Case::new("sigint2", "select 1;\n");
    let child = case.spawn("-n -T 60 -c 2");
    wait_for_transactions(&case.json);
    unsafe {
        kill(child.id() as i32, SIGINT);
        kill(child.id() as i32, SIGINT);
    }
    let start = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(o.status.code(), Some(130) | Some(2)),
        "{:?}",
        o.status
    );
    assert_eq!(case.record().format, hotbench_results::RESULT_FORMAT);
}

#[test]
fn embedded_server_is_stopped_after_double_ctrl_c() {
    let home = temp_dir("embedded_sigint");
    let xdg = home.join("data");
    std::fs::create_dir_all(&xdg).unwrap();
    for d in [&home, &xdg] {
        std::os::unix::fs::PermissionsExt::set_mode(
            &mut std::fs::metadata(d).unwrap().permissions(),
            0o755,
        );
        let _ = Command::new("chmod").arg("755").arg(d).status();
    }
    let env = |c: &mut Command| {
        private_home(c, &xdg);
    };
    let mut init = hotbench();
    init.args(["run", "-i", "-q"]);
    env(&mut init);
    let o = init.output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let json_path = home.join("run.json");
    let mut run = hotbench();
    run.args(["run", "-T", "60", "-c", "2", "-S", "-n", "--json"])
        .arg(&json_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    env(&mut run);
    let child = run.spawn().unwrap();
    wait_for_transactions(&json_path);
    unsafe {
        kill(child.id() as i32, SIGINT);
        kill(child.id() as i32, SIGINT);
    }
    let _ = child.wait_with_output().unwrap();
    // The guardian stops the server shortly after its owner died.
    let mut stopped = false;
    for _ in 0..100 {
        let mut st = hotbench();
        st.args(["server", "status"]);
        env(&mut st);
        let s = String::from_utf8_lossy(&st.output().unwrap().stdout).into_owned();
        if s.starts_with("stopped") {
            stopped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(stopped, "the embedded server must not outlive hotbench");
    let leftover = hotbench_pgserver::process::processes_in(&xdg);
    assert!(leftover.is_empty(), "postgres processes left: {leftover:?}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn transactions_blocked_past_the_end_are_cancelled_and_reported() {
    let case = Case::new("blocked", "update t set v = v + 1 where id = 1;\n");
    let db = &case.db;
    psql(
        db,
        "create table t(id int primary key, v int); insert into t values (1, 0);",
    );
    // Another session holds the row lock for 30 s.
    let pg = testing::shared();
    let psql_bin = pg.binaries().program("psql");
    let mut holder = Command::new(psql_bin)
        .args([
            "-X",
            "-q",
            "-h",
            db.socket_dir.to_str().unwrap(),
            "-p",
            &db.port.to_string(),
        ])
        .args(["-U", &db.user, "-d", &db.dbname])
        .args([
            "-c",
            "begin; update t set v = v + 1 where id = 1; select pg_sleep(30); commit;",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("lock holder");
    // The row is locked once the holder's statement has reached its pg_sleep.
    wait_until("the lock holder's update", Duration::from_secs(60), || {
        psql(
            db,
            &format!(
                "select count(*) from pg_stat_activity where datname = '{}' and wait_event = 'PgSleep'",
                db.dbname
            ),
        )
        .trim()
            == "1"
    });
    let t0 = std::time::Instant::now();
    let ran = case.run("-n -T 2 -c 2");
    let elapsed = t0.elapsed();
    let _ = holder.kill();
    let _ = holder.wait();
    let out = ran.expect_code(0).out;
    assert!(
        elapsed < Duration::from_secs(10),
        "the run must end soon after -T: {elapsed:?}"
    );
    assert_eq!(case.record().totals.counters.unfinished, 2, "{out}");
    assert!(out.contains("unfinished transactions: 2"), "{out}");
    // Cancelled on the server: nothing of ours is still waiting for the lock.
    let mut waiting = String::new();
    for _ in 0..20 {
        waiting = psql(
            db,
            &format!("select count(*) from pg_stat_activity where datname = '{}' and query like 'update t set%' and state = 'active' and pid <> pg_backend_pid()", db.dbname),
        );
        if waiting.trim() == "0" {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        waiting.trim(),
        "0",
        "our blocked updates must have been cancelled"
    );
}

/// Issue 13, item 11: a server that goes away mid-run and never comes back: the run is not
/// `completed` (status `disconnected`, exit 2), and the result says how many clients it lost.
#[test]
fn a_server_that_vanishes_mid_run_is_not_a_completed_run() {
    let server = testing::try_private(testing::test_cluster_options())
        .unwrap_or_else(|e| panic!("private server: {e}"));
    let case = Case::on(server.conninfo().clone(), "vanish", "select 1;\n");
    let child = case.spawn("-n -T 6 -c 3");
    // Poll until the clients run their script (past the connection phase: a backend counts
    // from its start-up, and a server stopped then failed the connection phase, exit 1),
    // then take the server away for good.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while backend_pids(&case.db, "select 1;%").len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "clients never connected"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server.stop();
    let err = Ran::wait(child).expect_code(2).err;
    assert!(err.contains("the server went away"), "{err}");
    let v = case.record();
    assert_eq!(v.status, RunStatus::Disconnected, "{:?}", v.notes);
    assert_eq!(v.totals.counters.ended_disconnected, 3);
}

/// Resumes stopped processes when dropped, so a failing test never leaves a server stopped.
struct Stopped(Vec<u32>);

impl Stopped {
    fn all(pids: Vec<u32>) -> Stopped {
        for p in &pids {
            unsafe { kill(*p as i32, SIGSTOP) };
        }
        Stopped(pids)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        for p in &self.0 {
            unsafe { kill(*p as i32, SIGCONT) };
        }
    }
}

/// Issue 36, row 14: the whole server stalls mid-run under -R and stays stalled past the
/// end. The run still ends on time (-T, its grace, a bounded cancel) and every scheduled
/// transaction is accounted for: committed, failed, skipped, unfinished (in flight,
/// cancelled) or unstarted (its scheduled start passed while the clients were held up).
#[test]
fn a_stall_until_the_end_of_a_rate_limited_run_is_accounted_and_ends_on_time() {
    let server = testing::try_private(testing::test_cluster_options())
        .unwrap_or_else(|e| panic!("private server: {e}"));
    let case = Case::on(server.conninfo().clone(), "stall_end", "select 1;\n");
    let t0 = std::time::Instant::now();
    let child = case.spawn("-n -T 3 -c 4 -R 200");
    wait_for_transactions(&case.json);
    let stopped = Stopped::all(hotbench_pgserver::process::processes_in(server.data_dir()));
    let ran = Ran::wait(child);
    let elapsed = t0.elapsed();
    drop(stopped);
    let out = ran.expect_code(0).out;
    eprintln!("stalled run took {elapsed:?}");
    // -T 3, the 2 s grace, at most 1 s of cancel requests, at most 2 s for the probe's
    // stuck query, and start-up (46 s before: 10 s per client's cancel request).
    assert!(
        elapsed < Duration::from_secs(12),
        "the run must end soon after -T plus its grace: {elapsed:?}\n{out}"
    );
    let v = case.result();
    let c = &v["totals"]["counters"];
    let n = |k: &str| c[k].as_u64().unwrap_or(0);
    let failed = n("serialization_failures")
        + n("deadlock_failures")
        + n("other_failures")
        + n("connection_failures");
    let accounted = n("cnt") + failed + n("skipped") + n("unfinished") + n("unstarted");
    // 200/s for 3 s is 600 scheduled starts (Poisson: ±3σ is ±75).
    assert!(
        (500..=700).contains(&accounted),
        "every scheduled transaction is accounted for: {accounted} of ~600\n{c}\n{out}"
    );
    assert_eq!(n("unfinished"), 4, "one in flight per client\n{out}");
    assert!(n("unstarted") > 0, "{out}");
    assert!(out.contains("unstarted transactions: "), "{out}");
}
