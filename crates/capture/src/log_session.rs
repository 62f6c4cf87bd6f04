//! From log entries to transactions: each session's statements in order, cut into
//! transactions by what they say (`BEGIN` … `COMMIT`/`ROLLBACK`, one autocommit statement, a
//! multi-statement query string's implicit transaction), an `ERROR` rolling the transaction
//! back, `FATAL` or a disconnection ending the session. The transaction id the prefix may carry
//! does not delimit transactions: PostgreSQL logs a statement after its autocommit transaction
//! committed (`%v` reads `3/0` there) and an extended-protocol one before (`3/7`). What it
//! settles is a session first seen in the middle of the log: a `N/0` on a statement that ends
//! no block, or a statement in a new id after ones held in another, says no block is open.
//! Statements are kept for open sessions only, so memory follows the sessions open at once,
//! not the log's size.

use std::collections::HashMap;

use crate::log_sql::{self, Control};
use crate::observed::{ObservedStatement, ObservedTransaction};

/// One message of the log (a stderr line with its DETAIL/STATEMENT lines, or a csvlog
/// record), whatever the format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    /// Line (stderr) or record (csvlog) where it starts, 1-based.
    pub line: u64,
    /// `%c`, else the pid.
    pub session: String,
    /// Seconds since the epoch (or of the log's wall clock).
    pub at_s: f64,
    /// `%v` (`3/17`), when the log has it.
    pub vxid: Option<String>,
    pub severity: String,
    pub message: String,
    pub detail: Option<String>,
    /// The statement an error or notice was about (`STATEMENT:`, csvlog's `query`).
    pub statement: Option<String>,
    /// The session's `application_name` (`%a`, csvlog's `application_name`), when logged.
    pub application: Option<String>,
    /// The session's database (`%d`, csvlog's `database_name`), when logged.
    pub database: Option<String>,
}

/// A transaction longer than this keeps its first statements only (noted).
pub const MAX_STATEMENTS: usize = 10_000;
/// Statements of a session seen before any transaction boundary, held until one says whether
/// they were inside a block (a log may start mid-transaction).
const MAX_HELD: usize = 64;

#[derive(Debug, Default)]
struct Txn {
    statements: Vec<ObservedStatement>,
    /// An error aborted it: whatever ends it, it rolled back (unless a savepoint restored it).
    aborted: bool,
    /// A multi-statement query string's implicit transaction (no BEGIN).
    implicit: bool,
    /// Its start was not seen (the log began inside it), or its end (the log ended first).
    partial: bool,
    /// Statements past [`MAX_STATEMENTS`] were dropped.
    cut: bool,
}

#[derive(Debug, Default)]
struct Session {
    /// Whether we know that a block is or is not open: false until the session's first
    /// boundary, connection line or `N/0` transaction id.
    certain: bool,
    block: Option<Txn>,
    held: Vec<ObservedStatement>,
    /// Start of the parse/bind steps of the extended-protocol statement under way.
    ext_start: Option<f64>,
    /// A statement logged before it ran (`log_statement`), waiting for its duration.
    pending: Option<(String, f64, Vec<Option<String>>)>,
    /// The transaction id (`%v`, not `N/0`) the held statements ran in.
    held_vxid: Option<String>,
}

/// What the sessions produced besides transactions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub statements: u64,
    pub transactions: u64,
    /// Transactions cut at [`MAX_STATEMENTS`].
    pub cut: u64,
    /// Transactions still open at the end of the log, or whose start was before it.
    pub incomplete: u64,
}

/// Every open session's state.
#[derive(Default)]
pub struct Sessions {
    t0: Option<f64>,
    open: HashMap<String, Session>,
    pub counts: Counts,
}

/// A message the reader cannot make sense of (the caller adds the file and line).
pub type Malformed = String;

type Sink<'a> = &'a mut dyn FnMut(ObservedTransaction);

impl Sessions {
    /// Takes one entry; transactions that end are handed to `sink`.
    pub fn feed(&mut self, e: &Entry, sink: Sink<'_>) -> Result<(), Malformed> {
        let t0 = *self.t0.get_or_insert(e.at_s);
        let rel = |t: f64| (t - t0).max(0.0);
        match e.severity.as_str() {
            "LOG" => self.log(e, rel, sink),
            "ERROR" => {
                self.flush_pending(&e.session, sink, e.statement.as_deref());
                self.error(e, rel(e.at_s), sink);
                Ok(())
            }
            "FATAL" => {
                self.flush_pending(&e.session, sink, e.statement.as_deref());
                self.end_session(&e.session, true, sink);
                Ok(())
            }
            "PANIC" => {
                let all: Vec<String> = self.open.keys().cloned().collect();
                for s in all {
                    self.end_session(&s, true, sink);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The end of the log: open transactions come out incomplete.
    pub fn finish(&mut self, sink: Sink<'_>) {
        let all: Vec<String> = self.open.keys().cloned().collect();
        for s in all {
            self.end_session(&s, false, sink);
        }
    }

    fn log(
        &mut self,
        e: &Entry,
        rel: impl Fn(f64) -> f64,
        sink: Sink<'_>,
    ) -> Result<(), Malformed> {
        let msg = e.message.as_str();
        if msg.starts_with("connection received:") || msg.starts_with("connection authorized:") {
            if let Some(old) = self.open.get(&e.session) {
                if old.block.is_some() || !old.held.is_empty() {
                    self.end_session(&e.session, false, sink);
                }
            }
            self.open.entry(e.session.clone()).or_default().certain = true;
            return Ok(());
        }
        if msg.starts_with("disconnection:") {
            self.flush_pending(&e.session, sink, None);
            self.end_session(&e.session, true, sink);
            return Ok(());
        }
        let Some(m) = parse_message(msg)? else {
            return Ok(());
        };
        let params = || -> Result<Vec<Option<String>>, Malformed> {
            e.detail
                .as_deref()
                .map(log_sql::parameters)
                .transpose()
                .map(Option::unwrap_or_default)
        };
        match m {
            Message::Step { ms, step, sql } => {
                let ms = ms.unwrap_or(0.0);
                let start = e.at_s - ms / 1000.0;
                match step {
                    Step::Parse | Step::Bind => {
                        let s = self.open.entry(e.session.clone()).or_default();
                        s.ext_start = Some(s.ext_start.map_or(start, |x| x.min(start)));
                    }
                    Step::Statement | Step::Execute => {
                        let params = if step == Step::Execute {
                            params()?
                        } else {
                            Vec::new()
                        };
                        self.flush_pending(&e.session, sink, None);
                        let s = self.open.entry(e.session.clone()).or_default();
                        let began = s.ext_start.take().map_or(start, |x| x.min(start));
                        let stmt = (sql.to_string(), rel(began), Some(e.at_s - began), params);
                        self.run(e, stmt, sink);
                    }
                }
            }
            Message::Logged { step, sql } => {
                if matches!(step, Step::Parse | Step::Bind) {
                    return Ok(());
                }
                let params = if step == Step::Execute {
                    params()?
                } else {
                    Vec::new()
                };
                self.flush_pending(&e.session, sink, None);
                let s = self.open.entry(e.session.clone()).or_default();
                s.ext_start = None;
                s.pending = Some((sql.to_string(), e.at_s, params));
            }
            Message::Duration { ms } => {
                let s = self.open.entry(e.session.clone()).or_default();
                if let Some((sql, at, params)) = s.pending.take() {
                    let began = (e.at_s - ms / 1000.0).max(at.min(e.at_s));
                    let stmt = (sql, rel(began), Some(e.at_s - began), params);
                    self.run(e, stmt, sink);
                }
            }
        }
        Ok(())
    }

    /// Runs a statement logged without a duration (`log_statement`) once the next message of
    /// its session shows it is over; `failed` is the statement an error was about.
    fn flush_pending(&mut self, session: &str, sink: Sink<'_>, failed: Option<&str>) {
        let Some(s) = self.open.get_mut(session) else {
            return;
        };
        let Some((sql, at, params)) = s.pending.take() else {
            return;
        };
        if failed == Some(sql.as_str()) {
            // The error handler records it as the failing statement.
            return;
        }
        let t0 = self.t0.unwrap_or(at);
        let e = Entry {
            session: session.to_string(),
            ..Entry::default()
        };
        self.run(&e, (sql, (at - t0).max(0.0), None, params), sink);
    }

    /// One statement (or query string) that ran to its end in `e.session`.
    fn run(
        &mut self,
        e: &Entry,
        (sql, start, duration, params): (String, f64, Option<f64>, Vec<Option<String>>),
        sink: Sink<'_>,
    ) {
        let parts = log_sql::split(&sql);
        self.counts.statements += parts.len().max(1) as u64;
        let session = e.session.clone();
        let settles = e
            .vxid
            .as_deref()
            .is_some_and(|v| v.ends_with("/0") && parts.len() == 1)
            && matches!(log_sql::control(&sql), Control::Other);
        let s = self.open.entry(session.clone()).or_default();
        let vxid = e.vxid.as_deref().filter(|v| !v.ends_with("/0"));
        if !s.certain && s.block.is_none() && !s.held.is_empty() {
            if let (Some(now), Some(held)) = (vxid, s.held_vxid.as_deref()) {
                if now != held {
                    // A new transaction id: the held statements' transaction ended unlogged
                    // (no COMMIT), so it was one autocommit statement, or a block the log
                    // began inside; either way no block is open now.
                    s.certain = true;
                    let statements = std::mem::take(&mut s.held);
                    let autocommit = statements.len() == 1;
                    let t = Txn {
                        statements,
                        partial: !autocommit,
                        ..Txn::default()
                    };
                    self.emit(&session, t, autocommit, sink);
                }
            }
        }
        let s = self.open.entry(session.clone()).or_default();
        if s.held.is_empty() {
            s.held_vxid = vxid.map(str::to_string);
        }
        if settles && !s.certain && s.block.is_none() {
            s.certain = true;
            let held = std::mem::take(&mut s.held);
            for h in held {
                self.emit(
                    &session,
                    Txn {
                        statements: vec![h],
                        ..Txn::default()
                    },
                    true,
                    sink,
                );
            }
        }
        if parts.len() <= 1 {
            let st = ObservedStatement {
                sql: parts.first().map_or(sql.trim(), |p| p).to_string(),
                params,
                started_at_s: start,
                duration_s: duration,
            };
            self.step(&session, st, sink);
            return;
        }
        // Several statements in one query string: one implicit transaction unless they
        // manage their own block. Each starts when the string did; the last carries its time.
        let in_block = self.open.get(&session).is_some_and(|s| s.block.is_some());
        if !in_block && log_sql::control(parts[0]) != Control::Begin {
            let s = self.open.entry(session.clone()).or_default();
            s.certain = true;
            s.block = Some(Txn {
                implicit: true,
                ..Txn::default()
            });
        }
        let n = parts.len();
        for (i, p) in parts.into_iter().enumerate() {
            let st = ObservedStatement {
                sql: p.to_string(),
                params: if i == 0 { params.clone() } else { Vec::new() },
                started_at_s: start,
                duration_s: if i + 1 == n { duration } else { None },
            };
            self.step(&session, st, sink);
        }
        if let Some(s) = self.open.get_mut(&session) {
            if s.block.as_ref().is_some_and(|b| b.implicit) {
                let t = s.block.take().unwrap_or_default();
                self.emit(&session, t, false, sink);
            }
        }
    }

    /// One statement through the session's block state.
    fn step(&mut self, session: &str, st: ObservedStatement, sink: Sink<'_>) {
        let control = log_sql::control(&st.sql);
        let s = self.open.entry(session.to_string()).or_default();
        match (control, s.block.take()) {
            (Control::Begin, Some(mut b)) => {
                // Already in a block (the server warns and goes on); an implicit one becomes
                // explicit.
                b.implicit = false;
                push(&mut b, st, &mut self.counts);
                s.block = Some(b);
            }
            (Control::Begin, None) => {
                let held = std::mem::take(&mut s.held);
                s.certain = true;
                s.block = Some(Txn {
                    statements: vec![st],
                    ..Txn::default()
                });
                for h in held {
                    self.emit(
                        session,
                        Txn {
                            statements: vec![h],
                            ..Txn::default()
                        },
                        true,
                        sink,
                    );
                }
            }
            (Control::Commit { chain } | Control::Rollback { chain }, Some(mut b)) => {
                push(&mut b, st, &mut self.counts);
                if matches!(control, Control::Rollback { .. }) {
                    b.aborted = true;
                }
                s.block = chain.then(Txn::default);
                self.emit(session, b, false, sink);
            }
            (Control::Commit { .. } | Control::Rollback { .. }, None) => {
                if !s.certain && !s.held.is_empty() {
                    // The log began inside this transaction.
                    let mut b = Txn {
                        statements: std::mem::take(&mut s.held),
                        partial: true,
                        ..Txn::default()
                    };
                    b.aborted = matches!(control, Control::Rollback { .. });
                    push(&mut b, st, &mut self.counts);
                    s.certain = true;
                    self.emit(session, b, false, sink);
                } else {
                    // Outside any block: the server only warns.
                    s.certain = true;
                }
            }
            (_, Some(mut b)) => {
                if control == Control::RollbackToSavepoint {
                    b.aborted = false;
                }
                push(&mut b, st, &mut self.counts);
                s.block = Some(b);
            }
            (_, None) if s.certain => {
                self.emit(
                    session,
                    Txn {
                        statements: vec![st],
                        ..Txn::default()
                    },
                    true,
                    sink,
                );
            }
            (_, None) => {
                s.held.push(st);
                if s.held.len() >= MAX_HELD {
                    // So many statements without a boundary: they were autocommit.
                    s.certain = true;
                    let held = std::mem::take(&mut s.held);
                    for h in held {
                        self.emit(
                            session,
                            Txn {
                                statements: vec![h],
                                ..Txn::default()
                            },
                            true,
                            sink,
                        );
                    }
                }
            }
        }
    }

    /// An ERROR in `e.session`: its transaction rolls back; the failing statement (when
    /// logged) is part of it.
    fn error(&mut self, e: &Entry, at: f64, sink: Sink<'_>) {
        let failing = e.statement.as_deref().map(|sql| ObservedStatement {
            sql: sql.trim().to_string(),
            params: Vec::new(),
            started_at_s: at,
            duration_s: None,
        });
        let s = self.open.entry(e.session.clone()).or_default();
        s.ext_start = None;
        if let Some(mut b) = s.block.take() {
            if !b.aborted {
                if let Some(f) = failing {
                    push(&mut b, f, &mut self.counts);
                }
                b.aborted = true;
            }
            if b.implicit {
                self.emit(&e.session, b, false, sink);
            } else {
                s.block = Some(b);
            }
            return;
        }
        let Some(f) = failing else { return };
        let parts = log_sql::split(&f.sql);
        if parts.len() > 1 {
            // A failing query string: what it began stays open and aborted; without a BEGIN
            // its implicit transaction is over.
            let begins = log_sql::control(parts[0]) == Control::Begin;
            let statements = parts
                .iter()
                .filter(|p| {
                    !matches!(
                        log_sql::control(p),
                        Control::Commit { .. } | Control::Rollback { .. }
                    )
                })
                .map(|p| ObservedStatement {
                    sql: (*p).to_string(),
                    ..f.clone()
                })
                .collect();
            let b = Txn {
                statements,
                aborted: true,
                implicit: !begins,
                ..Txn::default()
            };
            s.certain = true;
            if begins {
                s.block = Some(b);
            } else {
                self.emit(&e.session, b, false, sink);
            }
            return;
        }
        if log_sql::control(&f.sql) == Control::Begin {
            return;
        }
        let b = Txn {
            statements: vec![f],
            aborted: true,
            ..Txn::default()
        };
        if s.certain {
            self.emit(&e.session, b, true, sink);
        } else {
            // Maybe inside a block whose start we did not see: hold it like the others.
            s.held.extend(b.statements);
        }
    }

    /// The session is gone: an open block rolled back (`ended`: the server ended it) or was
    /// cut by the end of the log.
    fn end_session(&mut self, session: &str, ended: bool, sink: Sink<'_>) {
        // A statement logged before it ran (`log_statement`) ran before the session ended.
        self.flush_pending(session, sink, None);
        let Some(mut s) = self.open.remove(session) else {
            return;
        };
        let held = std::mem::take(&mut s.held);
        if !held.is_empty() {
            let autocommit = held.len() == 1;
            let b = Txn {
                statements: held,
                partial: true,
                ..Txn::default()
            };
            self.emit(session, b, autocommit, sink);
        }
        if let Some(mut b) = s.block.take() {
            if ended {
                b.aborted = true;
            } else {
                b.partial = true;
            }
            self.emit(session, b, false, sink);
        }
    }

    fn emit(&mut self, session: &str, t: Txn, autocommit: bool, sink: Sink<'_>) {
        if t.statements.is_empty() {
            return;
        }
        self.counts.transactions += 1;
        if t.partial {
            self.counts.incomplete += 1;
        }
        sink(ObservedTransaction {
            session: session.to_string(),
            autocommit,
            complete: !t.partial,
            rolled_back: t.aborted,
            statements: t.statements,
        });
    }
}

fn push(b: &mut Txn, st: ObservedStatement, counts: &mut Counts) {
    if b.statements.len() < MAX_STATEMENTS {
        b.statements.push(st);
    } else if !b.cut {
        // The rest is dropped: the transaction is no longer complete.
        counts.cut += 1;
        b.cut = true;
        b.partial = true;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Statement,
    Parse,
    Bind,
    Execute,
}

#[derive(Debug, PartialEq)]
enum Message<'a> {
    /// `duration: X ms  statement: …` (and `parse`/`bind`/`execute`): a statement that ran.
    Step {
        ms: Option<f64>,
        step: Step,
        sql: &'a str,
    },
    /// `statement: …` / `execute …: …` before it ran (`log_statement`).
    Logged { step: Step, sql: &'a str },
    /// `duration: X ms` alone: the statement logged before it is over.
    Duration { ms: f64 },
}

/// Reads a `LOG:` message; `None` for every message that is no statement.
fn parse_message(msg: &str) -> Result<Option<Message<'_>>, Malformed> {
    let msg = strip_sqlstate(msg);
    if let Some(rest) = msg.strip_prefix("duration: ") {
        let Some((num, after)) = rest.split_once(" ms") else {
            return Err(format!(
                "a duration without \" ms\": {:?}",
                log_sql::clip(msg)
            ));
        };
        let ms: f64 = num
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                format!(
                    "the duration {:?} is not a number of milliseconds",
                    log_sql::clip(num)
                )
            })?;
        if after.trim().is_empty() {
            return Ok(Some(Message::Duration { ms }));
        }
        let Some(logged) = after.strip_prefix("  ") else {
            return Err(format!(
                "unexpected text after the duration: {:?}",
                log_sql::clip(after)
            ));
        };
        return Ok(step_of(logged).map(|(step, sql)| Message::Step {
            ms: Some(ms),
            step,
            sql,
        }));
    }
    Ok(step_of(msg).map(|(step, sql)| Message::Logged { step, sql }))
}

/// `statement: SQL`, `parse NAME: SQL`, `bind NAME[/PORTAL]: SQL`, `execute [fetch from]
/// NAME[/PORTAL]: SQL`.
fn step_of(s: &str) -> Option<(Step, &str)> {
    if let Some(sql) = s.strip_prefix("statement: ") {
        return Some((Step::Statement, sql));
    }
    for (word, step) in [
        ("parse ", Step::Parse),
        ("bind ", Step::Bind),
        ("execute fetch from ", Step::Execute),
        ("execute ", Step::Execute),
    ] {
        if let Some(rest) = s.strip_prefix(word) {
            let (_name, sql) = rest.split_once(": ")?;
            return Some((step, sql));
        }
    }
    None
}

/// `log_error_verbosity = verbose` puts the SQLSTATE first (`00000: duration: …`).
fn strip_sqlstate(msg: &str) -> &str {
    let b = msg.as_bytes();
    if b.len() > 7
        && b[5] == b':'
        && b[6] == b' '
        && b[..5].iter().all(|c| c.is_ascii_alphanumeric())
    {
        &msg[7..]
    } else {
        msg
    }
}

#[cfg(test)]
#[path = "log_session_tests.rs"]
mod tests;
