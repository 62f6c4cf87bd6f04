//! Server errors rendered as libpq's `PQerrorMessage` renders them, so that pgbench's
//! messages (`query failed: ERROR:  …`, `could not count number of branches: ERROR:  …`)
//! come out byte for byte: severity, message, the `LINE n:` excerpt with its `^` cursor
//! when the server sent a position, then DETAIL, HINT, QUERY and CONTEXT.
//!
//! The cursor logic follows libpq's `reportErrorPosition` (tabs shown as spaces, `\r`,
//! `\n` and `\r\n` ending lines, long lines cut to 60 columns with `...`), counting one
//! column per character. This belongs in `hotbench-wire` eventually (next to `DbError`'s
//! own `Display`, which has no query text to point into).

use hotbench_wire::{DbError, Error as WireError};

const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// `err` as libpq would print it after running `query`, without the final newline.
pub fn error_message(err: &WireError, query: &str) -> String {
    match err {
        WireError::Db(db) => db_error_message(db, Some(query)),
        other => other.to_string(),
    }
}

/// A server error in libpq's default verbosity; `query` is the statement it refers to.
pub fn db_error_message(e: &DbError, query: Option<&str>) -> String {
    let severity = if e.severity.is_empty() {
        "ERROR"
    } else {
        e.severity.as_str()
    };
    let mut msg = format!("{severity}:  {}\n", e.message);
    let mut cursor_on_internal = false;
    match (e.position, query, e.internal_position, &e.internal_query) {
        (Some(pos), Some(q), _, _) => report_error_position(&mut msg, q, pos as usize),
        (Some(pos), None, _, _) => {
            msg.pop();
            msg.push_str(&format!(" at character {pos}\n"));
        }
        (None, _, Some(pos), Some(iq)) => {
            report_error_position(&mut msg, iq, pos as usize);
            cursor_on_internal = true;
        }
        _ => {}
    }
    if let Some(d) = &e.detail {
        msg.push_str(&format!("DETAIL:  {d}\n"));
    }
    if let Some(h) = &e.hint {
        msg.push_str(&format!("HINT:  {h}\n"));
    }
    if let (Some(iq), false) = (&e.internal_query, cursor_on_internal) {
        msg.push_str(&format!("QUERY:  {iq}\n"));
    }
    if let Some(w) = &e.where_ {
        if matches!(e.severity_code(), "ERROR" | "FATAL" | "PANIC") {
            msg.push_str(&format!("CONTEXT:  {w}\n"));
        }
    }
    if msg.ends_with('\n') {
        msg.pop();
    }
    msg
}

/// libpq's `reportErrorPosition`: appends `LINE n: …` and the `^` line for the 1-based
/// character position `loc` of `query` (nothing if out of range).
fn report_error_position(msg: &mut String, query: &str, loc: usize) {
    let Some(loc) = loc.checked_sub(1) else {
        return;
    };
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let mut loc_line = 1;
    let mut ibeg = 0;
    let mut iend = None;
    for (cno, &ch) in chars.iter().enumerate() {
        if ch == '\r' || ch == '\n' {
            if cno < loc {
                if ch == '\r' || cno == 0 || chars[cno - 1] != '\r' {
                    loc_line += 1;
                }
                ibeg = cno + 1;
            } else {
                iend = Some(cno);
                break;
            }
        }
    }
    let len = chars.len();
    let mut iend = iend.unwrap_or(len);
    if loc > len {
        return;
    }
    // One screen column per character: scridx[i] == i.
    let mut beg_trunc = false;
    let mut end_trunc = false;
    if iend - ibeg > DISPLAY_SIZE {
        if ibeg + DISPLAY_SIZE >= loc + MIN_RIGHT_CUT {
            while iend - ibeg > DISPLAY_SIZE {
                iend -= 1;
            }
            end_trunc = true;
        } else {
            while loc + MIN_RIGHT_CUT < iend {
                iend -= 1;
                end_trunc = true;
            }
            while iend - ibeg > DISPLAY_SIZE {
                ibeg += 1;
                beg_trunc = true;
            }
        }
    }
    let mut prefix = format!("LINE {loc_line}: ");
    if beg_trunc {
        prefix.push_str("...");
    }
    let mut offset = prefix.chars().count();
    msg.push_str(&prefix);
    msg.extend(&chars[ibeg..iend]);
    if end_trunc {
        msg.push_str("...");
    }
    msg.push('\n');
    offset += loc - ibeg;
    msg.push_str(&" ".repeat(offset));
    msg.push_str("^\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(message: &str, position: Option<u32>) -> DbError {
        let mut e = DbError::new("ERROR", hotbench_wire::SqlState::UNDEFINED_TABLE, message);
        e.position = position;
        e
    }

    #[test]
    fn missing_table_like_pgbench() {
        let e = err("relation \"pgbench_branches\" does not exist", Some(22));
        assert_eq!(
            db_error_message(&e, Some("select count(*) from pgbench_branches")),
            "ERROR:  relation \"pgbench_branches\" does not exist\n\
             LINE 1: select count(*) from pgbench_branches\n\
             \x20                            ^"
        );
    }

    #[test]
    fn second_line_and_detail() {
        let mut e = err("syntax error at or near \"frm\"", Some(13));
        e.detail = Some("d".into());
        assert_eq!(
            db_error_message(&e, Some("select 1\nxx frm t")),
            "ERROR:  syntax error at or near \"frm\"\nLINE 2: xx frm t\n           ^\nDETAIL:  d"
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let q = format!("select {} from t", "x".repeat(100));
        let e = err("boom", Some(109));
        let m = db_error_message(&e, Some(&q));
        let lines: Vec<&str> = m.lines().collect();
        assert!(lines[1].starts_with("LINE 1: ..."), "{m}");
        assert!(lines[1].ends_with("from t"), "{m}");
        assert_eq!(lines[2].find('^'), lines[1].find("from"));
    }

    #[test]
    fn no_position_no_cursor() {
        let e = err("tablespace \"nosuch\" does not exist", None);
        assert_eq!(
            db_error_message(&e, Some("create table t()")),
            "ERROR:  tablespace \"nosuch\" does not exist"
        );
    }
}
