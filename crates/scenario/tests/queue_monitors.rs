//! The queue's monitors are sampled every second for the whole run, so none may cost more
//! as the run goes on: the age-at-dequeue monitor must read the ledger (job_done, which
//! grows all run) through its index on done_at, never scan it whole. Checked on the plan the
//! harness server chooses for the shipped monitor's SQL, with a ledger large enough that a
//! scan would be the visible difference.

use hotbench_pgserver::testing;
use hotbench_scenario::db;
use hotbench_scenario::source::builtin_bundles;

#[test]
fn age_at_dequeue_monitor_reads_the_ledger_through_its_index() {
    let queue = builtin_bundles()
        .into_iter()
        .find(|b| b.name == "queue")
        .expect("the queue scenario is built in");
    let scenario = hotbench_scenario::load(queue.clone()).expect("queue loads");
    let monitor = scenario
        .manifest
        .monitors
        .iter()
        .find(|m| m.name.starts_with("age at dequeue"))
        .expect("the age-at-dequeue monitor");
    let schema = queue.files["schema.sql"]
        .replace("{{clients}}", "4")
        .replace("{{backlog}}", "0");

    let pg = testing::shared();
    let dbase = pg
        .create_database(&format!("queue_monitors_{}", std::process::id()))
        .expect("database");
    let cfg = hotbench_wire::Config::parse(&dbase.socket_conninfo()).expect("conninfo");
    let mut conn = db::connect(&cfg).expect("connect");
    db::run_file(&mut conn, "schema.sql", &schema).expect("schema");
    // A ledger of 200,000 jobs done over the last ~3 minutes, about 1,000 in the last second.
    db::run_file(
        &mut conn,
        "ledger",
        "insert into job_done (id, shard, enqueued_at, done_at) \
         select g, 0, now(), now() - (200000 - g) * interval '1 millisecond' \
         from generate_series(1, 200000) as g; analyze job_done;",
    )
    .expect("ledger");

    let plan = conn
        .simple_query(&format!("explain (costs off) {}", monitor.sql))
        .expect("explain");
    let text = format!("{plan:?}");
    assert!(
        text.contains("job_done_done_at") && !text.contains("Seq Scan"),
        "the monitor must read job_done through job_done_done_at: {text}"
    );
}
