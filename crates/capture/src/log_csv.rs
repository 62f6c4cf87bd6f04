//! csvlog records (`log_destination = csvlog`) into log messages. PostgreSQL writes RFC 4180
//! records (fields quoted with `"`, `""` inside, line breaks kept inside quotes) whose first
//! columns have not moved since 9.0: `log_time, user_name, database_name, process_id,
//! connection_from, session_id, session_line_num, command_tag, session_start_time,
//! virtual_transaction_id, transaction_id, error_severity, sql_state_code, message, detail,
//! hint, internal_query, internal_query_pos, context, query, …` (13 adds `backend_type`, 14
//! `leader_pid` and `query_id` at the end). That narrow dialect is read here by hand, record by
//! record, never holding more than one record.

use crate::log_error::{LogError, MAX_LINE};
use crate::log_prefix::wall_seconds;
use crate::log_session::Entry;

/// Columns every csvlog has (up to `query`).
const MIN_COLUMNS: usize = 20;

/// Whether `line` starts like a csvlog record: a `YYYY-MM-DD HH:MM:SS.mmm ZONE` time then a
/// comma.
pub fn looks_like_csvlog(line: &str) -> bool {
    let Some((ts, _)) = line.split_once(',') else {
        return false;
    };
    let b = ts.as_bytes();
    ts.matches(' ').count() == 2
        && b.len() >= 24
        && b[4] == b'-'
        && b[10] == b' '
        && b[19] == b'.'
        && b[..4].iter().all(u8::is_ascii_digit)
        && wall_seconds(ts).is_some()
}

/// Reads the records of `lines` (numbered lines without their breaks), handing each as an
/// [`Entry`] to `f`.
pub fn read(
    lines: impl Iterator<Item = Result<(u64, String), LogError>>,
    file: &str,
    f: &mut dyn FnMut(Entry) -> Result<(), LogError>,
) -> Result<(), LogError> {
    let mut rec = Record::default();
    for l in lines {
        let (n, line) = l?;
        if rec.fields.is_empty() && !rec.in_quotes && line.is_empty() {
            continue;
        }
        if rec.fields.is_empty() && !rec.in_quotes {
            rec.start = n;
        }
        rec.feed(&line);
        if rec.size > MAX_LINE {
            return Err(LogError::Line {
                file: file.into(),
                line: rec.start,
                message: format!(
                    "a csvlog record longer than {} MiB (an unclosed quote?)",
                    MAX_LINE >> 20
                ),
            });
        }
        if rec.in_quotes {
            rec.cur.push('\n');
            continue;
        }
        let fields = rec.take();
        f(entry(&fields, rec.start, file)?)?;
    }
    // A record cut by the end of the file (copied while the server wrote it) is dropped.
    Ok(())
}

#[derive(Default)]
struct Record {
    start: u64,
    fields: Vec<String>,
    cur: String,
    in_quotes: bool,
    /// The last character was the closing quote of a quoted field (a `"` now is `""`).
    after_quote: bool,
    size: usize,
}

impl Record {
    fn feed(&mut self, line: &str) {
        self.size += line.len() + 1;
        for c in line.chars() {
            if self.in_quotes {
                if c == '"' {
                    self.in_quotes = false;
                    self.after_quote = true;
                } else {
                    self.cur.push(c);
                }
                continue;
            }
            match c {
                '"' if self.after_quote => {
                    self.cur.push('"');
                    self.in_quotes = true;
                    self.after_quote = false;
                }
                '"' if self.cur.is_empty() => self.in_quotes = true,
                ',' => {
                    self.fields.push(std::mem::take(&mut self.cur));
                    self.after_quote = false;
                }
                _ => {
                    self.cur.push(c);
                    self.after_quote = false;
                }
            }
        }
    }

    fn take(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.fields);
        out.push(std::mem::take(&mut self.cur));
        self.after_quote = false;
        self.size = 0;
        out
    }
}

fn entry(f: &[String], line: u64, file: &str) -> Result<Entry, LogError> {
    let bad = |message: String| LogError::Line {
        file: file.into(),
        line,
        message,
    };
    if f.len() < MIN_COLUMNS {
        return Err(bad(format!(
            "a csvlog record has {} columns; PostgreSQL writes at least 23",
            f.len()
        )));
    }
    let at_s = wall_seconds(&f[0]).ok_or_else(|| {
        bad(format!(
            "log_time {:?} is not a date and time",
            crate::log_sql::clip(&f[0])
        ))
    })?;
    let opt = |s: &String| (!s.is_empty()).then(|| s.clone());
    Ok(Entry {
        line,
        session: if f[5].is_empty() {
            f[3].clone()
        } else {
            f[5].clone()
        },
        at_s,
        vxid: opt(&f[9]),
        severity: f[11].clone(),
        message: f[13].clone(),
        detail: opt(&f[14]),
        statement: opt(&f[19]),
        application: opt(&f[22]),
        database: opt(&f[2]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Result<Vec<Entry>, LogError> {
        let mut out = Vec::new();
        let lines = text
            .split('\n')
            .enumerate()
            .map(|(i, l)| Ok((i as u64 + 1, l.to_string())));
        read(lines, "x.csv", &mut |e| {
            out.push(e);
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn records_with_quotes_and_line_breaks() {
        let text = r#"2026-11-28 08:02:28.257 UTC,"postgres","app",18557,"[local]",6b0a8a94.487d,7,"UPDATE",2026-11-28 08:02:28 UTC,3/6,730,LOG,00000,"duration: 0.199 ms  statement: update acct
   set v = 95 -- ""x"", y
 where id = 3",,,,,,,,,"","client backend",,0
2026-11-28 08:02:28.258 UTC,"postgres","app",18557,"[local]",6b0a8a94.487d,14,"BIND",2026-11-28 08:02:28 UTC,3/8,0,LOG,00000,"duration: 0.024 ms  bind <unnamed>: select $1","parameters: $1 = '5'",,,,,,,,"","client backend",,-1
"#;
        let e = entries(text).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].session, "6b0a8a94.487d");
        assert_eq!(e[0].vxid.as_deref(), Some("3/6"));
        assert_eq!(e[0].severity, "LOG");
        assert_eq!(
            e[0].message,
            "duration: 0.199 ms  statement: update acct\n   set v = 95 -- \"x\", y\n where id = 3"
        );
        assert_eq!(e[1].line, 4);
        assert_eq!(e[1].detail.as_deref(), Some("parameters: $1 = '5'"));
        assert!(looks_like_csvlog(text));
        assert!(!looks_like_csvlog(
            "2026-11-28 08:02:28.257 UTC [1] LOG:  x, y"
        ));
    }

    #[test]
    fn short_records_are_errors_with_their_line() {
        let err = entries("2026-11-28 08:02:28.257 UTC,a,b\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("x.csv:1: a csvlog record has 3 columns"),
            "{err}"
        );
        // Cut at the end: dropped.
        assert!(entries("2026-11-28 08:02:28.257 UTC,\"open")
            .unwrap()
            .is_empty());
    }
}
