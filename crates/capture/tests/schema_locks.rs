//! Capture never queues behind a user's lock. With another session holding ACCESS EXCLUSIVE
//! on touched relations (DDL in flight), the capture ends within moments: what the server
//! would have to lock to deparse (a view, a partition, a default) is left out and named, the
//! rest is captured. With only a plain table locked (nothing the catalogs need to lock),
//! pg_dump, which would wait for its ACCESS SHARE lock, gives way to the catalogs at
//! `--lock-wait-timeout`, saying why. And the activity sampler's read (over
//! `pg_stat_get_activity(NULL)`, for its cost) sees what the `pg_stat_activity` view sees.

mod schema_common;

use std::time::{Duration, Instant};

use hotbench_capture::activity::{self, ACTIVITY_SQL};
use hotbench_capture::model::{Model, Relation};
use hotbench_capture::schema::{capture_schema, DumpSource, SchemaCapture, SchemaOptions};
use hotbench_pgserver::{testing, ConnInfo};
use schema_common::*;

fn timed_capture(db: &ConnInfo, tables: &[&str], dump: bool) -> SchemaCapture {
    let opts = SchemaOptions {
        dump: if dump {
            DumpSource::PgDump {
                params: Box::new(params(db)),
                bin_dir: Some(testing::shared().binaries().bin_dir.clone()),
            }
        } else {
            DumpSource::Catalogs
        },
        dump_timeout: Duration::from_secs(30),
        ..SchemaOptions::default()
    };
    let names: Vec<_> = tables.iter().map(|n| t(None, n)).collect();
    let mut c = connect(db);
    let t0 = Instant::now();
    let cap = capture_schema(&mut c, &names, &opts).expect("capture");
    let took = t0.elapsed();
    c.close();
    eprintln!(
        "pg_dump {dump}: {took:?}: {:?} {:?}",
        cap.source, cap.unreproducible
    );
    assert!(
        took < Duration::from_secs(10),
        "the capture waited {took:?}"
    );
    cap
}

#[test]
fn relations_locked_by_ddl_in_flight_never_hold_the_capture_up() {
    let db = testing::fresh_database("cap_locks");
    exec(
        &db,
        "create table held (id int primary key default 1, v text default 'x' check (v <> ''));
         create table parts (id int, k int, primary key (id, k)) partition by range (k);
         create table parts_1 partition of parts for values from (0) to (10);
         create view held_view as select * from held;
         create table free (id int primary key);
         create table plain (id int primary key, v text);
         insert into held select g from generate_series(1, 100) g;
         insert into free select g from generate_series(1, 50) g;
         insert into plain select g from generate_series(1, 50) g;
         analyze;",
    );
    let mut holder = connect(&db);
    holder
        .simple_query("begin; lock table held, parts, parts_1, held_view in access exclusive mode")
        .expect("lock");
    for dump in [false, true] {
        let cap = timed_capture(&db, &["held_view", "parts", "free"], dump);
        let all = cap.unreproducible.join("\n");
        assert!(all.contains("another session holds a lock"), "{all}");
        let free = cap
            .tables
            .iter()
            .find(|p| p.name == "free")
            .expect("free captured");
        assert_eq!(free.rows, 50);
        let twin = apply("cap_locks_twin", &cap);
        assert_eq!(scalar(&twin, "select count(*) from free"), "50");
    }
    holder.simple_query("rollback").expect("rollback");
    // pg_dump runs after the catalogs were read: a lock taken in between (here, before it
    // is called on its own) makes it give way at --lock-wait-timeout.
    holder
        .simple_query("begin; lock table plain in access exclusive mode")
        .expect("lock");
    let model = Model {
        relations: vec![Relation {
            schema: "public".into(),
            name: "plain".into(),
            ..Relation::default()
        }],
        server_version_num: connect(&db).server_version_num(),
        ..Model::default()
    };
    let t0 = Instant::now();
    let r = hotbench_capture::pgdump::dump(
        &model,
        &params(&db),
        Some(&testing::shared().binaries().bin_dir),
        Duration::from_secs(30),
    );
    let took = t0.elapsed();
    eprintln!("pg_dump behind a lock: {took:?}: {r:?}");
    assert!(took < Duration::from_secs(10), "pg_dump waited {took:?}");
    let why = r.expect_err("pg_dump got a lock it would have had to wait for");
    assert!(
        why.contains("pg_dump failed") && why.contains("lock"),
        "{why}"
    );
    holder.simple_query("rollback").expect("rollback");
    holder.close();
}

/// The read the sampler made before, through the view (as of 1d8ebb3).
const VIEW_SQL: &str = "select a.pid::int8, extract(epoch from a.xact_start)::float8, \
     extract(epoch from a.query_start)::float8, extract(epoch from a.state_change)::float8, \
     a.state, left(a.query, 4000) \
     from pg_stat_activity a where a.datname = current_database() \
       and a.backend_type = 'client backend' and a.pid <> pg_backend_pid() \
       and a.application_name <> E'hotbench diagnose' \
       and a.application_name not like E'hotbench-probe%' \
       and a.state is not null and a.state <> '' \
       and (a.state <> 'idle' or a.state_change > clock_timestamp() - interval '1 second')";

#[test]
fn the_activity_read_sees_what_the_view_sees() {
    let db = testing::fresh_database("cap_activity");
    let other = testing::fresh_database("cap_activity_other");
    // Idle in a transaction after a statement, in this database and in another one.
    let mut idle = connect(&db);
    idle.simple_query("begin; select 42 as \"wé\"")
        .expect("begin");
    let mut elsewhere = connect(&other);
    elsewhere.simple_query("begin; select 7").expect("begin");
    let mut c = activity::connect(&params(&db)).expect("the sampler's session");
    let new = c.simple_query(ACTIVITY_SQL).expect("the read");
    // The server's own time for the read, which the sampler's governor weighs.
    let server = activity::server_time(&new[0]).expect("the server's time");
    assert!((0.0..2.0).contains(&server), "{server}");
    let new = activity::rows(&new[0]);
    let old = c.simple_query(VIEW_SQL).expect("the view");
    let old = &old[0];
    assert_eq!(new.len(), old.rows.len(), "{new:?}");
    let mine = new
        .iter()
        .find(|r| r.query.contains("select 42"))
        .expect("the idle session's row");
    assert_eq!(mine.state, "idle in transaction");
    let same = old
        .rows
        .iter()
        .find(|r| r[0].as_deref() == Some(mine.pid.to_string().as_str()))
        .expect("the view's row");
    let f = |i: usize| same[i].as_deref().and_then(|v| v.parse::<f64>().ok());
    assert_eq!(
        (mine.xact_start, mine.query_start, mine.state_change),
        (f(1), f(2), f(3))
    );
    assert_eq!(same[5].as_deref(), Some(mine.query.as_str()));
    assert!(!mine.remote);
    assert!(
        !new.iter().any(|r| r.query.contains("select 7")),
        "another database's session: {new:?}"
    );
    c.close();
    idle.close();
    elsewhere.close();
}
