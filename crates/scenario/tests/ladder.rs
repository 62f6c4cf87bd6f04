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
        rtt_us: 0,
        threads: Some(2),
        random_seed: 1,
        interval_us: 1_000_000,
        target_description: "test".into(),
        embedded: false,
        fast: false,
        command_line: Vec::new(),
        probe: None,
        keep_schema: false,
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
