//! SQL text as tokens with their byte spans, by PostgreSQL's scanner rules (`scan.l`,
//! `standard_conforming_strings` on) plus pgbench's `:variable`. Every byte of the input is
//! in exactly one token, in order, so a user that copies tokens back gets its input; a
//! string, identifier, comment or dollar quote left open runs to the end and says so
//! (`closed: false`). Operators come one character a token (`::` and `..` are one each), so a user sees a
//! `-` before a number and decides itself whether it is a sign.

/// Which string constant: the prefix before its opening quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrKind {
    /// `'…'`: no backslash escapes (`standard_conforming_strings`).
    Standard,
    /// `E'…'`: backslash escapes.
    Escape,
    /// `B'…'`: a bit string.
    Bit,
    /// `X'…'`: a bit string in hexadecimal.
    Hex,
    /// `N'…'`: national character (a plain string to the lexer).
    National,
    /// `U&'…'`: Unicode escapes (`\0041`, `\+000041`).
    Unicode,
}

impl StrKind {
    /// Bytes before the opening quote.
    pub fn prefix_len(self) -> usize {
        match self {
            StrKind::Standard => 0,
            StrKind::Unicode => 2,
            _ => 1,
        }
    }
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A run of PostgreSQL's white space (space, tab, newline, carriage return, form feed,
    /// vertical tab).
    Space,
    /// `--` to the end of its line (the newline is not in it).
    LineComment,
    /// `/* … */`, nested ones within.
    BlockComment,
    /// A string constant, prefix and quotes included.
    String(StrKind),
    /// A dollar-quoted string, `$tag$…$tag$` or `$$…$$`, tags included.
    Dollar,
    /// A quoted identifier, `"…"` (a `""` within is one `"`) or `U&"…"`.
    QuotedIdent,
    /// A numeric constant: `42`, `1_000`, `1.5e3`, `.5`, `0x1F`, `0o17`, `0b101`.
    Number,
    /// A bind parameter, `$1`.
    Param,
    /// A pgbench variable, `:name`.
    Variable,
    /// An identifier or keyword (letters, digits, `_`, `$`, any non-ASCII character).
    Word,
    /// `::`, `..`, or any one other character (an operator's, a parenthesis, `;`, `,`).
    Punct,
}

/// One token: its kind and where it stands in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset just after it.
    pub end: usize,
    /// False for a string, identifier, comment or dollar quote the text ends inside.
    pub closed: bool,
}

impl Token {
    /// The token's text in `sql` (the text it was lexed from).
    pub fn text<'a>(&self, sql: &'a str) -> &'a str {
        &sql[self.start..self.end]
    }

    /// White space or a comment: what separates tokens and means nothing.
    pub fn is_blank(&self) -> bool {
        matches!(
            self.kind,
            Kind::Space | Kind::LineComment | Kind::BlockComment
        )
    }

    /// A comment.
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, Kind::LineComment | Kind::BlockComment)
    }

    /// A constant: a string of any kind, a dollar-quoted string, a number.
    pub fn is_constant(&self) -> bool {
        matches!(self.kind, Kind::String(_) | Kind::Dollar | Kind::Number)
    }
}

/// The tokens of a text, in order.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(sql: &'a str) -> Lexer<'a> {
        Lexer {
            b: sql.as_bytes(),
            pos: 0,
        }
    }
}

/// Every token of `sql`.
pub fn tokens(sql: &str) -> Vec<Token> {
    Lexer::new(sql).collect()
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let start = self.pos;
        if start >= self.b.len() {
            return None;
        }
        let (kind, end, closed) = scan(self.b, start);
        self.pos = end;
        Some(Token {
            kind,
            start,
            end,
            closed,
        })
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// `ident_start` of `scan.l`: a letter, `_`, or any byte of a non-ASCII character.
fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

/// `dolq_cont`: what a dollar quote's tag and a pgbench variable continue with.
fn tag_cont(c: u8) -> bool {
    ident_start(c) || c.is_ascii_digit()
}

/// `ident_cont`: an identifier also takes `$`.
fn ident_cont(c: u8) -> bool {
    tag_cont(c) || c == b'$'
}

fn run(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && f(b[i]) {
        i += 1;
    }
    i
}

/// The token at `i`: its kind, end and whether it is closed.
fn scan(b: &[u8], i: usize) -> (Kind, usize, bool) {
    let c = b[i];
    let next = b.get(i + 1).copied();
    let at = |k: usize| b.get(i + k).map(u8::to_ascii_lowercase);
    match c {
        c if is_space(c) => (Kind::Space, run(b, i, is_space), true),
        b'-' if next == Some(b'-') => (
            Kind::LineComment,
            run(b, i, |c| c != b'\n' && c != b'\r'),
            true,
        ),
        b'/' if next == Some(b'*') => {
            let (end, closed) = block_comment_end(b, i);
            (Kind::BlockComment, end, closed)
        }
        b'\'' => string(b, i, StrKind::Standard),
        b'"' => {
            let (end, closed) = quoted_end(b, i, b'"', false);
            (Kind::QuotedIdent, end, closed)
        }
        b'$' => dollar(b, i),
        b':' if next == Some(b':') => (Kind::Punct, i + 2, true),
        b'.' if next == Some(b'.') => (Kind::Punct, i + 2, true),
        b':' if next.is_some_and(ident_start) => (Kind::Variable, run(b, i + 1, tag_cont), true),
        b'0'..=b'9' => (Kind::Number, number_end(b, i), true),
        b'.' if next.is_some_and(|n| n.is_ascii_digit()) => (Kind::Number, number_end(b, i), true),
        c if ident_start(c) => match (at(0), at(1), at(2)) {
            (Some(b'e'), Some(b'\''), _) => string(b, i, StrKind::Escape),
            (Some(b'b'), Some(b'\''), _) => string(b, i, StrKind::Bit),
            (Some(b'x'), Some(b'\''), _) => string(b, i, StrKind::Hex),
            (Some(b'n'), Some(b'\''), _) => string(b, i, StrKind::National),
            (Some(b'u'), Some(b'&'), Some(b'\'')) => string(b, i, StrKind::Unicode),
            (Some(b'u'), Some(b'&'), Some(b'"')) => {
                let (end, closed) = quoted_end(b, i + 2, b'"', false);
                (Kind::QuotedIdent, end, closed)
            }
            _ => (Kind::Word, run(b, i, ident_cont), true),
        },
        // Anything else is ASCII here: every non-ASCII byte starts a word.
        _ => (Kind::Punct, i + 1, true),
    }
}

fn string(b: &[u8], i: usize, kind: StrKind) -> (Kind, usize, bool) {
    let (end, closed) = quoted_end(b, i + kind.prefix_len(), b'\'', kind == StrKind::Escape);
    (Kind::String(kind), end, closed)
}

/// The end of a quoted token whose opening quote is at `q` (a doubled quote is one; with
/// `backslash`, a backslash takes the next character with it).
fn quoted_end(b: &[u8], q: usize, quote: u8, backslash: bool) -> (usize, bool) {
    let mut j = q + 1;
    while j < b.len() {
        if backslash && b[j] == b'\\' {
            j += 2;
        } else if b[j] == quote {
            if b.get(j + 1) == Some(&quote) {
                j += 2;
            } else {
                return (j + 1, true);
            }
        } else {
            j += 1;
        }
    }
    (b.len(), false)
}

/// The end of a (nested) block comment starting at `i`.
fn block_comment_end(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut depth = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return (i, true);
            }
        } else {
            i += 1;
        }
    }
    (b.len(), false)
}

/// `$1`, a dollar-quoted string, or a lone `$`.
fn dollar(b: &[u8], i: usize) -> (Kind, usize, bool) {
    let next = b.get(i + 1).copied();
    if next.is_some_and(|n| n.is_ascii_digit()) {
        return (Kind::Param, run(b, i + 1, |c| c.is_ascii_digit()), true);
    }
    let tag_end = if next == Some(b'$') {
        i + 1
    } else if next.is_some_and(ident_start) {
        let k = run(b, i + 1, tag_cont);
        if b.get(k) != Some(&b'$') {
            return (Kind::Punct, i + 1, true);
        }
        k
    } else {
        return (Kind::Punct, i + 1, true);
    };
    let tag = &b[i..=tag_end];
    let body = tag_end + 1;
    match b[body..].windows(tag.len()).position(|w| w == tag) {
        Some(p) => (Kind::Dollar, body + p + tag.len(), true),
        None => (Kind::Dollar, b.len(), false),
    }
}

/// The end of a number at `i` (a digit, or a `.` before one). `1..10` is `1`, `..`, `10`
/// (PL/pgSQL's range); `1e` is `1` and a word, as PostgreSQL before 15 read it.
fn number_end(b: &[u8], i: usize) -> usize {
    let digits = |j: usize| run(b, j, |c| c.is_ascii_digit() || c == b'_');
    if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B')) {
        let j = run(b, i + 2, |c| c.is_ascii_hexdigit() || c == b'_');
        if j > i + 2 {
            return j;
        }
    }
    let mut j = digits(i);
    if b.get(j) == Some(&b'.') && b.get(j + 1) != Some(&b'.') {
        j = digits(j + 1);
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            j = digits(k);
        }
    }
    j
}

#[cfg(test)]
#[path = "lex_tests.rs"]
mod tests;
