//! Server probes: while a run goes, sample the server over one extra connection and record
//! *why* a variant is fast or slow — the wait events of the run's own backends (found by their
//! `application_name`), lock waits (types, blocking chains, the hot relation and tuple), table
//! health (dead tuples, HOT updates, autovacuum, size), commits/rollbacks/deadlocks, WAL
//! bytes, the oldest xmin, and pg_stat_statements differences — per stats interval and in
//! total, as a [`ProbeRecord`] for the run's result.
//!
//! A probe never fails a run: anything missing (a view, a function, an extension, a
//! privilege, the connection itself) becomes a one-line note in [`ProbeRecord::notes`].
//! Its queries are cheap (one grouped `pg_stat_activity` read per wait interval; `pg_locks`
//! only while backends wait on locks, about once a second; a handful of reads per stats
//! interval; none of its own for waits while a [`WaitFeed`] hands it another reader's rows)
//! and their cost is recorded in [`ProbeRecord::cost`].
//!
//! ```no_run
//! use hotbench_probe::{Probe, ProbeOptions};
//! # let params: hotbench_wire::ConnectParams = unimplemented!();
//! let app = hotbench_probe::unique_application_name();
//! let probe = Probe::start(&params, ProbeOptions::new(&app));
//! // … run the benchmark with application_name = app …
//! probe.set_origin(1_700_000_000.0); // when the benchmark's start is known (optional)
//! let record = probe.stop();          // every `t` counts from the origin
//! ```

pub mod classify;
pub mod engine_views;
pub mod health;
pub mod hot_rows;
pub mod key_decode;
pub mod normalize;
mod observe;
mod options;
pub mod pooler;
pub mod restart;
pub mod row_keys;
mod sampler;
mod session;
pub mod statements;
pub mod tables;
pub mod wait_feed;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use hotbench_results::probe_record::{self, ProbeRecord};
use hotbench_wire::{Config, ConnectParams, Connector};

pub use sampler::SAFE_SETTINGS;
use sampler::{unix_now, Sampler};
use session::{first_line, Session};

pub use options::{
    effective_application_name, is_local, unique_application_name, ProbeOptions, Scope,
};
pub use session::PROBE_APPLICATION_NAME;
pub use wait_feed::{WaitFeed, WaitRow};

/// Entry points.
pub struct Probe;

/// How far a running probe has got ([`ProbeHandle::progress`]), so a caller can wait for
/// enough samples instead of sleeping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeProgress {
    /// Wait-event sampling rounds taken.
    pub samples: u64,
    /// Stats intervals closed.
    pub intervals: u64,
}

/// What the probe thread and its handle share: the benchmark's start (set later by the
/// caller) and the progress counters.
#[derive(Default)]
struct Shared {
    origin: AtomicU64,
    samples: AtomicU64,
    intervals: AtomicU64,
    /// The probe has no connection (it could not connect, or lost it): nothing more comes.
    lost: AtomicBool,
    /// Ends the probe's socket (and the pooler console's, when it reads one), so a query
    /// stuck on a stalled server or pooler returns at [`ProbeHandle::stop`] instead of after
    /// the connection's 10 s timeout.
    interrupters: std::sync::Mutex<Vec<hotbench_wire::Interrupter>>,
}

impl Probe {
    /// Starts sampling on its own thread and connection; returns once the baseline snapshot
    /// is taken (or after 10 s, or at once when the connection fails — the record then says
    /// why). The run's connections must carry `opts.application_name`.
    pub fn start(params: &ConnectParams, opts: ProbeOptions) -> ProbeHandle {
        let mut params = params.clone();
        params.application_name = Some(opts.connection_name.clone());
        if params.connect_timeout.is_none() {
            params.connect_timeout = Some(Duration::from_secs(10));
        }
        let shared = Arc::new(Shared {
            origin: AtomicU64::new(opts.origin.map_or(0, f64::to_bits)),
            ..Shared::default()
        });
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let shared2 = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("hotbench-probe".into())
            .spawn(move || run_thread(params, opts, shared2, stop_rx, ready_tx));
        match spawned {
            Ok(join) => {
                let _ = ready_rx.recv_timeout(Duration::from_secs(10));
                ProbeHandle {
                    stop_tx: Some(stop_tx),
                    join: Some(join),
                    shared,
                    failed: None,
                }
            }
            Err(e) => ProbeHandle {
                stop_tx: None,
                join: None,
                shared,
                failed: Some(format!("could not start the probe thread: {e}")),
            },
        }
    }

    /// As [`Probe::start`] from connection options (resolved as the engine resolves them);
    /// the filter is [`effective_application_name`] of `opts.application_name`.
    pub fn start_config(config: &Config, mut opts: ProbeOptions) -> ProbeHandle {
        match config.resolve() {
            Ok(params) => {
                opts.application_name = effective_application_name(&params, &opts.application_name);
                Probe::start(&params, opts)
            }
            Err(e) => ProbeHandle::failed(format!("probe not started: {e}")),
        }
    }
}

/// A running probe. Dropping it without [`ProbeHandle::stop`] ends the thread too.
pub struct ProbeHandle {
    stop_tx: Option<mpsc::Sender<()>>,
    join: Option<JoinHandle<ProbeRecord>>,
    shared: Arc<Shared>,
    failed: Option<String>,
}

impl ProbeHandle {
    fn failed(note: String) -> ProbeHandle {
        ProbeHandle {
            stop_tx: None,
            join: None,
            shared: Arc::new(Shared {
                lost: AtomicBool::new(true),
                ..Shared::default()
            }),
            failed: Some(note),
        }
    }

    /// True while the probe has no connection to the server (it could not connect, or lost
    /// it): sampling has stopped, and goes on only if it connects again (after a server's
    /// restart, [`restart`]); [`ProbeHandle::stop`] returns what was measured.
    pub fn is_lost(&self) -> bool {
        self.shared.lost.load(Ordering::SeqCst)
    }

    /// Tells the probe when the benchmark started (Unix seconds): later stats intervals end
    /// on the run's own interval boundaries, and every `t` counts from it. May be called
    /// again with a better estimate (each call re-phases the next boundary).
    pub fn set_origin(&self, unix_s: f64) {
        if unix_s.is_finite() && unix_s > 0.0 {
            self.shared.origin.store(unix_s.to_bits(), Ordering::SeqCst);
        }
    }

    /// Samples taken and stats intervals closed so far.
    pub fn progress(&self) -> ProbeProgress {
        ProbeProgress {
            samples: self.shared.samples.load(Ordering::SeqCst),
            intervals: self.shared.intervals.load(Ordering::SeqCst),
        }
    }

    /// Stops sampling, takes the final snapshots and returns the record.
    pub fn stop(mut self) -> ProbeRecord {
        let origin = load_origin(&self.shared.origin);
        if let Some(note) = self.failed.take() {
            return ProbeRecord {
                origin: origin.unwrap_or_else(unix_now),
                notes: vec![note],
                ..Default::default()
            };
        }
        drop(self.stop_tx.take());
        self.interrupt_if_stuck();
        match self.join.take().map(JoinHandle::join) {
            Some(Ok(rec)) => rec,
            _ => ProbeRecord {
                origin: origin.unwrap_or_else(unix_now),
                notes: vec!["the probe stopped unexpectedly (internal error)".into()],
                ..Default::default()
            },
        }
    }
}

impl ProbeHandle {
    /// Told to stop, the probe takes its final snapshots: on a server that answers, in well
    /// under [`STOP_WAIT`]. A probe still busy after it is stuck on a stalled server (a
    /// stopped postmaster or pooler): its socket is shut down, its query fails, and the
    /// record keeps what was sampled until then (with the lost connection's note).
    fn interrupt_if_stuck(&self) {
        let Some(join) = self.join.as_ref() else {
            return;
        };
        let deadline = std::time::Instant::now() + STOP_WAIT;
        while !join.is_finished() {
            if std::time::Instant::now() >= deadline {
                if let Ok(all) = self.shared.interrupters.lock() {
                    all.iter().for_each(hotbench_wire::Interrupter::interrupt);
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// How long [`ProbeHandle::stop`] lets the probe finish before ending its connection.
const STOP_WAIT: Duration = Duration::from_secs(2);

fn load_origin(a: &AtomicU64) -> Option<f64> {
    let bits = a.load(Ordering::SeqCst);
    (bits != 0).then(|| f64::from_bits(bits))
}

/// The probe thread: connect, baseline, sample until told to stop (or the handle is gone).
fn run_thread(
    params: ConnectParams,
    opts: ProbeOptions,
    shared: Arc<Shared>,
    stop_rx: mpsc::Receiver<()>,
    ready_tx: mpsc::Sender<()>,
) -> ProbeRecord {
    let local = is_local(&params);
    let conn = match Connector::new(params.clone()).connect() {
        Ok(c) => c,
        Err(e) => {
            shared.lost.store(true, Ordering::SeqCst);
            let _ = ready_tx.send(());
            return ProbeRecord {
                origin: load_origin(&shared.origin).unwrap_or_else(unix_now),
                application_name: opts.application_name.clone(),
                notes: vec![format!("probe could not connect: {}", first_line(&e))],
                ..Default::default()
            };
        }
    };
    let version = conn.server_version().to_string();
    if let (Ok(mut all), Ok(i)) = (shared.interrupters.lock(), conn.interrupter()) {
        all.push(i);
    }
    let mut conn = conn;
    let _ = conn.set_io_timeout(Some(Duration::from_secs(10)));
    let version = match conn.simple_query("select version()") {
        Ok(r) => r
            .first()
            .and_then(|q| q.get(0, 0))
            .map(str::to_string)
            .unwrap_or(version),
        Err(_) => version,
    };
    let mut sampler = Sampler::begin(Session::new(conn), &opts, &version, local);
    if let (Ok(mut all), Some(i)) = (shared.interrupters.lock(), sampler.pooler_interrupter()) {
        all.push(i);
    }
    shared.lost.store(sampler.is_lost(), Ordering::SeqCst);
    let _ = ready_tx.send(());
    let wait = opts.wait_interval.as_secs_f64().max(0.001);
    let stats = opts.stats_interval.as_secs_f64().max(0.01);
    let mut next_wait = unix_now();
    let mut next_stats = next_wait + stats;
    let mut phased_on: Option<f64> = None;
    // The wait read alone (hot-row reads ride on lock waits, not on the server's size); a
    // whole stats round (several reads).
    let (mut wait_cost, mut stats_cost) = (Governor::new(0.005), Governor::new(0.05));
    let mut last_round = next_wait;
    // A lost connection: since when, the next try, and how often to try.
    let (mut lost_since, mut next_try): (Option<f64>, Option<f64>) = (None, None);
    let mut backoff = restart::Backoff::default();
    loop {
        let now = unix_now();
        // Once the benchmark's start is known, end stats intervals on its boundaries.
        if let Some(o) = load_origin(&shared.origin) {
            if phased_on != Some(o) {
                phased_on = Some(o);
                let k = ((now - o) / stats).floor();
                let boundary = o + k * stats;
                // A boundary passed a moment ago and a good part of its interval is still open
                // (the caller learns the origin at the end of the first interval): close it
                // now. Otherwise the open interval runs to the next boundary.
                let open_long = last_round < boundary && boundary - last_round >= 0.5 * stats;
                next_stats = if k >= 1.0 && open_long && now - boundary < 0.2 * stats {
                    now
                } else {
                    boundary + stats
                };
            }
        }
        let deadline = next_wait.min(next_stats);
        let sleep = (deadline - now).max(0.0);
        match stop_rx.recv_timeout(Duration::from_secs_f64(sleep)) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if sampler.is_lost() {
            shared.lost.store(true, Ordering::SeqCst);
            let now = unix_now();
            let since = *lost_since.get_or_insert(now);
            if !sampler.may_reconnect() || !backoff.may_try() {
                // Nothing more to measure; wait for stop.
                next_wait = f64::INFINITY;
                next_stats = now + 3600.0;
                continue;
            }
            let due = *next_try.get_or_insert_with(|| now + backoff.failed().as_secs_f64());
            if now < due {
                next_wait = due;
                continue;
            }
            if let Some(conn) = reconnect(&params, &shared, &sampler) {
                sampler.resume(conn, &opts, since);
            }
            if sampler.is_lost() {
                next_try = Some(unix_now() + backoff.failed().as_secs_f64());
            } else {
                backoff.connected();
                (lost_since, next_try) = (None, None);
                shared.lost.store(false, Ordering::SeqCst);
                next_wait = unix_now();
                // The interval open across the gap ends on the run's next boundary.
                phased_on = None;
            }
            continue;
        }
        let now = unix_now();
        if now >= next_wait {
            sampler.sample_waits();
            let period = wait_cost.period(sampler.waits_read_s, wait);
            shared.samples.fetch_add(1, Ordering::SeqCst);
            next_wait += period;
            if next_wait < now {
                next_wait = now + period;
            }
        }
        if now >= next_stats {
            sampler.stats_round();
            let period = stats_cost.period(sampler.stats_round_s, stats);
            shared.intervals.fetch_add(1, Ordering::SeqCst);
            last_round = now;
            next_stats += period;
            if next_stats < now {
                next_stats = now + period;
            }
        }
        if let Some(note) = wait_cost
            .note("wait samples")
            .or(stats_cost.note("stats rounds"))
        {
            sampler.note(note);
        }
    }
    sampler.finish(load_origin(&shared.origin))
}

/// A new connection for a probe whose connection was lost (within
/// [`restart::Backoff::CONNECT_TIMEOUT`]), its socket the one [`ProbeHandle::stop`] ends.
fn reconnect(
    params: &ConnectParams,
    shared: &Shared,
    sampler: &Sampler,
) -> Option<hotbench_wire::Connection> {
    let mut params = params.clone();
    let limit = restart::Backoff::CONNECT_TIMEOUT;
    params.connect_timeout = Some(params.connect_timeout.map_or(limit, |t| t.min(limit)));
    let mut conn = Connector::new(params).connect().ok()?;
    let _ = conn.set_io_timeout(Some(Duration::from_secs(10)));
    if let Ok(mut all) = shared.interrupters.lock() {
        all.clear();
        all.extend(conn.interrupter().ok());
        all.extend(sampler.pooler_interrupter());
    }
    Some(conn)
}

/// Keeps a repeated read's cost bounded on a big server: when its mean cost (a moving
/// average of the server backend's CPU time per read when the server is local, else of the
/// read's round trip) is over its floor, the read runs no
/// more often than [`Governor::SHARE`] of the time (2,000 sessions or megabyte query texts
/// make every `pg_stat_activity` read cost in proportion). `hotbench capture`'s per-backend
/// activity reads are bounded by the same rule.
pub struct Governor {
    /// Reads faster than this (s) are never slowed.
    floor_s: f64,
    /// Reads seen (the first ones prepare their statements: not counted).
    reads: u32,
    /// The costs of the last [`Governor::WINDOW`] reads.
    last: std::collections::VecDeque<f64>,
    mean_s: f64,
    stretched: bool,
    noted: bool,
}

impl Governor {
    /// Most of the time a read may take.
    const SHARE: f64 = 0.02;
    /// Reads not counted (the first prepares its statements).
    const WARM_UP: u32 = 1;
    /// Reads averaged.
    const WINDOW: usize = 10;

    pub fn new(floor_s: f64) -> Governor {
        Governor {
            floor_s,
            reads: 0,
            last: std::collections::VecDeque::new(),
            mean_s: 0.0,
            stretched: false,
            noted: false,
        }
    }

    /// The period until the next read, after one that took `took_s`, for a configured
    /// period of `period_s`.
    pub fn period(&mut self, took_s: f64, period_s: f64) -> f64 {
        self.reads += 1;
        if self.reads <= Self::WARM_UP {
            return period_s;
        }
        // The mean of the last reads (a local backend's CPU time comes in 10 ms ticks: one
        // tick among cheap reads is not a costly read).
        if self.last.len() == Self::WINDOW {
            self.last.pop_front();
        }
        self.last.push_back(took_s);
        self.mean_s = self.last.iter().sum::<f64>() / self.last.len() as f64;
        // Judged over a full window, unless the reads are plainly costly (over two 10 ms
        // ticks: a cheap read shows one at most).
        let judged = self.last.len() == Self::WINDOW || self.mean_s > 0.02;
        if judged && self.mean_s > self.floor_s && self.mean_s / Self::SHARE > period_s {
            self.stretched = true;
            self.mean_s / Self::SHARE
        } else {
            period_s
        }
    }

    /// A note, once, when the reads were slowed.
    pub fn note(&mut self, what: &str) -> Option<String> {
        (self.stretched && !std::mem::replace(&mut self.noted, true)).then(|| {
            format!(
                "{what} slowed to every {:.0} ms: each took {:.1} ms (many sessions or long \
                 query texts), and the probe keeps its reads under {:.0}% of the time",
                self.mean_s / Self::SHARE * 1000.0,
                self.mean_s * 1000.0,
                Self::SHARE * 100.0
            )
        })
    }
}

#[cfg(test)]
mod governor_tests {
    #[test]
    fn cheap_reads_keep_their_period_and_costly_ones_are_spread_out() {
        let mut g = super::Governor::new(0.005);
        for _ in 0..10 {
            assert_eq!(g.period(0.004, 0.1), 0.1);
        }
        assert!(g.note("x").is_none());
        let mut g = super::Governor::new(0.005);
        // The first read prepares its statements: not counted.
        assert_eq!(g.period(0.5, 0.1), 0.1);
        // One 10 ms tick among cheap reads is not a costly read, first or later.
        assert_eq!(g.period(0.01, 0.1), 0.1);
        for _ in 0..9 {
            assert_eq!(g.period(0.0, 0.1), 0.1);
        }
        assert_eq!(g.period(0.01, 0.1), 0.1);
        // A plainly costly read is acted on at once.
        let mut h = super::Governor::new(0.005);
        h.period(0.2, 0.1);
        assert!((h.period(0.2, 0.1) - 10.0).abs() < 1e-9);
        let mut p = 0.0;
        for _ in 0..10 {
            p = g.period(0.012, 0.1);
        }
        assert!((p - 0.6).abs() < 1e-9, "{p}");
        assert!(g
            .note("wait samples")
            .is_some_and(|n| n.contains("slowed to every 600 ms")));
        assert!(g.note("wait samples").is_none(), "once");
    }
}
