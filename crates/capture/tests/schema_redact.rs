//! `--redact`: no value of the source reaches schema.sql, data.sql or the profiles; a hot
//! key maps to the same generated key in the data (the parent's row, the child's skew) as
//! `Redactor` maps it for scripts, and keeps its share.

mod schema_common;

use hotbench_capture::model::ValueKind;
use hotbench_capture::redact::Redactor;
use hotbench_capture::schema::{KeyRows, SchemaOptions};
use hotbench_pgserver::testing;
use schema_common::*;

#[test]
fn redacted_captures_hold_no_source_value_and_keep_the_hot_key() {
    let db = testing::fresh_database("cap_redact");
    exec(
        &db,
        "create table users (id int primary key, email text unique not null, plan text not null,
                             joined date not null);
         insert into users select g, 'user' || g || '@example.com',
                case when g % 10 < 6 then 'gold' else 'free' end, date '2020-01-01' + g % 900
           from generate_series(1, 3000) g;
         create table orders (id int primary key, user_id int not null references users);
         insert into orders select g, case when g % 10 < 3 then 7 else 1 + g % 3000 end
           from generate_series(1, 6000) g;
         analyze;",
    );
    let opts = SchemaOptions {
        redact: true,
        seed: 42,
        must_contain: vec![KeyRows {
            table: t(None, "users"),
            columns: vec!["id".into(), "email".into()],
            rows: vec![vec![
                Some("2999".into()),
                Some("user2999@example.com".into()),
            ]],
        }],
        ..SchemaOptions::default()
    };
    let cap = capture(&db, &[t(None, "orders")], &opts);
    let profiles = serde_json::to_string(&cap.tables).unwrap();
    for text in [&cap.schema_sql, &cap.data_sql, &profiles] {
        for secret in ["gold", "free", "@example.com", "user2999"] {
            assert!(!text.contains(secret), "{secret:?} leaked:\n{text}");
        }
    }
    let r = Redactor::new(42);
    let int4 = ValueKind::of_builtin(23);
    let hot = r.value(&int4, "7").unwrap();
    let must = r.value(&int4, "2999").unwrap();
    let email = r.value(&ValueKind::Text, "user2999@example.com").unwrap();
    let gold = r.value(&ValueKind::Text, "gold").unwrap();
    let twin = apply("cap_redact_twin", &cap);
    let top = scalar(
        &twin,
        "select (most_common_vals::text::int[])[1] from pg_stats where tablename = 'orders' and attname = 'user_id'",
    );
    assert_eq!(
        top, hot,
        "the hot key, redacted the same way scripts redact it"
    );
    let share: f64 = scalar(
        &twin,
        "select most_common_freqs[1] from pg_stats where tablename = 'orders' and attname = 'user_id'",
    )
    .parse()
    .unwrap();
    assert!((share - 0.3).abs() <= 0.1, "its share {share}");
    assert_eq!(
        scalar(
            &twin,
            &format!("select count(*) from users where id = {hot}")
        ),
        "1"
    );
    assert_eq!(
        scalar(&twin, &format!("select email from users where id = {must}")),
        email,
        "the row that must exist, redacted"
    );
    let plan: f64 = scalar(
        &twin,
        &format!("select avg((plan = '{gold}')::int) from users"),
    )
    .parse()
    .unwrap();
    assert!(
        (plan - 0.6).abs() <= 0.1,
        "the redacted most-common plan keeps its share: {plan}"
    );
}
