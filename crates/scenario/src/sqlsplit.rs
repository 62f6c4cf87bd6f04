//! Splits a SQL file into statements (quotes, dollar quotes, nested comments respected) so
//! that a failing statement can be named with its line, and so checks get every
//! statement's rows. A comment, quoted string, quoted identifier or dollar quote left open
//! is an error naming its line: it would otherwise swallow every statement after it.

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

pub fn split(sql: &str) -> Result<Vec<Statement>, Unterminated> {
    let b = sql.as_bytes();
    let line_at = |at: usize| sql[..at].matches('\n').count() + 1;
    let open = |at: usize, what: &'static str| Unterminated {
        line: line_at(at),
        what,
    };
    let mut out = Vec::new();
    let mut i = 0;
    let mut has_code = false;
    let mut code_start = 0;
    let push = |out: &mut Vec<Statement>, from: usize, to: usize, has: bool| {
        if has {
            let text = sql[from..to].trim().to_string();
            out.push(Statement {
                line: line_at(from),
                text,
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // PostgreSQL's block comments nest.
                let from = i;
                let mut depth = 0usize;
                loop {
                    if i + 1 >= b.len() {
                        return Err(open(from, "unterminated /* comment"));
                    }
                    if b[i] == b'/' && b[i + 1] == b'*' {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b[i + 1] == b'/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b';' => {
                push(&mut out, code_start, i, has_code);
                has_code = false;
                i += 1;
                continue;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() && !has_code {
            has_code = true;
            code_start = i;
        }
        match c {
            b'\'' => {
                let from = i;
                let escapes = i > 0 && matches!(b[i - 1], b'E' | b'e');
                i += 1;
                loop {
                    if i >= b.len() {
                        return Err(open(from, "unterminated quoted string"));
                    }
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
                i += 1;
            }
            b'"' => {
                let from = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
                }
                if i >= b.len() {
                    return Err(open(from, "unterminated quoted identifier"));
                }
                i += 1;
            }
            b'$' => {
                // $tag$ … $tag$ (a tag is empty or an identifier not starting with a digit).
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let tag_ok = j < b.len()
                    && b[j] == b'$'
                    && !b.get(i + 1).is_some_and(|x| x.is_ascii_digit());
                if tag_ok {
                    let tag = &sql[i..=j];
                    match sql[j + 1..].find(tag) {
                        Some(p) => i = j + 1 + p + tag.len(),
                        None => return Err(open(i, "unterminated dollar-quoted string")),
                    }
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    push(&mut out, code_start, b.len(), has_code);
    Ok(out)
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
}
