//! Taking the sample: diagnose's own sampling (its safety check, its probe scoped to the
//! database: waits, `pg_locks` hot rows with their keys read by ctid, `pg_stat_statements`
//! deltas, tables, commits) runs for `-T` while, beside it on a connection set up the same
//! way, the per-backend activity sampler ([`crate::activity`]) follows each session's
//! statements and transactions. Either may be missing (no privilege, no extension): the
//! capture says what it could not read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hotbench_results::diagnosis_record::Diagnosis;
use hotbench_wire::ConnectParams;

use crate::activity::{self, Sampled};
use crate::observed::ObservedTransaction;

/// How long and how to sample.
#[derive(Debug, Clone)]
pub struct Options {
    pub duration: Duration,
    /// Per-backend activity sampling period.
    pub activity_interval: Duration,
    /// Milliseconds of server time per second the activity sampler may take
    /// (`--sample-budget`; 0: unbounded).
    pub sample_budget_ms: f64,
    /// diagnose's wait-sampling period.
    pub wait_interval: Duration,
    /// Read hot rows' keys by ctid (`--no-keys`: off).
    pub key_reads: bool,
    /// The server as shown (password masked).
    pub target: String,
    /// Transactions from a server log (`--log`), when given: exact shapes and values.
    pub log: Option<Vec<ObservedTransaction>>,
    /// What reading the log noted (lines skipped, hotbench's own sessions left out, …).
    pub log_notes: Vec<String>,
}

impl Options {
    pub fn new(duration: Duration) -> Options {
        Options {
            duration,
            activity_interval: Duration::from_millis(10),
            sample_budget_ms: crate::budget::DEFAULT_MS_PER_S,
            wait_interval: Duration::from_millis(100),
            key_reads: true,
            target: String::new(),
            log: None,
            log_notes: Vec::new(),
        }
    }
}

/// The raw sample: diagnose's record and the activity sampler's.
pub struct Sample {
    pub diagnosis: Diagnosis,
    /// `None` when the activity sampler could not connect (the note says why).
    pub activity: Option<Sampled>,
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// No connection, or the session could not be made safe (exit 1).
    #[error("{0}")]
    Diagnose(#[from] hotbench_diagnose::DiagnoseError),
}

/// Statements kept from `pg_stat_statements` (the mix).
pub const TOP_STATEMENTS: usize = 500;

/// Samples `params`' database for `opts.duration` (less when `stop` turns true or the server
/// goes away).
pub fn sample(
    params: &ConnectParams,
    opts: &Options,
    stop: &dyn Fn() -> bool,
) -> Result<Sample, CaptureError> {
    let connected = hotbench_diagnose::connect(params)?;
    let mut notes = Vec::new();
    let conn = match activity::connect(params) {
        Ok(c) => Some(c),
        Err(e) => {
            notes.push(format!(
                "per-session statements (pg_stat_activity) not sampled: {e}; shapes come from pg_stat_statements alone, each statement on its own"
            ));
            None
        }
    };
    let mut d = hotbench_diagnose::Options::new(opts.duration);
    d.interval = opts.wait_interval;
    d.key_reads = opts.key_reads;
    d.target = opts.target.clone();
    d.top_statements = TOP_STATEMENTS;
    // The sampler's reads are the probe's wait samples too: one read of every backend slot
    // serves both (the probe reads for itself when the sampler could not connect or stops).
    let feed = hotbench_probe::WaitFeed::new();
    if conn.is_some() {
        d.wait_feed = Some(feed.clone());
    }
    let done = AtomicBool::new(false);
    let (diagnosis, activity) = std::thread::scope(|s| {
        let sampler = conn.map(|c| {
            let done = &done;
            let feed = &feed;
            let pace = activity::Pace {
                period: opts.activity_interval,
                budget_ms_per_s: opts.sample_budget_ms,
                local: hotbench_probe::is_local(params),
                duration: opts.duration,
            };
            std::thread::Builder::new()
                .name("hotbench-capture".into())
                .spawn_scoped(s, move || activity::sample(c, pace, done, feed))
        });
        if matches!(sampler, Some(Err(_))) {
            feed.close();
        }
        let diagnosis = connected.sample(&d, stop);
        done.store(true, Ordering::SeqCst);
        let activity = match sampler {
            Some(Ok(h)) => h.join().ok(),
            Some(Err(e)) => {
                notes.push(format!("per-session sampling thread not started: {e}"));
                None
            }
            None => None,
        };
        (diagnosis, activity)
    });
    Ok(Sample {
        diagnosis,
        activity,
        notes,
    })
}
