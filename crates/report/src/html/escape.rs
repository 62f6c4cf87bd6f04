//! Escaping of user text (script names, SQL, error messages, command lines, notes) for the
//! HTML report: one function for markup and attributes, one for JSON embedded in a
//! `<script>` element. Every piece of text that did not come from this crate goes through one
//! of them.

use serde::Serialize;

/// Escapes text for HTML element content and quoted attribute values.
pub fn html(text: &str) -> String {
    let mut o = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Serialises `value` as JSON that is safe inside `<script>…</script>`: `<`, `>` and `&` are
/// written as `\u003c`, `\u003e`, `\u0026` (so neither `</script>` nor `<!--` can appear), and
/// U+2028/U+2029 as escapes (line terminators in older JavaScript). `<`, `>`, `&` and those
/// two characters can only occur inside JSON strings, where the escapes mean the same thing.
pub fn script_json<T: Serialize + ?Sized>(value: &T) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    let mut o = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            '\u{2028}' => o.push_str("\\u2028"),
            '\u{2029}' => o.push_str("\\u2029"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            html("<script>alert(1)</script>.sql"),
            "&lt;script&gt;alert(1)&lt;/script&gt;.sql"
        );
        assert_eq!(html("a&b \"c\" 'd'"), "a&amp;b &quot;c&quot; &#39;d&#39;");
    }

    #[test]
    fn script_json_cannot_close_the_element_and_round_trips() {
        let v = serde_json::json!({"name": "</script><!-- \u{2028}\u{2029} & >"});
        let s = script_json(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        assert!(!s.contains('\u{2028}') && !s.contains('\u{2029}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}
