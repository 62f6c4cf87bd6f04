//! How diagnose talks to somebody else's server: as `application_name = 'hotbench diagnose'`,
//! every statement in a read-only transaction (the session's default, checked before anything
//! is sampled), bounded by `statement_timeout`, never waiting for a user's lock for more
//! than `lock_timeout`, with `search_path` pinned to `pg_catalog` (no name resolves into a
//! user's schema) and `row_security = off` (no policy runs: a read it would filter fails). The first connection only checks that this holds and learns who
//! diagnose is on the server; the probe's connection samples.

use std::time::Duration;

use hotbench_wire::{ConnectParams, Connector};

use crate::error::DiagnoseError;

/// `application_name` of diagnose's connections (the probe's and this check's).
pub const APPLICATION_NAME: &str = "hotbench diagnose";
/// No statement of diagnose runs longer.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest diagnose waits for a lock (only the hot-row key read can meet a user's, when
/// somebody holds an ACCESS EXCLUSIVE lock on the table): a read that would wait is skipped.
pub const LOCK_TIMEOUT: Duration = Duration::from_millis(10);

/// The session settings, in the order they are set (read-only first: every later statement,
/// these SETs included, runs in a read-only transaction).
pub fn settings() -> [String; 5] {
    let [path, rls] = hotbench_probe::SAFE_SETTINGS;
    [
        "set default_transaction_read_only = on".to_string(),
        format!(
            "set statement_timeout = '{}ms'",
            STATEMENT_TIMEOUT.as_millis()
        ),
        format!("set lock_timeout = '{}ms'", LOCK_TIMEOUT.as_millis()),
        path.to_string(),
        rls.to_string(),
    ]
}

/// What diagnose learns before sampling.
#[derive(Debug, Clone, Default)]
pub struct Server {
    pub version: String,
    pub role: String,
    /// The role sees every session (superuser, pg_read_all_stats or pg_monitor).
    pub sees_all: Option<bool>,
    /// The role is a superuser (more than diagnose needs).
    pub superuser: bool,
}

/// `params` as diagnose connects: its application name, a connect timeout.
pub fn params(params: &ConnectParams) -> ConnectParams {
    let mut p = params.clone();
    p.application_name = Some(APPLICATION_NAME.into());
    if p.connect_timeout.is_none() {
        p.connect_timeout = Some(Duration::from_secs(10));
    }
    p
}

/// Connects once, makes the session read-only and bounded (refusing to go on when it cannot),
/// and reads the server's version and the role's visibility.
pub fn check(params: &ConnectParams) -> Result<Server, DiagnoseError> {
    let mut c = Connector::new(params.clone())
        .connect()
        .map_err(|e| DiagnoseError::Connect(e.to_string()))?;
    let _ = c.set_io_timeout(Some(STATEMENT_TIMEOUT + Duration::from_secs(3)));
    for sql in settings() {
        if let Err(e) = c.simple_query(&sql) {
            c.close();
            return Err(if e.is_connection_lost() {
                DiagnoseError::Connect(e.to_string())
            } else {
                DiagnoseError::Unsafe(format!("\"{sql}\" failed: {e}"))
            });
        }
    }
    let read_only = c
        .simple_query("select current_setting('transaction_read_only')")
        .ok()
        .and_then(|r| r.first().and_then(|q| q.get(0, 0)).map(|v| v == "on"));
    if read_only != Some(true) {
        c.close();
        return Err(DiagnoseError::Unsafe(
            "the session could not be made read-only".into(),
        ));
    }
    let first = |c: &mut hotbench_wire::Connection, sql: &str| {
        c.simple_query(sql)
            .ok()
            .and_then(|r| r.first().and_then(|q| q.get(0, 0)).map(str::to_string))
    };
    let server = Server {
        version: first(&mut c, "select version()")
            .unwrap_or_else(|| c.server_version().to_string()),
        role: first(&mut c, "select current_user").unwrap_or_default(),
        sees_all: first(
            &mut c,
            "select rolsuper or pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') \
             from pg_roles where rolname = current_user",
        )
        .map(|v| v == "t"),
        superuser: first(
            &mut c,
            "select rolsuper from pg_roles where rolname = current_user",
        )
        .is_some_and(|v| v == "t"),
    };
    c.close();
    Ok(server)
}
