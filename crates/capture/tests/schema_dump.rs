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
    opts.functions = vec![t(None, "bump")];
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

/// procrastinate's shape, with hostile names: a function taking an array of a composite
/// type (whose fields are an enum, a domain over an enum's array and a composite) and one
/// returning a table's row type. Both sources create every signature type first, in
/// dependency order, and the table-typed function after its table; the functions run on
/// the twin. (Before: `type "…"[] does not exist` at the first function.)
#[test]
fn a_function_signature_types_are_created_before_it() {
    let db = testing::fresh_database("cap_sig");
    exec(
        &db,
        r#"
create schema "q ""s"" {{x}}";
create type "q ""s"" {{x}}"."st'at ""e""" as enum ('to do', 'it''s "done"');
create domain "q ""s"" {{x}}"."lbl; drop table canary" as "q ""s"" {{x}}"."st'at ""e"""[];
create type "q ""s"" {{x}}"."inner ü" as (n int, s "q ""s"" {{x}}"."st'at ""e""");
create type "q ""s"" {{x}}"."job ""to"" defer" as (
    queue text, st "q ""s"" {{x}}"."st'at ""e""", lbls "q ""s"" {{x}}"."lbl; drop table canary",
    inn "q ""s"" {{x}}"."inner ü");
create table "q ""s"" {{x}}"."jo bs" (id bigint primary key, queue text not null,
    st "q ""s"" {{x}}"."st'at ""e""" not null default 'to do');
create function "q ""s"" {{x}}"."de fer"(jobs "q ""s"" {{x}}"."job ""to"" defer"[])
  returns bigint[] language plpgsql as $$
declare r bigint[]; begin
  with ins as (insert into "q ""s"" {{x}}"."jo bs" (id, queue, st)
               select 1000 + row_number() over (), j.queue, j.st from unnest(jobs) j
               returning id)
  select array_agg(id) into r from ins; return r; end $$;
create function "q ""s"" {{x}}"."fe tch"(q text) returns "q ""s"" {{x}}"."jo bs"
  language sql as $$ select * from "q ""s"" {{x}}"."jo bs" where queue = q
    order by id limit 1 for update skip locked $$;
insert into "q ""s"" {{x}}"."jo bs" (id, queue) select g, 'q' || g % 3 from generate_series(1, 50) g;
analyze;
"#,
    );
    let tables = [t(Some("q \"s\" {{x}}"), "jo bs")];
    let fns = vec![
        t(Some("q \"s\" {{x}}"), "de fer"),
        t(Some("q \"s\" {{x}}"), "fe tch"),
    ];
    for (n, mut opts) in [SchemaOptions::default(), dump_opts(&db)]
        .into_iter()
        .enumerate()
    {
        opts.functions = fns.clone();
        let cap = capture(&db, &tables, &opts);
        assert_eq!(
            matches!(cap.source, SchemaSource::PgDump { .. }),
            n == 1,
            "{:?}",
            cap.source
        );
        assert!(
            !cap.unreproducible.iter().any(|u| u.contains("function")),
            "{:?}",
            cap.unreproducible
        );
        let twin = apply(&format!("cap_sig_twin{n}"), &cap);
        let q = |sql: &str| scalar(&twin, sql);
        assert_eq!(
            q(r#"select array_length("q ""s"" {{x}}"."de fer"(array[
                  row('qq', 'it''s "done"', '{to do}', row(1, 'to do'))::"q ""s"" {{x}}"."job ""to"" defer",
                  row('qq', 'to do', null, null)::"q ""s"" {{x}}"."job ""to"" defer"]), 1)"#),
            "2",
            "{}",
            cap.schema_sql
        );
        assert_eq!(
            q(r#"select (("q ""s"" {{x}}"."fe tch"('qq'))).queue"#),
            "qq",
            "{}",
            cap.schema_sql
        );
        assert_eq!(
            q("select count(*) from pg_class where relname = 'canary'"),
            "0"
        );
    }
}
