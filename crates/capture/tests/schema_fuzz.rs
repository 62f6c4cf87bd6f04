//! The capture's SQL text on hostile input: any name or value quoted by `sqltext` reads back
//! as itself on a real server and never holds `{{`; deparsed or dumped SQL of any shape goes
//! through the `{{…}}` guard and the schema placement without a panic, leaving no `{{`;
//! array text round-trips; the redactor never panics and keeps integers in their type.
//! Bounded case counts; `HOTBENCH_FUZZ_CASES=N` for a longer hunt.

mod schema_common;

use hotbench_capture::model::ValueKind;
use hotbench_capture::redact::Redactor;
use hotbench_capture::sqlnames::{place, Placement};
use hotbench_capture::sqltext::{array_text, guard_braces, ident, literal, parse_array};
use hotbench_pgserver::testing;
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("HOTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Text made of SQL's special characters, braces, quotes and some unicode.
fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("'".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just("$".to_string()),
            Just("$$".to_string()),
            Just(";".to_string()),
            Just("--".to_string()),
            Just("/*".to_string()),
            Just("*/".to_string()),
            Just("\n".to_string()),
            Just(" ".to_string()),
            Just(".".to_string()),
            Just("E'".to_string()),
            Just("U&".to_string()),
            Just("public".to_string()),
            Just("ü".to_string()),
            Just("::regclass".to_string()),
            "[a-z]{1,3}",
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    #[test]
    fn guarded_and_placed_text_never_holds_double_braces(sql in hostile()) {
        let mut m = Placement::new();
        m.insert("public".into(), None);
        m.insert("ü".into(), Some("x{{y".into()));
        let placed = place(&sql, &m);
        let g = guard_braces(&placed);
        prop_assert!(!g.contains("{{"), "{:?} -> {:?}", sql, g);
        prop_assert!(!ident(&sql).contains("{{"));
        prop_assert!(!literal(&sql).contains("{{"));
    }

    #[test]
    fn arrays_round_trip(items in proptest::collection::vec(proptest::option::of(hostile()), 0..6)) {
        prop_assert_eq!(parse_array(&array_text(&items)), Some(items));
    }

    #[test]
    fn the_redactor_keeps_integers_in_their_type(v in any::<i16>(), text in hostile(), seed in any::<u64>()) {
        let r = Redactor::new(seed);
        let int2 = ValueKind::of_builtin(21);
        let y: i64 = r.value(&int2, &v.to_string()).unwrap().parse().unwrap();
        prop_assert!((i16::MIN as i64..=i16::MAX as i64).contains(&y));
        for k in [ValueKind::Text, ValueKind::Decimal, ValueKind::Date, ValueKind::Uuid, ValueKind::Json,
                  ValueKind::Bytea, ValueKind::of_builtin(20), ValueKind::Array(Box::new(ValueKind::Text))] {
            let _ = r.value(&k, &text);
        }
    }
}

#[test]
fn quoted_names_and_values_read_back_as_themselves_on_a_server() {
    let db = testing::fresh_database("cap_fuzz");
    let c = std::cell::RefCell::new(schema_common::connect(&db));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases(64)));
    runner
        .run(
            &hostile().prop_filter("a name is not empty", |s| {
                !s.is_empty() && !s.contains('\0')
            }),
            |s| {
                let sql = guard_braces(&format!("select {} as {}", literal(&s), ident(&s)));
                let r = c
                    .borrow_mut()
                    .simple_query(&sql)
                    .map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
                let q = r.last().ok_or_else(|| TestCaseError::fail("no result"))?;
                prop_assert_eq!(q.get(0, 0), Some(s.as_str()));
                // Names are cut at 63 bytes by the server; shorter ones come back whole.
                if s.len() < 64 {
                    prop_assert_eq!(q.columns.first().map(String::as_str), Some(s.as_str()));
                }
                Ok(())
            },
        )
        .unwrap();
    c.into_inner().close();
}
