//! The queue's watermark consumers (scenarios/queue/watermark.sql) against the harness
//! server, one call at a time: the low-water mark their sweeps start from never passes a
//! job whose producer has not committed yet, nor one a consumer holds (it may roll back,
//! as a killed consumer does), so a sweep finds every job; once they are done the mark
//! catches up with the queue.

use std::path::Path;

use hotbench_pgserver::testing;
use hotbench_scenario::db;
use hotbench_wire::Connection;

/// A file of the shipped queue scenario, its parameters filled in.
fn queue_sql(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/queue")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .replace("{{clients}}", "4")
        .replace("{{backlog}}", "0")
        .replace("{{sweep_s}}", "0")
}

fn number(conn: &mut Connection, sql: &str) -> i64 {
    let r = conn
        .simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    db::scalar(&r).unwrap_or_else(|| panic!("{sql}: no value")) as i64
}

fn exec(conn: &mut Connection, sql: &str) {
    conn.simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// One consumer poll that sweeps (sweep period 0): the jobs it took.
fn poll(consumer: &mut Connection) -> i64 {
    number(
        consumer,
        "select take_after_watermark(1, interval '0 seconds')",
    )
}

fn low(conn: &mut Connection) -> i64 {
    number(conn, "select last_value from job_queue_low")
}

#[test]
fn low_water_mark_waits_for_uncommitted_and_held_jobs() {
    let pg = testing::shared();
    let dbase = pg
        .create_database(&format!("queue_low_water_{}", std::process::id()))
        .expect("database");
    let cfg = hotbench_wire::Config::parse(&dbase.socket_conninfo()).expect("conninfo");
    let connect = || db::connect(&cfg).expect("connect");
    let mut admin = connect();
    db::run_file(&mut admin, "schema.sql", &queue_sql("schema.sql")).expect("schema");
    db::run_file(&mut admin, "watermark.sql", &queue_sql("watermark.sql")).expect("watermark");
    let mut consumer = connect();
    let mut producer = connect();
    let job = "insert into job_queue (shard, payload) values (0, 'job') returning id";

    // Job 1's producer has drawn its id but not committed; job 2 is committed.
    exec(&mut producer, "begin");
    assert_eq!(number(&mut producer, job), 1);
    assert_eq!(number(&mut admin, job), 2);
    assert_eq!(poll(&mut consumer), 1, "job 2 taken");
    // Sweeps propose a new mark, then may not raise it past job 1 while its producer runs.
    for _ in 0..3 {
        assert_eq!(poll(&mut consumer), 0);
        assert_eq!(low(&mut admin), 0, "the mark passed an uncommitted job");
    }
    exec(&mut producer, "commit");
    assert_eq!(poll(&mut consumer), 1, "the sweep finds job 1");
    assert_eq!(poll(&mut consumer), 0);
    assert_eq!(low(&mut admin), 2, "jobs 1 and 2 done: the mark catches up");

    // Job 3, committed after the consumer's last proposal, then held by another consumer
    // (taken, not committed): visible, so the mark stays below it.
    exec(&mut producer, "begin");
    assert_eq!(number(&mut producer, job), 3);
    assert_eq!(poll(&mut consumer), 0, "job 3 not committed yet");
    exec(&mut producer, "commit");
    let mut holder = connect();
    exec(&mut holder, "begin");
    assert_eq!(
        number(&mut holder, "select take_jobs(array[3]::bigint[])"),
        1
    );
    for _ in 0..3 {
        assert_eq!(poll(&mut consumer), 0, "job 3 is held");
        assert_eq!(low(&mut admin), 2, "the mark passed a held job");
    }
    // The holder is killed: job 3 is back, and the sweep takes it.
    exec(&mut holder, "rollback");
    assert_eq!(poll(&mut consumer), 1, "job 3 taken after the rollback");
    assert_eq!(poll(&mut consumer), 0);
    assert_eq!(poll(&mut consumer), 0);
    assert_eq!(low(&mut admin), 3);
    assert_eq!(number(&mut admin, "select count(*) from job_done"), 3);
    for c in [consumer, producer, holder, admin] {
        c.close();
    }
}
