//! Splits script text into SQL commands the way psql's lexer does for pgbench:
//! a command ends at `;` outside quotes, comments, dollar quotes and
//! parentheses (and outside `BEGIN … END` of `CREATE FUNCTION`/`PROCEDURE`),
//! or where a backslash meta-command starts. `\;` and `\:` put a plain `;`/`:`
//! into the command. Leading blanks and `--` comments are dropped. The tokens
//! (strings of every prefix, quoted identifiers, dollar quotes, nested comments,
//! `::`, pgbench's `:variable`) are `hotbench_sqltext`'s, the one SQL lexer; this
//! file keeps psql's part: the command boundaries, the backslashes, `:{?name}`,
//! the parentheses and the `BEGIN ATOMIC` heuristic.

use hotbench_sqltext::{Kind, Lexer};

pub(crate) enum Stop {
    /// A `;` ended the command.
    Semicolon,
    /// A meta-command starts at this byte offset (the backslash).
    Backslash(usize),
    /// End of input.
    Eof,
}

pub(crate) struct SqlScanner<'a> {
    src: &'a str,
    pub pos: usize,
    /// 1-based line of `pos`.
    pub line: usize,
    paren_depth: usize,
    begin_depth: usize,
    identifiers: [u8; 4],
    identifier_count: usize,
}

fn var_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl<'a> SqlScanner<'a> {
    pub fn new(src: &'a str) -> Self {
        SqlScanner {
            src,
            pos: 0,
            line: 1,
            paren_depth: 0,
            begin_depth: 0,
            identifiers: [0; 4],
            identifier_count: 0,
        }
    }

    /// Moves to `pos` (after a meta-command), keeping line numbers right.
    pub fn seek(&mut self, pos: usize) {
        let pos = pos.min(self.src.len());
        if pos > self.pos {
            self.line += self.src.as_bytes()[self.pos..pos]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
        }
        self.pos = pos;
    }

    fn advance(&mut self, buf: &mut Vec<u8>, n: usize, echo: bool) {
        let end = (self.pos + n).min(self.src.len());
        let chunk = &self.src.as_bytes()[self.pos..end];
        self.line += chunk.iter().filter(|&&b| b == b'\n').count();
        if echo {
            buf.extend_from_slice(chunk);
        }
        self.pos = end;
    }

    /// Collects the next SQL text (possibly empty) and what stopped it. The
    /// returned line is where the text's first byte is.
    pub fn next_sql(&mut self) -> (Vec<u8>, usize, Stop) {
        let mut buf = Vec::new();
        let mut start_line = self.line;
        loop {
            // Every stop is a token's end or an ASCII byte's: `get` fails only on a `seek`
            // into a character, whose bytes are then taken one by one.
            let Some(rest) = self.src.get(self.pos..) else {
                self.advance(&mut buf, 1, true);
                continue;
            };
            let Some(t) = Lexer::new(rest).next() else {
                return (buf, start_line, Stop::Eof);
            };
            if buf.is_empty() {
                start_line = self.line;
            }
            let (text, len) = (t.text(rest), t.end - t.start);
            match t.kind {
                Kind::Space | Kind::LineComment => {
                    let echo = !buf.is_empty();
                    self.advance(&mut buf, len, echo);
                }
                Kind::Word => {
                    self.track_identifier(text.as_bytes());
                    self.advance(&mut buf, len, true);
                }
                Kind::Punct => match text {
                    "(" => {
                        self.paren_depth += 1;
                        self.advance(&mut buf, 1, true);
                    }
                    ")" => {
                        self.paren_depth = self.paren_depth.saturating_sub(1);
                        self.advance(&mut buf, 1, true);
                    }
                    ";" => {
                        self.advance(&mut buf, 1, true);
                        if self.paren_depth == 0 && self.begin_depth == 0 {
                            self.identifier_count = 0;
                            return (buf, start_line, Stop::Semicolon);
                        }
                    }
                    "\\" => match rest.as_bytes().get(1) {
                        Some(&next @ (b';' | b':')) => {
                            if next == b';' {
                                self.identifier_count = 0;
                            }
                            self.pos += 1;
                            self.advance(&mut buf, 1, true);
                        }
                        _ => return (buf, start_line, Stop::Backslash(self.pos)),
                    },
                    ":" => match self.test_variable(self.pos) {
                        // psql's :{?name} with no variables available: FALSE.
                        Some(n) => {
                            self.advance(&mut buf, n, false);
                            buf.extend_from_slice(b"FALSE");
                        }
                        None => self.advance(&mut buf, 1, true),
                    },
                    _ => self.advance(&mut buf, len, true),
                },
                _ => self.advance(&mut buf, len, true),
            }
        }
    }

    /// Length of a `:{?name}` token at `start`, if there is one.
    fn test_variable(&self, start: usize) -> Option<usize> {
        let src = self.src.as_bytes();
        if src.get(start + 1..start + 3) != Some(b"{?".as_slice()) {
            return None;
        }
        let mut e = start + 3;
        while e < src.len() && var_char(src[e]) {
            e += 1;
        }
        (e > start + 3 && src.get(e) == Some(&b'}')).then_some(e + 1 - start)
    }

    /// psql's heuristic for `CREATE [OR REPLACE] FUNCTION|PROCEDURE … BEGIN ATOMIC … END`.
    fn track_identifier(&mut self, word: &[u8]) {
        if self.identifier_count == 0 {
            self.identifiers = [0; 4];
        }
        let lower = word.to_ascii_lowercase();
        if matches!(
            lower.as_slice(),
            b"create" | b"function" | b"procedure" | b"or" | b"replace"
        ) && self.identifier_count < self.identifiers.len()
        {
            self.identifiers[self.identifier_count] = lower[0];
        }
        self.identifier_count += 1;
        let ids = self.identifiers;
        if ids[0] == b'c'
            && (ids[1] == b'f'
                || ids[1] == b'p'
                || (ids[1] == b'o' && ids[2] == b'r' && (ids[3] == b'f' || ids[3] == b'p')))
            && self.paren_depth == 0
        {
            match lower.as_slice() {
                b"begin" => self.begin_depth += 1,
                b"case" if self.begin_depth >= 1 => self.begin_depth += 1,
                b"end" => self.begin_depth = self.begin_depth.saturating_sub(1),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(src: &str) -> Vec<String> {
        let mut s = SqlScanner::new(src);
        let mut out = Vec::new();
        loop {
            let (buf, _, stop) = s.next_sql();
            if !buf.is_empty() {
                out.push(String::from_utf8_lossy(&buf).into_owned());
            }
            if !matches!(stop, Stop::Semicolon) {
                return out;
            }
        }
    }

    /// psql ends a `--` comment at a carriage return as at a newline (`non_newline` is
    /// `[^\n\r]`), and a number glued to a name with `$` (`1a$q$`) opens no dollar quote:
    /// this scanner read both past the command once.
    #[test]
    fn comments_end_at_a_carriage_return_and_glued_dollars_quote_nothing() {
        assert_eq!(commands("-- c\rselect 1;"), ["select 1;"]);
        assert_eq!(
            commands("select 1a$q$;select 2;"),
            ["select 1a$q$;", "select 2;"]
        );
        assert_eq!(
            commands("select ':{?x}', :{?x}, $$;$$; select 'a\\;"),
            ["select ':{?x}', FALSE, $$;$$;", "select 'a\\;"]
        );
    }
}
