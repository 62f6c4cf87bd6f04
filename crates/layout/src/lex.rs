//! Rust source as tokens with their line numbers: identifiers, `::`, single punctuation,
//! and literals and lifetimes as opaque tokens. Comments (line, nested block) and the insides
//! of strings, raw strings and characters are gone, so a `{` in a format string or a
//! `crate::` in a doc comment never counts as code. Enough of Rust's lexical grammar for the
//! layout checks, not a compiler's.

/// One token of code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword (`r#` stripped).
    Ident(String),
    /// `::`.
    PathSep,
    /// Any other punctuation character.
    Punct(char),
    /// A string, character or number literal, or a lifetime.
    Lit,
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

impl Token {
    pub fn is_ident(&self, s: &str) -> bool {
        matches!(&self.tok, Tok::Ident(i) if i == s)
    }
    pub fn is_punct(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }
    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(i) => Some(i),
            _ => None,
        }
    }
}

/// The tokens of `src`.
pub fn tokens(src: &str) -> Vec<Token> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let count_lines = |from: usize, to: usize, line: &mut usize| {
        *line += b[from..to.min(b.len())]
            .iter()
            .filter(|c| **c == '\n')
            .count();
    };
    while i < b.len() {
        let c = b[i];
        let start_line = line;
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let end = block_comment_end(&b, i);
            count_lines(i, end, &mut line);
            i = end;
        } else if let Some(end) = raw_string_end(&b, i) {
            count_lines(i, end, &mut line);
            i = end;
            out.push(Token {
                tok: Tok::Lit,
                line: start_line,
            });
        } else if c == '"' || ((c == 'b' || c == 'c') && b.get(i + 1) == Some(&'"')) {
            let end = quoted_end(&b, if c == '"' { i } else { i + 1 }, '"');
            count_lines(i, end, &mut line);
            i = end;
            out.push(Token {
                tok: Tok::Lit,
                line: start_line,
            });
        } else if c == '\'' || (c == 'b' && b.get(i + 1) == Some(&'\'')) {
            let q = if c == '\'' { i } else { i + 1 };
            i = if b.get(q + 1) == Some(&'\\') || b.get(q + 2) == Some(&'\'') {
                quoted_end(&b, q, '\'')
            } else {
                // A lifetime or label: the quote and an identifier.
                let mut j = q + 1;
                while j < b.len() && (b[j].is_alphanumeric() || b[j] == '_') {
                    j += 1;
                }
                j
            };
            out.push(Token {
                tok: Tok::Lit,
                line: start_line,
            });
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Lit,
                line: start_line,
            });
        } else if c.is_alphabetic() || c == '_' {
            if c == 'r' && b.get(i + 1) == Some(&'#') {
                i += 2;
            }
            let s = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(b[s..i].iter().collect()),
                line: start_line,
            });
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            i += 2;
            out.push(Token {
                tok: Tok::PathSep,
                line: start_line,
            });
        } else {
            i += 1;
            out.push(Token {
                tok: Tok::Punct(c),
                line: start_line,
            });
        }
    }
    out
}

/// The index just past a (nested) block comment starting at `i`.
fn block_comment_end(b: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        if b[i] == '/' && b.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// The index just past a quoted literal whose opening quote is at `q`.
fn quoted_end(b: &[char], q: usize, quote: char) -> usize {
    let mut i = q + 1;
    while i < b.len() {
        if b[i] == '\\' {
            i += 2;
        } else if b[i] == quote {
            return i + 1;
        } else {
            i += 1;
        }
    }
    i
}

/// When a raw string (`r"…"`, `br#"…"#`, `cr"…"`) starts at `i`, the index just past it.
fn raw_string_end(b: &[char], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if b[j] == 'b' || b[j] == 'c' {
        j += 1;
    }
    if b.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while b.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if b.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        tokens(src)
            .iter()
            .filter_map(|t| t.ident().map(str::to_string))
            .collect()
    }

    #[test]
    fn strings_comments_and_characters_are_not_code() {
        let src = "a // crate::x {\n/* b /* nested */ { */ c \"{ d\" r#\"e \" {\"# 'f' '{' b'\\'' g<'h> 'i: loop {}";
        assert_eq!(idents(src), ["a", "c", "g", "loop"]);
        let braces = tokens(src).iter().filter(|t| t.is_punct('{')).count();
        assert_eq!(braces, 1);
    }

    #[test]
    fn lines_count_through_multi_line_literals() {
        let t = tokens("a\n\"x\ny\"\nb\n/*\n*/c");
        let lines: Vec<usize> = t.iter().map(|t| t.line).collect();
        assert_eq!(lines, [1, 2, 4, 6]);
    }

    #[test]
    fn raw_identifiers_and_paths() {
        let t = tokens("r#type::x");
        assert_eq!(t[0].tok, Tok::Ident("type".into()));
        assert_eq!(t[1].tok, Tok::PathSep);
    }
}
