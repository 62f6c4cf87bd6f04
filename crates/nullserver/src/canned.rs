//! What the null server answers to a SQL text: a canned reply chosen by the statement's first
//! keyword (one row of one column for a SELECT, `UPDATE 1` for an UPDATE, …), enough for
//! pgbench's and hotbench's start-up queries and their built-in scripts. The reply's bytes
//! are encoded once per statement, so answering an Execute is a copy.

/// The reply to one statement, as backend message bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canned {
    /// RowDescription, or NoData when the statement returns no rows (for Describe).
    pub describe: Vec<u8>,
    /// DataRow (if any) and CommandComplete (or EmptyQueryResponse).
    pub execute: Vec<u8>,
    /// Transaction status after the statement: `Some(b'T')` after BEGIN, `Some(b'I')` after
    /// COMMIT or ROLLBACK, `None`: unchanged.
    pub tx: Option<u8>,
    /// The number of `$n` parameters the text uses (for ParameterDescription).
    pub params: u16,
}

/// Appends one backend message: tag, length, body.
pub fn message(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    out.extend_from_slice(body);
}

/// RowDescription of text columns named `names`.
fn row_description(names: &[&str]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(names.len() as u16).to_be_bytes());
    for n in names {
        b.extend_from_slice(n.as_bytes());
        b.push(0);
        b.extend_from_slice(&0u32.to_be_bytes()); // table oid
        b.extend_from_slice(&0u16.to_be_bytes()); // column number
        b.extend_from_slice(&25u32.to_be_bytes()); // text
        b.extend_from_slice(&(-1i16).to_be_bytes()); // variable length
        b.extend_from_slice(&(-1i32).to_be_bytes()); // no modifier
        b.extend_from_slice(&0u16.to_be_bytes()); // text format
    }
    let mut out = Vec::new();
    message(&mut out, b'T', &b);
    out
}

fn data_row(values: &[Option<&str>]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(values.len() as u16).to_be_bytes());
    for v in values {
        match v {
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v.as_bytes());
            }
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let mut out = Vec::new();
    message(&mut out, b'D', &b);
    out
}

fn complete(tag: &str) -> Vec<u8> {
    let mut b = tag.as_bytes().to_vec();
    b.push(0);
    let mut out = Vec::new();
    message(&mut out, b'C', &b);
    out
}

/// The statement's first keyword, lowercased (comments and blanks skipped).
fn first_word(sql: &str) -> String {
    let mut s = sql.trim_start();
    while let Some(rest) = s.strip_prefix("--") {
        s = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
    }
    s.trim_start_matches('(')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// The highest `$n` in the text.
fn param_count(sql: &str) -> u16 {
    let b = sql.as_bytes();
    let mut max = 0u16;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let digits: String = sql[i + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse::<u16>() {
                max = max.max(n);
            }
            i += digits.len();
        }
        i += 1;
    }
    max
}

/// The canned reply to `sql`.
pub fn reply(sql: &str) -> Canned {
    let word = first_word(sql);
    let lower = sql.to_ascii_lowercase();
    let rows = |names: &[&str], values: &[Option<&str>], tag: &str| {
        let mut execute = data_row(values);
        execute.extend(complete(tag));
        (row_description(names), execute)
    };
    let no_data = || {
        let mut d = Vec::new();
        message(&mut d, b'n', &[]);
        d
    };
    let mut tx = None;
    let (describe, execute) = match word.as_str() {
        "" => {
            let mut e = Vec::new();
            message(&mut e, b'I', &[]);
            (no_data(), e)
        }
        "select" | "with" | "show" | "values" | "table" => {
            if lower.contains("pg_partitioned_table") {
                // pgbench's partition query: the first pgbench_accounts, not partitioned.
                rows(
                    &["n", "partstrat", "count"],
                    &[Some("1"), None, Some("0")],
                    "SELECT 1",
                )
            } else if lower.contains("count(") {
                // pgbench's scale query: scale 1.
                rows(&["count"], &[Some("1")], "SELECT 1")
            } else if lower.contains("current_database") {
                rows(&["current_database"], &[Some("postgres")], "SELECT 1")
            } else if word == "show" {
                rows(&["setting"], &[Some("on")], "SHOW")
            } else {
                rows(&["?column?"], &[Some("0")], "SELECT 1")
            }
        }
        "begin" | "start" => {
            tx = Some(b'T');
            (no_data(), complete("BEGIN"))
        }
        "end" | "commit" => {
            tx = Some(b'I');
            (no_data(), complete("COMMIT"))
        }
        "rollback" | "abort" => {
            tx = Some(b'I');
            (no_data(), complete("ROLLBACK"))
        }
        "update" => (no_data(), complete("UPDATE 1")),
        "insert" => (no_data(), complete("INSERT 0 1")),
        "delete" => (no_data(), complete("DELETE 1")),
        other => (no_data(), complete(&other.to_ascii_uppercase())),
    };
    Canned {
        describe,
        execute,
        tx,
        params: param_count(sql),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag_of(c: &Canned) -> String {
        // The CommandComplete is the last message of `execute`.
        let mut pos = 0;
        while c.execute[pos] != b'C' {
            let len = &c.execute[pos + 1..pos + 5];
            pos += 1 + u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        }
        let body = &c.execute[pos + 5..c.execute.len() - 1];
        String::from_utf8(body.to_vec()).unwrap()
    }

    #[test]
    fn pgbench_statements_get_their_tags() {
        let cases = [
            ("BEGIN;", "BEGIN", Some(b'T')),
            ("END;", "COMMIT", Some(b'I')),
            (
                "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
                "UPDATE 1",
                None,
            ),
            (
                "INSERT INTO pgbench_history VALUES ($1)",
                "INSERT 0 1",
                None,
            ),
            (
                "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
                "SELECT 1",
                None,
            ),
            ("  -- note\n vacuum pgbench_branches", "VACUUM", None),
        ];
        for (sql, tag, tx) in cases {
            let c = reply(sql);
            assert_eq!(tag_of(&c), tag, "{sql}");
            assert_eq!(c.tx, tx, "{sql}");
        }
    }

    #[test]
    fn a_select_returns_one_row_and_describes_it() {
        let c = reply("select abalance from pgbench_accounts where aid = $1");
        assert_eq!(c.describe[0], b'T');
        assert_eq!(c.execute[0], b'D');
        assert_eq!(c.params, 1);
        let c = reply("select count(*) from pgbench_branches");
        assert!(
            c.execute.windows(5).any(|w| w == b"\x00\x00\x00\x011"),
            "scale 1"
        );
        let c = reply("update t set a = $3 where b = $12");
        assert_eq!(c.params, 12);
        assert_eq!(c.describe, vec![b'n', 0, 0, 0, 4]);
    }

    #[test]
    fn pgbench_partition_query_gets_three_columns() {
        let c = reply(
            "select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c \
             left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid)",
        );
        assert_eq!(&c.execute[5..7], &3u16.to_be_bytes());
    }

    #[test]
    fn an_empty_query_gets_empty_query_response() {
        let c = reply("  ");
        assert_eq!(c.execute, vec![b'I', 0, 0, 0, 4]);
    }
}
