//! The ladder runner against the harness server: a fixture scenario with a deliberately
//! broken variant (lost updates) is caught by its check on every run, and the good variant
//! passes.

use std::path::Path;

use hotbench_pgserver::testing;
use hotbench_scenario::{run_ladder, source::dir_bundles, LadderOptions};

fn options(conn: hotbench_wire::Config) -> LadderOptions<'static> {
    LadderOptions {
        conn,
        params: Vec::new(),
        variants: None,
        demo: false,
        settings: hotbench_engine::RunSettings {
            jobs: Some(2),
            ..Default::default()
        },
        random_seed: 1,
        target_description: "test".into(),
        embedded: false,
        fast: false,
        command_line: Vec::new(),
        probe: None,
        sharing: &(),
        progress: false,
        keep_schema: false,
        route: None,
        live: None,
        server: None,
    }
}

#[test]
fn broken_variant_is_caught_every_time() {
    let pg = testing::shared();
    let db = pg
        .create_database(&format!("scn_lost_{}", std::process::id()))
        .expect("database");
    let conn = hotbench_wire::Config::parse(&db.socket_conninfo()).expect("conninfo");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lost-update");
    let bundle = dir_bundles(&dir).expect("fixture").remove(0);
    let scn = hotbench_scenario::load(bundle).expect("fixture loads");
    for round in 0..3 {
        let mut log = Vec::new();
        let ladder =
            run_ladder(&scn, &options(conn.clone()), &mut log, &mut |_| {}).expect("ladder runs");
        let good = &ladder.variants[0];
        let bad = &ladder.variants[1];
        assert!(good.checks_ok(), "round {round}: {:?}", good.checks);
        assert!(!bad.checks_ok(), "round {round}: lost updates not caught");
        let failed = ladder.failed_checks();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].0, "read-then-write");
        assert!(failed[0].1.detail.contains("increments committed"));
        let table = hotbench_scenario::table::render(&ladder);
        assert!(
            table.contains("✘ read-then-write: check \"no increment lost\" failed"),
            "{table}"
        );
        // Issue 24: where the time went, per variant, and the ladder's wall time.
        let mut timed = 0.0;
        for v in &ladder.variants {
            let p = v.phases_s.as_ref().expect("phases_s of a variant that ran");
            assert!(p.run > 0.5 && p.setup > 0.0 && p.checks > 0.0, "{p:?}");
            timed += p.named().iter().map(|(_, s)| s).sum::<f64>();
        }
        let wall = ladder.wall_s.expect("wall_s");
        assert!(wall >= timed && wall < timed + 5.0, "{wall} vs {timed}");
        let log = String::from_utf8(log).unwrap();
        assert!(
            log.contains("ladder: ") && log.contains(" s wall, "),
            "{log}"
        );
    }
}

#[test]
fn a_second_ladder_on_the_same_database_stops_at_once() {
    let pg = testing::shared();
    let db = pg
        .create_database(&format!("scn_busy_{}", std::process::id()))
        .expect("database");
    let conn = hotbench_wire::Config::parse(&db.socket_conninfo()).expect("conninfo");
    // Another hotbench holding the scenario's lock.
    let mut other = hotbench_wire::Connector::new(conn.resolve().expect("resolve"))
        .connect()
        .expect("connect");
    other
        .simple_query("select pg_advisory_lock(hashtext('hotbench:hb_lost_update'))")
        .expect("lock");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lost-update");
    let scn = hotbench_scenario::load(dir_bundles(&dir).expect("fixture").remove(0)).unwrap();
    let err =
        run_ladder(&scn, &options(conn), &mut Vec::new(), &mut |_| {}).expect_err("must refuse");
    assert!(
        err.to_string()
            .contains("is already running on this database"),
        "{err}"
    );
    assert!(err.is_input());
    other.close();
}

/// Issue 12: a producer that falls behind its rate has a latency (from its schedule) of
/// seconds; the ladder's latency is the consumers' and must not include that lag, and the
/// producer is flagged as behind.
#[test]
fn consumer_latency_never_includes_producer_schedule_lag() {
    let pg = testing::shared();
    let db = pg
        .create_database(&format!("scn_lag_{}", std::process::id()))
        .expect("database");
    let conn = hotbench_wire::Config::parse(&db.socket_conninfo()).expect("conninfo");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/producer-lag");
    let scn = hotbench_scenario::load(dir_bundles(&dir).expect("fixture").remove(0)).unwrap();
    let ladder = run_ladder(&scn, &options(conn), &mut Vec::new(), &mut |_| {}).expect("runs");
    let v = &ladder.variants[0];
    assert_eq!(v.work_group.as_deref(), Some("consumer"));
    let all = v.record.as_ref().expect("record");
    let producer = all.group("producer").expect("producer group");
    // 3 s at ~25/s against 200/s asked: the last enqueues start seconds late.
    assert!(
        producer.totals.latency.p99_ms > 1000.0,
        "the producer should lag: p99 {} ms",
        producer.totals.latency.p99_ms
    );
    let work = v.work_record().expect("work record");
    let consumer = all.group("consumer").expect("consumer group");
    assert_eq!(work.totals.counters.cnt, consumer.totals.counters.cnt);
    assert!(
        work.totals.latency.p99_ms < producer.totals.latency.p99_ms / 5.0
            && work.totals.latency.max_ms < 1000.0,
        "consumer p99 {} ms / max {} ms must not include the producer's lag",
        work.totals.latency.p99_ms,
        work.totals.latency.max_ms
    );
    assert!(work.timeline.iter().all(|iv| iv.totals.lat_max_ms < 1000.0));
    let expected_rate = consumer.totals.goodput_per_s;
    assert_eq!(v.useful_per_s(), Some(expected_rate));
    assert_eq!(
        v.work_per_interval.iter().sum::<u64>(),
        consumer.totals.counters.goodput
    );
    let table = hotbench_scenario::table::render(&ladder);
    assert!(table.contains("/s of 200/s asked"), "{table}");
    assert!(table.contains("group \"consumer\" only"), "{table}");
    let p99_cell = format!("{:.2}", work.totals.latency.p99_ms);
    assert!(table.contains(&p99_cell), "{table}");
}

/// Issue 15: a manifest's `key` counts every group's transactions, a group's `key` that
/// group's only (the consumers set `lane` too, but it is the producer's key), and the
/// variant's record carries them as `hot_keys`.
#[test]
fn manifest_and_group_keys_are_recorded_per_variant() {
    let pg = testing::shared();
    let db = pg
        .create_database(&format!("scn_keys_{}", std::process::id()))
        .expect("database");
    let conn = hotbench_wire::Config::parse(&db.socket_conninfo()).expect("conninfo");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/producer-lag");
    let scn = hotbench_scenario::load(dir_bundles(&dir).expect("fixture").remove(0)).unwrap();
    let ladder = run_ladder(&scn, &options(conn), &mut Vec::new(), &mut |_| {}).expect("runs");
    let rec = ladder.variants[0].record.as_ref().expect("record");
    let attempts = |var: &str| -> u64 {
        rec.hot_keys
            .iter()
            .filter(|k| k.variable == var)
            .map(|k| k.attempts)
            .sum()
    };
    let group_txns = |g: &str| {
        let t = &rec.group(g).expect("group").totals.counters;
        t.cnt + t.failures()
    };
    assert!(group_txns("producer") > 0 && group_txns("consumer") > 0);
    assert_eq!(attempts("n"), group_txns("consumer"), "{:?}", rec.hot_keys);
    assert_eq!(
        attempts("lane"),
        group_txns("producer"),
        "{:?}",
        rec.hot_keys
    );
    for k in &rec.hot_keys {
        match k.variable.as_str() {
            "n" => assert_eq!(k.value, "0"),
            "lane" => assert!(["1", "2", "3"].contains(&k.value.as_str()), "{k:?}"),
            other => panic!("unexpected key variable {other}"),
        }
    }
}
