//! What diagnose's sampling costs a big server (a measurement, not a check: run with
//! `cargo test -p hotbench-diagnose --test cost -- --ignored --nocapture` under
//! `flock /tmp/hotbench-bench.lock`): 1,000 idle sessions, then 20 sessions whose last query
//! text is a megabyte, each sampled for 15 s at the default interval; prints the CPU time of
//! diagnose's server backend as a share of one core, the wait samples taken and the notes.
//! The figures are in docs/diagnosis.md ("Cost").

use std::time::Duration;

use hotbench_diagnose::{diagnose, Options};
use hotbench_pgserver::testing;
use hotbench_wire::{Config, Connection, Connector};

fn measure(what: &str, db: &hotbench_pgserver::ConnInfo) {
    let params = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    let d = diagnose(&params, &Options::new(Duration::from_secs(15)), &|| false).expect("diagnose");
    let cpu = d.probe.cost.server_cpu_ms.unwrap_or(f64::NAN);
    println!(
        "{what}: diagnose's backend {:.1}% of a core ({cpu:.0} ms CPU in {:.1} s), {} wait samples, \
         {} queries; notes: {:?}",
        cpu / (d.duration_s * 1000.0) * 100.0,
        d.duration_s,
        d.probe.samples,
        d.probe.cost.queries,
        d.notes
    );
}

#[test]
#[ignore = "a measurement (about a minute, 1,000 connections): run by hand under flock"]
fn sampling_cost_with_many_sessions_and_huge_query_texts() {
    let mut cluster = testing::test_cluster_options();
    cluster
        .settings
        .push(("track_activity_query_size".into(), "1MB".into()));
    let server = testing::private(cluster);
    let db = server.create_database("app").expect("database");
    let connect = || -> Connection {
        let p = Config::parse(&db.socket_conninfo())
            .and_then(|c| c.resolve())
            .expect("conninfo");
        Connector::new(p).connect().expect("connect")
    };
    measure("quiet server", &db);
    let mut idle: Vec<Connection> = (0..1000).map(|_| connect()).collect();
    measure("1,000 idle sessions", &db);
    idle.truncate(0);
    let text = format!("select 1 /* {} */", "x".repeat(1 << 20));
    let mut huge: Vec<Connection> = (0..20).map(|_| connect()).collect();
    for c in &mut huge {
        c.simple_query(&text).expect("huge query");
    }
    measure("20 sessions with 1 MB query texts", &db);
}
