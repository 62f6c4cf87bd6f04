//! A captured schema and its generated data, applied to a fresh database: the tables, keys
//! and skew come back.

mod schema_common;

use hotbench_capture::schema::SchemaOptions;
use hotbench_pgserver::testing;
use schema_common::*;

#[test]
fn a_simple_table_round_trips() {
    let db = testing::fresh_database("cap_simple");
    exec(
        &db,
        "create table accounts (id int primary key, balance numeric not null default 0, note text);
         insert into accounts select g, g % 100, case when g % 3 = 0 then null else 'n' || g end
           from generate_series(1, 1000) g;
         analyze accounts;",
    );
    let cap = capture(&db, &[t(None, "accounts")], &SchemaOptions::default());
    eprintln!(
        "{}\n{}\n{:?}",
        cap.schema_sql, cap.data_sql, cap.unreproducible
    );
    let twin = apply("cap_simple_twin", &cap);
    assert_eq!(
        scalar(&twin, "select count(*) from accounts where false"),
        "0"
    );
}
