//! Every function with a body in a source file, with its length in lines (from the `fn`
//! line to the closing brace's), for the rule that none is over 150 lines.

use crate::lex::{tokens, Tok, Token};

/// A function: its name, the line its `fn` is on and its length in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// The functions with a body in `src`, nested ones included (an outer function's length
/// includes its inner ones).
pub fn functions(src: &str) -> Vec<Function> {
    let t = tokens(src);
    let mut out = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if !tok.is_ident("fn") {
            continue;
        }
        let Some(name) = t.get(i + 1).and_then(Token::ident) else {
            continue; // a `fn(…)` pointer type
        };
        if let Some(open) = body_start(&t, i + 2) {
            if let Some(close) = matching_close(&t, open) {
                out.push(Function {
                    name: name.to_string(),
                    line: tok.line,
                    lines: t[close].line - tok.line + 1,
                });
            }
        }
    }
    out
}

/// The index of the `{` opening the body of the function whose signature starts at `from`,
/// or `None` for a declaration without a body (`;`).
fn body_start(t: &[Token], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, tok) in t.iter().enumerate().skip(from) {
        match tok.tok {
            Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') => depth -= 1,
            Tok::Punct('{') if depth == 0 => return Some(j),
            Tok::Punct(';') if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The index of the `}` closing the `{` at `open`.
pub fn matching_close(t: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, tok) in t.iter().enumerate().skip(open) {
        if tok.is_punct('{') {
            depth += 1;
        } else if tok.is_punct('}') {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_run_from_fn_to_closing_brace() {
        let src = "trait T { fn decl(&self); }\nfn a(x: [u8; 2]) -> impl Fn(u8) {\n  let s = \"}\";\n  fn inner() {}\n  move |_| {}\n}\nfn p(f: fn(u8)) where u8: Copy { }\n";
        let f = functions(src);
        let named: Vec<(&str, usize, usize)> = f
            .iter()
            .map(|f| (f.name.as_str(), f.line, f.lines))
            .collect();
        assert_eq!(named, [("a", 2, 5), ("inner", 4, 1), ("p", 7, 1)]);
    }
}
