//! Splits a SQL file into statements (quotes, dollar quotes, comments respected) so that a
//! failing statement can be named with its line, and so checks get every statement's rows.

/// One statement and the 1-based line where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub line: usize,
    pub text: String,
}

pub fn split(sql: &str) -> Vec<Statement> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut start = 0;
    let mut has_code = false;
    let mut code_start = 0;
    let push = |out: &mut Vec<Statement>, from: usize, to: usize, has: bool| {
        if has {
            let text = sql[from..to].trim().to_string();
            let line = sql[..from].matches('\n').count() + 1;
            out.push(Statement { line, text });
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
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b';' => {
                push(&mut out, code_start, i, has_code);
                has_code = false;
                i += 1;
                start = i;
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
                let escapes = i > 0 && matches!(b[i - 1], b'E' | b'e');
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
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
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
                        None => i = b.len(),
                    }
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    let _ = start;
    push(&mut out, code_start, b.len().min(sql.len()), has_code);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(sql: &str) -> Vec<(usize, String)> {
        split(sql).into_iter().map(|s| (s.line, s.text)).collect()
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
        let s = split(sql);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].line, 6);
        assert!(s[0].text.ends_with("$body$"));
    }

    #[test]
    fn comments_only_is_empty() {
        assert!(split("-- nothing\n  ;\n/* x */").is_empty());
    }
}
