//! Texts written so pgbench reads them as they were: values as literals pgbench cannot
//! mistake for a variable, quoted identifiers with a `:` as Unicode escapes.

/// A string literal pgbench passes through untouched and the server reads back exactly:
/// `E'…'` with backslash escapes for quotes, backslashes, control characters and `:` (which
/// pgbench would take for a variable).
pub fn literal(s: &str) -> String {
    let mut o = String::from("E'");
    for ch in s.chars() {
        match ch {
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("\\'"),
            ':' => o.push_str("\\x3a"),
            '{' => o.push_str("\\x7b"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => o.push_str(&format!("\\x{:02x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('\'');
    o
}

/// `"a:b"` → `U&"a\003Ab"`: pgbench reads `:b` in a quoted identifier as a variable. Only
/// quoted identifiers are rewritten (tokens from `hotbench_sqltext`): a `"` inside a string
/// constant (a composite or array value holding JSON) is the constant's.
pub fn escape_identifiers(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    for t in hotbench_sqltext::Lexer::new(sql) {
        let text = t.text(sql);
        if t.kind != hotbench_sqltext::Kind::QuotedIdent || !t.closed {
            out.push_str(text);
            continue;
        }
        let name = hotbench_sqltext::ident_value(text);
        if !(name.contains(':') || name.contains('\\') || name.contains("{{")) {
            out.push_str(text);
            continue;
        }
        out.push_str("U&\"");
        for c in name.chars() {
            match c {
                ':' => out.push_str("\\003A"),
                '\\' => out.push_str("\\005C"),
                '{' => out.push_str("\\007B"),
                '"' => out.push_str("\"\""),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out
}
