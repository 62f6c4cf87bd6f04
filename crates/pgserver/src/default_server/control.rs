//! What the `restart` and `pause` perturbations do to the default server
//! (docs/perturbations.md): restart it on the same data directory, port and socket (the
//! clients reconnect where they were), or stop its processes for a while ([`crate::pause`]).
//! Only for a command alone on the server: another command using it would have its own run
//! disturbed without a word, so both refuse while one does. The restart keeps what the
//! lifecycle relies on: it holds the base lock (no command joins meanwhile), rewrites the
//! state file with the new pid, and a postmaster this command started stays its child under
//! its guardian; one `hotbench server start` left running stays detached.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::guard::{lock_ignoring_poison, GuardInner};
use super::layout::{remove_file, users_exclusive, users_shared, Lock, KEPT, LAST_USER};
use crate::account::RunAs;
use crate::binaries::PgBinaries;
use crate::error::{Error, Result};
use crate::pause::{self, Paused};
use crate::process::{self, StopMode};
use crate::state::State;

/// How long a fast shutdown may take before it becomes an immediate one.
const STOP_GRACE: Duration = Duration::from_secs(60);
/// How long the server may take to be ready again (crash recovery included).
const START_LIMIT: Duration = Duration::from_secs(120);

/// A cloneable handle on the default server a command holds ([`super::DefaultGuard::control`]).
#[derive(Debug, Clone)]
pub struct Control(Arc<GuardInner>);

/// What a restart did.
#[derive(Debug, Clone, PartialEq)]
pub struct Restarted {
    pub old_pid: u32,
    pub new_pid: u32,
    /// From the stop signal until the old postmaster was gone.
    pub stop: Duration,
    /// From the new postmaster's start until it was ready.
    pub start: Duration,
}

impl Control {
    pub(super) fn new(inner: Arc<GuardInner>) -> Control {
        Control(inner)
    }

    /// The postmaster's pid now.
    pub fn pid(&self) -> u32 {
        self.0.pid.load(Ordering::SeqCst)
    }

    /// Stops the server (`mode`: fast or immediate shutdown) and starts it again on the same
    /// data directory and port, waiting until it is ready.
    pub fn restart(&self, mode: StopMode) -> Result<Restarted> {
        let inner = &self.0;
        // The same order as the guard's stop (live, users, then the base lock's file): a
        // Ctrl-C's stop during a restart waits for it rather than deadlocking.
        let mut live = lock_ignoring_poison(&inner.live);
        let _lock = Lock::take(&inner.layout.base)?;
        self.refuse_unless_alone()?;
        let old_pid = self.pid();
        let mut state = State::load(&inner.layout.state)
            .filter(|s| s.pid == old_pid)
            .ok_or_else(|| {
                Error::State(format!(
                    "the state file no longer names the server (pid {old_pid}) this command uses"
                ))
            })?;
        let bins = PgBinaries::from_dir(&state.bin_dir)?;
        let user = RunAs::get()?;
        // A server paused meanwhile would not act on the stop.
        pause::continue_group(old_pid);
        let t = Instant::now();
        let owned = match live.as_mut() {
            Some((child, guardian)) => {
                process::stop(child.id(), mode, STOP_GRACE);
                let _ = child.wait();
                guardian.unwatch(old_pid);
                true
            }
            None if matches!(state.owner, KEPT | LAST_USER) => {
                process::stop(old_pid, mode, STOP_GRACE);
                false
            }
            None => {
                return Err(Error::State(format!(
                    "the server (pid {old_pid}) belongs to another hotbench command (pid {})",
                    state.owner
                )))
            }
        };
        let stop = t.elapsed();
        let t = Instant::now();
        let from = std::fs::metadata(&inner.layout.log).map_or(0, |m| m.len());
        // Its settings (port, socket directory) are the ones the last start wrote.
        let mut child = process::spawn(&bins, user, &inner.layout.data, &inner.layout.log, !owned)?;
        if let Some((_, guardian)) = live.as_mut() {
            guardian.watch(child.id());
        }
        let ready = process::wait_ready(
            &mut child,
            &inner.layout.data,
            &inner.layout.log,
            from,
            state.port,
            bins.major,
            START_LIMIT,
        );
        if let Err(e) = ready {
            process::stop(child.id(), StopMode::Immediate, Duration::from_secs(5));
            let _ = child.wait();
            if let Some((_, mut guardian)) = live.take() {
                guardian.unwatch(child.id());
                guardian.finish();
            }
            let _ = remove_file(&inner.layout.state);
            return Err(e);
        }
        let new_pid = child.id();
        state.pid = new_pid;
        state.save(&inner.layout.state)?;
        inner.pid.store(new_pid, Ordering::SeqCst);
        if let Some((old, _)) = live.as_mut() {
            *old = child;
        }
        // A detached postmaster (kept by `server start`) is not waited for: it outlives us.
        Ok(Restarted {
            old_pid,
            new_pid,
            stop,
            start: t.elapsed(),
        })
    }

    /// Stops every process of the server but the postmaster (SIGSTOP); the returned
    /// [`Paused`] continues them, and its watchdog does after `deadline` at the latest or
    /// when this process dies.
    pub fn pause(&self, deadline: Duration) -> Result<Paused> {
        let _live = lock_ignoring_poison(&self.0.live);
        let _lock = Lock::take(&self.0.layout.base)?;
        self.refuse_unless_alone()?;
        pause::pause_children(self.pid(), deadline)
    }

    /// Refuses while another command uses the server (called under the base lock, so none
    /// joins meanwhile): our own shared lock on the users file is let go for a moment to see
    /// whether anybody else holds one.
    fn refuse_unless_alone(&self) -> Result<()> {
        let inner = &self.0;
        let mut mine = lock_ignoring_poison(&inner.user_lock);
        if mine.take().is_none() {
            return Err(Error::State(
                "this command no longer uses the embedded server".into(),
            ));
        }
        let alone = users_exclusive(&inner.layout.base).is_some();
        *mine = Some(users_shared(&inner.layout.base)?);
        if alone {
            Ok(())
        } else {
            Err(Error::State(
                "another hotbench command is using the embedded server: restarting or pausing it would disturb that run too"
                    .into(),
            ))
        }
    }
}
