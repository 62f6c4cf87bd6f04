//! `schema.sql` from pg_dump (the test server's own, a major as new as the server): the
//! hostile schema and a partitioned one round-trip through it; a `-t` pattern matches only
//! its own name (`*`, `?`, `.` and `"` in names are literal); the password never reaches
//! pg_dump's command line (it connects over the trusted socket here, so none is needed).

mod schema_common;

use hotbench_capture::schema::{DumpSource, SchemaOptions, SchemaSource};
use hotbench_pgserver::testing;
use schema_common::*;

fn dump_opts(db: &hotbench_pgserver::ConnInfo) -> SchemaOptions {
    SchemaOptions {
        dump: DumpSource::PgDump {
            params: Box::new(params(db)),
            bin_dir: Some(testing::shared().binaries().bin_dir.clone()),
        },
        ..SchemaOptions::default()
    }
}

#[test]
fn pg_dump_writes_the_schema_and_patterns_match_only_their_names() {
    let db = testing::fresh_database("cap_dump");
    exec(
        &db,
        r#"
create schema "s.p*c";
create table "s.p*c"."a*b?.""c" (id int generated always as identity primary key,
                                 v text default 'x', n serial);
create table "s.p*c"."aXb?.""c" (id int primary key);
create table "s.p*c"."a*b?.""cd" (id int primary key);
create table events (id int, at date, primary key (id, at)) partition by range (at);
create table events_a partition of events for values from ('2024-01-01') to ('2025-01-01');
create table events_b partition of events default;
create index on events (at);
create table refs (id int, at date, foreign key (id, at) references events);
insert into "s.p*c"."a*b?.""c" (v) select 'v' || g from generate_series(1, 300) g;
insert into events select g, date '2024-01-01' + g % 500 from generate_series(1, 1000) g;
insert into refs select g, date '2024-01-01' + g % 500 from generate_series(1, 200) g;
create function bump(int) returns int language sql as 'select $1 + 1';
analyze;
"#,
    );
    let mut opts = dump_opts(&db);
    opts.functions = vec!["bump".into()];
    let cap = capture(&db, &[t(Some("s.p*c"), "a*b?.\"c"), t(None, "refs")], &opts);
    assert!(
        matches!(&cap.source, SchemaSource::PgDump { version } if version.contains("pg_dump")),
        "{:?}",
        cap.source
    );
    assert!(!cap.schema_sql.contains("\\restrict"), "{}", cap.schema_sql);
    let twin = apply("cap_dump_twin", &cap);
    assert_eq!(
        scalar(
            &twin,
            r#"select count(*) from pg_class where relnamespace = '"s.p*c"'::regnamespace and relkind = 'r'"#
        ),
        "1",
        "a pattern matched another table:\n{}",
        cap.schema_sql
    );
    assert_eq!(
        scalar(&twin, r#"select count(*) from "s.p*c"."a*b?.""c""#),
        "300"
    );
    assert_eq!(
        scalar(&twin, "select count(*) from events"),
        "1000",
        "{}",
        cap.data_sql
    );
    assert_eq!(
        scalar(
            &twin,
            "select count(*) from pg_inherits where inhparent = 'events'::regclass"
        ),
        "2"
    );
    assert_eq!(scalar(&twin, "select bump(1)"), "2");
    // Identity and serial sequences were moved past the generated keys.
    exec(
        &twin,
        r#"insert into "s.p*c"."a*b?.""c" (v) values ('new')"#,
    );
}

#[test]
fn pg_dump_round_trips_hostile_names() {
    let db = testing::fresh_database("cap_dump_hostile");
    exec(&db, HOSTILE_SOURCE);
    let cap = capture(
        &db,
        &[t(Some(HOSTILE_SCHEMA), HOSTILE_CHILD)],
        &dump_opts(&db),
    );
    assert!(
        matches!(cap.source, SchemaSource::PgDump { .. }),
        "{:?}",
        cap.source
    );
    let twin = apply("cap_dump_hostile_twin", &cap);
    assert_eq!(
        scalar(
            &twin,
            "select count(*) from pg_class where relname = 'canary'"
        ),
        "0"
    );
    assert_eq!(
        scalar(
            &twin,
            &format!("select count(*) > 500 from {HOSTILE_PARENT_SQL}")
        ),
        "t"
    );
}

#[test]
fn no_usable_pg_dump_falls_back_to_the_catalogs_and_says_why() {
    let db = testing::fresh_database("cap_dump_none");
    exec(
        &db,
        "create table t (id int primary key); insert into t values (1); analyze t;",
    );
    let mut opts = dump_opts(&db);
    opts.dump = DumpSource::PgDump {
        params: Box::new(params(&db)),
        bin_dir: Some("/nonexistent-hotbench".into()),
    };
    let cap = capture(&db, &[t(None, "t")], &opts);
    match &cap.source {
        SchemaSource::Catalogs { why: Some(why) } => assert!(why.contains("pg_dump"), "{why}"),
        other => panic!("{other:?}"),
    }
    apply("cap_dump_none_twin", &cap);
}
