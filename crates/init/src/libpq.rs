//! Server errors rendered as libpq's `PQerrorMessage` renders them, so that pgbench's
//! messages (`query failed: ERROR:  …`, `could not count number of branches: ERROR:  …`)
//! come out byte for byte: severity, message, the `LINE n:` excerpt with its `^` cursor
//! when the server sent a position, then DETAIL, HINT, QUERY and CONTEXT.
//!
//! The cursor logic is libpq's `reportErrorPosition`, in one place for the engine and init
//! alike: `hotbench_wire::error_position_lines`.

use hotbench_wire::{DbError, Error as WireError};

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
/// character position `loc` of `query` (nothing if out of range): the wire crate's one copy.
fn report_error_position(msg: &mut String, query: &str, loc: usize) {
    if let Some(lines) = u32::try_from(loc)
        .ok()
        .and_then(|p| hotbench_wire::error_position_lines(query, p))
    {
        msg.push_str(&lines);
    }
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
