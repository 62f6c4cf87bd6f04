//! A capture placed in a scenario's own schema: the search path's schemas written
//! unqualified (their objects land in the setup session's schema), another schema moved
//! under a new name, from the catalogs and from pg_dump alike; nothing lands in `public`.

mod schema_common;

use hotbench_capture::schema::{DumpSource, KeyRows, SchemaOptions, SchemaSource};
use hotbench_pgserver::testing;
use schema_common::*;

const SOURCE: &str = "
create type mood as enum ('sad', 'ok');
create table accounts (id serial primary key, mood mood not null default 'ok', note text);
insert into accounts (mood, note) select (array['sad','ok'])[1 + g % 2]::mood, 'n' || g from generate_series(1, 500) g;
create schema other;
create table other.ledger (id bigint generated always as identity primary key,
                           account_id int not null references public.accounts, amount int);
create index ledger_account on other.ledger (account_id);
insert into other.ledger (account_id, amount) select 1 + g % 500, g from generate_series(1, 1000) g;
create function other.total(a int) returns bigint language sql
  as 'select sum(amount) from other.ledger where account_id = a';
create view public.balances as select a.id, other.total(a.id) as total from public.accounts a;
analyze;
";

fn check(source: &str, dump: bool) {
    let db = testing::fresh_database(source);
    exec(&db, SOURCE);
    let twin = testing::fresh_database(&format!("{source}_twin"));
    exec(&twin, "create schema hb_twin; create schema unrelated;");
    let opts = SchemaOptions {
        place: vec![
            ("public".into(), None),
            ("other".into(), Some("hb_twin_other".into())),
        ],
        functions: vec![t(Some("other"), "total")],
        must_contain: vec![KeyRows {
            table: t(Some("other"), "ledger"),
            columns: vec!["id".into()],
            rows: vec![vec![Some("999999".into())]],
        }],
        dump: if dump {
            DumpSource::PgDump {
                params: Box::new(params(&db)),
                bin_dir: Some(testing::shared().binaries().bin_dir.clone()),
            }
        } else {
            DumpSource::Catalogs
        },
        ..SchemaOptions::default()
    };
    let cap = capture(
        &db,
        &[t(None, "balances"), t(Some("other"), "ledger")],
        &opts,
    );
    assert_eq!(
        matches!(cap.source, SchemaSource::PgDump { .. }),
        dump,
        "{:?}",
        cap.source
    );
    run_as_setup_in(&twin, Some("hb_twin"), "schema.sql", &cap.schema_sql);
    run_as_setup_in(&twin, Some("hb_twin"), "data.sql", &cap.data_sql);
    let q = |sql: &str| scalar(&twin, sql);
    assert_eq!(
        q("select count(*) from pg_class where relnamespace = 'public'::regnamespace and relname not like 'pg_stat_statements%'"),
        "0",
        "nothing in public: {}\n{}", q("select string_agg(relname, ', ') from pg_class where relnamespace = 'public'::regnamespace"),
        cap.schema_sql
    );
    assert_eq!(q("select count(*) from hb_twin.accounts"), "500");
    assert_eq!(q("select count(*) from hb_twin_other.ledger"), "1000");
    assert_eq!(
        q("select count(*) from hb_twin_other.ledger where id = 999999"),
        "1"
    );
    assert_eq!(
        q("select typnamespace::regnamespace::text from pg_type where typname = 'mood'"),
        "hb_twin"
    );
    assert_eq!(
        q("select count(*) from pg_class where relname = 'ledger_account' and relnamespace = 'hb_twin_other'::regnamespace"),
        "1"
    );
    assert_eq!(q("select hb_twin_other.total(1) > 0"), "t");
    assert_eq!(
        q("set search_path = hb_twin; select count(*) from balances"),
        "500"
    );
    exec(
        &twin,
        "set search_path = hb_twin; insert into accounts (note) values ('new')",
    );
}

#[test]
fn a_capture_goes_into_the_scenario_schema_from_the_catalogs() {
    check("cap_place", false);
}

#[test]
fn a_capture_goes_into_the_scenario_schema_from_pg_dump() {
    check("cap_place_dump", true);
}
