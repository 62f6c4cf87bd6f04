//! A captured schema and its generated data, applied to a fresh database and analyzed
//! there: row counts near reltuples × scale, keys unique and foreign keys valid (the twin
//! has the constraints, so the data went in under them), the skewed column's top value and
//! its share, the null fraction, and the rows that had to exist.

mod schema_common;

use hotbench_capture::schema::{KeyRows, SchemaOptions};
use hotbench_pgserver::testing;
use schema_common::*;

const SOURCE: &str = "
create type mood as enum ('sad', 'ok', 'happy');
create table accounts (
    id int primary key,
    owner text not null,
    mood mood not null,
    tags text[],
    nick text,
    balance numeric(12,2) not null default 0 check (balance >= -100)
);
insert into accounts
select g, 'owner ' || g, (array['sad','ok','happy'])[1 + g % 3]::mood,
       array['t' || (g % 5), 'x'], case when g % 5 < 2 then null else 'n' || g end, g % 1000
from generate_series(1, 4000) g;
create table history (
    hid bigserial primary key,
    account_id int not null references accounts,
    delta int not null,
    at timestamptz not null default now()
);
-- Zipf-ish: account 7 takes about 30%, account 3 about 15%, the rest spread.
insert into history (account_id, delta, at)
select case when g % 10 < 3 then 7 when g % 20 < 3 then 3 else 1 + (g * 7919) % 4000 end,
       g % 100 - 50, timestamptz '2024-01-01' + g * interval '1 minute'
from generate_series(1, 20000) g;
create table orders (id int primary key, account_id int references accounts, placed date not null);
insert into orders select g, 1 + g % 4000, date '2024-01-01' + g % 365 from generate_series(1, 3000) g;
create table order_lines (
    order_id int references orders,
    line_no int,
    qty int not null,
    primary key (order_id, line_no)
);
insert into order_lines select o, l, (o + l) % 7 + 1 from generate_series(1, 3000) o, generate_series(1, 3) l;
analyze;
";

fn top_mcv(db: &hotbench_pgserver::ConnInfo, table: &str, col: &str) -> (String, f64) {
    let v = scalar(
        db,
        &format!(
            "select most_common_vals::text from pg_stats where tablename = '{table}' and attname = '{col}'"
        ),
    );
    let f = scalar(
        db,
        &format!(
            "select most_common_freqs[1] from pg_stats where tablename = '{table}' and attname = '{col}'"
        ),
    );
    let first = v
        .trim_matches(['{', '}'])
        .split(',')
        .next()
        .unwrap_or("")
        .to_string();
    (first, f.parse().unwrap_or(0.0))
}

fn count(db: &hotbench_pgserver::ConnInfo, table: &str) -> f64 {
    scalar(db, &format!("select count(*) from {table}"))
        .parse()
        .unwrap()
}

#[test]
fn a_skewed_schema_round_trips() {
    let db = testing::fresh_database("cap_rt");
    exec(&db, SOURCE);
    let opts = SchemaOptions {
        must_contain: vec![KeyRows {
            table: t(None, "accounts"),
            columns: vec!["id".into()],
            rows: vec![vec![Some("3999".into())], vec![Some("123456".into())]],
        }],
        ..SchemaOptions::default()
    };
    let cap = capture(&db, &[t(None, "history"), t(None, "order_lines")], &opts);
    let twin = apply("cap_rt_twin", &cap);
    for (table, rows) in [
        ("accounts", 4000.0),
        ("history", 20000.0),
        ("orders", 3000.0),
        ("order_lines", 9000.0),
    ] {
        let n = count(&twin, table);
        assert!(
            (n - rows).abs() <= rows * 0.1,
            "{table}: {n} rows, wanted about {rows}\n{}",
            cap.data_sql
        );
    }
    // The constraints came along, so every row went in under them.
    let fks = scalar(&twin, "select count(*) from pg_constraint where contype = 'f' and connamespace = 'public'::regnamespace");
    assert_eq!(fks, "3");
    let pks = scalar(&twin, "select count(*) from pg_constraint where contype = 'p' and connamespace = 'public'::regnamespace");
    assert_eq!(pks, "4");
    let (src_top, src_f) = top_mcv(&db, "history", "account_id");
    let (twin_top, twin_f) = top_mcv(&twin, "history", "account_id");
    assert_eq!(src_top, "7");
    assert_eq!(twin_top, src_top, "the hottest key");
    assert!((twin_f - src_f).abs() <= 0.1, "share {twin_f} vs {src_f}");
    let nulls = |d| {
        scalar(
            d,
            "select null_frac from pg_stats where tablename = 'accounts' and attname = 'nick'",
        )
    };
    let (a, b): (f64, f64) = (nulls(&db).parse().unwrap(), nulls(&twin).parse().unwrap());
    assert!((a - b).abs() <= 0.05, "null_frac {b} vs {a}");
    assert_eq!(
        scalar(
            &twin,
            "select count(*) from accounts where id in (3999, 123456)"
        ),
        "2"
    );
    let moods = scalar(&twin, "select count(distinct mood) from accounts");
    assert_eq!(moods, "3");
    let tags = scalar(
        &twin,
        "select count(*) from accounts where tags is not null and cardinality(tags) = 2",
    );
    assert!(tags.parse::<f64>().unwrap() > 3000.0, "{tags}");
    let next = scalar(
        &twin,
        "select nextval('history_hid_seq') > (select max(hid) from history)",
    );
    assert_eq!(next, "t", "the sequence moved past the generated keys");
}

#[test]
fn scale_shrinks_and_grows_the_data() {
    let db = testing::fresh_database("cap_scale");
    exec(
        &db,
        "create table items (id int primary key, name text not null, price numeric);
         insert into items select g, 'item ' || g, g % 50 from generate_series(1, 2000) g;
         create table sales (id bigint generated always as identity primary key,
                             item_id int not null references items, qty int);
         insert into sales (item_id, qty) select case when g % 4 = 0 then 42 else 1 + g % 2000 end, g % 9
           from generate_series(1, 4000) g;
         analyze;",
    );
    for (scale, items, sales) in [(0.1, 200.0, 400.0), (10.0, 20000.0, 40000.0)] {
        let opts = SchemaOptions {
            scale,
            ..SchemaOptions::default()
        };
        let cap = capture(&db, &[t(None, "sales")], &opts);
        let twin = apply("cap_scale_twin", &cap);
        let (ni, ns) = (count(&twin, "items"), count(&twin, "sales"));
        eprintln!("--scale {scale}: items {ni} (want {items}), sales {ns} (want {sales})");
        assert!(
            (ni - items).abs() <= items * 0.1,
            "--scale {scale}: {ni} items"
        );
        assert!(
            (ns - sales).abs() <= sales * 0.1,
            "--scale {scale}: {ns} sales"
        );
        let (top, share) = top_mcv(&twin, "sales", "item_id");
        assert_eq!(top, "42", "--scale {scale}: the hot item");
        assert!(
            (share - 0.25).abs() <= 0.1,
            "--scale {scale}: its share {share}"
        );
        let p = cap.tables.iter().find(|p| p.name == "sales").unwrap();
        assert_eq!(p.rows as f64, sales);
    }
}

#[test]
#[ignore = "loads a million rows (about half a minute); run with --ignored to time the generator"]
fn a_million_rows_load_in_one_pass() {
    let db = testing::fresh_database("cap_million");
    exec(
        &db,
        "create table big (id bigint primary key, k int not null, v text);
         insert into big select g, case when g % 5 = 0 then 1 else g % 1000 end, 'v' || (g % 77)
           from generate_series(1, 1000000) g;
         analyze big;",
    );
    let cap = capture(&db, &[t(None, "big")], &SchemaOptions::default());
    eprintln!("data.sql for a million rows: {} bytes", cap.data_sql.len());
    let t0 = std::time::Instant::now();
    let twin = apply("cap_million_twin", &cap);
    eprintln!("loaded and analyzed in {:.1} s", t0.elapsed().as_secs_f64());
    let n = count(&twin, "big");
    assert!((n - 1e6).abs() <= 1e5, "{n}");
    let (top, share) = top_mcv(&twin, "big", "k");
    assert_eq!(top, "1");
    assert!((share - 0.2).abs() <= 0.1, "{share}");
}
