//! Splits a SQL file into statements (quotes, dollar quotes, nested comments respected) so
//! that a failing statement can be named with its line, and so checks get every
//! statement's rows. A comment, quoted string, quoted identifier or dollar quote left open
//! is an error naming its line: it would otherwise swallow every statement after it. The
//! tokens are `hotbench_sqltext`'s (the one SQL lexer); this file only cuts at `;`.

use hotbench_sqltext::{Kind, Lexer};

/// One statement and the 1-based line where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub line: usize,
    pub text: String,
}

/// A construct opened and never closed, and the line it opened on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}")]
pub struct Unterminated {
    pub line: usize,
    pub what: &'static str,
}

/// The statements of `sql`, or the first construct it leaves open.
pub fn split(sql: &str) -> Result<Vec<Statement>, Unterminated> {
    let line_at = |at: usize| sql[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut push = |from: usize, to: usize| {
        out.push(Statement {
            line: line_at(from),
            text: sql[from..to].trim().to_string(),
        })
    };
    // Where the statement being read starts (its first token that is not blank).
    let mut start = None;
    for t in Lexer::new(sql) {
        if !t.closed {
            return Err(Unterminated {
                line: line_at(t.start),
                what: left_open(t.kind),
            });
        }
        if t.is_blank() {
            continue;
        }
        if t.kind == Kind::Punct && t.text(sql) == ";" {
            if let Some(from) = start.take() {
                push(from, t.start);
            }
        } else {
            start.get_or_insert(t.start);
        }
    }
    if let Some(from) = start {
        push(from, sql.len());
    }
    Ok(out)
}

/// What a token of `kind` left open is called.
fn left_open(kind: Kind) -> &'static str {
    match kind {
        Kind::BlockComment => "unterminated /* comment",
        Kind::QuotedIdent => "unterminated quoted identifier",
        Kind::Dollar => "unterminated dollar-quoted string",
        _ => "unterminated quoted string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(sql: &str) -> Vec<(usize, String)> {
        split(sql)
            .unwrap()
            .into_iter()
            .map(|s| (s.line, s.text))
            .collect()
    }

    #[test]
    fn splits_on_semicolons_outside_quotes() {
        let sql = "-- c; x\ncreate table t(a text default ';');\n\n/* ; */ insert into t values ('a''b;');\nselect $$;$$, $f$ ; $f$, E'\\';'";
        assert_eq!(
            texts(sql),
            vec![
                (2, "create table t(a text default ';')".to_string()),
                (4, "insert into t values ('a''b;')".to_string()),
                (5, "select $$;$$, $f$ ; $f$, E'\\';'".to_string()),
            ]
        );
    }

    #[test]
    fn function_bodies_stay_whole() {
        let sql = "create function f() returns int language plpgsql as $body$\nbegin\n  return 1;\nend;\n$body$;\nselect f();\n";
        let s = split(sql).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].line, 6);
        assert!(s[0].text.ends_with("$body$"));
    }

    #[test]
    fn comments_only_is_empty() {
        assert!(split("-- nothing\n  ;\n/* x */").unwrap().is_empty());
    }

    #[test]
    fn nested_comments_are_skipped_whole() {
        let sql = "/* a /* b; */ c; */ select 1;\nselect 2;";
        assert_eq!(
            texts(sql),
            vec![(1, "select 1".to_string()), (2, "select 2".to_string())]
        );
    }

    #[test]
    fn anything_left_open_is_an_error_naming_its_line() {
        for (sql, line, what) in [
            (
                "select 1;\n/* forgot\nselect 2;\nselect 3;",
                2,
                "unterminated /* comment",
            ),
            (
                "select 1;\n/* a /* b */\nselect 2;",
                2,
                "unterminated /* comment",
            ),
            (
                "select 1;\n\nselect 'open;\nselect 2;",
                3,
                "unterminated quoted string",
            ),
            (
                "select \"col;\nselect 2;",
                1,
                "unterminated quoted identifier",
            ),
            (
                "select 1;\ndo $x$ begin;\nselect 2;",
                2,
                "unterminated dollar-quoted string",
            ),
            ("select E'it\\'s;", 1, "unterminated quoted string"),
        ] {
            assert_eq!(split(sql), Err(Unterminated { line, what }), "{sql:?}");
        }
    }

    /// What PostgreSQL's scanner reads and this file's own scanner did not: `name'C:\'` is
    /// a typed literal (a standard string, no backslash escape: it read an `E''` string and
    /// ran to the end), `a$b$c` one name (it read a `$b$` quote), and `$é$` a dollar quote
    /// (its tags were ASCII only, so it split at the `;` inside).
    #[test]
    fn typed_literals_names_with_dollars_and_non_ascii_tags() {
        assert_eq!(
            texts("select name'C:\\';\nselect a$b$c from t;\nselect $é$ ; $é$; select 3"),
            vec![
                (1, "select name'C:\\'".to_string()),
                (2, "select a$b$c from t".to_string()),
                (3, "select $é$ ; $é$".to_string()),
                (3, "select 3".to_string()),
            ]
        );
    }
}
