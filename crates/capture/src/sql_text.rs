//! A statement's text split into its SQL and its values: comments dropped, whitespace
//! collapsed, and every constant (numbers with their sign, strings, dollar-quoted strings) and
//! every `$n` parameter turned into a slot. The slots' order is the statement's; the SQL
//! between them is kept exactly (quoted identifiers included), so a script can be written back
//! with a variable in each slot. [`StatementText::key`] is the form statements are matched by
//! across sources (`pg_stat_statements` shows `$1` where a client sent `42`): lower case
//! outside quotes, every slot `?`. Pure.

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
        let c: Vec<char> = sql.chars().take(MAX_CHARS).collect();
        let mut t = Splitter {
            c: &c,
            pieces: vec![String::new()],
            values: Vec::new(),
            truncated: false,
        };
        t.run(params);
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

    /// The matching key: lower case outside quoted identifiers, slots as `?`.
    pub fn key(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                out.push('?');
            }
            out.push_str(&lower_outside_quotes(p));
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

struct Splitter<'a> {
    c: &'a [char],
    pieces: Vec<String>,
    values: Vec<Value>,
    truncated: bool,
}

impl Splitter<'_> {
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

    fn run(&mut self, params: &[Option<String>]) {
        let c = self.c;
        let mut i = 0;
        while i < c.len() {
            let ch = c[i];
            let next = c.get(i + 1).copied();
            if ch == '-' && next == Some('-') {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                self.space();
            } else if ch == '/' && next == Some('*') {
                i = skip_block_comment(c, i);
                self.space();
            } else if ch.is_whitespace() {
                self.space();
                i += 1;
            } else if ch == '\'' {
                let (end, v, closed) = quoted_string(c, i, false);
                self.truncated |= !closed;
                self.slot(Value::Text(v));
                i = end;
            } else if matches!(ch, 'e' | 'E') && next == Some('\'') && !self.after_word() {
                let (end, v, closed) = quoted_string(c, i + 1, true);
                self.truncated |= !closed;
                self.slot(Value::Text(v));
                i = end;
            } else if ch == '"' {
                let end = skip_identifier(c, i);
                let text: String = c[i..end].iter().collect();
                self.truncated |= !text.ends_with('"') || text.len() < 2;
                self.out().push_str(&text);
                i = end;
            } else if ch == ':'
                && next.is_some_and(|n| n.is_alphabetic() || n == '_')
                && !self.out().ends_with(':')
            {
                // A pgbench script's `:variable`: a slot as `$n` is.
                let mut j = i + 1;
                while j < c.len() && (c[j].is_alphanumeric() || c[j] == '_') {
                    j += 1;
                }
                self.slot(Value::Unknown);
                i = j;
            } else if ch == '$' && !self.after_word() {
                i = self.dollar(i, params);
            } else if (ch.is_ascii_digit()
                || (ch == '.' && next.is_some_and(|n| n.is_ascii_digit())))
                && !self.after_word()
            {
                let end = skip_number(c, i);
                let text: String = c[i..end].iter().collect();
                self.slot(Value::Number(text));
                i = end;
            } else if ch == '-' && next.is_some_and(|n| n.is_ascii_digit()) && self.unary_minus() {
                let end = skip_number(c, i + 1);
                let text: String = c[i..end].iter().collect();
                // "+ -5": the operator stays, the sign goes with the number.
                self.slot(Value::Number(text));
                i = end;
            } else {
                self.out().push(ch);
                i += 1;
            }
        }
    }

    /// `$1` (a parameter) or a dollar-quoted string.
    fn dollar(&mut self, i: usize, params: &[Option<String>]) -> usize {
        let c = self.c;
        let mut j = i + 1;
        while j < c.len() && c[j].is_ascii_digit() {
            j += 1;
        }
        if j > i + 1 {
            let n: usize = c[i + 1..j].iter().collect::<String>().parse().unwrap_or(0);
            let v = match params.get(n.wrapping_sub(1)) {
                Some(Some(v)) => {
                    if v.parse::<f64>().is_ok() {
                        Value::Number(v.clone())
                    } else {
                        Value::Text(v.clone())
                    }
                }
                Some(None) => Value::Null,
                None => Value::Unknown,
            };
            self.slot(v);
            return j;
        }
        // $tag$ … $tag$
        let mut k = i + 1;
        while k < c.len() && (c[k].is_alphanumeric() || c[k] == '_') {
            k += 1;
        }
        if k >= c.len() || c[k] != '$' {
            self.out().push('$');
            return i + 1;
        }
        let tag: Vec<char> = c[i..=k].to_vec();
        let body = k + 1;
        let mut m = body;
        while m + tag.len() <= c.len() {
            if c[m..m + tag.len()] == tag[..] {
                let v: String = c[body..m].iter().collect();
                self.slot(Value::Text(v));
                return m + tag.len();
            }
            m += 1;
        }
        self.truncated = true;
        self.slot(Value::Text(c[body..].iter().collect()));
        c.len()
    }

    /// The text so far ends in an identifier character (a digit then belongs to a name).
    fn after_word(&self) -> bool {
        let o = self.pieces.last().map(String::as_str).unwrap_or("");
        if o.is_empty() && self.pieces.len() > 1 {
            // Right after a slot: `1e5`-like runs are one number already.
            return false;
        }
        o.chars()
            .next_back()
            .is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '$')
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
        let word: String = t
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        matches!(
            word.to_ascii_lowercase().as_str(),
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

fn skip_block_comment(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// A `'…'` string from `i` (its opening quote): end, value, closed.
fn quoted_string(c: &[char], i: usize, escapes: bool) -> (usize, String, bool) {
    let mut v = String::new();
    let mut j = i + 1;
    while j < c.len() {
        let ch = c[j];
        if escapes && ch == '\\' {
            match c.get(j + 1) {
                Some('n') => v.push('\n'),
                Some('t') => v.push('\t'),
                Some('r') => v.push('\r'),
                Some('b') => v.push('\u{8}'),
                Some('f') => v.push('\u{c}'),
                Some(&o) => v.push(o),
                None => return (c.len(), v, false),
            }
            j += 2;
        } else if ch == '\'' {
            if c.get(j + 1) == Some(&'\'') {
                v.push('\'');
                j += 2;
            } else {
                return (j + 1, v, true);
            }
        } else {
            v.push(ch);
            j += 1;
        }
    }
    (c.len(), v, false)
}

fn skip_identifier(c: &[char], i: usize) -> usize {
    let mut j = i + 1;
    while j < c.len() {
        if c[j] == '"' {
            if c.get(j + 1) == Some(&'"') {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    c.len()
}

fn skip_number(c: &[char], mut i: usize) -> usize {
    if c.get(i) == Some(&'0') && matches!(c.get(i + 1), Some('x' | 'X' | 'o' | 'O' | 'b' | 'B')) {
        i += 2;
        while i < c.len() && (c[i].is_ascii_hexdigit() || c[i] == '_') {
            i += 1;
        }
        return i;
    }
    while i < c.len() && (c[i].is_ascii_digit() || c[i] == '_') {
        i += 1;
    }
    if c.get(i) == Some(&'.') && c.get(i + 1) != Some(&'.') {
        i += 1;
        while i < c.len() && c[i].is_ascii_digit() {
            i += 1;
        }
    }
    if matches!(c.get(i), Some('e' | 'E')) {
        let mut j = i + 1;
        if matches!(c.get(j), Some('+' | '-')) {
            j += 1;
        }
        if c.get(j).is_some_and(char::is_ascii_digit) {
            i = j;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
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
        let word: String = lhs
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
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
}
