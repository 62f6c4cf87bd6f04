//! Moving a captured schema's objects to another schema on the twin (or to none: written
//! unqualified, so they land in the setup session's current schema, a scenario's own). The
//! SQL (hotbench's own, the server's deparsed text, pg_dump's output) is rewritten token by
//! token: a schema name that qualifies another name (`public.t`, `"my s".f(`) is replaced or
//! dropped with its dot; so is the schema part of a string constant cast to `regclass`
//! (`nextval('public.t_id_seq'::regclass)`); dollar-quoted bodies (functions) are rewritten
//! the same way inside. Everything else (values, comments, a name's later parts) is kept.

use std::collections::BTreeMap;

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
    let mut i = 0;
    while i < b.len() {
        let rest = &sql[i..];
        let c = b[i];
        let after_dot = prev_non_space(b, i) == Some(b'.');
        if rest.starts_with("--") {
            let end = rest.find('\n').map_or(sql.len(), |e| i + e);
            out.push_str(&sql[i..end]);
            i = end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(sql.len(), |e| i + e + 2);
            out.push_str(&sql[i..end]);
            i = end;
        } else if c == b'\'' || string_prefix(rest).is_some() {
            let prefix = string_prefix(rest).unwrap_or(0);
            let escapes = prefix == 1 && (c == b'E' || c == b'e');
            let end = string_end(sql, i + prefix + 1, escapes);
            let raw = &sql[i..end];
            match regclass_value(sql, i + prefix + 1, end, escapes)
                .and_then(|v| place_name(&v, place))
            {
                Some(v) => out.push_str(&literal(&v)),
                None => out.push_str(raw),
            }
            i = end;
        } else if c == b'"' || rest.starts_with("U&\"") || rest.starts_with("u&\"") {
            let (name, end) = quoted_ident(sql, i);
            let (text, next) = replace_or_keep(sql, &name, i, end, after_dot, place);
            out.push_str(&text);
            i = next;
        } else if c == b'$' && dollar_tag(rest).is_some() && !word_before(b, i) {
            let tag = dollar_tag(rest).unwrap_or("$$");
            let body_start = i + tag.len();
            let (body, end) = match sql[body_start..].find(tag) {
                Some(e) => (&sql[body_start..body_start + e], body_start + e + tag.len()),
                None => (&sql[body_start..], sql.len()),
            };
            let new_body = self::place(body, place);
            if new_body.contains(tag) {
                out.push_str(&sql[i..end]);
            } else {
                out.push_str(tag);
                out.push_str(&new_body);
                if end > body_start + body.len() {
                    out.push_str(tag);
                }
            }
            i = end;
        } else if c.is_ascii_digit() {
            let end = i + rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                .unwrap_or(rest.len());
            out.push_str(&sql[i..end]);
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let len = rest
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '$'))
                .unwrap_or(rest.len());
            let end = i + len.max(1);
            let word = sql[i..end].to_lowercase();
            let (text, next) = replace_or_keep(sql, &word, i, end, after_dot, place);
            out.push_str(&text);
            i = next;
        } else {
            let ch = rest.chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
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

fn word_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Length of a string constant's prefix (`E`, `B`, `X`, `N`, `U&`) when `s` starts one.
fn string_prefix(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    match b {
        [p, b'\'', ..] if b"EeBbXxNn".contains(p) => Some(1),
        [b'U' | b'u', b'&', b'\'', ..] => Some(2),
        _ => None,
    }
}

/// The index after a string constant whose body starts at `start`.
fn string_end(sql: &str, start: usize, escapes: bool) -> usize {
    let b = sql.as_bytes();
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\\' if escapes => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    sql.len()
}

/// The value of the string constant `sql[start..end - 1]` when a `::regclass` cast follows it.
fn regclass_value(sql: &str, start: usize, end: usize, escapes: bool) -> Option<String> {
    let after = sql[end..].trim_start().to_ascii_lowercase();
    let cast = after.starts_with("::regclass") || after.starts_with("::pg_catalog.regclass");
    if !cast || end == 0 || end - 1 < start {
        return None;
    }
    let raw = &sql[start..end - 1];
    let mut v = String::new();
    let mut it = raw.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' if escapes => v.push(it.next()?),
            '\'' => {
                it.next();
                v.push('\'');
            }
            c => v.push(c),
        }
    }
    Some(v)
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

/// A quoted identifier (`"…"` or `U&"…"`) at `start`: its value and the index after it.
fn quoted_ident(sql: &str, start: usize) -> (String, usize) {
    let unicode = sql.as_bytes()[start] != b'"';
    let open = if unicode { start + 3 } else { start + 1 };
    let mut name = String::new();
    let mut it = sql[open..].char_indices().peekable();
    while let Some((k, c)) = it.next() {
        match c {
            '"' if matches!(it.peek(), Some(&(_, '"'))) => {
                it.next();
                name.push('"');
            }
            '"' => return (name, open + k + 1),
            '\\' if unicode => {
                let hex: String = match it.peek() {
                    Some(&(_, '\\')) => {
                        it.next();
                        name.push('\\');
                        continue;
                    }
                    Some(&(_, '+')) => {
                        it.next();
                        (0..6).filter_map(|_| it.next().map(|x| x.1)).collect()
                    }
                    _ => (0..4).filter_map(|_| it.next().map(|x| x.1)).collect(),
                };
                if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    name.push(ch);
                }
            }
            c => name.push(c),
        }
    }
    (name, sql.len())
}

fn dollar_tag(s: &str) -> Option<&str> {
    let rest = s.get(1..)?;
    let end = rest.find('$')?;
    let tag = &rest[..end];
    let ok = tag
        .chars()
        .enumerate()
        .all(|(k, c)| c == '_' || c.is_alphabetic() || (k > 0 && c.is_ascii_digit()));
    ok.then(|| &s[..end + 2])
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
}
