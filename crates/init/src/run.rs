//! pgbench's `runInitSteps`: each step of `-I` in order, its banner line on stderr, its
//! time, and the closing `done in 0.35 s (drop tables 0.00 s, …).` line.
//!
//! Client-side generation (`g`) differs from pgbench 15 only where it is invisible in the
//! result: branch and teller inserts (the same statements) are pipelined in batches
//! instead of one round trip each, and the accounts COPY is sent in 256 KiB chunks built
//! in a reused buffer instead of one `PQputline` per row.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hotbench_wire::Connection;

use crate::error::InitError;
use crate::libpq;
use crate::options::{InitOptions, NACCOUNTS, NBRANCHES, NTELLERS};
use crate::progress::Progress;
use crate::rows;
use crate::session::{exec, print_notices, rollback_if_needed};
use crate::sql;

/// COPY data sent per CopyData message.
const COPY_CHUNK: usize = 256 * 1024;
/// Branch/teller inserts sent per round trip.
const INSERT_BATCH: i64 = 1000;

/// One step that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTiming {
    /// The step character (`d`, `t`, `g`, `G`, `v`, `p`, `f`).
    pub step: char,
    /// pgbench's name for it in the final line (`drop tables`, `client-side generate`, …).
    pub name: &'static str,
    /// How long it took.
    pub elapsed: Duration,
}

/// What `run_init` did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InitReport {
    /// The steps run, in order (spaces in `-I` are skipped).
    pub steps: Vec<StepTiming>,
}

impl InitReport {
    /// Sum of the steps' times (pgbench's `run_time`).
    pub fn total(&self) -> Duration {
        self.steps.iter().map(|s| s.elapsed).sum()
    }

    /// pgbench's final line, without the newline:
    /// `done in 0.35 s (drop tables 0.00 s, create tables 0.01 s, …).`
    pub fn done_line(&self) -> String {
        // fold from +0.0: an empty f64 `sum()` is -0.0 and would print "-0.00".
        let total = self
            .steps
            .iter()
            .fold(0.0_f64, |t, s| t + s.elapsed.as_secs_f64());
        let parts: Vec<String> = self
            .steps
            .iter()
            .map(|s| format!("{} {:.2} s", s.name, s.elapsed.as_secs_f64()))
            .collect();
        format!("done in {total:.2} s ({}).", parts.join(", "))
    }
}

fn step_name(step: char) -> Option<&'static str> {
    Some(match step {
        'd' => "drop tables",
        't' => "create tables",
        'g' => "client-side generate",
        'G' => "server-side generate",
        'v' => "vacuum",
        'p' => "primary keys",
        'f' => "foreign keys",
        _ => return None,
    })
}

/// Runs pgbench's initialization on `conn` as `opts` say, writing pgbench's messages to
/// `out` (stderr in the CLI). Options are validated first (nothing runs if they are bad).
///
/// Server NOTICEs are printed from the connection's kept notices
/// ([`Connection::take_notices`]); with a notice handler installed on `conn` they go to
/// the handler instead.
pub fn run_init(
    conn: &mut Connection,
    opts: &InitOptions,
    out: &mut dyn Write,
) -> Result<InitReport, InitError> {
    run_init_cancellable(conn, opts, out, &AtomicBool::new(false))
}

/// [`run_init`] that stops with [`InitError::Canceled`] once `cancel` is set: checked
/// between steps and between COPY chunks (the COPY is then aborted and its transaction
/// rolled back). For a long statement (vacuum, primary keys, server-side generation) the
/// caller's Ctrl-C handler should also send `conn.cancel_token()`'s cancel request, as
/// pgbench does; the statement then fails with SQLSTATE 57014.
pub fn run_init_cancellable(
    conn: &mut Connection,
    opts: &InitOptions,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<InitReport, InitError> {
    opts.validate()?;
    let terminal = opts
        .terminal
        .unwrap_or_else(|| std::io::stderr().is_terminal());
    let mut report = InitReport::default();
    for step in opts.effective_steps().chars() {
        if step == ' ' {
            continue;
        }
        let name = step_name(step).ok_or(InitError::UnrecognizedStep(step))?;
        if cancel.load(Ordering::Relaxed) {
            return Err(InitError::Canceled);
        }
        let start = Instant::now();
        match step {
            'd' => drop_tables(conn, out)?,
            't' => create_tables(conn, opts, out)?,
            'g' => generate_client_side(conn, opts, terminal, out, cancel)?,
            'G' => generate_server_side(conn, opts, out)?,
            'v' => statements(conn, out, "vacuuming...", sql::VACUUM)?,
            'p' => statements(
                conn,
                out,
                "creating primary keys...",
                sql::primary_keys(opts.index_tablespace.as_deref()),
            )?,
            _ => statements(conn, out, "creating foreign keys...", sql::FOREIGN_KEYS)?,
        }
        report.steps.push(StepTiming {
            step,
            name,
            elapsed: start.elapsed(),
        });
    }
    writeln!(out, "{}", report.done_line())?;
    out.flush()?;
    Ok(report)
}

/// One line on `out`, flushed at once (the user watches these while a step runs).
fn say(out: &mut dyn Write, line: &str) -> std::io::Result<()> {
    writeln!(out, "{line}")?;
    out.flush()
}

fn drop_tables(conn: &mut Connection, out: &mut dyn Write) -> Result<(), InitError> {
    say(out, "dropping old tables...")?;
    exec(conn, sql::DROP_TABLES, out)
}

fn create_tables(
    conn: &mut Connection,
    opts: &InitOptions,
    out: &mut dyn Write,
) -> Result<(), InitError> {
    let tables = sql::create_tables(opts, conn.server_version_num());
    statements(conn, out, "creating tables...", tables)?;
    let parts = sql::create_partitions(opts);
    if !parts.is_empty() {
        let title = format!("creating {} partitions...", opts.partitions);
        statements(conn, out, &title, parts)?;
    }
    Ok(())
}

/// A step that is a list of statements: its progress line, then each statement in order.
fn statements<Q: AsRef<str>>(
    conn: &mut Connection,
    out: &mut dyn Write,
    title: &str,
    queries: impl IntoIterator<Item = Q>,
) -> Result<(), InitError> {
    say(out, title)?;
    for q in queries {
        exec(conn, q.as_ref(), out)?;
    }
    Ok(())
}

/// Runs `body` inside `begin … commit`, rolling back if it fails.
fn in_transaction(
    conn: &mut Connection,
    out: &mut dyn Write,
    body: impl FnOnce(&mut Connection, &mut dyn Write) -> Result<(), InitError>,
) -> Result<(), InitError> {
    exec(conn, "begin", out)?;
    let r = body(conn, out).and_then(|()| exec(conn, "commit", out));
    if r.is_err() {
        rollback_if_needed(conn);
    }
    r
}

/// Runs the statements `make(0..n)` in batches of [`INSERT_BATCH`] per round trip.
fn exec_batched(
    conn: &mut Connection,
    n: i64,
    make: impl Fn(i64) -> String,
    out: &mut dyn Write,
) -> Result<(), InitError> {
    let mut i = 0;
    while i < n {
        let end = (i + INSERT_BATCH).min(n);
        let batch: Vec<String> = (i..end).map(&make).collect();
        exec(conn, &batch.join(";"), out)?;
        i = end;
    }
    Ok(())
}

fn generate_client_side(
    conn: &mut Connection,
    opts: &InitOptions,
    terminal: bool,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), InitError> {
    say(out, "generating data (client-side)...")?;
    in_transaction(conn, out, |conn, out| {
        exec(conn, sql::TRUNCATE_TABLES, out)?;
        let scale = i64::from(opts.scale);
        // Branches, tellers, accounts in that order, in case foreign keys already exist.
        exec_batched(conn, NBRANCHES * scale, sql::insert_branch, out)?;
        exec_batched(conn, NTELLERS * scale, sql::insert_teller, out)?;
        copy_accounts(conn, opts, terminal, out, cancel)
    })
}

fn copy_accounts(
    conn: &mut Connection,
    opts: &InitOptions,
    terminal: bool,
    out: &mut dyn Write,
    cancel: &AtomicBool,
) -> Result<(), InitError> {
    let copy_sql = sql::copy_accounts(
        opts.effective_partition_method().is_some(),
        conn.server_version_num(),
    );
    let copy_end = |e: hotbench_wire::Error| InitError::CopyEnd {
        message: libpq::error_message(&e, copy_sql),
        source: e,
    };
    let mut copy = conn
        .copy_in_start(copy_sql)
        .map_err(|e| InitError::CopyStart {
            message: libpq::error_message(&e, copy_sql),
            source: e,
        })?;
    let total = opts.accounts();
    let mut progress = Progress::new(total, opts.quiet, terminal);
    let mut buf: Vec<u8> = Vec::with_capacity(COPY_CHUNK + 64);
    let start = Instant::now();
    let elapsed = || start.elapsed().as_secs_f64();
    for bid in 1..=i64::from(opts.scale) {
        let suffix = rows::account_suffix(bid as u64);
        let first = (bid - 1) * NACCOUNTS + 1;
        for aid in first..first + NACCOUNTS {
            rows::push_account(&mut buf, aid as u64, &suffix);
            progress.row_done(aid, elapsed, out)?;
            if buf.len() >= COPY_CHUNK {
                if cancel.load(Ordering::Relaxed) {
                    progress.finish(out)?;
                    copy.abort("canceled by user").map_err(copy_end)?;
                    return Err(InitError::Canceled);
                }
                copy.write(&buf).map_err(copy_end)?;
                buf.clear();
            }
        }
    }
    if !buf.is_empty() {
        copy.write(&buf).map_err(copy_end)?;
    }
    progress.finish(out)?;
    let r = copy.finish();
    print_notices(conn, copy_sql, out)?;
    r.map(|_| ()).map_err(copy_end)
}

fn generate_server_side(
    conn: &mut Connection,
    opts: &InitOptions,
    out: &mut dyn Write,
) -> Result<(), InitError> {
    say(out, "generating data (server-side)...")?;
    in_transaction(conn, out, |conn, out| {
        exec(conn, sql::TRUNCATE_TABLES, out)?;
        for q in sql::server_side_inserts(opts.scale) {
            exec(conn, &q, out)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_line_like_pgbench() {
        let r = InitReport {
            steps: vec![
                StepTiming {
                    step: 'd',
                    name: "drop tables",
                    elapsed: Duration::from_millis(2),
                },
                StepTiming {
                    step: 'g',
                    name: "client-side generate",
                    elapsed: Duration::from_millis(256),
                },
            ],
        };
        assert_eq!(
            r.done_line(),
            "done in 0.26 s (drop tables 0.00 s, client-side generate 0.26 s)."
        );
        assert_eq!(InitReport::default().done_line(), "done in 0.00 s ().");
    }
}
