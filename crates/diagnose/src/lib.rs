//! `hotbench diagnose`: a read-only sample of somebody else's server, turned into findings
//! that name the contention (a hot row and its key, a queue table, an old snapshot's holder,
//! deadlocks, WAL-bound commits, idle lock holders, too many sessions for the cores) and the
//! lab scenario, with parameters estimated from the sample, that reproduces it.
//!
//! The sampling is the probe's (`hotbench-probe`, scoped to the whole database and observing
//! who the sessions are); the safety rules are in [`session`]; what the sample means is pure
//! ([`facts`], [`findings`], [`suggest`]) and unit-tested without a server. The result is the
//! typed [`Diagnosis`] document of `hotbench-stats`, rendered by `hotbench-report`.
//!
//! ```no_run
//! # let params: hotbench_wire::ConnectParams = unimplemented!();
//! let opts = hotbench_diagnose::Options::new(std::time::Duration::from_secs(30));
//! let d = hotbench_diagnose::diagnose(&params, &opts, &|| false).expect("connected");
//! for f in &d.findings {
//!     println!("{} {}", f.kind.name(), f.command.as_deref().unwrap_or(""));
//! }
//! ```

pub mod catalog;
mod error;
pub mod facts;
pub mod findings;
pub mod functions;
pub mod session;
pub mod shape;
pub mod shape_parts;
pub mod suggest;
#[cfg(test)]
mod testdata;

use std::time::{Duration, Instant};

use hotbench_probe::{Probe, ProbeOptions, Scope};
use hotbench_results::diagnosis_record::{Diagnosis, DiagnosisStatus};
use hotbench_wire::ConnectParams;

pub use error::DiagnoseError;

/// How long and how often to sample.
#[derive(Debug, Clone)]
pub struct Options {
    pub duration: Duration,
    /// Wait-sampling period; statements, blockers, tables and the xmin horizon are read every
    /// [`stats_interval`] of it.
    pub interval: Duration,
    /// Read hot rows' keys by ctid (the only read of a user table).
    pub key_reads: bool,
    /// Cores of the server's machine (`None`: this machine's when the server is local).
    pub server_cores: Option<u32>,
    /// The server, as shown (password masked).
    pub target: String,
    /// The scenarios findings point to, by the shapes their manifests reproduce (the
    /// built-in ones by default).
    pub catalog: catalog::Catalog,
    /// pg_stat_statements entries kept in the record, most time first (`hotbench capture`
    /// keeps every statement of the mix).
    pub top_statements: usize,
    /// Another reader's `pg_stat_activity` rows (`hotbench capture`'s sampler): the probe's
    /// wait samples while it reads, so the backends' slots are copied once for both.
    pub wait_feed: Option<hotbench_probe::WaitFeed>,
}

impl Options {
    pub fn new(duration: Duration) -> Options {
        Options {
            duration,
            interval: Duration::from_millis(100),
            key_reads: true,
            server_cores: None,
            target: String::new(),
            catalog: catalog::Catalog::builtin(),
            top_statements: ProbeOptions::default().top_statements,
            wait_feed: None,
        }
    }
}

/// Ten wait samples per stats round, between 200 ms and 5 s.
pub fn stats_interval(interval: Duration) -> Duration {
    (interval * 10).clamp(Duration::from_millis(200), Duration::from_secs(5))
}

/// A server diagnose has connected to once and made sure it can sample safely.
pub struct Connected {
    params: ConnectParams,
    server: session::Server,
}

/// Connects (as [`session::APPLICATION_NAME`]) and checks that the session can be made
/// read-only and bounded; nothing is sampled yet.
pub fn connect(params: &ConnectParams) -> Result<Connected, DiagnoseError> {
    let params = session::params(params);
    let server = session::check(&params)?;
    Ok(Connected { params, server })
}

/// [`connect`], then [`Connected::sample`].
pub fn diagnose(
    params: &ConnectParams,
    opts: &Options,
    stop: &dyn Fn() -> bool,
) -> Result<Diagnosis, DiagnoseError> {
    Ok(connect(params)?.sample(opts, stop))
}

impl Connected {
    /// The server's `version()`.
    pub fn server_version(&self) -> &str {
        &self.server.version
    }

    /// Samples the database for `opts.duration` (less when `stop` turns true or the server
    /// goes away: the status says so) and diagnoses what it saw.
    pub fn sample(self, opts: &Options, stop: &dyn Fn() -> bool) -> Diagnosis {
        let Connected { params, server } = self;
        let mut p = ProbeOptions::new("");
        p.scope = Scope::Database;
        p.connection_name = session::APPLICATION_NAME.into();
        p.statement_timeout = session::STATEMENT_TIMEOUT;
        p.lock_timeout = session::LOCK_TIMEOUT;
        p.read_only = true;
        p.key_reads = opts.key_reads;
        p.observe_sessions = true;
        p.wait_interval = opts.interval;
        p.stats_interval = stats_interval(opts.interval);
        p.top_statements = opts.top_statements;
        p.wait_feed = opts.wait_feed.clone();
        let started_at = unix_now();
        let t0 = Instant::now();
        let handle = Probe::start(&params, p.clone());
        handle.set_origin(started_at);
        let status = loop {
            if handle.is_lost() {
                break DiagnosisStatus::ServerLost;
            }
            if stop() {
                break DiagnosisStatus::Interrupted;
            }
            let left = opts.duration.saturating_sub(t0.elapsed());
            if left.is_zero() {
                break DiagnosisStatus::Complete;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        };
        let duration_s = t0.elapsed().as_secs_f64();
        let record = handle.stop();
        let server_cores = opts.server_cores.or_else(|| {
            hotbench_probe::is_local(&params)
                .then(|| std::thread::available_parallelism().map_or(0, |n| n.get() as u32))
                .filter(|n| *n > 0)
        });
        // Functions the statements call: their bodies, read as text (nothing runs).
        let functions = match (&status, &record.sessions) {
            (DiagnosisStatus::ServerLost, _) | (_, None) => functions::Bodies::default(),
            (_, Some(s)) => functions::read(&params, s.statements.iter().map(|s| s.query.as_str())),
        };
        let (findings, looked_at) = findings::diagnose(&findings::Input {
            probe: &record,
            duration_s,
            server_cores,
            functions: &functions,
            catalog: &opts.catalog,
        });
        let mut notes = record.notes.clone();
        if server.sees_all == Some(false) {
            notes.push(format!(
                "role \"{}\" sees only its own sessions' statements and waits: grant it \
                 pg_monitor",
                server.role
            ));
        }
        if server.superuser {
            notes.push(format!(
                "role \"{}\" is a superuser: diagnose needs no more than pg_monitor (and SELECT \
                 on the tables whose hot rows' keys it should show)",
                server.role
            ));
        }
        if matches!(status, DiagnosisStatus::ServerLost) {
            notes.push(format!(
                "the server went away after {duration_s:.1} s: the findings cover that part"
            ));
        }
        let mut d = Diagnosis::new();
        d.status = status;
        d.target = opts.target.clone();
        d.engine = hotbench_wire::engine_of(&server.version).to_string();
        d.server_version = server.version;
        d.role = server.role;
        d.started_at = started_at;
        d.duration_s = duration_s;
        d.interval_ms = p.wait_interval.as_secs_f64() * 1000.0;
        d.stats_interval_ms = p.stats_interval.as_secs_f64() * 1000.0;
        d.server_cores = server_cores;
        d.findings = findings;
        d.looked_at = looked_at;
        d.notes = notes;
        d.probe = record;
        d
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
