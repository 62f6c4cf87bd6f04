//! What a perturbation's firing threads share with the driver (`perturb.rs`) and use to
//! run (`perturb_sql.rs`, `perturb_server.rs`, `perturb_cmd.rs`): the stop flag and its
//! wake-up, the statements in flight to cancel, the run's clock and the connection options,
//! the knobs `rtt` and `rate` turn, the server's processes and the user's commands; and a
//! firing's record entry.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use hotbench_results::PerturbationRecord;
use hotbench_settings::perturb::Perturbation;
use hotbench_settings::perturb_cmd::PerturbCmd;
use hotbench_wire::{CancelToken, Connector};

use crate::clock::now_us;
use crate::config::RunConfig;
use crate::knobs::Knobs;
use crate::server_process::ServerHandle;

/// What the firings share: the stop flag (with its condition variable, so waits end at
/// once), the cancel tokens of the statements in flight, and the run's start.
pub(crate) struct Ctx {
    stopped: Mutex<bool>,
    wake: Condvar,
    in_flight: Mutex<Vec<(u64, CancelToken)>>,
    /// The benchmark's start (`clock::now_us`).
    origin_us: i64,
    pub(crate) connector: Connector,
    /// The `application_name` of the run's client backends, when it is the run's own (one
    /// the connection options set is somebody else's too: `terminate` refuses it).
    pub(crate) run_application_name: Option<String>,
    /// What `rtt` and `rate` change, and the values they go back to.
    pub(crate) knobs: Arc<Knobs>,
    pub(crate) base_rtt_us: i64,
    pub(crate) run_rate: f64,
    /// The server's processes (`restart`, `pause`), when hotbench started it.
    pub(crate) server: Option<ServerHandle>,
    /// The user's `--perturb-cmd`s.
    pub(crate) commands: Vec<PerturbCmd>,
    /// This process's shard of the run (`--shard I/N`): index, count.
    pub(crate) shard: Option<(usize, usize)>,
}

impl Ctx {
    /// The firings' context for `cfg`'s run, started at `origin_us`, with the workers'
    /// `knobs`.
    pub(crate) fn new(
        cfg: &RunConfig,
        origin_us: i64,
        connector: Connector,
        run_application_name: Option<String>,
        knobs: Arc<Knobs>,
    ) -> Ctx {
        Ctx {
            stopped: Mutex::new(false),
            wake: Condvar::new(),
            in_flight: Mutex::new(Vec::new()),
            origin_us,
            connector,
            run_application_name,
            knobs,
            base_rtt_us: cfg.settings.rtt_us,
            run_rate: run_rate(cfg),
            server: cfg.server.clone(),
            commands: cfg.settings.perturb_cmd.clone(),
            shard: cfg.shard.as_ref().map(|s| (s.index, s.count)),
        }
    }

    /// Waits `us` from now, or until the stop; true when stopped.
    pub(crate) fn wait_for(&self, us: i64) -> bool {
        self.wait_until(now_us() - self.origin_us + us)
    }

    /// Stops the firings: wakes every wait and cancels the statements still running.
    pub(crate) fn stop(&self) {
        *lock(&self.stopped) = true;
        self.wake.notify_all();
        for (_, token) in lock(&self.in_flight).drain(..) {
            // Best effort: a statement that ended meanwhile has nothing to cancel.
            let _ = token.cancel();
        }
    }

    /// Seconds since the benchmark started.
    pub(crate) fn now_s(&self) -> f64 {
        (now_us() - self.origin_us) as f64 / 1e6
    }

    pub(crate) fn is_stopped(&self) -> bool {
        *lock(&self.stopped)
    }

    /// Waits until `until_us` (on the run's clock, µs since the start) or the stop; true when
    /// stopped.
    pub(crate) fn wait_until(&self, until_us: i64) -> bool {
        let mut stopped = lock(&self.stopped);
        loop {
            if *stopped {
                return true;
            }
            let left = until_us - (now_us() - self.origin_us);
            if left <= 0 {
                return false;
            }
            stopped = match self
                .wake
                .wait_timeout(stopped, Duration::from_micros(left as u64))
            {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Registers a statement that `Driver::finish` cancels if it is still running; the
    /// returned id unregisters it.
    pub(crate) fn track(&self, id: u64, token: CancelToken) {
        lock(&self.in_flight).push((id, token));
    }

    pub(crate) fn untrack(&self, id: u64) {
        lock(&self.in_flight).retain(|(i, _)| *i != id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The record entry of `p` starting at `at_s`.
pub(crate) fn entry(p: &Perturbation, at_s: f64) -> PerturbationRecord {
    PerturbationRecord::new(p.to_string(), p.kind.name(), p.kind.args(), at_s)
}

/// The note of a hold the run's end cut short.
pub(crate) fn early(stopped: bool) -> &'static str {
    if stopped {
        "; released early: the run ended"
    } else {
        ""
    }
}

/// The run's open-loop rate, transactions per second (0: closed loop).
pub(crate) fn run_rate(cfg: &RunConfig) -> f64 {
    cfg.groups
        .iter()
        .filter_map(|g| g.rate.filter(|r| *r > 0.0 && g.clients > 0))
        .sum()
}
