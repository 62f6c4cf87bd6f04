//! What each SQL perturbation kind executes, on a connection of its own: `CHECKPOINT`,
//! `VACUUM`, `ANALYZE`, an ACCESS EXCLUSIVE lock held (`ddl-lock`), a REPEATABLE READ snapshot
//! held (`xmin-hold`), `pg_terminate_backend` of the run's own client backends (found by
//! the run's `application_name`, never anybody else's; in a sharded run each shard its part
//! of them), and the user's own statement (`sql=`). Tables are quoted identifiers; the
//! session's timeouts are turned off so a fix ladder's `lock_timeout` in the connection
//! options does not cut the perturbation itself short. Server errors are kept as
//! `SQLSTATE: message`.

use hotbench_settings::perturb::{Kind, Perturbation};
use hotbench_stats::PerturbationRecord;
use hotbench_wire::{Connection, Error, SqlState};

use crate::perturb::{entry, Ctx};

/// The session settings of every perturbation's connection.
const SESSION: &str = "SET statement_timeout = 0; SET lock_timeout = 0; \
                       SET idle_in_transaction_session_timeout = 0";
/// The run's client backends, at most `$2` of them (NULL: all), terminated.
const TERMINATE: &str = "SELECT pg_catalog.pg_terminate_backend(a.pid) FROM \
     (SELECT pid FROM pg_catalog.pg_stat_activity \
      WHERE application_name = $1 AND datname = pg_catalog.current_database() \
        AND pid <> pg_catalog.pg_backend_pid() AND backend_type = 'client backend' \
      ORDER BY pid LIMIT $2::pg_catalog.int8) a";

/// Fires `p` now: connects, executes, holds what it holds, and says what happened.
pub(crate) fn fire(ctx: &Ctx, p: &Perturbation, id: u64) -> PerturbationRecord {
    let mut rec = entry(p, ctx.now_s());
    let result = ctx
        .connector
        .connect()
        .map_err(|e| describe(&e, ctx))
        .and_then(|mut conn| {
            let r = run(ctx, &mut conn, p, id, &mut rec);
            conn.close();
            r
        });
    match result {
        Ok(detail) => rec.detail = detail,
        Err(e) => rec.error = Some(e),
    }
    rec.end_s = Some(ctx.now_s());
    rec
}

/// The kind's statements; `rec.at_s` is set when the one that perturbs is sent.
fn run(
    ctx: &Ctx,
    conn: &mut Connection,
    p: &Perturbation,
    id: u64,
    rec: &mut PerturbationRecord,
) -> Result<Option<String>, String> {
    let table_free = matches!(
        p.kind,
        Kind::Checkpoint | Kind::XminHold { .. } | Kind::Terminate(_) | Kind::TerminateAll
    );
    let session = if table_free {
        // Nothing of the user's schema is named: no function or operator of theirs is found.
        format!("{SESSION}; SET search_path = pg_catalog")
    } else {
        SESSION.to_string()
    };
    conn.simple_query(&session).map_err(|e| describe(&e, ctx))?;
    ctx.track(id, conn.cancel_token());
    let result = if ctx.is_stopped() {
        Err("not run: the run ended first".to_string())
    } else {
        rec.at_s = ctx.now_s();
        execute(ctx, conn, p).map_err(|e| describe(&e, ctx))
    };
    ctx.untrack(id);
    result
}

fn execute(ctx: &Ctx, conn: &mut Connection, p: &Perturbation) -> Result<Option<String>, Error> {
    match &p.kind {
        Kind::Checkpoint => conn.execute("CHECKPOINT").map(|_| None),
        Kind::Vacuum(None) => conn.execute("VACUUM").map(|_| None),
        Kind::Vacuum(Some(t)) => conn
            .execute(&format!("VACUUM {}", t.quoted()))
            .map(|_| None),
        Kind::Analyze(t) => conn
            .execute(&format!("ANALYZE {}", t.quoted()))
            .map(|_| None),
        Kind::VacuumFull(t) => conn
            .execute(&format!("VACUUM FULL {}", t.quoted()))
            .map(|_| None),
        Kind::LongRead { table, hold_us } => long_read(ctx, conn, &table.quoted(), *hold_us),
        Kind::DdlLock { table, hold_us } => {
            let lock = format!(
                "BEGIN; LOCK TABLE {} IN ACCESS EXCLUSIVE MODE",
                table.quoted()
            );
            hold(ctx, conn, &lock, *hold_us)
        }
        Kind::XminHold { hold_us } => hold(
            ctx,
            conn,
            "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1",
            *hold_us,
        ),
        Kind::Terminate(n) => terminate(ctx, conn, Some(*n)),
        Kind::TerminateAll => terminate(ctx, conn, None),
        Kind::Sql(sql) => statement(conn, sql),
        other => Err(Error::Usage(format!(
            "{} is not a SQL perturbation",
            other.name()
        ))),
    }
}

/// The user's statement; the detail is its first value, when it returns one.
fn statement(conn: &mut Connection, sql: &str) -> Result<Option<String>, Error> {
    let results = conn.simple_query(sql)?;
    let first = results
        .iter()
        .find_map(|r| r.rows.first())
        .and_then(|row| row.first().cloned())
        .map(|v| v.unwrap_or_else(|| "NULL".into()));
    Ok(first.map(|v| {
        let shown: String = v.chars().take(200).collect();
        format!("returned {}", hotbench_stats::terminal::escape(&shown))
    }))
}

/// Runs `begin` (which opens a transaction and takes what is held), holds it `hold_us` from
/// the moment it is granted or until the run ends, then commits.
fn hold(
    ctx: &Ctx,
    conn: &mut Connection,
    begin: &str,
    hold_us: i64,
) -> Result<Option<String>, Error> {
    let asked = now_us_of(ctx);
    if let Err(e) = conn.simple_query(begin) {
        let _ = conn.simple_query("ROLLBACK");
        return Err(e);
    }
    let got = now_us_of(ctx);
    let stopped = ctx.wait_until(got + hold_us);
    conn.simple_query("COMMIT")?;
    let waited = (got - asked) as f64 / 1e6;
    let mut detail = Vec::new();
    if waited >= 0.01 {
        detail.push(format!("waited {waited:.3} s to take it"));
    }
    if stopped {
        detail.push("released early: the run ended".to_string());
    }
    Ok((!detail.is_empty()).then(|| detail.join("; ")))
}

/// Scans `table` again and again for `hold_us` (or until the run ends) in one REPEATABLE
/// READ transaction: an analytics read beside the load, its snapshot held all along.
fn long_read(
    ctx: &Ctx,
    conn: &mut Connection,
    table: &str,
    hold_us: i64,
) -> Result<Option<String>, Error> {
    let until = now_us_of(ctx) + hold_us;
    let scan = format!("SELECT pg_catalog.count(*) FROM {table}");
    conn.simple_query("BEGIN ISOLATION LEVEL REPEATABLE READ")?;
    let mut scans = 0u64;
    while now_us_of(ctx) < until && !ctx.is_stopped() {
        if let Err(e) = conn.simple_query(&scan) {
            let _ = conn.simple_query("ROLLBACK");
            return Err(e);
        }
        scans += 1;
    }
    conn.simple_query("COMMIT")?;
    Ok(Some(format!(
        "{scans} scan{}",
        if scans == 1 { "" } else { "s" }
    )))
}

/// The run's clock now, µs since its start.
fn now_us_of(ctx: &Ctx) -> i64 {
    (ctx.now_s() * 1e6) as i64
}

fn terminate(ctx: &Ctx, conn: &mut Connection, n: Option<u32>) -> Result<Option<String>, Error> {
    let Some(app) = ctx.run_application_name.as_deref() else {
        return Err(Error::Usage(
            "not run: the connection options set application_name, so the run's backends \
             cannot be told from others of that name"
                .into(),
        ));
    };
    // A shard terminates its part of N (as it has its part of the clients).
    let n = match (n, ctx.shard) {
        (Some(n), Some((i, count))) if count > 1 => {
            let part = n / count as u32 + u32::from((i as u32) < n % count as u32);
            if part == 0 {
                return Ok(Some(format!(
                    "terminated 0 backends (shard {i} of {count}: the {n} fall to other shards)"
                )));
            }
            Some(part)
        }
        (n, _) => n,
    };
    let limit = n.map(|n| n.to_string());
    let r = conn.query_params(TERMINATE, &[Some(app), limit.as_deref()])?;
    let done = r
        .rows
        .iter()
        .filter(|row| row.first() == Some(&Some("t".into())))
        .count();
    Ok(Some(format!(
        "terminated {done} backend{}",
        if done == 1 { "" } else { "s" }
    )))
}

/// A failure as one line: `SQLSTATE: message` for the server's, the text otherwise;
/// a statement cancelled because the run ended says so.
fn describe(e: &Error, ctx: &Ctx) -> String {
    match e {
        Error::Db(db) if db.code == SqlState::QUERY_CANCELED && ctx.is_stopped() => {
            "cancelled: the run ended first".to_string()
        }
        Error::Db(db) => format!("{}: {}", db.code, db.message),
        Error::Usage(s) => s.clone(),
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}
