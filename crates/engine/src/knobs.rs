//! Run settings a perturbation changes while the run goes: the emulated round trip
//! (`rtt=VALUE,DURATION`) and the open-loop rate (`rate=R,DURATION`). The perturbation thread
//! writes the new values into [`Knobs`] (atomics, with a generation count); each worker sees
//! the new generation on the next turn of its loop and hands the values to its core through
//! [`Core::set_rtt`] and [`Core::set_rate_factor`], which take the time of the change like
//! every other core input. A worker asleep until its next timer notices at that timer: a few
//! milliseconds under load, at most one `-R` gap of its clients.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use crate::client_core::Core;
use crate::env::Env;

/// The values a perturbation may change, shared by the perturbation driver and the workers.
#[derive(Debug)]
pub struct Knobs {
    generation: AtomicU64,
    rtt_us: AtomicI64,
    /// The factor on every group's `-R` rate, as `f64` bits.
    rate_factor: AtomicU64,
}

impl Knobs {
    /// The run's own values: `--rtt` and the rate as given.
    pub fn new(rtt_us: i64) -> Knobs {
        Knobs {
            generation: AtomicU64::new(0),
            rtt_us: AtomicI64::new(rtt_us),
            rate_factor: AtomicU64::new(1.0f64.to_bits()),
        }
    }

    pub fn set_rtt(&self, rtt_us: i64) {
        self.rtt_us.store(rtt_us, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    pub fn set_rate_factor(&self, factor: f64) {
        self.rate_factor.store(factor.to_bits(), Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Changes so far (a worker compares it with the last it applied: one load per turn).
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    pub fn rtt_us(&self) -> i64 {
        self.rtt_us.load(Ordering::SeqCst)
    }

    pub fn rate_factor(&self) -> f64 {
        f64::from_bits(self.rate_factor.load(Ordering::SeqCst))
    }
}

impl<E: Env> Core<E> {
    /// The emulated round trip is `rtt_us` for results that arrive from `now` on (a result
    /// already waiting out the old one keeps its wake time).
    pub fn set_rtt(&mut self, rtt_us: i64, now: i64) {
        let _ = now;
        self.rtt_us = rtt_us.max(0);
    }

    /// Every throttled group's rate is `factor` times its `-R` share from `now` on: the
    /// schedule's next starts are drawn with the new mean gap. When the rate goes up, a
    /// schedule drawn ahead of `now` at the old rate is brought back to `now`, so the burst
    /// starts when it is asked for (a schedule behind `now`, a backlog, stays: it is owed).
    pub fn set_rate_factor(&mut self, factor: f64, now: i64) {
        if !(factor.is_finite() && factor > 0.0) {
            return;
        }
        for g in 0..self.delay.len() {
            let Some(base) = self.base_delay[g] else {
                continue;
            };
            let new = base / factor;
            if self.delay[g].is_some_and(|old| new < old) && self.trigger[g] > now {
                self.trigger[g] = now;
            }
            self.delay[g] = Some(new);
        }
    }
}
