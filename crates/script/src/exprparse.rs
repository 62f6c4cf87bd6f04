//! Lexer and Pratt parser for expressions, with pgbench's (bison) precedences:
//!
//! ```text
//! lowest   OR                       left
//!          AND                      left
//!          NOT                      right (prefix)
//!          IS ISNULL NOTNULL        postfix
//!          < > = <= >= <> !=        non-associative
//!          | # & << >> ~            left (prefix ~ binds at this level)
//!          + -                      left
//!          * / %                    left
//! highest  unary + -                prefix
//! ```
//!
//! Errors carry pgbench's message and the byte position pgbench's caret points
//! at (the last byte of the offending token).

use crate::expr::{Arity, Expr, Func, FUNCTIONS};
use crate::value::Value;

/// An expression syntax error: message, optional detail, caret position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExprError {
    pub message: String,
    pub more: Option<String>,
    /// Absolute byte offset in the script source.
    pub pos: usize,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    MaxIntPlusOne,
    Double(f64),
    Var(Box<str>),
    Ident(Box<str>),
    Op(&'static str),
    Null,
    True,
    False,
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
    /// Newline or end of input.
    Eol,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    end: usize,
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    /// Whether the last token returned was the end of the line.
    last_was_eol: bool,
}

impl<'a> Lexer<'a> {
    fn err(&self, message: &str, more: Option<String>, pos: usize) -> ExprError {
        ExprError {
            message: message.to_string(),
            more,
            pos,
        }
    }

    fn next(&mut self) -> Result<Token, ExprError> {
        let t = self.next_inner();
        self.last_was_eol = matches!(t, Ok(Token { tok: Tok::Eol, .. }));
        t
    }

    fn next_inner(&mut self) -> Result<Token, ExprError> {
        let src = self.src;
        loop {
            match src.get(self.pos) {
                Some(&b) if is_space(b) => self.pos += 1,
                Some(b'\\') if src.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
                _ => break,
            }
        }
        let start = self.pos;
        let b = match src.get(start) {
            None => {
                return Ok(Token {
                    tok: Tok::Eol,
                    end: start,
                })
            }
            Some(&b) => b,
        };
        if b == b'\n' {
            self.pos += 1;
            return Ok(Token {
                tok: Tok::Eol,
                end: self.pos,
            });
        }
        let two = src.get(start..start + 2).unwrap_or(&[]);
        let op2 = match two {
            b"<>" | b"!=" => Some("<>"),
            b"<=" => Some("<="),
            b">=" => Some(">="),
            b"<<" => Some("<<"),
            b">>" => Some(">>"),
            _ => None,
        };
        if let Some(op) = op2 {
            self.pos += 2;
            return Ok(self.tok(Tok::Op(op), start));
        }
        let op1 = match b {
            b'+' => Some("+"),
            b'-' => Some("-"),
            b'*' => Some("*"),
            b'/' => Some("/"),
            b'%' => Some("%"),
            b'(' => Some("("),
            b')' => Some(")"),
            b',' => Some(","),
            b'~' => Some("~"),
            b'&' => Some("&"),
            b'|' => Some("|"),
            b'#' => Some("#"),
            b'<' => Some("<"),
            b'>' => Some(">"),
            b'=' => Some("="),
            _ => None,
        };
        if let Some(op) = op1 {
            self.pos += 1;
            return Ok(self.tok(Tok::Op(op), start));
        }
        if b == b':' {
            let mut e = start + 1;
            while e < src.len() && is_alnum(src[e]) {
                e += 1;
            }
            if e > start + 1 {
                self.pos = e;
                let name = String::from_utf8_lossy(&src[start + 1..e]);
                return Ok(self.tok(Tok::Var(name.into()), start));
            }
        }
        if b.is_ascii_digit() || (b == b'.' && src.get(start + 1).is_some_and(u8::is_ascii_digit)) {
            return self.number(start);
        }
        if is_alpha(b) {
            let mut e = start + 1;
            while e < src.len() && is_alnum(src[e]) {
                e += 1;
            }
            self.pos = e;
            let word = String::from_utf8_lossy(&src[start..e]);
            let tok = match word.to_ascii_lowercase().as_str() {
                "and" => Tok::And,
                "or" => Tok::Or,
                "not" => Tok::Not,
                "is" => Tok::Is,
                "isnull" => Tok::IsNull,
                "notnull" => Tok::NotNull,
                "null" => Tok::Null,
                "true" => Tok::True,
                "false" => Tok::False,
                "case" => Tok::Case,
                "when" => Tok::When,
                "then" => Tok::Then,
                "else" => Tok::Else,
                "end" => Tok::End,
                _ => Tok::Ident(word.into()),
            };
            return Ok(self.tok(tok, start));
        }
        // Unexpected character: report it (one byte, like flex's ".").
        let ch = String::from_utf8_lossy(&src[start..start + 1]).into_owned();
        self.pos = start + 1;
        Err(self.err("unexpected character", Some(ch), start))
    }

    fn tok(&self, tok: Tok, _start: usize) -> Token {
        Token { tok, end: self.pos }
    }

    fn number(&mut self, start: usize) -> Result<Token, ExprError> {
        let src = self.src;
        let mut e = start;
        while e < src.len() && src[e].is_ascii_digit() {
            e += 1;
        }
        let mut is_double = false;
        if src.get(e) == Some(&b'.') {
            is_double = true;
            e += 1;
            while e < src.len() && src[e].is_ascii_digit() {
                e += 1;
            }
        }
        if matches!(src.get(e), Some(b'e' | b'E')) {
            let mut x = e + 1;
            if matches!(src.get(x), Some(b'+' | b'-')) {
                x += 1;
            }
            if src.get(x).is_some_and(u8::is_ascii_digit) {
                while x < src.len() && src[x].is_ascii_digit() {
                    x += 1;
                }
                e = x;
                is_double = true;
            }
        }
        self.pos = e;
        let text = String::from_utf8_lossy(&src[start..e]).into_owned();
        if !is_double {
            if text == "9223372036854775808" {
                return Ok(self.tok(Tok::MaxIntPlusOne, start));
            }
            return match text.parse::<i64>() {
                Ok(v) => Ok(self.tok(Tok::Int(v), start)),
                Err(_) => Err(self.err("bigint constant overflow", Some(text), e - 1)),
            };
        }
        match text.parse::<f64>() {
            Ok(v)
                if v.is_finite() && !(v == 0.0 && has_nonzero_digit(&text)) && !is_subnormal(v) =>
            {
                Ok(self.tok(Tok::Double(v), start))
            }
            _ => Err(self.err("double constant overflow", Some(text), e - 1)),
        }
    }
}

fn has_nonzero_digit(text: &str) -> bool {
    let mant = text.split(['e', 'E']).next().unwrap_or("");
    mant.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

fn is_subnormal(v: f64) -> bool {
    v != 0.0 && v.abs() < f64::MIN_POSITIVE
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Token>,
}

/// Deepest expression accepted, in nesting levels and tree height (pgbench accepts 1,000
/// levels and more; its bison stack refuses about 10,000 parentheses). It bounds the recursion
/// of parsing, evaluation and drop, which [`crate::EXPR_STACK_BYTES`] of stack cover.
pub const MAX_TREE_DEPTH: usize = 1_000;

/// Deepest parser recursion: a level such as `1 + (` or `-(` recurses twice.
const MAX_PARSE_DEPTH: usize = 2 * MAX_TREE_DEPTH;

const UNARY_BP: u8 = 18;
const NOT_BP: u8 = 6;
const TILDE_BP: u8 = 13;
const IS_BP: u8 = 8;
const CMP_L: u8 = 10;
const CMP_R: u8 = 11;

/// (left bp, right bp, func, swap operands) for binary infix operators.
fn infix(tok: &Tok) -> Option<(u8, u8, Func, bool)> {
    Some(match tok {
        Tok::Or => (2, 3, Func::Or, false),
        Tok::And => (4, 5, Func::And, false),
        Tok::Op("<") => (CMP_L, CMP_R, Func::Lt, false),
        Tok::Op(">") => (CMP_L, CMP_R, Func::Lt, true),
        Tok::Op("=") => (CMP_L, CMP_R, Func::Eq, false),
        Tok::Op("<=") => (CMP_L, CMP_R, Func::Le, false),
        Tok::Op(">=") => (CMP_L, CMP_R, Func::Le, true),
        Tok::Op("<>") => (CMP_L, CMP_R, Func::Ne, false),
        Tok::Op("|") => (12, 13, Func::BitOr, false),
        Tok::Op("#") => (12, 13, Func::BitXor, false),
        Tok::Op("&") => (12, 13, Func::BitAnd, false),
        Tok::Op("<<") => (12, 13, Func::LShift, false),
        Tok::Op(">>") => (12, 13, Func::RShift, false),
        Tok::Op("+") => (14, 15, Func::Add, false),
        Tok::Op("-") => (14, 15, Func::Sub, false),
        Tok::Op("*") => (16, 17, Func::Mul, false),
        Tok::Op("/") => (16, 17, Func::Div, false),
        Tok::Op("%") => (16, 17, Func::Mod, false),
        _ => return None,
    })
}

fn is_comparison(tok: &Tok) -> bool {
    matches!(infix(tok), Some((CMP_L, _, _, _)))
}

fn syntax_error(t: &Token) -> ExprError {
    ExprError {
        message: "syntax error".to_string(),
        more: None,
        pos: t.end.saturating_sub(1),
    }
}

impl<'a> Parser<'a> {
    fn peek(&mut self) -> Result<&Token, ExprError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        match &self.peeked {
            Some(t) => Ok(t),
            None => unreachable_token(),
        }
    }

    fn bump(&mut self) -> Result<Token, ExprError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lexer.next(),
        }
    }

    fn expect_op(&mut self, op: &str) -> Result<Token, ExprError> {
        let t = self.bump()?;
        if t.tok == Tok::Op(op_static(op)) {
            Ok(t)
        } else {
            Err(syntax_error(&t))
        }
    }

    fn expr_bp(&mut self, min_bp: u8, depth: usize) -> Result<Expr, ExprError> {
        self.expr_bp_depth(min_bp, depth).map(|(e, _)| e)
    }

    /// Parses with binding power `min_bp`; returns the tree and its height,
    /// refused beyond [`MAX_TREE_DEPTH`] so evaluation cannot overflow the stack.
    fn expr_bp_depth(&mut self, min_bp: u8, depth: usize) -> Result<(Expr, usize), ExprError> {
        let t = self.bump()?;
        if depth > MAX_PARSE_DEPTH {
            return Err(ExprError {
                message: "expression is too deeply nested".to_string(),
                more: None,
                pos: t.end.saturating_sub(1),
            });
        }
        let too_deep = |t: &Token| ExprError {
            message: "expression is too deeply nested".to_string(),
            more: None,
            pos: t.end.saturating_sub(1),
        };
        let (mut lhs, mut height) = match &t.tok {
            Tok::Op("(") => {
                let e = self.expr_bp_depth(0, depth + 1)?;
                self.expect_op(")")?;
                e
            }
            Tok::Op("+") => self.expr_bp_depth(UNARY_BP, depth + 1)?,
            Tok::Op("-") => {
                if self.peek()?.tok == Tok::MaxIntPlusOne {
                    self.bump()?;
                    (Expr::Const(Value::Int(i64::MIN)), 1)
                } else {
                    let (e, h) = self.expr_bp_depth(UNARY_BP, depth + 1)?;
                    (
                        Expr::Call(Func::Sub, vec![Expr::Const(Value::Int(0)), e]),
                        h + 1,
                    )
                }
            }
            Tok::Op("~") => {
                let (e, h) = self.expr_bp_depth(TILDE_BP, depth + 1)?;
                (
                    Expr::Call(Func::BitXor, vec![Expr::Const(Value::Int(!0)), e]),
                    h + 1,
                )
            }
            Tok::Not => {
                let (e, h) = self.expr_bp_depth(NOT_BP, depth + 1)?;
                (Expr::Call(Func::Not, vec![e]), h + 1)
            }
            Tok::Null => (Expr::Const(Value::Null), 1),
            Tok::True => (Expr::Const(Value::Bool(true)), 1),
            Tok::False => (Expr::Const(Value::Bool(false)), 1),
            Tok::Int(i) => (Expr::Const(Value::Int(*i)), 1),
            Tok::Double(d) => (Expr::Const(Value::Double(*d)), 1),
            Tok::Var(name) => (Expr::Var(name.clone()), 1),
            Tok::Ident(name) => self.call(name, &t, depth)?,
            Tok::Case => self.case(depth)?,
            _ => return Err(syntax_error(&t)),
        };
        if height > MAX_TREE_DEPTH {
            return Err(too_deep(&t));
        }
        loop {
            let next = self.peek()?.clone();
            match &next.tok {
                Tok::Is | Tok::IsNull | Tok::NotNull => {
                    if IS_BP < min_bp {
                        break;
                    }
                    self.bump()?;
                    let (e, h) = self.is_suffix(&next, lhs)?;
                    lhs = e;
                    height += h;
                }
                tok => {
                    let Some((l_bp, r_bp, func, swap)) = infix(tok) else {
                        break;
                    };
                    if l_bp < min_bp {
                        break;
                    }
                    self.bump()?;
                    let (rhs, rh) = self.expr_bp_depth(r_bp, depth + 1)?;
                    height = height.max(rh) + 1;
                    lhs = if swap {
                        Expr::Call(func, vec![rhs, lhs])
                    } else {
                        Expr::Call(func, vec![lhs, rhs])
                    };
                    if height > MAX_TREE_DEPTH {
                        return Err(too_deep(&next));
                    }
                    if l_bp == CMP_L {
                        let after = self.peek()?;
                        if is_comparison(&after.tok) {
                            return Err(syntax_error(after));
                        }
                    }
                }
            }
        }
        if height > MAX_TREE_DEPTH {
            return Err(too_deep(&t));
        }
        Ok((lhs, height))
    }

    /// Returns the node and how much it adds to the tree height.
    fn is_suffix(&mut self, op: &Token, lhs: Expr) -> Result<(Expr, usize), ExprError> {
        let is = |e: Expr, v: Value| Expr::Call(Func::Is, vec![e, Expr::Const(v)]);
        let not = |e: Expr| Expr::Call(Func::Not, vec![e]);
        match op.tok {
            Tok::IsNull => return Ok((is(lhs, Value::Null), 1)),
            Tok::NotNull => return Ok((not(is(lhs, Value::Null)), 2)),
            _ => {}
        }
        let mut t = self.bump()?;
        let negate = t.tok == Tok::Not;
        if negate {
            t = self.bump()?;
        }
        let v = match t.tok {
            Tok::Null => Value::Null,
            Tok::True => Value::Bool(true),
            Tok::False => Value::Bool(false),
            _ => return Err(syntax_error(&t)),
        };
        let e = is(lhs, v);
        Ok(if negate { (not(e), 2) } else { (e, 1) })
    }

    fn call(
        &mut self,
        name: &str,
        name_tok: &Token,
        depth: usize,
    ) -> Result<(Expr, usize), ExprError> {
        let Some(&(fname, arity, func)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(ExprError {
                message: "unexpected function name".to_string(),
                more: Some(name.to_string()),
                pos: name_tok.end.saturating_sub(1),
            });
        };
        self.expect_op("(")?;
        let mut args = Vec::new();
        let mut height = 0;
        let close;
        if self.peek()?.tok == Tok::Op(")") {
            close = self.bump()?;
        } else {
            loop {
                let (a, h) = self.expr_bp_depth(0, depth + 1)?;
                height = height.max(h);
                args.push(a);
                let t = self.bump()?;
                match t.tok {
                    Tok::Op(",") => continue,
                    Tok::Op(")") => {
                        close = t;
                        break;
                    }
                    _ => return Err(syntax_error(&t)),
                }
            }
        }
        let n = args.len();
        let err = |message: &str| ExprError {
            message: message.to_string(),
            more: Some(fname.to_string()),
            pos: close.end.saturating_sub(1),
        };
        match arity {
            Arity::Variable if n == 0 => return Err(err("at least one argument expected")),
            Arity::Variable => {}
            Arity::Hash => {
                if !(1..=2).contains(&n) {
                    return Err(err("unexpected number of arguments"));
                }
                if n == 1 {
                    args.push(Expr::Var("default_seed".into()));
                }
            }
            Arity::Permute => {
                if !(2..=3).contains(&n) {
                    return Err(err("unexpected number of arguments"));
                }
                if n == 2 {
                    args.push(Expr::Var("default_seed".into()));
                }
            }
            Arity::Fixed(k) if k != n => return Err(err("unexpected number of arguments")),
            Arity::Fixed(_) => {}
        }
        Ok((Expr::Call(func, args), height + 1))
    }

    fn case(&mut self, depth: usize) -> Result<(Expr, usize), ExprError> {
        let mut args = Vec::new();
        let mut height = 0;
        let mut arg = |p: &mut Self, args: &mut Vec<Expr>| -> Result<(), ExprError> {
            let (a, h) = p.expr_bp_depth(0, depth + 1)?;
            height = height.max(h);
            args.push(a);
            Ok(())
        };
        let t = self.bump()?;
        if t.tok != Tok::When {
            return Err(syntax_error(&t));
        }
        loop {
            arg(self, &mut args)?;
            let t = self.bump()?;
            if t.tok != Tok::Then {
                return Err(syntax_error(&t));
            }
            arg(self, &mut args)?;
            let t = self.bump()?;
            match t.tok {
                Tok::When => continue,
                Tok::Else => {
                    arg(self, &mut args)?;
                    let t = self.bump()?;
                    if t.tok != Tok::End {
                        return Err(syntax_error(&t));
                    }
                    break;
                }
                Tok::End => {
                    args.push(Expr::Const(Value::Null));
                    break;
                }
                _ => return Err(syntax_error(&t)),
            }
        }
        // Lazy CASE evaluation recurses once per WHEN pair (args: pairs, then ELSE).
        let height = height + (args.len() - 1) / 2;
        Ok((Expr::Call(Func::Case, args), height))
    }
}

fn unreachable_token<T>() -> Result<T, ExprError> {
    Err(ExprError {
        message: "internal parser error".to_string(),
        more: None,
        pos: 0,
    })
}

fn op_static(op: &str) -> &'static str {
    match op {
        "(" => "(",
        ")" => ")",
        _ => ",",
    }
}

/// Parses one expression from `src[pos..]` up to the end of the line
/// (backslash-newline continues it). Returns the expression and the offset
/// just after the terminating newline (or the end of input).
pub(crate) fn parse_expression(src: &[u8], pos: usize) -> Result<(Expr, usize), ExprError> {
    let mut p = Parser {
        lexer: Lexer {
            src,
            pos,
            last_was_eol: false,
        },
        peeked: None,
    };
    let result = (|| {
        let e = p.expr_bp(0, 0)?;
        let t = p.bump()?;
        if t.tok != Tok::Eol {
            return Err(syntax_error(&t));
        }
        Ok((e, t.end))
    })();
    match result {
        Ok(r) => Ok(r),
        Err(mut err) => {
            // Like pgbench, lex the rest of the line to report it whole; a
            // lexical error found there is the one reported.
            let lx = &mut p.lexer;
            if !lx.last_was_eol {
                loop {
                    match lx.next() {
                        Ok(Token { tok: Tok::Eol, .. }) => break,
                        Ok(_) => {}
                        Err(e) => err = e,
                    }
                }
            }
            Err(err)
        }
    }
}

/// Offset just after the end of the backslash command starting at `pos`: the
/// first newline not escaped by a backslash (or the end of input).
pub(crate) fn end_of_command(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    while i < src.len() {
        if src[i] == b'\n' && !(i > 0 && src[i - 1] == b'\\') {
            return i + 1;
        }
        i += 1;
    }
    src.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sexp(s: &str) -> String {
        match parse_expression(s.as_bytes(), 0) {
            Ok((e, _)) => e.to_string(),
            Err(e) => format!("error: {} {:?} at {}", e.message, e.more, e.pos),
        }
    }

    #[test]
    fn precedence_basics() {
        assert_eq!(sexp("1 + 2 * 3"), "(+ 1 (* 2 3))");
        assert_eq!(sexp("-2 * 3"), "(* (- 0 2) 3)");
        assert_eq!(sexp("~1 + 2"), "(# -1 (+ 1 2))");
        assert_eq!(sexp("~1 | 2"), "(| (# -1 1) 2)");
        assert_eq!(sexp("not 1 = 2 and true"), "(!and (!not (= 1 2)) true)");
        assert_eq!(
            sexp("a(1)"),
            "error: unexpected function name Some(\"a\") at 0"
        );
        assert_eq!(sexp("1 < 2 < 3"), "error: syntax error None at 6");
    }
}
