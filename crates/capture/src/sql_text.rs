//! A statement's text split into its SQL and its values: comments dropped, whitespace
//! collapsed, and every constant (numbers with their sign, strings, dollar-quoted strings) and
//! every `$n` parameter turned into a slot. The slots' order is the statement's; the SQL
//! between them is kept exactly (quoted identifiers included), so a script can be written back
//! with a variable in each slot. [`StatementText::key`] is the form statements are matched by
//! across sources (`pg_stat_statements` shows `$1` where a client sent `42`): lower case
//! outside quotes, every slot `?`. The tokens and string values are `hotbench_sqltext`'s
//! (the one SQL lexer); the slots, keys and columns are this file's. Pure.

use hotbench_sqltext::{dollar_body, string_value, tokens, Kind, StrKind};

/// What a slot held.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number as written (`42`, `-2732`, `1.5e3`).
    Number(String),
    /// A string's value (quotes and escapes removed).
    Text(String),
    /// A bind parameter the source did not show, or a NULL bound.
    Unknown,
    Null,
}

impl Value {
    /// The value as an integer, when it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.parse().ok(),
            Value::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }
}

/// A statement split into SQL pieces and slots: `pieces.len() == values.len() + 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementText {
    pub pieces: Vec<String>,
    pub values: Vec<Value>,
    /// Per slot: the column it is compared with (`aid = ?`) or inserted into, when visible.
    pub columns: Vec<Option<String>>,
    /// A text cut short (by `track_activity_query_size`): not a whole statement.
    pub truncated: bool,
}

/// Longest text read.
const MAX_CHARS: usize = 100_000;

impl StatementText {
    /// Splits `sql`; `$n` takes `params[n-1]` when given.
    pub fn parse(sql: &str, params: &[Option<String>]) -> StatementText {
        let sql = match sql.char_indices().nth(MAX_CHARS) {
            Some((at, _)) => &sql[..at],
            None => sql,
        };
        let mut t = Splitter {
            pieces: vec![String::new()],
            values: Vec::new(),
            truncated: false,
        };
        t.run(sql, params);
        let mut pieces = t.pieces;
        if let Some(last) = pieces.last_mut() {
            let trimmed = last.trim_end().trim_end_matches(';').trim_end().to_string();
            *last = trimmed;
        }
        if let Some(first) = pieces.first_mut() {
            *first = first.trim_start().to_string();
        }
        let columns = slot_columns(&pieces);
        StatementText {
            pieces,
            values: t.values,
            columns,
            truncated: t.truncated,
        }
    }

    /// The matching key: lower case outside quoted identifiers, slots as `?`, every quoted
    /// identifier spelled one way (`"a:b"`, whether written so or `U&"a\003Ab"` as the
    /// script writer writes a name pgbench would read a variable in).
    pub fn key(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                out.push('?');
            }
            push_key_piece(&mut out, p);
        }
        out
    }

    /// The statement with each slot replaced by `slot(i)`.
    pub fn render(&self, mut slot: impl FnMut(usize) -> String) -> String {
        let mut out = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                out.push_str(&slot(i - 1));
            }
            out.push_str(p);
        }
        out
    }

    /// `BEGIN`, `START TRANSACTION`, `COMMIT`, `END`, `ROLLBACK`, `ABORT`: a transaction's
    /// bounds, not its work.
    pub fn control(&self) -> Option<Control> {
        if !self.values.is_empty() {
            return None;
        }
        let k = self.key();
        let first = k.split_whitespace().next().unwrap_or("");
        match first {
            "begin" | "start" => Some(Control::Begin),
            "commit" | "end" => Some(Control::Commit),
            "rollback" | "abort" if !k.contains(" to ") => Some(Control::Rollback),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Begin,
    Commit,
    Rollback,
}

/// The key of any text (a `pg_stat_statements` query, a sampled one).
pub fn key_of(sql: &str) -> String {
    StatementText::parse(sql, &[]).key()
}

struct Splitter {
    pieces: Vec<String>,
    values: Vec<Value>,
    truncated: bool,
}

impl Splitter {
    fn out(&mut self) -> &mut String {
        if self.pieces.is_empty() {
            self.pieces.push(String::new());
        }
        let n = self.pieces.len();
        &mut self.pieces[n - 1]
    }

    /// One space, never two, never leading (but after a slot).
    fn space(&mut self) {
        let after_slot = self.pieces.len() > 1;
        let o = self.out();
        if (after_slot || !o.is_empty()) && !o.ends_with(' ') {
            o.push(' ');
        }
    }

    fn slot(&mut self, v: Value) {
        self.values.push(v);
        self.pieces.push(String::new());
    }

    fn run(&mut self, sql: &str, params: &[Option<String>]) {
        let toks = tokens(sql);
        let mut k = 0;
        while k < toks.len() {
            let t = toks[k];
            let text = t.text(sql);
            k += 1;
            match t.kind {
                _ if t.is_blank() => self.space(),
                Kind::String(kind) => {
                    self.truncated |= !t.closed;
                    self.slot(Value::Text(string_slot(text, kind)));
                }
                Kind::Dollar => {
                    self.truncated |= !t.closed;
                    self.slot(Value::Text(dollar_body(text).to_string()));
                }
                Kind::QuotedIdent => {
                    self.truncated |= !t.closed;
                    self.out().push_str(text);
                }
                // A pgbench script's `:variable`: a slot as `$n` is.
                Kind::Variable => self.slot(Value::Unknown),
                Kind::Param => self.slot(param_value(text, params)),
                Kind::Number => self.slot(Value::Number(text.to_string())),
                Kind::Punct if text == "-" && self.unary_minus() => match toks.get(k) {
                    // "+ -5": the operator stays, the sign goes with the number.
                    Some(n)
                        if n.kind == Kind::Number
                            && n.start == t.end
                            && n.text(sql).starts_with(|c: char| c.is_ascii_digit()) =>
                    {
                        self.slot(Value::Number(format!("-{}", n.text(sql))));
                        k += 1;
                    }
                    _ => self.out().push('-'),
                },
                _ => self.out().push_str(text),
            }
        }
    }

    /// A `-` before a digit is a sign (not subtraction) after an operator, `(`, `,`, the
    /// start, or a keyword that takes an expression.
    fn unary_minus(&self) -> bool {
        let o = self.pieces.last().map(String::as_str).unwrap_or("");
        let t = o.trim_end();
        if t.is_empty() {
            // After a slot (`? -1` is subtraction) or at the start.
            return self.pieces.len() == 1;
        }
        if t.ends_with([
            '(', ',', '=', '<', '>', '+', '-', '*', '/', '%', '^', '|', '[',
        ]) {
            return true;
        }
        matches!(
            trailing_word(t).to_ascii_lowercase().as_str(),
            "select"
                | "where"
                | "and"
                | "or"
                | "not"
                | "then"
                | "else"
                | "when"
                | "return"
                | "by"
                | "limit"
                | "offset"
                | "in"
                | "is"
                | "between"
                | "values"
        )
    }
}

/// A string constant's slot value: its text; a hex bit string as its bits (`X'1F'` →
/// `00011111`), so that the value written back as a string reads as the same bits.
fn string_slot(text: &str, kind: StrKind) -> String {
    let v = string_value(text, kind);
    if kind != StrKind::Hex {
        return v;
    }
    v.chars()
        .map(|c| match c.to_digit(16) {
            Some(d) => format!("{d:04b}"),
            None => c.to_string(),
        })
        .collect()
}

/// `$n`'s value from the bound parameters: a number, a text, a NULL, or unknown.
fn param_value(text: &str, params: &[Option<String>]) -> Value {
    let n: usize = text[1..].parse().unwrap_or(0);
    match params.get(n.wrapping_sub(1)) {
        Some(Some(v)) => {
            if v.parse::<f64>().is_ok() {
                Value::Number(v.clone())
            } else {
                Value::Text(v.clone())
            }
        }
        Some(None) => Value::Null,
        None => Value::Unknown,
    }
}

/// The identifier characters `s` ends with (`… where aid` → `aid`).
fn trailing_word(s: &str) -> &str {
    let start = s
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(s.len(), |(i, _)| i);
    &s[start..]
}

/// `piece` (whole tokens: slots never cut one) as the key writes it: each closed quoted
/// identifier as `"…"` of its value (tokens and values from `hotbench_sqltext`), the rest in
/// lower case.
fn push_key_piece(out: &mut String, piece: &str) {
    for t in hotbench_sqltext::Lexer::new(piece) {
        let text = t.text(piece);
        if t.kind == Kind::QuotedIdent && t.closed {
            out.push('"');
            out.push_str(&hotbench_sqltext::ident_value(text).replace('"', "\"\""));
            out.push('"');
        } else if t.kind == Kind::QuotedIdent {
            out.push_str(text);
        } else {
            out.push_str(&text.to_lowercase());
        }
    }
}

fn lower_outside_quotes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut quoted = false;
    for ch in s.chars() {
        if ch == '"' {
            quoted = !quoted;
        }
        if quoted {
            out.push(ch);
        } else {
            out.extend(ch.to_lowercase());
        }
    }
    out
}

/// Per slot, the column it is compared with (`aid = ?`, `"Id" >= ?`) or, in an
/// `INSERT … (a, b) VALUES (?, ?)`, inserted into.
fn slot_columns(pieces: &[String]) -> Vec<Option<String>> {
    let slots = pieces.len().saturating_sub(1);
    let mut cols: Vec<Option<String>> = vec![None; slots];
    for (i, col) in cols.iter_mut().enumerate() {
        *col = compared_column(&pieces[i]);
    }
    // INSERT … (cols) VALUES (slots in order)
    let whole = pieces.join("\u{0}");
    let lower = lower_outside_quotes(&whole);
    if let (Some(ins), Some(vals)) = (lower.find("insert into"), lower.find(" values")) {
        if ins < vals {
            let head = &whole[ins..vals];
            if let (Some(open), Some(close)) = (head.find('('), head.rfind(')')) {
                let names: Vec<String> = split_names(&head[open + 1..close]);
                // The VALUES list's items in order; an item that is just a slot maps to its
                // column.
                let mut slot = whole[..vals].matches('\u{0}').count();
                let tail = &whole[vals..];
                if let Some(lo) = tail.find('(') {
                    let hi = tail[lo..].find(')').map_or(tail.len(), |h| lo + h);
                    for (k, item) in tail[lo + 1..hi].split(',').enumerate() {
                        let n = item.matches('\u{0}').count();
                        if item.trim() == "\u{0}" {
                            if let (Some(c), Some(name)) = (cols.get_mut(slot), names.get(k)) {
                                *c = Some(name.clone());
                            }
                        }
                        slot += n;
                    }
                }
            }
        }
    }
    cols
}

/// `a, "B c"` → `["a", "B c"]` (unquoted names in lower case).
fn split_names(s: &str) -> Vec<String> {
    s.split(',')
        .map(|n| {
            let n = n.trim();
            match n.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                Some(q) => q.replace("\"\"", "\""),
                None => n.to_ascii_lowercase(),
            }
        })
        .collect()
}

/// The column before a comparison operator at the end of `before` (`… where aid = `).
fn compared_column(before: &str) -> Option<String> {
    let t = before.trim_end();
    let ops = [">=", "<=", "<>", "!=", "=", "<", ">"];
    let op = ops.iter().find(|o| t.ends_with(**o))?;
    let lhs = t[..t.len() - op.len()].trim_end();
    let name = if let Some(body) = lhs.strip_suffix('"') {
        let open = body.rfind('"')?;
        body[open + 1..].replace("\"\"", "\"")
    } else {
        let word = trailing_word(lhs);
        if word.is_empty() || word.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        word.to_ascii_lowercase()
    };
    // `set x = ?` assigns; `where x = ?` compares: both name the column.
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_statements_split_into_sql_and_values() {
        let t = StatementText::parse(
            "UPDATE pgbench_accounts SET abalance = abalance + -2732 WHERE aid = 58021;",
            &[],
        );
        assert_eq!(
            t.values,
            vec![Value::Number("-2732".into()), Value::Number("58021".into())]
        );
        assert_eq!(
            t.key(),
            "update pgbench_accounts set abalance = abalance + ? where aid = ?"
        );
        assert_eq!(t.columns, vec![None, Some("aid".into())]);
        // pg_stat_statements' text of the same statement has the same key.
        assert_eq!(
            key_of("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"),
            t.key()
        );
        let ins = StatementText::parse(
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (3, 1, 77, -5, CURRENT_TIMESTAMP);",
            &[],
        );
        assert_eq!(ins.values.len(), 4);
        assert_eq!(
            ins.columns,
            vec![
                Some("tid".into()),
                Some("bid".into()),
                Some("aid".into()),
                Some("delta".into())
            ]
        );
        assert_eq!(ins.render(|i| format!(":p{i}")), "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:p0, :p1, :p2, :p3, CURRENT_TIMESTAMP)");
    }

    #[test]
    fn strings_identifiers_comments_and_parameters() {
        let t = StatementText::parse(
            "select /* c */ \"Weird \"\"id\" from t1 where name = 'it''s' and x = E'a\\nb' -- x\n and y = $$d$q$$ and z = $1 and w = x2 - 1",
            &[Some("7".into())],
        );
        assert_eq!(
            t.values,
            vec![
                Value::Text("it's".into()),
                Value::Text("a\nb".into()),
                Value::Text("d$q".into()),
                Value::Number("7".into()),
                Value::Number("1".into()),
            ]
        );
        assert!(t.pieces[0].contains("\"Weird \"\"id\""));
        assert!(t
            .key()
            .starts_with("select \"Weird \"\"id\" from t1 where name = ?"));
        assert!(t.key().ends_with("w = x2 - ?"));
        assert_eq!(t.columns[0].as_deref(), Some("name"));
        assert!(!t.truncated);
        assert!(StatementText::parse("select 'abc", &[]).truncated);
        assert_eq!(
            StatementText::parse("BEGIN;", &[]).control(),
            Some(Control::Begin)
        );
        assert_eq!(
            StatementText::parse("end", &[]).control(),
            Some(Control::Commit)
        );
        assert_eq!(
            StatementText::parse("rollback to savepoint a", &[]).control(),
            None
        );
        assert_eq!(
            StatementText::parse("select $2", &[]).values,
            vec![Value::Unknown]
        );
        // A script's variables match the statement they stand for; casts stay SQL.
        assert_eq!(
            key_of("UPDATE t SET v = v + :p0 WHERE id = :p1::int"),
            key_of("update t set v = v + 5 where id = 3::int")
        );
    }

    /// A name holding `:` is written `U&"a\003Ab"` by the script writer (pgbench reads
    /// `:b` as a variable): the twin's text and the captured one are the same statement.
    #[test]
    fn quoted_names_match_whichever_legal_spelling() {
        let captured = key_of(r#"UPDATE "q:x"."T:1" SET "n""m" = $1 WHERE id = $2"#);
        let script = crate::script_quote::escape_identifiers(
            r#"UPDATE "q:x"."T:1" SET "n""m" = :v WHERE id = :id"#,
        );
        assert!(script.contains(r#"U&"q\003Ax""#), "{script}");
        assert_eq!(key_of(&script), captured);
        assert_eq!(
            key_of(r#"select u&"d\0061t" from t"#),
            r#"select "dat" from t"#
        );
        assert_eq!(
            captured,
            r#"update "q:x"."T:1" set "n""m" = ? where id = ?"#
        );
    }

    /// Prefixed strings are one constant each, as PostgreSQL and `pg_stat_statements`
    /// read them (this file's own scanner kept `B`, `X`, `N`, `U&` as SQL before a
    /// string slot, so their keys never matched `$n`'s), and `E''` escapes decode as
    /// PostgreSQL decodes them (`\x41` and `\101` are `A`; it read `x41`, `101`).
    #[test]
    fn prefixed_strings_and_escapes_read_as_postgres_does() {
        let t = StatementText::parse(
            "select B'101', X'1F', N'n', U&'d\\0061t', E'\\x41\\101' from t",
            &[],
        );
        assert_eq!(t.key(), key_of("select $1, $2, $3, $4, $5 from t"));
        assert_eq!(
            t.values,
            ["101", "00011111", "n", "dat", "AA"]
                .map(|v| Value::Text(v.into()))
                .to_vec()
        );
    }
}
