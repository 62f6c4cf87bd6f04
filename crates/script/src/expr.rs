//! The expression language of `\set`, `\if` and `\elif`: its syntax tree and
//! the table of functions with their pgbench names and argument counts.
//!
//! Operators are represented as the functions pgbench's grammar builds
//! (`a > b` is `(< b a)`, `-x` is `(- 0 x)`, `~x` is `(# -1 x)`, `x IS NOT NULL`
//! is `(!not (!is x null))`), so evaluation and S-expression dumps follow
//! pgbench exactly.

use crate::value::{format_g15, Value};
use std::fmt;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal.
    Const(Value),
    /// `:name`.
    Var(Box<str>),
    /// An operator or function applied to arguments.
    Call(Func, Vec<Expr>),
}

/// Every function/operator of pgbench's `PGBENCH_FUNCTIONS` table.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    And,
    Or,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
    Eq,
    Ne,
    Le,
    Lt,
    Is,
    Case,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// How many arguments a function takes (pgbench's `nargs` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arity {
    Fixed(usize),
    /// least/greatest: at least one.
    Variable,
    /// hash functions: one or two (the seed defaults to `:default_seed`).
    Hash,
    /// permute: two or three (the seed defaults to `:default_seed`).
    Permute,
}

/// Callable names, as in pgbench's table (matched case-insensitively).
pub(crate) const FUNCTIONS: &[(&str, Arity, Func)] = &[
    ("mod", Arity::Fixed(2), Func::Mod),
    ("abs", Arity::Fixed(1), Func::Abs),
    ("least", Arity::Variable, Func::Least),
    ("greatest", Arity::Variable, Func::Greatest),
    ("debug", Arity::Fixed(1), Func::Debug),
    ("pi", Arity::Fixed(0), Func::Pi),
    ("sqrt", Arity::Fixed(1), Func::Sqrt),
    ("ln", Arity::Fixed(1), Func::Ln),
    ("exp", Arity::Fixed(1), Func::Exp),
    ("int", Arity::Fixed(1), Func::Int),
    ("double", Arity::Fixed(1), Func::Double),
    ("random", Arity::Fixed(2), Func::Random),
    ("random_gaussian", Arity::Fixed(3), Func::RandomGaussian),
    (
        "random_exponential",
        Arity::Fixed(3),
        Func::RandomExponential,
    ),
    ("random_zipfian", Arity::Fixed(3), Func::RandomZipfian),
    ("pow", Arity::Fixed(2), Func::Pow),
    ("power", Arity::Fixed(2), Func::Pow),
    ("hash", Arity::Hash, Func::HashMurmur2),
    ("hash_murmur2", Arity::Hash, Func::HashMurmur2),
    ("hash_fnv1a", Arity::Hash, Func::HashFnv1a),
    ("permute", Arity::Permute, Func::Permute),
];

impl Func {
    /// The name pgbench's table gives this function (`"!and"`, `"mod"`, `"pow"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Func::Add => "+",
            Func::Sub => "-",
            Func::Mul => "*",
            Func::Div => "/",
            Func::Mod => "mod",
            Func::Abs => "abs",
            Func::Least => "least",
            Func::Greatest => "greatest",
            Func::Debug => "debug",
            Func::Pi => "pi",
            Func::Sqrt => "sqrt",
            Func::Ln => "ln",
            Func::Exp => "exp",
            Func::Int => "int",
            Func::Double => "double",
            Func::Random => "random",
            Func::RandomGaussian => "random_gaussian",
            Func::RandomExponential => "random_exponential",
            Func::RandomZipfian => "random_zipfian",
            Func::Pow => "pow",
            Func::And => "!and",
            Func::Or => "!or",
            Func::Not => "!not",
            Func::BitAnd => "&",
            Func::BitOr => "|",
            Func::BitXor => "#",
            Func::LShift => "<<",
            Func::RShift => ">>",
            Func::Eq => "=",
            Func::Ne => "<>",
            Func::Le => "<=",
            Func::Lt => "<",
            Func::Is => "!is",
            Func::Case => "!case_end",
            Func::HashMurmur2 => "hash_murmur2",
            Func::HashFnv1a => "hash_fnv1a",
            Func::Permute => "permute",
        }
    }
}

impl fmt::Display for Expr {
    /// S-expression dump: `(+ 1 (* 2 :x))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(Value::Null) => f.write_str("null"),
            Expr::Const(Value::Bool(b)) => write!(f, "{b}"),
            Expr::Const(Value::Int(i)) => write!(f, "{i}"),
            Expr::Const(Value::Double(d)) => {
                let mut s = String::new();
                format_g15(*d, &mut s);
                if !s.contains(['.', 'e', 'n', 'i']) {
                    s.push_str(".0");
                }
                f.write_str(&s)
            }
            Expr::Var(name) => write!(f, ":{name}"),
            Expr::Call(func, args) => {
                write!(f, "({}", func.name())?;
                for a in args {
                    write!(f, " {a}")?;
                }
                f.write_str(")")
            }
        }
    }
}
