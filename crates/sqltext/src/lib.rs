//! One SQL lexer for every crate that reads SQL text: the probe's statement normalization,
//! a scenario's SQL files split into statements, and the capture's statement texts, schema
//! rewrites and `{{…}}` guards. It follows PostgreSQL's own scanner (`scan.l`) with
//! `standard_conforming_strings` on (the default since 9.1): `'…'` takes no backslash
//! escapes, `E'…'` does; `/* */` comments nest; a `$tag$` cannot follow an identifier's
//! character (it is part of the name); a quoted identifier doubles its `"`. It adds pgbench's
//! `:variable`. Tokens carry their byte span, so a user copies the input's text exactly where
//! it keeps it; [`value`] decodes what a string or identifier token stands for. Lowest crate
//! of all: no dependency, no I/O.

pub mod lex;
pub mod value;

pub use lex::{tokens, Kind, Lexer, StrKind, Token};
pub use value::{dollar_body, ident_value, string_value};
