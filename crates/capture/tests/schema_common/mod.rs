//! Shared helpers of the schema tests (a module of each, not a test of its own).
#![allow(dead_code)]

use hotbench_capture::schema::{capture_schema, SchemaCapture, SchemaOptions, TableName};
use hotbench_pgserver::{testing, ConnInfo};
use hotbench_wire::{Config, ConnectParams, Connection, Connector};

pub fn params(db: &ConnInfo) -> ConnectParams {
    let mut p = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    p.application_name = Some("capture-test".to_string());
    p
}

pub fn connect(db: &ConnInfo) -> Connection {
    Connector::new(params(db)).connect().expect("connect")
}

/// Runs `sql` (several statements) on `db`, as its owner.
pub fn exec(db: &ConnInfo, sql: &str) {
    let mut c = connect(db);
    if let Err(e) = c.simple_query(sql) {
        panic!("{e}\n--- in ---\n{}", &sql[..sql.len().min(4000)]);
    }
    c.close();
}

/// The first column of the first row of `sql`.
pub fn scalar(db: &ConnInfo, sql: &str) -> String {
    let mut c = connect(db);
    let r = c.simple_query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.close();
    r.last().and_then(|q| q.get(0, 0)).unwrap_or("").to_string()
}

pub fn capture(db: &ConnInfo, tables: &[TableName], opts: &SchemaOptions) -> SchemaCapture {
    let mut c = connect(db);
    let cap = capture_schema(&mut c, tables, opts).expect("capture");
    c.close();
    cap
}

/// Runs `sql` as a scenario's setup file runs: `{{…}}` expanded (no parameters), split
/// into statements, each run in turn.
pub fn run_as_setup(db: &ConnInfo, file: &str, sql: &str) {
    run_as_setup_in(db, None, file, sql)
}

/// As [`run_as_setup`], the session's `search_path` set to `schema` first (a scenario's own
/// schema) when given.
pub fn run_as_setup_in(db: &ConnInfo, schema: Option<&str>, file: &str, sql: &str) {
    let text = hotbench_scenario::params::Params::default()
        .substitute(sql, &std::collections::BTreeMap::new())
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(text, sql, "{file} changed under {{{{…}}}} expansion");
    let mut c = connect(db);
    if let Some(s) = schema {
        c.simple_query(&format!("set search_path = \"{s}\""))
            .expect("search_path");
    }
    if let Err(e) = hotbench_scenario::db::run_file(&mut c, file, &text) {
        panic!("{e}\n--- {file} ---\n{}", &sql[..sql.len().min(6000)]);
    }
    c.close();
}

/// Applies a capture in a fresh database the way a scenario's setup would, then ANALYZE;
/// returns it.
pub fn apply(prefix: &str, cap: &SchemaCapture) -> ConnInfo {
    let twin = testing::fresh_database(prefix);
    run_as_setup(&twin, "schema.sql", &cap.schema_sql);
    run_as_setup(&twin, "data.sql", &cap.data_sql);
    exec(&twin, "analyze");
    twin
}

pub fn t(schema: Option<&str>, name: &str) -> TableName {
    TableName::new(schema, name)
}

/// A schema whose every name and many values are hostile: quotes, spaces, unicode,
/// `{{…}}`, SQL. A `canary` table is what an injected statement would drop.
pub const HOSTILE_SOURCE: &str = r#"
create table canary (x int);
create schema "we""ird {{x}} sch";
create type "we""ird {{x}} sch"."e num" as enum ('a''b', '{{l}}', 'c"d', 'ü e', $$'); drop table canary; --$$);
create table "we""ird {{x}} sch"."Tab'le; drop table canary; --" (
    "id ""q"" ünï" int primary key,
    "{{p}}" text not null default '{{d}}',
    "select 1; --" int check ("select 1; --" > -1000000 and "{{p}}" <> '{{never}}'),
    "$$x$$" text,
    "état" "we""ird {{x}} sch"."e num",
    "tags[]" text[]
);
create index "ix ""i"" {{z}}" on "we""ird {{x}} sch"."Tab'le; drop table canary; --" ("{{p}}", "$$x$$");
insert into "we""ird {{x}} sch"."Tab'le; drop table canary; --"
select g,
       (array[$$'); drop table canary; --$$, '{{v}}', E'back\\slash', E'new\nline', 'ünï', '"q"'])[1 + g % 6],
       g % 97,
       case when g % 4 = 0 then null else '$$' || g || '$$' end,
       (array['a''b', '{{l}}', 'c"d', 'ü e', $$'); drop table canary; --$$])[1 + g % 5]::"we""ird {{x}} sch"."e num",
       array['{{a}}', 'q"uote', null, E'x\\y', 'comma,here']
from generate_series(1, 600) g;
create table "we""ird {{x}} sch"."child ""c"" {{k}}" (
    "ref ü" int not null references "we""ird {{x}} sch"."Tab'le; drop table canary; --",
    "v" text
);
insert into "we""ird {{x}} sch"."child ""c"" {{k}}" select 1 + g % 50, 'v' from generate_series(1, 300) g;
analyze;
"#;
pub const HOSTILE_SCHEMA: &str = "we\"ird {{x}} sch";
pub const HOSTILE_CHILD: &str = "child \"c\" {{k}}";
pub const HOSTILE_PARENT_SQL: &str = r#""we""ird {{x}} sch"."Tab'le; drop table canary; --""#;
