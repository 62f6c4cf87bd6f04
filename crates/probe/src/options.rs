//! What a probe is asked to sample (`ProbeOptions`, `Scope`) and the `application_name`s
//! it finds the run's backends by: read by the probe's thread (`lib.rs`), its sampler and
//! its pooler reader alike.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hotbench_wire::ConnectParams;

use crate::pooler;
use crate::session::PROBE_APPLICATION_NAME;
use crate::wait_feed::WaitFeed;

/// What to sample and how often.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The run's backends are those with this `application_name`.
    pub application_name: String,
    /// Wait-event sampling period (default 100 ms).
    pub wait_interval: Duration,
    /// Table/database/statement period and timeline granularity (default 1 s).
    pub stats_interval: Duration,
    /// Tables to follow (names as in SQL, schema-qualified when needed); empty = the
    /// database's largest user tables (up to 200), reporting only those the run writes.
    pub tables: Vec<String>,
    /// Unix seconds of the benchmark start, when already known (see [`ProbeHandle::set_origin`]).
    pub origin: Option<f64>,
    /// Create pg_stat_statements in the database when it is preloaded but not created
    /// (for hotbench's own embedded server; never on a user's database).
    pub create_extensions: bool,
    /// Statements kept in the summary.
    pub top_statements: usize,
    /// The connection pooler the run goes through, read from its admin console.
    pub pooler: Option<pooler::PoolerSource>,
    /// The probe's own connection goes through a transaction pool: it keeps no session
    /// state there (no `PREPARE`, no `SET`, which would land on, and stay with, whichever
    /// server connection ran them, the run's clients' included).
    pub no_session_state: bool,
    /// Which backends are sampled.
    pub scope: Scope,
    /// The probe connection's own `application_name`.
    pub connection_name: String,
    /// `statement_timeout` of the probe's session: no probe query runs longer.
    pub statement_timeout: Duration,
    /// `lock_timeout` of the probe's session: the most it waits for anybody's lock.
    pub lock_timeout: Duration,
    /// Somebody else's server: every statement runs in a read-only transaction (the
    /// session's default, checked before sampling; the probe refuses to sample when it cannot
    /// be set) and the probe locks no user table but for the hot-row key read (table sizes
    /// come from `pg_class`, as of the last vacuum, not from `pg_relation_size`).
    pub read_only: bool,
    /// Read hot rows' primary keys by ctid (the only read of a user table); off: ctids only.
    pub key_reads: bool,
    /// Also record who the sessions are ([`probe_record::SessionsRecord`]): their statements,
    /// who blocks their lock waits, who holds the xmin horizon.
    pub observe_sessions: bool,
    /// Another reader's `pg_stat_activity` rows of the same backends (`hotbench capture`'s
    /// activity sampler): while it is open, the wait samples are its reads, not the probe's.
    pub wait_feed: Option<WaitFeed>,
}

/// The backends a probe samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A benchmark's: those with [`ProbeOptions::application_name`].
    Run,
    /// Every client backend of the connected database but hotbench's own probes: somebody
    /// else's load (`hotbench diagnose`).
    Database,
}

impl ProbeOptions {
    pub fn new(application_name: &str) -> ProbeOptions {
        ProbeOptions {
            application_name: application_name.to_string(),
            wait_interval: Duration::from_millis(100),
            stats_interval: Duration::from_secs(1),
            tables: Vec::new(),
            origin: None,
            create_extensions: false,
            top_statements: 10,
            pooler: None,
            no_session_state: false,
            scope: Scope::Run,
            connection_name: PROBE_APPLICATION_NAME.into(),
            statement_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_millis(200),
            read_only: false,
            key_reads: true,
            observe_sessions: false,
            wait_feed: None,
        }
    }
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions::new("hotbench")
    }
}

/// `hotbench-<pid>-<n>`: unique per run in this process, so probes see only that run's
/// backends even when several runs share a server.
pub fn unique_application_name() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "hotbench-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The `application_name` the engine's connections will carry: the connection options' own
/// when they set one (the engine keeps it), else `default`.
pub fn effective_application_name(params: &ConnectParams, default: &str) -> String {
    params
        .application_name
        .clone()
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// Whether every host of `params` is this machine (a Unix socket or a loopback address): the
/// server's CPU time and cores are then readable here.
pub fn is_local(params: &ConnectParams) -> bool {
    params.targets.iter().all(|t| match &t.host {
        hotbench_wire::Host::Unix(_) => true,
        hotbench_wire::Host::Tcp(h) => {
            matches!(h.as_str(), "localhost" | "127.0.0.1" | "::1")
                && !matches!(t.hostaddr, Some(a) if !a.is_loopback())
        }
    })
}
