//! Moving a captured schema's objects to another schema on the twin (or to none: written
//! unqualified, so they land in the setup session's current schema, a scenario's own). The
//! SQL (hotbench's own, the server's deparsed text, pg_dump's output) is rewritten token by
//! token: a schema name that qualifies another name (`public.t`, `"my s".f(`) is replaced or
//! dropped with its dot; so is the schema part of a string constant cast to `regclass`
//! (`nextval('public.t_id_seq'::regclass)`); dollar-quoted bodies (functions) are rewritten
//! the same way inside. Everything else (values, comments, a name's later parts) is kept.
//! The tokens are `hotbench_sqltext`'s (the one SQL lexer).

use std::collections::BTreeMap;

use hotbench_sqltext::{dollar_body, ident_value, string_value, Kind, Lexer, StrKind, Token};

use crate::sqltext::{ident, literal};

/// Where a source schema's objects go: `None` unqualified, `Some(t)` into schema `t`.
pub type Placement = BTreeMap<String, Option<String>>;

/// `sql` with every schema of `place` rewritten.
pub fn place(sql: &str, place: &Placement) -> String {
    if place.is_empty() {
        return sql.to_string();
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    // Past a schema dropped with its dot: the tokens before this are gone with it.
    let mut resume = 0;
    for t in Lexer::new(sql) {
        if t.start < resume {
            continue;
        }
        let text = t.text(sql);
        let after_dot = prev_non_space(b, t.start) == Some(b'.');
        let name = match t.kind {
            Kind::QuotedIdent => ident_value(text),
            Kind::Word => text.to_lowercase(),
            Kind::String(kind) => {
                match regclass_value(sql, &t, kind).and_then(|v| place_name(&v, place)) {
                    Some(v) => out.push_str(&literal(&v)),
                    None => out.push_str(text),
                }
                continue;
            }
            Kind::Dollar => {
                out.push_str(&place_body(text, t.closed, place));
                continue;
            }
            _ => {
                out.push_str(text);
                continue;
            }
        };
        let (text, next) = replace_or_keep(sql, &name, t.start, t.end, after_dot, place);
        out.push_str(&text);
        resume = next;
    }
    out
}

/// A dollar-quoted string (a function's body) with its schemas placed, unless the new body
/// would hold its tag.
fn place_body(text: &str, closed: bool, place: &Placement) -> String {
    let tag_len = text[1..].find('$').map_or(text.len(), |k| k + 2);
    let tag = &text[..tag_len];
    let new_body = self::place(dollar_body(text), place);
    if new_body.contains(tag) {
        return text.to_string();
    }
    let mut out = format!("{tag}{new_body}");
    if closed {
        out.push_str(tag);
    }
    out
}

/// The identifier token `sql[start..end]` (value `name`): replaced when it names a placed
/// schema and qualifies the next name (a dot follows, and no dot precedes it). Returns the
/// text to write and where to go on (past the dot when the schema is dropped).
fn replace_or_keep(
    sql: &str,
    name: &str,
    start: usize,
    end: usize,
    after_dot: bool,
    place: &Placement,
) -> (String, usize) {
    let b = sql.as_bytes();
    let mut j = end;
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    let qualifies = !after_dot && b.get(j) == Some(&b'.') && next_is_name(b, j + 1);
    match place.get(name) {
        Some(None) if qualifies => {
            let mut k = j + 1;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            (String::new(), k)
        }
        Some(Some(t)) if qualifies => (ident(t), end),
        _ => (sql[start..end].to_string(), end),
    }
}

fn next_is_name(b: &[u8], mut k: usize) -> bool {
    while k < b.len() && b[k].is_ascii_whitespace() {
        k += 1;
    }
    b.get(k)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'"' || *c >= 0x80)
}

fn prev_non_space(b: &[u8], i: usize) -> Option<u8> {
    b[..i]
        .iter()
        .rev()
        .find(|c| !c.is_ascii_whitespace())
        .copied()
}

/// The value of the string constant `t` when a `::regclass` cast follows it.
fn regclass_value(sql: &str, t: &Token, kind: StrKind) -> Option<String> {
    let after = sql[t.end..].trim_start().to_ascii_lowercase();
    let cast = after.starts_with("::regclass") || after.starts_with("::pg_catalog.regclass");
    (cast && t.closed).then(|| string_value(t.text(sql), kind))
}

/// A qualified name's text (`s.t`, `"my s"."t"`) with its schema placed; `None` when it is
/// not qualified by a placed schema.
fn place_name(v: &str, place: &Placement) -> Option<String> {
    let (schema, rest_at) = if let Some(r) = v.strip_prefix('"') {
        let mut name = String::new();
        let mut it = r.char_indices().peekable();
        let mut end = None;
        while let Some((k, c)) = it.next() {
            if c == '"' {
                if let Some(&(_, '"')) = it.peek() {
                    it.next();
                    name.push('"');
                } else {
                    end = Some(k + 2);
                    break;
                }
            } else {
                name.push(c);
            }
        }
        (name, end?)
    } else {
        let k = v.find('.')?;
        (v[..k].to_lowercase(), k)
    };
    let rest = v[rest_at..].strip_prefix('.')?;
    match place.get(&schema)? {
        None => Some(rest.to_string()),
        Some(t) => Some(format!("{}.{rest}", ident(t))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Option<&str>)]) -> Placement {
        pairs
            .iter()
            .map(|(s, t)| (s.to_string(), t.map(str::to_string)))
            .collect()
    }

    #[test]
    fn schemas_that_qualify_names_are_dropped_or_renamed() {
        let m = map(&[("public", None), ("my s", Some("hb_x_my s"))]);
        assert_eq!(
            place("create table \"public\".\"t\" (a public.mood default nextval('public.t_a_seq'::regclass))", &m),
            "create table \"t\" (a mood default nextval(E't_a_seq'::regclass))"
        );
        assert_eq!(
            place(
                "select \"my s\".f(1), public . g(2) from \"my s\".\"t\"",
                &m
            ),
            "select \"hb_x_my s\".f(1), g(2) from \"hb_x_my s\".\"t\""
        );
        // Values, comments, later parts of a name, unplaced schemas: kept.
        let kept =
            "select 'public.t', t.public, other.t -- public.t\n from x where a = E'public.t'";
        assert_eq!(place(kept, &m), kept);
        assert_eq!(
            place("create function public.f() returns int as $$ select count(*) from public.t $$ language sql", &m),
            "create function f() returns int as $$ select count(*) from t $$ language sql"
        );
        assert_eq!(
            place("alter sequence public.s owned by public.t.id", &m),
            "alter sequence s owned by t.id"
        );
        assert_eq!(place("select 1.5e3, PUBLIC.T", &m), "select 1.5e3, T");
    }

    #[test]
    fn unicode_identifiers_are_read() {
        let m = map(&[("we\"ird {{x}} sch", None)]);
        let sql = format!(
            "insert into {}.\"t\" values (1)",
            ident("we\"ird {{x}} sch")
        );
        assert_eq!(place(&sql, &m), "insert into \"t\" values (1)");
    }

    /// `/* a /* b */ public.t */` is one comment (they nest in PostgreSQL): the name in it
    /// is kept (this file's own scanner ended the comment at the first `*/`).
    #[test]
    fn nested_comments_are_kept_whole() {
        let m = map(&[("public", None)]);
        let sql = "/* a /* b */ public.t */ select 1 from public.u";
        assert_eq!(place(sql, &m), "/* a /* b */ public.t */ select 1 from u");
    }
}
