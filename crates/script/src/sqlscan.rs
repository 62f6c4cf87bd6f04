//! Splits script text into SQL commands the way psql's lexer does for pgbench:
//! a command ends at `;` outside quotes, comments, dollar quotes and
//! parentheses (and outside `BEGIN … END` of `CREATE FUNCTION`/`PROCEDURE`),
//! or where a backslash meta-command starts. `\;` and `\:` put a plain `;`/`:`
//! into the command. Leading blanks and `--` comments are dropped.

pub(crate) enum Stop {
    /// A `;` ended the command.
    Semicolon,
    /// A meta-command starts at this byte offset (the backslash).
    Backslash(usize),
    /// End of input.
    Eof,
}

pub(crate) struct SqlScanner<'a> {
    src: &'a [u8],
    pub pos: usize,
    /// 1-based line of `pos`.
    pub line: usize,
    paren_depth: usize,
    begin_depth: usize,
    identifiers: [u8; 4],
    identifier_count: usize,
}

fn ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn ident_cont(b: u8) -> bool {
    ident_start(b) || b.is_ascii_digit() || b == b'$'
}

fn var_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c | 0x0b)
}

impl<'a> SqlScanner<'a> {
    pub fn new(src: &'a [u8]) -> Self {
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
            self.line += self.src[self.pos..pos]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
        }
        self.pos = pos;
    }

    fn advance(&mut self, buf: &mut Vec<u8>, n: usize, echo: bool) {
        let end = (self.pos + n).min(self.src.len());
        let chunk = &self.src[self.pos..end];
        self.line += chunk.iter().filter(|&&b| b == b'\n').count();
        if echo {
            buf.extend_from_slice(chunk);
        }
        self.pos = end;
    }

    /// Collects the next SQL text (possibly empty) and what stopped it. The
    /// returned line is where the text's first byte is.
    pub fn next_sql(&mut self) -> (Vec<u8>, usize, Stop) {
        let src = self.src;
        let mut buf = Vec::new();
        let mut start_line = self.line;
        loop {
            let Some(&b) = src.get(self.pos) else {
                return (buf, start_line, Stop::Eof);
            };
            if buf.is_empty() {
                start_line = self.line;
            }
            let next = src.get(self.pos + 1).copied();
            match b {
                _ if is_space(b) => {
                    let echo = !buf.is_empty();
                    self.advance(&mut buf, 1, echo);
                }
                b'-' if next == Some(b'-') => {
                    let mut e = self.pos;
                    while e < src.len() && src[e] != b'\n' {
                        e += 1;
                    }
                    let echo = !buf.is_empty();
                    self.advance(&mut buf, e - self.pos, echo);
                }
                b'/' if next == Some(b'*') => {
                    let mut depth = 0usize;
                    let mut e = self.pos;
                    while e < src.len() {
                        if src[e] == b'/' && src.get(e + 1) == Some(&b'*') {
                            depth += 1;
                            e += 2;
                        } else if src[e] == b'*' && src.get(e + 1) == Some(&b'/') {
                            depth -= 1;
                            e += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            e += 1;
                        }
                    }
                    self.advance(&mut buf, e - self.pos, true);
                }
                b'\'' => {
                    let n = self.quoted(self.pos, b'\'', false);
                    self.advance(&mut buf, n, true);
                }
                b'"' => {
                    let n = self.quoted(self.pos, b'"', false);
                    self.advance(&mut buf, n, true);
                }
                b'$' => {
                    if let Some(n) = self.dollar_quote(self.pos) {
                        self.advance(&mut buf, n, true);
                    } else {
                        let mut e = self.pos + 1;
                        while e < src.len() && src[e].is_ascii_digit() {
                            e += 1;
                        }
                        self.advance(&mut buf, e - self.pos, true);
                    }
                }
                b':' => {
                    if let Some(n) = self.test_variable(self.pos) {
                        // psql's :{?name} with no variables available: FALSE.
                        self.advance(&mut buf, n, false);
                        buf.extend_from_slice(b"FALSE");
                        continue;
                    }
                    let n = self.colon(self.pos);
                    self.advance(&mut buf, n, true);
                }
                b'(' => {
                    self.paren_depth += 1;
                    self.advance(&mut buf, 1, true);
                }
                b')' => {
                    self.paren_depth = self.paren_depth.saturating_sub(1);
                    self.advance(&mut buf, 1, true);
                }
                b';' => {
                    self.advance(&mut buf, 1, true);
                    if self.paren_depth == 0 && self.begin_depth == 0 {
                        self.identifier_count = 0;
                        return (buf, start_line, Stop::Semicolon);
                    }
                }
                b'\\' => {
                    if next == Some(b';') || next == Some(b':') {
                        if next == Some(b';') {
                            self.identifier_count = 0;
                        }
                        self.pos += 1;
                        self.advance(&mut buf, 1, true);
                    } else {
                        return (buf, start_line, Stop::Backslash(self.pos));
                    }
                }
                _ if ident_start(b) => {
                    let mut e = self.pos + 1;
                    while e < src.len() && ident_cont(src[e]) {
                        e += 1;
                    }
                    // Prefixed string literals: E'..', B'..', X'..', N'..', U&'..', U&"..".
                    let word = &src[self.pos..e];
                    if e - self.pos == 1 && src.get(e) == Some(&b'\'') {
                        let backslash = matches!(b, b'e' | b'E');
                        let n = self.quoted(e, b'\'', backslash);
                        self.advance(&mut buf, 1 + n, true);
                        continue;
                    }
                    if (word == b"U" || word == b"u") && src.get(e) == Some(&b'&') {
                        if let Some(&q @ (b'\'' | b'"')) = src.get(e + 1) {
                            let n = self.quoted(e + 1, q, false);
                            self.advance(&mut buf, 2 + n, true);
                            continue;
                        }
                    }
                    self.track_identifier(word);
                    self.advance(&mut buf, e - self.pos, true);
                }
                _ if b.is_ascii_digit() => {
                    let mut e = self.pos + 1;
                    while e < src.len()
                        && (src[e].is_ascii_alphanumeric() || src[e] == b'_' || src[e] == b'.')
                    {
                        e += 1;
                    }
                    self.advance(&mut buf, e - self.pos, true);
                }
                _ => self.advance(&mut buf, 1, true),
            }
        }
    }

    /// Length of a quoted string/identifier starting at `start` (the quote),
    /// doubled quotes included; to end of input when unterminated.
    fn quoted(&self, start: usize, q: u8, backslash_escapes: bool) -> usize {
        let src = self.src;
        let mut e = start + 1;
        while e < src.len() {
            if backslash_escapes && src[e] == b'\\' {
                e += 2;
                continue;
            }
            if src[e] == q {
                if src.get(e + 1) == Some(&q) {
                    e += 2;
                    continue;
                }
                return e + 1 - start;
            }
            e += 1;
        }
        src.len() - start
    }

    /// Length of a `$tag$ … $tag$` literal starting at `start`, if one starts there.
    fn dollar_quote(&self, start: usize) -> Option<usize> {
        let src = self.src;
        let mut e = start + 1;
        if e < src.len() && ident_start(src[e]) {
            while e < src.len() && (ident_start(src[e]) || src[e].is_ascii_digit()) {
                e += 1;
            }
        }
        if src.get(e) != Some(&b'$') {
            return None;
        }
        let delim = &src[start..=e];
        let body = e + 1;
        let rest = &src[body..];
        match rest.windows(delim.len()).position(|w| w == delim) {
            Some(i) => Some(body + i + delim.len() - start),
            None => Some(src.len() - start),
        }
    }

    /// Length of a `:{?name}` token at `start`, if there is one.
    fn test_variable(&self, start: usize) -> Option<usize> {
        let src = self.src;
        if src.get(start + 1..start + 3) != Some(b"{?".as_slice()) {
            return None;
        }
        let mut e = start + 3;
        while e < src.len() && var_char(src[e]) {
            e += 1;
        }
        (e > start + 3 && src.get(e) == Some(&b'}')).then_some(e + 1 - start)
    }

    /// Length of the token starting with `:` at `start` (psql variable forms
    /// are kept as units so `:'x'` does not open a string).
    fn colon(&self, start: usize) -> usize {
        let src = self.src;
        match src.get(start + 1) {
            Some(b':') => 2,
            Some(&q @ (b'\'' | b'"')) => {
                let mut e = start + 2;
                while e < src.len() && var_char(src[e]) {
                    e += 1;
                }
                if e > start + 2 && src.get(e) == Some(&q) {
                    e + 1 - start
                } else {
                    1
                }
            }
            Some(&c) if var_char(c) => {
                let mut e = start + 1;
                while e < src.len() && var_char(src[e]) {
                    e += 1;
                }
                e - start
            }
            _ => 1,
        }
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
