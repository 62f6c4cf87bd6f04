//! The probe's pooler figures from a real PgBouncer (started by the harness in front of the
//! shared server): clients queued behind a pool of one server connection show as waiting,
//! with their wait, in the summary and on the timeline; the admin console's facts (version,
//! pool mode and size) read as the checks before a run need them.

use std::time::{Duration, Instant};

use hotbench_pgserver::pgbouncer::PoolMode;
use hotbench_pgserver::testing;
use hotbench_probe::pooler::{self, AdminConsole, PoolerSource};
use hotbench_probe::{Probe, ProbeOptions};
use hotbench_wire::{Config, ConnectParams, Connector};

fn through(port: u16, db: &str, app: &str) -> ConnectParams {
    let pg = testing::shared();
    // The harness's PgBouncer wants the shared server's password.
    let mut p = Config::parse(&format!(
        "host=127.0.0.1 port={port} user={} dbname={db} password={}",
        pg.user(),
        pg.conninfo().password.as_deref().unwrap_or("")
    ))
    .and_then(|c| c.resolve())
    .expect("conninfo");
    p.application_name = Some(app.to_string());
    p
}

/// Polls `ready` (never a fixed sleep): panics after 30 s.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ready() {
        assert!(t0.elapsed() < Duration::from_secs(30), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn clients_queued_behind_a_pool_of_one_are_waiting_in_the_pooler() {
    let db = testing::fresh_database("probe_pooler");
    let bouncer = testing::pgbouncer(PoolMode::Transaction, 1);
    let port = bouncer.port();
    let admin = through(port, "pgbouncer", "test-admin");
    let mut console = AdminConsole::connect(&admin).expect("console");
    let facts = pooler::read_facts(&mut console, &db.dbname).expect("facts");
    assert_eq!(facts.version, bouncer.binary().version);
    assert_eq!(facts.pool_mode, "transaction");
    assert_eq!(facts.pool_size, Some(1));

    let app = hotbench_probe::unique_application_name();
    let mut opts = ProbeOptions::new(&app);
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(200);
    opts.pooler = Some(PoolerSource {
        admin: admin.clone(),
        databases: vec![db.dbname.clone()],
        user: Some(testing::shared().user().to_string()),
    });
    let direct = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    let probe = Probe::start(&direct, opts);

    // The holder takes the pool's only server connection; two more clients queue for it.
    let mut holder = Connector::new(through(port, &db.dbname, &app))
        .connect()
        .expect("holder");
    holder.simple_query("begin; select 1").expect("hold");
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let mut c = Connector::new(through(port, &db.dbname, &app))
                .connect()
                .expect("waiter");
            std::thread::spawn(move || {
                c.simple_query("select 1").expect("waiter's query");
                c.close();
            })
        })
        .collect();
    let waiting = |console: &mut AdminConsole| {
        let r = console.show("POOLS").expect("pools");
        let src = PoolerSource {
            admin: admin.clone(),
            databases: vec![db.dbname.clone()],
            user: None,
        };
        pooler::parse_pools(&r, &src).clients_waiting
    };
    wait_until("two clients waiting", || waiting(&mut console) == 2.0);
    // Let the probe take a few samples of the queue before releasing it.
    let from = probe.progress().samples;
    wait_until("the probe sampling the queue", || {
        probe.progress().samples >= from + 5
    });
    holder.simple_query("commit").expect("commit");
    for w in waiters {
        w.join().expect("waiter thread");
    }
    holder.close();
    console.close();
    let rec = probe.stop();
    let p = rec
        .pooler
        .as_ref()
        .expect("pooler figures in the probe record");
    assert_eq!(p.clients_waiting_max, 2, "{p:?}");
    assert!(p.wait_pct > 0.0 && p.max_wait_ms > 0.0, "{p:?}");
    assert!(p.transactions >= 3, "{p:?}");
    assert!(p.times.avg_wait_ms.is_some_and(|w| w > 0.0), "{p:?}");
    assert_eq!(
        p.pools,
        vec![format!("{}/{}", db.dbname, testing::shared().user())]
    );
    assert!(rec
        .timeline
        .iter()
        .any(|iv| iv.pooler.as_ref().is_some_and(|x| x.clients_waiting > 0.0)));
    assert!(
        rec.notes.iter().all(|n| !n.contains("pooler")),
        "{:?}",
        rec.notes
    );
    bouncer.stop();
}

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

/// SIGSTOPs a process until dropped (SIGCONT then, also when the test fails).
struct Stopped(u32);

impl Stopped {
    fn new(pid: u32) -> Stopped {
        unsafe { kill(pid as i32, 19) };
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        unsafe { kill(self.0 as i32, 18) };
    }
}

/// Issue 36, row 14: a pooler stalled (SIGSTOPped) at the end of a run holds the probe's
/// console read until its 10 s timeout; stop() cuts it after 2 s and keeps the samples.
#[test]
fn a_stalled_pooler_does_not_hold_the_probes_stop() {
    let db = testing::fresh_database("probe_pooler_stall");
    let bouncer = testing::pgbouncer(PoolMode::Transaction, 1);
    let admin = through(bouncer.port(), "pgbouncer", "test-admin");
    let app = hotbench_probe::unique_application_name();
    let mut opts = ProbeOptions::new(&app);
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(200);
    opts.pooler = Some(PoolerSource {
        admin,
        databases: vec![db.dbname.clone()],
        user: Some(testing::shared().user().to_string()),
    });
    let direct = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    let probe = Probe::start(&direct, opts);
    wait_until("a few samples", || probe.progress().samples >= 3);
    let stopped = Stopped::new(bouncer.pid());
    let t0 = Instant::now();
    let rec = probe.stop();
    let took = t0.elapsed();
    drop(stopped);
    assert!(
        took < Duration::from_secs(6),
        "the probe's stop waited {took:?} for a stalled pooler"
    );
    assert!(
        rec.samples >= 3,
        "the samples until the stall are kept: {:?}",
        rec.notes
    );
    bouncer.stop();
}
