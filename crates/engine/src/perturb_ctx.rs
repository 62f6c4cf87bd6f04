//! What a perturbation's firing threads share with the driver (`perturb.rs`) and use to
//! run (`perturb_sql.rs`): the stop flag and its wake-up, the statements in flight to
//! cancel, the run's clock and the connection options; and a firing's record entry.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use hotbench_results::PerturbationRecord;
use hotbench_settings::perturb::Perturbation;
use hotbench_wire::{CancelToken, Connector};

use crate::clock::now_us;

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
}

impl Ctx {
    pub(crate) fn new(
        origin_us: i64,
        connector: Connector,
        run_application_name: Option<String>,
    ) -> Ctx {
        Ctx {
            stopped: Mutex::new(false),
            wake: Condvar::new(),
            in_flight: Mutex::new(Vec::new()),
            origin_us,
            connector,
            run_application_name,
        }
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
