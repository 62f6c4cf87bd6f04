//! What a string, quoted-identifier or dollar-quoted token stands for, decoded as
//! PostgreSQL decodes it: `''` is one quote; in `E''` strings `\n`, `\t`, `\r`, `\b`, `\f`,
//! octal `\ooo`, hex `\xhh` (bytes, read as UTF-8), `\uXXXX`, `\UXXXXXXXX`, and any other
//! character after a backslash is itself; in `U&''` strings and `U&""` identifiers
//! `\XXXX`, `\+XXXXXX` and `\\`. A token cut short decodes as far as it goes.

use crate::lex::StrKind;

/// The value of a string token's text (prefix and quotes included); for `B''` and `X''`
/// the digits as written.
pub fn string_value(text: &str, kind: StrKind) -> String {
    let body = text.get(kind.prefix_len() + 1..).unwrap_or("");
    match kind {
        StrKind::Escape => escaped(body),
        StrKind::Unicode => unicode(body, '\''),
        _ => doubled(body, '\''),
    }
}

/// The name a quoted-identifier token's text (`"a""b"`, `U&"d\0061t"`) stands for.
pub fn ident_value(text: &str) -> String {
    match text
        .strip_prefix("U&\"")
        .or_else(|| text.strip_prefix("u&\""))
    {
        Some(body) => unicode(body, '"'),
        None => doubled(text.get(1..).unwrap_or(""), '"'),
    }
}

/// The body of a dollar-quoted token's text (`$f$ body $f$` → ` body `).
pub fn dollar_body(text: &str) -> &str {
    let Some(tag_len) = text.get(1..).and_then(|r| r.find('$')).map(|k| k + 2) else {
        return "";
    };
    let (tag, rest) = text.split_at(tag_len);
    match rest.strip_suffix(tag) {
        Some(body) => body,
        None => rest,
    }
}

/// A body up to its closing quote, a doubled quote read as one.
fn doubled(body: &str, quote: char) -> String {
    let mut out = String::with_capacity(body.len());
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c == quote {
            if it.peek() != Some(&quote) {
                break;
            }
            it.next();
        }
        out.push(c);
    }
    out
}

/// An `E''` body up to its closing quote.
fn escaped(body: &str) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut it = body.chars().peekable();
    let push = |out: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    while let Some(c) = it.next() {
        match c {
            '\'' if it.peek() == Some(&'\'') => {
                it.next();
                out.push(b'\'');
            }
            '\'' => break,
            '\\' => {
                let Some(e) = it.next() else { break };
                match e {
                    'b' => out.push(8),
                    'f' => out.push(12),
                    'n' => out.push(b'\n'),
                    'r' => out.push(b'\r'),
                    't' => out.push(b'\t'),
                    '0'..='7' => {
                        let mut v = e as u32 - '0' as u32;
                        for _ in 0..2 {
                            match it.peek().and_then(|d| d.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    it.next();
                                }
                                None => break,
                            }
                        }
                        out.push((v & 0xff) as u8);
                    }
                    'x' if it.peek().is_some_and(char::is_ascii_hexdigit) => {
                        let v = take_hex(&mut it, 2);
                        out.push(v as u8);
                    }
                    'u' | 'U' => {
                        let n = if e == 'u' { 4 } else { 8 };
                        match char::from_u32(take_hex(&mut it, n)) {
                            Some(ch) => push(&mut out, ch),
                            None => push(&mut out, char::REPLACEMENT_CHARACTER),
                        }
                    }
                    other => push(&mut out, other),
                }
            }
            c => push(&mut out, c),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Up to `n` hex digits' value.
fn take_hex(it: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize) -> u32 {
    let mut v = 0u32;
    for _ in 0..n {
        match it.peek().and_then(|d| d.to_digit(16)) {
            Some(d) => {
                v = v.wrapping_mul(16).wrapping_add(d);
                it.next();
            }
            None => break,
        }
    }
    v
}

/// A `U&` body up to its closing `quote`: `\XXXX`, `\+XXXXXX`, `\\`.
fn unicode(body: &str, quote: char) -> String {
    let mut out = String::with_capacity(body.len());
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            c if c == quote => {
                if it.peek() != Some(&quote) {
                    break;
                }
                it.next();
                out.push(quote);
            }
            '\\' => match it.peek() {
                Some('\\') => {
                    it.next();
                    out.push('\\');
                }
                Some('+') => {
                    it.next();
                    out.extend(char::from_u32(take_hex(&mut it, 6)));
                }
                _ => out.extend(char::from_u32(take_hex(&mut it, 4))),
            },
            c => out.push(c),
        }
    }
    out
}
