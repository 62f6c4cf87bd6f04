//! The lexer on hostile text: random strings over SQL's delimiters (quotes, dollars,
//! backslashes, comment marks, non-ASCII letters). Its tokens always cover the text in
//! order, each non-empty and on character boundaries, and decoding any of them never
//! panics. Bounded case counts; `HOTBENCH_FUZZ_CASES=N` for a longer hunt.

use hotbench_sqltext::{dollar_body, ident_value, string_value, tokens, Kind};
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("HOTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn sqlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("$".to_string()),
        Just("$$".to_string()),
        Just("$a$".to_string()),
        Just("\\".to_string()),
        Just("--".to_string()),
        Just("/*".to_string()),
        Just("*/".to_string()),
        Just("E'".to_string()),
        Just("U&\"".to_string()),
        Just("U&'".to_string()),
        Just("::".to_string()),
        Just(":v".to_string()),
        Just("0x".to_string()),
        Just("1.5e".to_string()),
        Just("é".to_string()),
        Just("\n".to_string()),
        "[a-z0-9 ;.,()_+-]{0,4}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn tokens_cover_the_text_and_decode(sql in sqlish()) {
        let toks = tokens(&sql);
        let mut end = 0;
        for t in &toks {
            prop_assert_eq!(t.start, end);
            prop_assert!(t.end > t.start);
            prop_assert!(sql.is_char_boundary(t.end));
            end = t.end;
            let text = t.text(&sql);
            match t.kind {
                Kind::String(k) => { let _ = string_value(text, k); }
                Kind::QuotedIdent => { let _ = ident_value(text); }
                Kind::Dollar => { let _ = dollar_body(text); }
                _ => {}
            }
            if !t.closed {
                prop_assert_eq!(t.end, sql.len());
            }
        }
        prop_assert_eq!(end, sql.len());
    }
}
