//! The little a log reader needs to know about a statement's text: whether it begins or ends
//! a transaction block (`BEGIN`, `START TRANSACTION`, `COMMIT`, `END`, `ROLLBACK`, `ABORT`,
//! `PREPARE TRANSACTION`, `… AND CHAIN`; `ROLLBACK TO SAVEPOINT` does not), and where a
//! simple-protocol query string with several statements splits (quotes, `E''` strings,
//! dollar quotes and comments respected). The bind values PostgreSQL logs as
//! `parameters: $1 = '…', $2 = NULL` are read here too. Pure.

/// What a statement does to the transaction block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Begin,
    Commit {
        chain: bool,
    },
    Rollback {
        chain: bool,
    },
    /// `ROLLBACK TO [SAVEPOINT]`: an aborted block goes on.
    RollbackToSavepoint,
    Other,
}

/// The first `n` words of `sql`, lower-cased, comments and `;` skipped.
fn words(sql: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let c: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < c.len() && out.len() < n {
        let ch = c[i];
        if ch == '-' && c.get(i + 1) == Some(&'-') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            i += 2;
            while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if ch.is_alphabetic() || ch == '_' {
            let mut w = String::new();
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                w.extend(c[i].to_lowercase());
                i += 1;
            }
            out.push(w);
        } else if ch.is_whitespace() || ch == ';' || ch == '(' {
            i += 1;
        } else {
            // A literal or symbol: no transaction statement starts with one.
            out.push(ch.to_string());
            i += 1;
        }
    }
    out
}

/// Classifies one statement.
pub fn control(sql: &str) -> Control {
    let w = words(sql, 8);
    let at = |i: usize| w.get(i).map(String::as_str);
    let chain = |from: usize| {
        w.iter()
            .skip(from)
            .collect::<Vec<_>>()
            .windows(2)
            .any(|p| p[0] == "and" && p[1] == "chain")
            && !w.iter().skip(from).any(|x| x == "no")
    };
    match at(0) {
        Some("begin") => Control::Begin,
        Some("start") if at(1) == Some("transaction") => Control::Begin,
        Some("commit") if at(1) == Some("prepared") => Control::Other,
        Some("commit" | "end") => Control::Commit { chain: chain(1) },
        Some("prepare") if at(1) == Some("transaction") => Control::Commit { chain: false },
        Some("rollback") if at(1) == Some("prepared") => Control::Other,
        Some("rollback" | "abort") => {
            let mut i = 1;
            if matches!(at(i), Some("work" | "transaction")) {
                i += 1;
            }
            if at(i) == Some("to") {
                Control::RollbackToSavepoint
            } else {
                Control::Rollback { chain: chain(1) }
            }
        }
        _ => Control::Other,
    }
}

/// The statements of a query string (trimmed, empty ones dropped). A string with
/// `BEGIN ATOMIC` (an SQL-standard function body) is left whole.
pub fn split(sql: &str) -> Vec<&str> {
    let lower = sql.to_ascii_lowercase();
    if lower.contains("atomic") && lower.contains("begin") {
        return vec![sql.trim()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
    }
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut nest = 0usize;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        nest -= 1;
                        i += 2;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'\'' => {
                let escapes = i > 0 && matches!(b[i - 1], b'e' | b'E');
                i += 1;
                while i < b.len() {
                    if escapes && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
                }
            }
            b'$' => {
                if let Some(tag_end) = dollar_tag(b, i) {
                    let tag = &b[i..=tag_end];
                    let mut j = tag_end + 1;
                    while j + tag.len() <= b.len() && &b[j..j + tag.len()] != tag {
                        j += 1;
                    }
                    i = (j + tag.len()).min(b.len());
                    continue;
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b';' if depth <= 0 => {
                out.push(&sql[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&sql[start.min(sql.len())..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !only_comments(s))
        .collect()
}

fn only_comments(s: &str) -> bool {
    words(s, 1).is_empty()
}

/// `$tag$` starting at `i` (not `$1`): the index of its closing `$`.
fn dollar_tag(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i + 1;
    if b.get(j).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] >= 0x80) {
        j += 1;
    }
    (b.get(j) == Some(&b'$')).then_some(j)
}

/// Bind values from a `parameters: $1 = '…', $2 = NULL` detail (`None` = NULL), or why it
/// cannot be read. A detail that is something else gives an empty list.
pub fn parameters(detail: &str) -> Result<Vec<Option<String>>, String> {
    let Some(rest) = strip_prefix_ci(detail.trim_start(), "parameters: ") else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Option<String>> = Vec::new();
    let mut s = rest;
    loop {
        let Some(r) = s.strip_prefix('$') else {
            return Err(format!("expected `$n = ` in parameters at {:?}", clip(s)));
        };
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        let n: usize = r[..digits]
            .parse()
            .map_err(|_| format!("expected a parameter number at {:?}", clip(s)))?;
        let Some(r) = r[digits..].strip_prefix(" = ") else {
            return Err(format!("expected ` = ` after ${n}"));
        };
        let (value, r) = if let Some(r) = r.strip_prefix("NULL") {
            (None, r)
        } else if let Some(body) = r.strip_prefix('\'') {
            let mut v = String::new();
            let mut chars = body.char_indices();
            let mut end = None;
            while let Some((k, c)) = chars.next() {
                if c == '\'' {
                    if body[k + 1..].starts_with('\'') {
                        v.push('\'');
                        chars.next();
                        continue;
                    }
                    end = Some(k + 1);
                    break;
                }
                v.push(c);
            }
            let Some(end) = end else {
                return Err(format!("the value of ${n} has no closing quote"));
            };
            (Some(v), &body[end..])
        } else {
            return Err(format!("expected a quoted value or NULL for ${n}"));
        };
        if n == 0 || n > 65_535 {
            return Err(format!("parameter ${n} out of range"));
        }
        if out.len() < n {
            out.resize(n, None);
        }
        out[n - 1] = value;
        match r.strip_prefix(", ") {
            Some(next) => s = next,
            None if r.trim().is_empty() => return Ok(out),
            None => return Err(format!("unexpected text after ${n}: {:?}", clip(r))),
        }
    }
}

fn strip_prefix_ci<'a>(s: &'a str, p: &str) -> Option<&'a str> {
    let head = s.get(..p.len())?;
    head.eq_ignore_ascii_case(p).then(|| &s[p.len()..])
}

/// At most 40 characters of `s`, for a message.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().nth(40).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_control_words() {
        assert_eq!(control("BEGIN;"), Control::Begin);
        assert_eq!(
            control("begin isolation level serializable"),
            Control::Begin
        );
        assert_eq!(control("  START TRANSACTION READ ONLY"), Control::Begin);
        assert_eq!(control("END;"), Control::Commit { chain: false });
        assert_eq!(control("commit and chain"), Control::Commit { chain: true });
        assert_eq!(
            control("commit and no chain"),
            Control::Commit { chain: false }
        );
        assert_eq!(
            control("/* x */ rollback"),
            Control::Rollback { chain: false }
        );
        assert_eq!(control("abort"), Control::Rollback { chain: false });
        assert_eq!(
            control("rollback to savepoint a"),
            Control::RollbackToSavepoint
        );
        assert_eq!(control("ROLLBACK WORK TO a"), Control::RollbackToSavepoint);
        assert_eq!(control("commit prepared 'x'"), Control::Other);
        assert_eq!(
            control("prepare transaction 'x'"),
            Control::Commit { chain: false }
        );
        assert_eq!(control("select 'begin'"), Control::Other);
        assert_eq!(control("beginning"), Control::Other);
    }

    #[test]
    fn splits_outside_quotes_and_bodies() {
        assert_eq!(
            split("begin; update t set a = ';' where b = $$;$$; commit;"),
            ["begin", "update t set a = ';' where b = $$;$$", "commit"]
        );
        assert_eq!(split("select 1"), ["select 1"]);
        assert_eq!(
            split("select E'\\';'; -- c;\nselect 2"),
            ["select E'\\';'", "-- c;\nselect 2"]
        );
        assert_eq!(
            split("select \"a;b\" from t /* ; */"),
            ["select \"a;b\" from t /* ; */"]
        );
        assert_eq!(
            split("do $f$ begin perform 1; end $f$"),
            ["do $f$ begin perform 1; end $f$"]
        );
        assert_eq!(split(" ; ;"), Vec::<&str>::new());
        assert_eq!(split("select $1; select $2"), ["select $1", "select $2"]);
    }

    #[test]
    fn logged_parameters() {
        assert_eq!(
            parameters("parameters: $1 = '4', $2 = NULL, $3 = 'it''s, $4 = x'").unwrap(),
            [Some("4".into()), None, Some("it's, $4 = x".into())]
        );
        assert_eq!(
            parameters("Parameters: $1 = 'a\nb'").unwrap(),
            [Some("a\nb".into())]
        );
        assert!(parameters("Failing row contains (1, -1).")
            .unwrap()
            .is_empty());
        assert!(parameters("parameters: $1 = 'open").is_err());
        assert!(parameters("parameters: $0 = 'x'").is_err());
        assert!(parameters("parameters: $1 = 'x' junk").is_err());
    }
}
