//! The guard a command holds while it uses the default server, and its thread-safe stopper.

use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::layout::{conninfo_of, reconcile, remove_file, Layout, Lock};
use super::startup::{initdb_if_needed, prepare, running_default, start};
use super::DefaultOptions;
use crate::conninfo::ConnInfo;
use crate::error::Result;
use crate::guardian::Guardian;
use crate::process::{self, StopMode};
use crate::state::State;

#[derive(Debug)]
struct GuardInner {
    conn: ConnInfo,
    layout: Layout,
    state: State,
    owned: bool,
    live: Mutex<Option<(Child, Guardian)>>,
}

impl GuardInner {
    fn stop(&self) {
        let mut live = match self.live.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let Some((mut child, mut guardian)) = live.take() else {
            return;
        };
        let _lock = Lock::take(&self.layout.base);
        // `hotbench server start` may have adopted it meanwhile: then leave it running.
        let adopted = State::load(&self.layout.state)
            .map(|s| s.pid == child.id() && s.owner == 0)
            .unwrap_or(false);
        if !adopted {
            process::stop(child.id(), StopMode::Fast, Duration::from_secs(60));
            let _ = child.wait();
            if State::load(&self.layout.state)
                .map(|s| s.pid == child.id())
                .unwrap_or(false)
            {
                let _ = remove_file(&self.layout.state);
            }
        }
        guardian.unwatch(child.id());
        guardian.finish();
    }
}

/// The default server held by one command. Dropping it stops the server if this guard
/// started it (unless `hotbench server start` adopted it meanwhile).
#[derive(Debug)]
pub struct DefaultGuard {
    inner: Arc<GuardInner>,
}

/// A cloneable, thread-safe handle whose [`Stopper::stop`] stops the guarded server (for the
/// CLI's Ctrl-C handler). Idempotent; a no-op when the guard did not start the server.
#[derive(Debug, Clone)]
pub struct Stopper(Arc<GuardInner>);

impl Stopper {
    /// Stop the server if the guard started it. Safe to call more than once, from any thread.
    pub fn stop(&self) {
        self.0.stop();
    }
}

impl DefaultGuard {
    /// A guard on a server someone else started: never stops it.
    fn borrowed(layout: Layout, state: State) -> DefaultGuard {
        let conn = conninfo_of(&state);
        DefaultGuard {
            inner: Arc::new(GuardInner {
                conn,
                layout,
                state,
                owned: false,
                live: Mutex::new(None),
            }),
        }
    }

    /// Connection parameters.
    pub fn conninfo(&self) -> &ConnInfo {
        &self.inner.conn
    }

    /// `postgresql://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        self.inner.conn.url()
    }

    /// Did this guard start the server (so it stops it)?
    pub fn started_here(&self) -> bool {
        self.inner.owned
    }

    /// Was the running server started with durability off (`--fast`)? Reports must say so.
    pub fn is_fast(&self) -> bool {
        self.inner.state.fast
    }

    /// Server version ("15.10"; empty if the server was started outside hotbench).
    pub fn version(&self) -> &str {
        &self.inner.state.version
    }

    /// Postmaster pid.
    pub fn pid(&self) -> u32 {
        self.inner.state.pid
    }

    /// Data directory.
    pub fn data_dir(&self) -> &Path {
        &self.inner.layout.data
    }

    /// Handle for a signal handler.
    pub fn stopper(&self) -> Stopper {
        Stopper(Arc::clone(&self.inner))
    }

    /// Stop now (same as dropping).
    pub fn stop(&self) {
        self.inner.stop();
    }
}

impl Drop for DefaultGuard {
    fn drop(&mut self) {
        self.inner.stop();
    }
}

/// The default server for one command: reuse a running one, else (initdb on first use and)
/// start it for the duration of the returned guard.
///
/// ```no_run
/// # fn main() -> Result<(), hotbench_pgserver::Error> {
/// use hotbench_pgserver::default_server::{ensure_default_server, DefaultOptions};
/// let guard = ensure_default_server(&DefaultOptions::default())?;
/// let stopper = guard.stopper(); // give to the Ctrl-C handler: stopper.stop()
/// println!("{}", guard.conninfo().url());
/// drop(guard); // stops it if this command started it
/// # Ok(()) }
/// ```
pub fn ensure_default_server(opts: &DefaultOptions) -> Result<DefaultGuard> {
    crate::limits::raise_nofile_limit().ok();
    let mut cleaned = Vec::new();
    if let Some(l) = running_default(opts) {
        let _lock = Lock::take(&l.base)?;
        if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
            return Ok(DefaultGuard::borrowed(l, st));
        }
    }
    let (l, bins, user) = prepare(opts)?;
    let _lock = Lock::take(&l.base)?;
    if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
        return Ok(DefaultGuard::borrowed(l, st));
    }
    initdb_if_needed(&l, &bins, user, opts)?;
    let mut guardian = Guardian::spawn(None, true)?;
    let (child, st) = match start(
        &l,
        &bins,
        user,
        opts,
        Some(&mut guardian),
        std::process::id(),
    ) {
        Ok(x) => x,
        Err(e) => {
            guardian.finish();
            return Err(e);
        }
    };
    let conn = conninfo_of(&st);
    Ok(DefaultGuard {
        inner: Arc::new(GuardInner {
            conn,
            layout: l,
            state: st,
            owned: true,
            live: Mutex::new(Some((child, guardian))),
        }),
    })
}
