//! Hostile catalogs, a test each: names with quotes, spaces, unicode, `{{…}}` and SQL in
//! them; a table without a primary key; composite keys; partitioned tables; enum and array
//! columns with hostile values; 10,000 tables of which two are captured; a type that cannot
//! be reproduced (and triggers, policies) named in `unreproducible`. Each capture is applied
//! as a scenario's setup would apply it (`{{…}}` expansion, statement by statement): no
//! injected statement runs (a canary table survives, no stray object appears), nothing
//! panics.

mod schema_common;

use std::time::Instant;

use hotbench_capture::schema::{KeyRows, SchemaOptions};
use hotbench_pgserver::testing;
use schema_common::*;

const SCH: &str = "we\"ird {{x}} sch";
const TAB: &str = "Tab'le; drop table canary; --";

#[test]
fn hostile_names_and_values_round_trip_without_injection() {
    let db = testing::fresh_database("cap_names");
    exec(&db, HOSTILE_SOURCE);
    let opts = SchemaOptions {
        must_contain: vec![KeyRows {
            table: t(Some(SCH), TAB),
            columns: vec!["id \"q\" ünï".into(), "{{p}}".into()],
            rows: vec![vec![
                Some("900001".into()),
                Some("'); drop table canary; -- {{hot}}".into()),
            ]],
        }],
        ..SchemaOptions::default()
    };
    let cap = capture(&db, &[t(Some(SCH), "child \"c\" {{k}}")], &opts);
    assert_eq!(
        cap.tables.len(),
        2,
        "the child and the parent its key references"
    );
    let twin = apply("cap_names_twin", &cap);
    assert_eq!(
        scalar(&db, "select count(*) from canary"),
        "0",
        "the source's canary is there"
    );
    assert_eq!(
        scalar(
            &twin,
            "select count(*) from pg_class where relname = 'canary'"
        ),
        "0",
        "nothing but the captured tables was made"
    );
    let q = |sql: &str| scalar(&twin, sql);
    let parent = r#""we""ird {{x}} sch"."Tab'le; drop table canary; --""#;
    let child = r#""we""ird {{x}} sch"."child ""c"" {{k}}""#;
    let n: i64 = q(&format!("select count(*) from {parent}"))
        .parse()
        .unwrap();
    assert!((540..=661).contains(&n), "{n} parent rows");
    let n: i64 = q(&format!("select count(*) from {child}")).parse().unwrap();
    assert!((270..=330).contains(&n), "{n} child rows");
    assert_eq!(
        q(&format!(
            r#"select count(*) from {parent} where "id ""q"" ünï" = 900001
               and "{{{{p}}}}" = $$'); drop table canary; -- {{{{hot}}}}$$"#
        )),
        "1",
        "the row that must exist, hostile text and all"
    );
    assert_eq!(
        q(&format!(r#"select count(distinct "état") from {parent}"#)),
        "5",
        "every hostile enum label came back"
    );
    assert!(
        q(&format!(
            r#"select count(*) from {parent} where "{{{{p}}}}" = $$'); drop table canary; --$$"#
        ))
        .parse::<i64>()
        .unwrap()
            > 50,
        "a hostile most-common value is data, not SQL"
    );
    assert_eq!(
        q(r#"select count(*) from pg_indexes where indexname = 'ix "i" {{z}}'"#),
        "1"
    );
    assert_eq!(
        q(&format!(r#"select "tags[]"[2] from {parent} limit 1"#)),
        "q\"uote"
    );
}

#[test]
fn tables_without_primary_keys_and_with_composite_keys() {
    let db = testing::fresh_database("cap_keys");
    exec(
        &db,
        "create table nopk (a int, b text);
         insert into nopk select g % 10, 'x' from generate_series(1, 1000) g;
         create table trio (a int, b text, c smallint, d int, primary key (a, b, c), unique (d, c));
         insert into trio select g / 30, 'k' || (g / 3) % 10, g % 3, g from generate_series(0, 2999) g;
         analyze;",
    );
    let cap = capture(
        &db,
        &[t(None, "nopk"), t(None, "trio")],
        &SchemaOptions::default(),
    );
    let twin = apply("cap_keys_twin", &cap);
    let n: f64 = scalar(&twin, "select count(*) from nopk").parse().unwrap();
    assert!((900.0..=1100.0).contains(&n), "{n}");
    let dup: f64 = scalar(&twin, "select count(*) - count(distinct a) from nopk")
        .parse()
        .unwrap();
    assert!(
        dup > 900.0,
        "no key: values repeat as in the source ({dup})"
    );
    let n: f64 = scalar(&twin, "select count(*) from trio").parse().unwrap();
    assert!(
        (2700.0..=3300.0).contains(&n),
        "a composite key's rows all fit: {n}\n{}",
        cap.data_sql
    );
}

#[test]
fn partitioned_tables_keep_their_partitions_and_hot_rows() {
    let db = testing::fresh_database("cap_parts");
    exec(
        &db,
        "create table events (id bigint, at date not null, kind text, primary key (id, at, kind))
           partition by range (at);
         create table events_2023 partition of events for values from ('2023-01-01') to ('2024-01-01');
         create table events_2024 partition of events for values from ('2024-01-01') to ('2025-01-01')
           partition by list (kind);
         create table events_2024_a partition of events_2024 for values in ('a');
         create table events_2024_rest partition of events_2024 default;
         create table events_other partition of events default;
         create index on events (kind);
         insert into events select g, date '2023-01-01' + (g % 700), (array['a','b','c'])[1 + g % 3]
           from generate_series(1, 3000) g;
         create table notes (id bigint, at date, kind text, body text,
           foreign key (id, at, kind) references events);
         insert into notes select g, date '2023-01-01' + (g % 700), (array['a','b','c'])[1 + g % 3], 'n'
           from generate_series(1, 500) g;
         analyze;",
    );
    let opts = SchemaOptions {
        must_contain: vec![KeyRows {
            table: t(None, "events"),
            columns: vec!["id".into(), "at".into(), "kind".into()],
            rows: vec![vec![
                Some("777777".into()),
                Some("2024-06-01".into()),
                Some("b".into()),
            ]],
        }],
        ..SchemaOptions::default()
    };
    let cap = capture(&db, &[t(None, "notes")], &opts);
    assert_eq!(
        cap.tables.len(),
        7,
        "{:?}",
        cap.tables.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let twin = apply("cap_parts_twin", &cap);
    let parts = scalar(
        &twin,
        "select count(*) from pg_inherits where inhparent in ('events'::regclass, 'events_2024'::regclass)",
    );
    assert_eq!(parts, "5");
    let n: f64 = scalar(&twin, "select count(*) from events")
        .parse()
        .unwrap();
    assert!((2700.0..=3301.0).contains(&n), "{n}\n{}", cap.data_sql);
    let leaf = scalar(
        &twin,
        "select tableoid::regclass from events where id = 777777",
    );
    assert_eq!(
        leaf, "events_2024_rest",
        "the hot row is in the partition its key belongs to"
    );
    let n: f64 = scalar(&twin, "select count(*) from notes").parse().unwrap();
    assert!((450.0..=550.0).contains(&n), "{n}");
    let per_leaf: f64 = scalar(&twin, "select count(*) from events_2023")
        .parse()
        .unwrap();
    assert!(per_leaf > 1000.0, "{per_leaf} rows in 2023");
}

#[test]
fn ten_thousand_tables_and_two_captured_stays_quick() {
    let db = testing::fresh_database("cap_many");
    let t0 = Instant::now();
    exec(
        &db,
        "do $$ begin
           for k in 1..10000 loop
             execute format('create table t%s (id int, v int)', k);
           end loop;
         end $$;
         alter table t17 add primary key (id);
         alter table t9999 add foreign key (v) references t17;
         insert into t17 select g, g % 7 from generate_series(1, 1000) g;
         insert into t9999 select g, g % 3 + 1 from generate_series(1, 100) g;
         analyze t17; analyze t9999;",
    );
    eprintln!("made 10,000 tables in {:.1} s", t0.elapsed().as_secs_f64());
    let t0 = Instant::now();
    let cap = capture(
        &db,
        &[t(None, "t17"), t(None, "t9999")],
        &SchemaOptions::default(),
    );
    let took = t0.elapsed();
    eprintln!("captured 2 of 10,000 tables in {} ms", took.as_millis());
    assert!(took.as_secs_f64() < 5.0, "capture took {took:?}");
    assert_eq!(cap.tables.len(), 2);
    let twin = apply("cap_many_twin", &cap);
    assert_eq!(scalar(&twin, "select count(*) from t17"), "1000");
    assert_eq!(
        scalar(&twin, "select count(*) from pg_class where relkind = 'r' and relnamespace = 'public'::regnamespace"),
        "2"
    );
}

#[test]
fn what_cannot_be_reproduced_is_named() {
    let db = testing::fresh_database("cap_unrepro");
    exec(
        &db,
        "create type myint;
         create function myint_in(cstring) returns myint as 'int4in' language internal immutable strict;
         create function myint_out(myint) returns cstring as 'int4out' language internal immutable strict;
         create type myint (input = myint_in, output = myint_out, like = int4);
         create type pair as (a int, b text);
         create table gadgets (id int primary key, m myint, p pair, r numrange);
         insert into gadgets select g, null, row(g, 'x')::pair, numrange(g, g + 1) from generate_series(1, 200) g;
         create function touch() returns trigger language plpgsql as 'begin return new; end';
         create trigger gadgets_touch before update on gadgets for each row execute function touch();
         alter table gadgets enable row level security;
         create policy mine on gadgets using (true);
         create table never_analyzed (id int primary key, v text);
         insert into never_analyzed select g, 'x' from generate_series(1, 10) g;
         analyze gadgets;",
    );
    let opts = SchemaOptions {
        must_contain: vec![KeyRows {
            table: t(None, "gadgets"),
            columns: vec!["id".into()],
            rows: vec![
                vec![Some("12; drop table x".into())],
                vec![Some("9999".into())],
            ],
        }],
        ..SchemaOptions::default()
    };
    let cap = capture(
        &db,
        &[
            t(None, "gadgets"),
            t(None, "never_analyzed"),
            t(None, "missing"),
        ],
        &opts,
    );
    let all = cap.unreproducible.join("\n");
    for needle in [
        "\"12; drop table x\" is not a value of column \"id\"",
        "myint",
        "trigger \"gadgets_touch\"",
        "policy \"mine\"",
        "row-level security",
        "missing",
        "never_analyzed",
    ] {
        assert!(all.contains(needle), "{needle:?} not named in:\n{all}");
    }
    let twin = apply("cap_unrepro_twin", &cap);
    assert_eq!(scalar(&twin, "select count(*) from gadgets"), "200");
    assert_eq!(
        scalar(&twin, "select count(*) from gadgets where id = 9999"),
        "1"
    );
    assert_eq!(
        scalar(&twin, "select format_type(atttypid, atttypmod) from pg_attribute where attrelid = 'gadgets'::regclass and attname = 'm'"),
        "text"
    );
    assert_eq!(
        scalar(
            &twin,
            "select count(*) from pg_trigger where tgrelid = 'gadgets'::regclass"
        ),
        "0"
    );
}

#[test]
fn a_database_printing_dates_its_own_way_still_round_trips() {
    let db = testing::fresh_database("cap_datestyle");
    exec(
        &db,
        &format!(
            "alter database {} set datestyle = 'SQL, DMY';
             alter database {} set extra_float_digits = -10;",
            db.dbname, db.dbname
        ),
    );
    exec(
        &db,
        "create table visits (id int primary key, day date not null, at timestamp not null, w float8);
         insert into visits select g, date '2024-01-31' + g % 40, timestamp '2024-12-31 10:00' + g * interval '1 hour',
                case when g % 2 = 0 then 0.1234567890123 else 2.5 end
           from generate_series(1, 800) g;
         analyze visits;",
    );
    let cap = capture(&db, &[t(None, "visits")], &SchemaOptions::default());
    let twin = apply("cap_datestyle_twin", &cap);
    assert_eq!(scalar(&twin, "select count(*) from visits"), "800");
    assert_eq!(
        scalar(
            &twin,
            "select count(*) from visits where day between '2024-01-31' and '2024-03-10'"
        ),
        "800",
        "{}",
        cap.data_sql
    );
    assert_eq!(
        scalar(
            &twin,
            "select count(*) > 300 from visits where w = 0.1234567890123"
        ),
        "t",
        "a most-common float keeps every digit"
    );
}

#[test]
fn a_trigger_functions_body_is_read_but_not_reproduced() {
    let db = testing::fresh_database("cap_trigger_body");
    exec(
        &db,
        "create table jobs (id bigint primary key, q text);
         create function \"notify \"\"it\"\"\"() returns trigger language plpgsql as $$
         begin perform pg_notify('any_queue', new.q); return new; end $$;
         create trigger jobs_notify after insert on jobs for each row execute function \"notify \"\"it\"\"\"();",
    );
    let cap = capture(&db, &[t(None, "jobs")], &SchemaOptions::default());
    assert!(
        cap.trigger_sql
            .contains("perform pg_notify('any_queue', new.q)"),
        "{}",
        cap.trigger_sql
    );
    assert!(
        !cap.schema_sql.contains("pg_notify"),
        "the twin runs without the trigger"
    );
}
