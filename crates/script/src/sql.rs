//! SQL commands, pre-split at parse time so each execution only copies text.
//!
//! Variable references are found with pgbench's rule (`:` followed by a
//! letter, `_` or non-ASCII byte, then those or digits; runs of colons such as
//! `::` are skipped) wherever they are, even inside quotes, as pgbench does.
//! Simple protocol: an undefined variable is left as written. Extended and
//! prepared protocols: every reference becomes `$1..$n` (pgbench `parseQuery`),
//! and an undefined variable is sent as NULL.
//!
//! hotbench extension (psql syntax, which pgbench leaves untouched):
//! `:'name'` becomes a quoted literal (simple) or a parameter (extended), and
//! `:"name"` a quoted identifier substituted into the text in every mode.

use crate::vars::Variables;
use std::fmt::Write as _;

/// pgbench's `MAX_ARGS - 1`: most parameters one SQL command may have.
pub const MAX_PARAMS: usize = 255;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(usize, usize),
    /// `:name`
    Var {
        name: Box<str>,
        start: usize,
        end: usize,
    },
    /// `:'name'`
    Literal {
        name: Box<str>,
        start: usize,
        end: usize,
    },
    /// `:"name"`
    Ident {
        name: Box<str>,
        start: usize,
        end: usize,
    },
}

/// What to do with the rows of a command (`\gset` / `\aset`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultMode {
    /// Discard results.
    Discard,
    /// `\gset [prefix]`: the last query must return exactly one row; store its columns.
    Gset(String),
    /// `\aset [prefix]`: store the columns of the last row of every query returning rows.
    Aset(String),
}

/// One SQL command of a script (possibly several statements joined by `\;`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlCommand {
    text: String,
    pieces: Vec<Piece>,
    extended: String,
    params: Vec<(Box<str>, bool)>,
    dynamic: bool,
    pub(crate) result: ResultMode,
}

fn name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn name_cont(b: u8) -> bool {
    name_start(b) || b.is_ascii_digit()
}

/// A query result as the engine received it, for [`SqlCommand::store_result`].
#[derive(Clone, Copy, Debug)]
pub enum QueryResult<'a> {
    /// A command without rows (`PGRES_COMMAND_OK` / empty query).
    NoRows,
    /// A result set: number of rows, and the (column name, text value) pairs of
    /// its last row (`""` for NULL, as libpq's `PQgetvalue`). Empty when 0 rows.
    Rows {
        /// Number of rows returned.
        ntuples: usize,
        /// Column names with the last row's values.
        last_row: &'a [(&'a str, &'a str)],
    },
}

/// A `\gset`/`\aset` failure, which aborts the client in pgbench.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResultError {
    /// `\gset` on a query that did not return exactly one row.
    #[error("query {query}: expected one row, got {got}")]
    ExpectedOneRow {
        /// Index of the query within a `\;` compound command.
        query: usize,
        /// Rows received.
        got: usize,
    },
    /// A column name (with prefix) is not a valid variable name.
    #[error("query {query}: error storing into variable {name}")]
    BadVariable {
        /// Index of the query within a `\;` compound command.
        query: usize,
        /// The refused variable name.
        name: String,
    },
}

impl ResultError {
    /// The whole line pgbench logs, e.g.
    /// `client 0 script 0 command 4 query 0: expected one row, got 0`.
    pub fn pgbench_message(&self, client: usize, script: usize, command: usize) -> String {
        format!("client {client} script {script} command {command} {self}")
    }
}

impl SqlCommand {
    pub(crate) fn new(text: String) -> Self {
        let b = text.as_bytes();
        let mut pieces = Vec::new();
        let mut lit_start = 0;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b':' {
                i += 1;
                continue;
            }
            // psql-style :'name' / :"name"
            if let Some(&q @ (b'\'' | b'"')) = b.get(i + 1) {
                let mut e = i + 2;
                while e < b.len() && name_cont(b[e]) {
                    e += 1;
                }
                if e > i + 2 && b.get(e) == Some(&q) {
                    if lit_start < i {
                        pieces.push(Piece::Text(lit_start, i));
                    }
                    let name: Box<str> = text[i + 2..e].into();
                    let (start, end) = (i, e + 1);
                    pieces.push(if q == b'\'' {
                        Piece::Literal { name, start, end }
                    } else {
                        Piece::Ident { name, start, end }
                    });
                    i = e + 1;
                    lit_start = i;
                    continue;
                }
            }
            if b.get(i + 1).is_some_and(|&c| name_start(c)) {
                let mut e = i + 2;
                while e < b.len() && name_cont(b[e]) {
                    e += 1;
                }
                if lit_start < i {
                    pieces.push(Piece::Text(lit_start, i));
                }
                pieces.push(Piece::Var {
                    name: text[i + 1..e].into(),
                    start: i,
                    end: e,
                });
                i = e;
                lit_start = i;
            } else {
                while i < b.len() && b[i] == b':' {
                    i += 1;
                }
            }
        }
        if lit_start < b.len() {
            pieces.push(Piece::Text(lit_start, b.len()));
        }
        let mut extended = String::with_capacity(text.len());
        let mut params = Vec::new();
        let mut dynamic = false;
        for p in &pieces {
            match p {
                Piece::Text(s, e) => extended.push_str(&text[*s..*e]),
                Piece::Var { name, .. } | Piece::Literal { name, .. } => {
                    params.push((name.clone(), matches!(p, Piece::Literal { .. })));
                    let _ = write!(extended, "${}", params.len());
                }
                Piece::Ident { start, end, .. } => {
                    dynamic = true;
                    extended.push_str(&text[*start..*end]);
                }
            }
        }
        SqlCommand {
            text,
            pieces,
            extended,
            params,
            dynamic,
            result: ResultMode::Discard,
        }
    }

    /// The command text as written (after leading blanks/comments), `;` included.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// `\gset`/`\aset` attached to this command.
    pub fn result_mode(&self) -> &ResultMode {
        &self.result
    }

    /// Simple protocol: writes the text with variables substituted into `out`
    /// (cleared first). Undefined variables stay as written.
    pub fn render_simple(&self, vars: &Variables, out: &mut String) {
        out.clear();
        for p in &self.pieces {
            match p {
                Piece::Text(s, e) => out.push_str(&self.text[*s..*e]),
                Piece::Var { name, start, end } => {
                    if !vars.write_text(name, out) {
                        out.push_str(&self.text[*start..*end]);
                    }
                }
                Piece::Literal { name, start, end } => match vars.text(name) {
                    Some(v) => quote_literal(&v, out),
                    None => out.push_str(&self.text[*start..*end]),
                },
                Piece::Ident { name, start, end } => match vars.text(name) {
                    Some(v) => quote_ident(&v, out),
                    None => out.push_str(&self.text[*start..*end]),
                },
            }
        }
    }

    /// Extended/prepared protocols: the text with `$1..$n` (fixed at parse
    /// time). When [`has_dynamic_text`](Self::has_dynamic_text) is true use
    /// [`render_extended`](Self::render_extended) instead.
    pub fn extended_text(&self) -> &str {
        &self.extended
    }

    /// True when the command uses `:"name"`, so its extended text depends on
    /// variables (it cannot be prepared once).
    pub fn has_dynamic_text(&self) -> bool {
        self.dynamic
    }

    /// Extended text with `:"name"` identifiers substituted, into `out` (cleared).
    pub fn render_extended(&self, vars: &Variables, out: &mut String) {
        out.clear();
        let mut n = 0;
        for p in &self.pieces {
            match p {
                Piece::Text(s, e) => out.push_str(&self.text[*s..*e]),
                Piece::Var { .. } | Piece::Literal { .. } => {
                    n += 1;
                    let _ = write!(out, "${n}");
                }
                Piece::Ident { name, start, end } => match vars.text(name) {
                    Some(v) => quote_ident(&v, out),
                    None => out.push_str(&self.text[*start..*end]),
                },
            }
        }
    }

    /// Number of `$n` parameters.
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// Variable name of parameter `i` (0-based, i.e. `$i+1`).
    pub fn param_name(&self, i: usize) -> Option<&str> {
        self.params.get(i).map(|(n, _)| &**n)
    }

    /// Appends the text value of parameter `i` to `out`; false when the
    /// variable is undefined (send SQL NULL, as pgbench does).
    pub fn write_param(&self, i: usize, vars: &Variables, out: &mut String) -> bool {
        match self.params.get(i) {
            Some((name, _)) => vars.write_text(name, out),
            None => false,
        }
    }

    /// Whether the engine must pass the values of this result to
    /// [`store_result`](Self::store_result) (`\gset` on the last query, or `\aset`).
    pub fn wants_result(&self, is_last: bool) -> bool {
        match self.result {
            ResultMode::Discard => false,
            ResultMode::Gset(_) => is_last,
            ResultMode::Aset(_) => true,
        }
    }

    /// Applies `\gset`/`\aset` to one query result of this command (pgbench
    /// `readCommandResponse`). `query` is the 0-based index within a `\;`
    /// compound command and `is_last` tells whether it is the last result.
    pub fn store_result(
        &self,
        vars: &mut Variables,
        query: usize,
        is_last: bool,
        result: QueryResult<'_>,
    ) -> Result<(), ResultError> {
        let (prefix, gset) = match &self.result {
            ResultMode::Discard => return Ok(()),
            ResultMode::Gset(p) => (p, true),
            ResultMode::Aset(p) => (p, false),
        };
        match result {
            QueryResult::NoRows => {
                if gset && is_last {
                    return Err(ResultError::ExpectedOneRow { query, got: 0 });
                }
                Ok(())
            }
            QueryResult::Rows { ntuples, last_row } => {
                if gset && !is_last {
                    return Ok(());
                }
                if gset && ntuples != 1 {
                    return Err(ResultError::ExpectedOneRow {
                        query,
                        got: ntuples,
                    });
                }
                if ntuples == 0 {
                    return Ok(());
                }
                let context = if gset { "gset" } else { "aset" };
                let mut name = String::new();
                for (col, val) in last_row {
                    name.clear();
                    name.push_str(prefix);
                    name.push_str(col);
                    if vars.set_text(context, &name, val).is_err() {
                        return Err(ResultError::BadVariable {
                            query,
                            name: name.clone(),
                        });
                    }
                }
                Ok(())
            }
        }
    }
}

/// Quotes `s` as a SQL literal like libpq's `PQescapeLiteral`.
pub fn quote_literal(s: &str, out: &mut String) {
    if s.contains('\\') {
        out.push_str(" E'");
    } else {
        out.push('\'');
    }
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// Quotes `s` as a SQL identifier like libpq's `PQescapeIdentifier`.
pub fn quote_ident(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        if c == '"' {
            out.push_str("\"\"");
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn substitution_rules() {
        let c = SqlCommand::new("select :a, :b::int, 'x:a', :1, ::c, :'a', :\"a\";".to_string());
        let mut vars = Variables::new();
        vars.set_value("t", "a", Value::Int(5)).ok();
        let mut out = String::new();
        c.render_simple(&vars, &mut out);
        assert_eq!(out, "select 5, :b::int, 'x5', :1, ::c, '5', \"5\";");
        assert_eq!(
            c.extended_text(),
            "select $1, $2::int, 'x$3', :1, ::c, $4, :\"a\";"
        );
        assert_eq!(c.param_count(), 4);
        assert!(c.has_dynamic_text());
    }
}
