//! The lexer checked case by case against what PostgreSQL's scanner makes of each text.

use super::*;
use crate::value::{dollar_body, ident_value, string_value};

/// The tokens of `sql` but white space, as (kind, text).
fn check(sql: &str, expected: &[(Kind, &str)]) {
    let toks = tokens(sql);
    let mut end = 0;
    for t in &toks {
        assert_eq!(t.start, end, "tokens are contiguous in {sql:?}");
        end = t.end;
    }
    assert_eq!(end, sql.len(), "tokens cover {sql:?}");
    let got: Vec<(Kind, &str)> = toks
        .iter()
        .filter(|t| t.kind != Kind::Space)
        .map(|t| (t.kind, t.text(sql)))
        .collect();
    assert_eq!(got, expected, "{sql:?}");
}

use Kind::*;
const STD: Kind = Kind::String(StrKind::Standard);
const ESC: Kind = Kind::String(StrKind::Escape);

#[test]
fn words_numbers_parameters_and_punctuation() {
    check(
        "select t1.a, $1, -2.5e3 from x where b = .5::int",
        &[
            (Word, "select"),
            (Word, "t1"),
            (Punct, "."),
            (Word, "a"),
            (Punct, ","),
            (Param, "$1"),
            (Punct, ","),
            (Punct, "-"),
            (Number, "2.5e3"),
            (Word, "from"),
            (Word, "x"),
            (Word, "where"),
            (Word, "b"),
            (Punct, "="),
            (Number, ".5"),
            (Punct, "::"),
            (Word, "int"),
        ],
    );
}

/// With `standard_conforming_strings` on, `'…'` takes no backslash escape: `'C:\'` ends at
/// its second quote. `E'…'` does: `E'it\'s'` is one string.
#[test]
fn a_backslash_escapes_only_in_e_strings() {
    check(
        "'C:\\', E'it\\'s', e'\\\\'",
        &[
            (STD, "'C:\\'"),
            (Punct, ","),
            (ESC, "E'it\\'s'"),
            (Punct, ","),
            (ESC, "e'\\\\'"),
        ],
    );
}

/// `name'C:\'` is a typed literal: the word `name` (ending in `e`) and a standard string,
/// not an `E''` string (scenario `sqlsplit` and the capture's log splitter read it as one
/// and ran on to the end of the text).
#[test]
fn a_word_ending_in_e_before_a_quote_is_not_an_e_string_prefix() {
    check(
        "select name'C:\\'; select 1",
        &[
            (Word, "select"),
            (Word, "name"),
            (STD, "'C:\\'"),
            (Punct, ";"),
            (Word, "select"),
            (Number, "1"),
        ],
    );
}

#[test]
fn every_string_prefix_in_either_case() {
    check(
        "B'101' x'FF' N'n' U&'d\\0061t' u&\"i\\0064\" E''''",
        &[
            (Kind::String(StrKind::Bit), "B'101'"),
            (Kind::String(StrKind::Hex), "x'FF'"),
            (Kind::String(StrKind::National), "N'n'"),
            (Kind::String(StrKind::Unicode), "U&'d\\0061t'"),
            (QuotedIdent, "u&\"i\\0064\""),
            (ESC, "E''''"),
        ],
    );
}

#[test]
fn quoted_identifiers_double_their_quote() {
    check(
        "\"Weird \"\"id\"\"\".\"x\"",
        &[
            (QuotedIdent, "\"Weird \"\"id\"\"\""),
            (Punct, "."),
            (QuotedIdent, "\"x\""),
        ],
    );
    assert_eq!(ident_value("\"Weird \"\"id\"\"\""), "Weird \"id\"");
    assert_eq!(ident_value("U&\"d\\0061t\\+00263A\""), "dat\u{263a}");
}

/// `/* a /* b */ c */` is one comment in PostgreSQL (the SQL standard's nesting); a line
/// comment ends at a newline or a carriage return.
#[test]
fn block_comments_nest_and_line_comments_end_at_the_line() {
    check(
        "/* a /* b */ c */ x -- y\rz --",
        &[
            (BlockComment, "/* a /* b */ c */"),
            (Word, "x"),
            (LineComment, "-- y"),
            (Word, "z"),
            (LineComment, "--"),
        ],
    );
}

/// A dollar quote's tag is an identifier without `$` (non-ASCII letters included, not
/// starting with a digit); right after an identifier's character a `$` is part of the name.
#[test]
fn dollar_quotes_tags_parameters_and_names_with_dollars() {
    check(
        "$$a$b$$ $é$ ; $é$ $1a a$b$c $ $f$x$$f$",
        &[
            (Dollar, "$$a$b$$"),
            (Dollar, "$é$ ; $é$"),
            (Param, "$1"),
            (Word, "a"),
            (Word, "a$b$c"),
            (Punct, "$"),
            (Dollar, "$f$x$$f$"),
        ],
    );
    assert_eq!(dollar_body("$f$x$$f$"), "x$");
    assert_eq!(dollar_body("$$"), "");
    assert_eq!(dollar_body("$q$open"), "open");
}

#[test]
fn numbers_as_postgres_reads_them() {
    check(
        "0x1F 0o17 0b101 1_000 1.5 1. 1e5 1E-3 1e 1..10 0x",
        &[
            (Number, "0x1F"),
            (Number, "0o17"),
            (Number, "0b101"),
            (Number, "1_000"),
            (Number, "1.5"),
            (Number, "1."),
            (Number, "1e5"),
            (Number, "1E-3"),
            (Number, "1"),
            (Word, "e"),
            (Number, "1"),
            (Punct, ".."),
            (Number, "10"),
            (Number, "0"),
            (Word, "x"),
        ],
    );
}

#[test]
fn pgbench_variables_and_casts() {
    check(
        "v = :p0::int and a[1:n]",
        &[
            (Word, "v"),
            (Punct, "="),
            (Variable, ":p0"),
            (Punct, "::"),
            (Word, "int"),
            (Word, "and"),
            (Word, "a"),
            (Punct, "["),
            (Number, "1"),
            (Variable, ":n"),
            (Punct, "]"),
        ],
    );
}

#[test]
fn anything_left_open_runs_to_the_end_and_says_so() {
    for (sql, kind) in [
        ("'abc", STD),
        ("E'a\\'", ESC),
        ("\"id", QuotedIdent),
        ("/* a /* b */", BlockComment),
        ("$x$ body", Dollar),
    ] {
        let t = tokens(sql);
        assert_eq!(t.len(), 1, "{sql:?}");
        assert_eq!((t[0].kind, t[0].end, t[0].closed), (kind, sql.len(), false));
    }
    assert!(tokens("'a''b'").iter().all(|t| t.closed));
}

#[test]
fn string_values_decode_as_postgres_does() {
    let v = |t: &str, k| string_value(t, k);
    assert_eq!(v("'it''s'", StrKind::Standard), "it's");
    assert_eq!(v("'C:\\'", StrKind::Standard), "C:\\");
    assert_eq!(v("'open", StrKind::Standard), "open");
    assert_eq!(v("E'a\\nb\\t\\'\\\\\\q'", StrKind::Escape), "a\nb\t'\\q");
    // Octal and hex escapes are bytes, read as UTF-8; \u and \U are code points.
    assert_eq!(v("E'\\x41\\101\\303\\251'", StrKind::Escape), "AAé");
    assert_eq!(v("E'\\u00e9\\U0001F600'", StrKind::Escape), "é\u{1f600}");
    assert_eq!(v("E'\\x7b'", StrKind::Escape), "{");
    assert_eq!(v("N'n''x'", StrKind::National), "n'x");
    assert_eq!(v("B'101'", StrKind::Bit), "101");
    assert_eq!(v("X'fF'", StrKind::Hex), "fF");
    assert_eq!(v("U&'d\\0061t\\\\'", StrKind::Unicode), "dat\\");
}
