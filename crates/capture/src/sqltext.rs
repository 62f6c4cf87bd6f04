//! SQL text the capture writes, quoted so that whatever a name or a value contains (quotes,
//! backslashes, spaces, unicode, SQL) it stays one identifier or one literal, and so that the
//! text survives a scenario's `{{…}}` parameter expansion unchanged: nothing written here
//! contains `{{` (a literal's `{` becomes `\x7b` inside an `E''` string, an identifier's
//! becomes `\007B` inside a `U&""` identifier). Text the server deparsed (`pg_get_indexdef`,
//! `pg_get_constraintdef`, a function body) goes through [`guard_braces`], which rewrites the
//! few tokens that hold `{{` the same way (tokens and values from `hotbench_sqltext`, the one
//! SQL lexer). Also reads PostgreSQL's array output (`{a,"b c"}`).

use hotbench_sqltext::{dollar_body, ident_value, string_value, Kind, Lexer, StrKind};

/// A quoted identifier: `"a ""b"""`; `U&"…"` with `\007B` for `{` when the name holds `{{`.
pub fn ident(name: &str) -> String {
    if name.contains("{{") {
        let mut out = String::from("U&\"");
        for c in name.chars() {
            match c {
                '{' => out.push_str("\\007B"),
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\"\""),
                c => out.push(c),
            }
        }
        out.push('"');
        return out;
    }
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `"schema"."name"`.
pub fn qualified(schema: &str, name: &str) -> String {
    format!("{}.{}", ident(schema), ident(name))
}

/// A string literal that reads the same whatever `standard_conforming_strings` is: `E'…'`,
/// backslashes and quotes doubled, `{` written `\x7b` when the text holds `{{`.
pub fn literal(s: &str) -> String {
    let braces = s.contains("{{");
    let mut out = String::with_capacity(s.len() + 3);
    out.push_str("E'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            '{' if braces => out.push_str("\\x7b"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `literal::type`, `type` as `format_type` wrote it.
pub fn typed(value: &str, type_sql: &str) -> String {
    format!("{}::{type_sql}", literal(value))
}

/// A `float8` constant written so that it parses back exactly (never `NaN`/`inf` text).
pub fn float(v: f64) -> String {
    if v.is_finite() {
        format!("{v:?}")
    } else {
        "0.0".into()
    }
}

/// Parses a one-dimensional array as PostgreSQL prints it (`{a,"b,c",NULL}`), elements as
/// text (`None` for `NULL`). Elements that are themselves arrays (`{"{1,2}","{3}"}`, an array
/// column's statistics) come back as their text. `None` for text that is not an array.
pub fn parse_array(text: &str) -> Option<Vec<Option<String>>> {
    let t = text.trim();
    // A lower bound decoration (`[0:2]={…}`) is skipped.
    let t = match t.find("={") {
        Some(i) if t.starts_with('[') => &t[i + 1..],
        _ => t,
    };
    let inner = t.strip_prefix('{')?.strip_suffix('}')?;
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Some(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        let mut quoted = false;
        if chars.peek() == Some(&'"') {
            quoted = true;
            chars.next();
            loop {
                match chars.next()? {
                    '\\' => item.push(chars.next()?),
                    '"' => break,
                    c => item.push(c),
                }
            }
        } else if chars.peek() == Some(&'{') {
            // A nested array printed unquoted (a multi-dimensional value): kept as text.
            let mut depth = 0usize;
            loop {
                let c = chars.next()?;
                item.push(c);
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    '"' => loop {
                        let q = chars.next()?;
                        item.push(q);
                        if q == '\\' {
                            item.push(chars.next()?);
                        } else if q == '"' {
                            break;
                        }
                    },
                    _ => {}
                }
            }
            quoted = true;
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if c == '\\' {
                    chars.next();
                    item.push(chars.next()?);
                    continue;
                }
                item.push(c);
                chars.next();
            }
            item = item.trim_end().to_string();
        }
        if !quoted && item.eq_ignore_ascii_case("NULL") {
            out.push(None);
        } else {
            out.push(Some(item));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(out),
            Some(',') => continue,
            Some(_) => return None,
        }
    }
}

/// An array literal's text (`{"a","b \"c\""}`) for the elements, `NULL` for `None`.
pub fn array_text(items: &[Option<String>]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| match s {
            None => "NULL".to_string(),
            Some(s) => format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
        })
        .collect();
    format!("{{{}}}", quoted.join(","))
}

/// `sql` (text the server deparsed, or a dump) with every `{{` rewritten so that a
/// scenario's `{{…}}` expansion leaves it alone: inside a string constant, an `E''` string
/// with `\x7b`; inside a quoted identifier, a `U&""` one with `\007B`; inside a
/// dollar-quoted string, the same text as an `E''` string; inside a comment, `{ {`. Text
/// without `{{` comes back unchanged.
pub fn guard_braces(sql: &str) -> String {
    if !sql.contains("{{") {
        return sql.to_string();
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 16);
    for t in Lexer::new(sql) {
        let text = t.text(sql);
        // A constant right after a name (`date'…'`): a space keeps the two apart.
        let glued =
            t.start > 0 && (b[t.start - 1].is_ascii_alphanumeric() || b[t.start - 1] == b'_');
        match t.kind {
            // Every `E''` string is written anew: a `\{` there could make `{{` too.
            Kind::String(StrKind::Escape) => {
                out.push_str("E'");
                out.push_str(&escape_string_raw(&text[2..]));
                out.push('\'');
            }
            _ if !text.contains("{{") => out.push_str(text),
            _ if t.is_comment() => out.push_str(&text.replace("{{", "{ {")),
            Kind::String(kind @ (StrKind::Standard | StrKind::National | StrKind::Unicode)) => {
                if glued {
                    out.push(' ');
                }
                // `N'…'` is `NCHAR '…'` to PostgreSQL's scanner.
                if kind == StrKind::National {
                    out.push_str("nchar ");
                }
                out.push_str(&literal(&string_value(text, kind)));
            }
            Kind::QuotedIdent => out.push_str(&ident(&ident_value(text))),
            Kind::Dollar => out.push_str(&literal(dollar_body(text))),
            _ => out.push_str(text),
        }
    }
    // Outside any token, `{{` is not SQL; split it all the same.
    while out.contains("{{") {
        out = out.replace("{{", "{ {");
    }
    out
}

/// An `E''` string's body from just after its opening quote, as written but with every `{`
/// (bare or escaped as `\{`) written `\x7b`, up to its closing quote.
fn escape_string_raw(body: &str) -> String {
    let mut raw = String::new();
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\'' => {
                if it.peek() != Some(&'\'') {
                    break;
                }
                it.next();
                raw.push_str("''");
            }
            '\\' => match it.next() {
                Some('{') => raw.push_str("\\x7b"),
                Some(e) => {
                    raw.push('\\');
                    raw.push(e);
                }
                None => break,
            },
            '{' => raw.push_str("\\x7b"),
            c => raw.push(c),
        }
    }
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_literals_quote_everything() {
        assert_eq!(ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(ident("x{{y}}"), "U&\"x\\007B\\007By}}\"");
        assert_eq!(literal("it's a \\"), "E'it''s a \\\\'");
        assert_eq!(literal("{{1}}"), "E'\\x7b\\x7b1}}'");
        assert_eq!(literal("{1}"), "E'{1}'");
        assert!(!ident("{{{{").contains("{{"));
    }

    #[test]
    fn arrays_parse_as_postgres_prints_them() {
        let p = |s: &str| parse_array(s).unwrap();
        assert_eq!(
            p("{a,\"b c\",NULL,\"NULL\",\"x\\\"y\"}"),
            vec![
                Some("a".into()),
                Some("b c".into()),
                None,
                Some("NULL".into()),
                Some("x\"y".into())
            ]
        );
        assert_eq!(
            p("{\"{1,2}\",\"{3}\"}"),
            vec![Some("{1,2}".into()), Some("{3}".into())]
        );
        assert_eq!(
            p("{{1,2},{3,4}}"),
            vec![Some("{1,2}".into()), Some("{3,4}".into())]
        );
        assert_eq!(p("{}"), Vec::<Option<String>>::new());
        assert!(parse_array("nope").is_none());
        let items = vec![Some("a\"b\\".to_string()), None, Some("{x}".into())];
        assert_eq!(p(&array_text(&items)), items);
    }

    #[test]
    fn guarded_text_has_no_double_brace_and_keeps_other_text() {
        let plain = "create index i on t (a) where b = '{1}'";
        assert_eq!(guard_braces(plain), plain);
        let sql = "alter table \"t{{x}}\" add check (a <> '{{1}}'::int[][]) -- {{c}}\n\
                   create function f() returns text as $q$ select '{{' $q$ language sql";
        let g = guard_braces(sql);
        assert!(!g.contains("{{"), "{g}");
        assert!(g.contains("U&\"t\\007B\\007Bx}}\""), "{g}");
        assert!(g.contains("E'\\x7b\\x7b1}}'::int[][]"), "{g}");
        assert!(
            g.contains("as E' select ''\\x7b\\x7b'' ' language sql"),
            "{g}"
        );
        let e = guard_braces("select E'a\\n{{\\{', date'{{'");
        assert_eq!(e, "select E'a\\n\\x7b\\x7b\\x7b', date E'\\x7b\\x7b'");
    }

    /// `N''` and `U&''` strings and `U&""` names holding `{{` are one token each (this
    /// file's own scanner wrote `N E'…'`, `U&E'…'` and `U&U&"…"`, none of them SQL).
    #[test]
    fn prefixed_strings_and_unicode_names_are_guarded_whole() {
        assert_eq!(
            guard_braces("select N'{{a', U&'{{\\0062', U&\"{{c\" from t"),
            "select nchar E'\\x7b\\x7ba', E'\\x7b\\x7bb', U&\"\\007B\\007Bc\" from t"
        );
    }
}
