//! The little a log reader needs to know about a statement's text: whether it begins or ends
//! a transaction block (`BEGIN`, `START TRANSACTION`, `COMMIT`, `END`, `ROLLBACK`, `ABORT`,
//! `PREPARE TRANSACTION`, `… AND CHAIN`; `ROLLBACK TO SAVEPOINT` does not), and where a
//! simple-protocol query string with several statements splits (quotes, `E''` strings,
//! dollar quotes and comments respected). The bind values PostgreSQL logs as
//! `parameters: $1 = '…', $2 = NULL` are read here too. The tokens are `hotbench_sqltext`'s
//! (the one SQL lexer). Pure.

use hotbench_sqltext::{Kind, Lexer};

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

/// The first `n` words of `sql`, lower-cased, comments and `;` skipped (a literal or symbol
/// is a "word" too: no transaction statement starts with one).
fn words(sql: &str, n: usize) -> Vec<String> {
    Lexer::new(sql)
        .filter(|t| !t.is_blank() && !matches!(t.text(sql), ";" | "("))
        .take(n)
        .map(|t| t.text(sql).to_lowercase())
        .collect()
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
    let mut out = Vec::new();
    let mut start = 0;
    let mut depth = 0i32;
    for t in Lexer::new(sql).filter(|t| t.kind == Kind::Punct) {
        match t.text(sql) {
            "(" => depth += 1,
            ")" => depth -= 1,
            ";" if depth <= 0 => {
                out.push(&sql[start..t.start]);
                start = t.end;
            }
            _ => {}
        }
    }
    out.push(&sql[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !only_comments(s))
        .collect()
}

fn only_comments(s: &str) -> bool {
    words(s, 1).is_empty()
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

    /// Nested comments and typed literals read as PostgreSQL reads them (this file's own
    /// scanner ended a comment at its first `*/`, so `BEGIN` after a nested one was not
    /// seen, and read `name'C:\'` as an `E''` string running to the end).
    #[test]
    fn nested_comments_and_typed_literals() {
        assert_eq!(control("/* a /* b */ c */ begin"), Control::Begin);
        assert_eq!(
            split("select name'C:\\'; select 2"),
            ["select name'C:\\'", "select 2"]
        );
    }
}
