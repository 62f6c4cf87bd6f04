//! The guard a command holds while it uses the default server, and its thread-safe stopper.

use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::layout::{
    conninfo_of, reconcile, remove_file, users_exclusive, users_shared, Layout, Lock, KEPT,
    LAST_USER,
};
use super::startup::{initdb_if_needed, prepare, running_default, start};
use super::{say, DefaultOptions};
use crate::conninfo::ConnInfo;
use crate::error::Result;
use crate::guardian::Guardian;
use crate::process::{self, StopMode};
use crate::state::State;

#[derive(Debug)]
pub(super) struct GuardInner {
    pub(super) conn: ConnInfo,
    pub(super) layout: Layout,
    pub(super) state: State,
    /// The postmaster's pid now (`state.pid` until a restart, [`super::Control::restart`]).
    pub(super) pid: AtomicU32,
    owned: bool,
    /// Another command was using the server when this one joined.
    shared: bool,
    /// When this command took the server.
    since: std::time::SystemTime,
    /// Our shared lock on `<base>/users` while we use the server.
    pub(super) user_lock: Mutex<Option<std::fs::File>>,
    /// Postmaster child and guardian, when this guard started the server.
    pub(super) live: Mutex<Option<(Child, Guardian)>>,
}

pub(super) fn lock_ignoring_poison<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl GuardInner {
    fn stop(&self) {
        let mut live = lock_ignoring_poison(&self.live);
        let mut user_lock = lock_ignoring_poison(&self.user_lock);
        let Some(users) = user_lock.take() else {
            return; // already stopped
        };
        let _lock = Lock::take(&self.layout.base);
        drop(users);
        let pid = self.pid.load(Ordering::SeqCst);
        let state = State::load(&self.layout.state).filter(|s| s.pid == pid);
        match live.take() {
            Some((mut child, mut guardian)) => {
                let pid = child.id();
                match state {
                    // `hotbench server start` adopted it meanwhile: leave it running.
                    Some(s) if s.owner == KEPT => {}
                    // Another command still uses it: the last one to leave stops it.
                    Some(mut s) if users_exclusive(&self.layout.base).is_none() => {
                        s.owner = LAST_USER;
                        s.guardian = 0;
                        let _ = s.save(&self.layout.state);
                    }
                    _ => {
                        process::stop(pid, StopMode::Fast, Duration::from_secs(60));
                        let _ = child.wait();
                        let _ = remove_file(&self.layout.state);
                    }
                }
                guardian.unwatch(pid);
                guardian.finish();
            }
            None => {
                // A borrowed server: stop it only if its starter has left and we are the last user.
                if let Some(s) = state.filter(|s| s.owner == LAST_USER) {
                    if let Some(_excl) = users_exclusive(&self.layout.base) {
                        process::stop(s.pid, StopMode::Fast, Duration::from_secs(60));
                        let _ = remove_file(&self.layout.state);
                    }
                }
            }
        }
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

/// The warning a command prints when it joins a default server another command is using.
pub fn shared_warning(pid: u32) -> String {
    format!(
        "warning: another hotbench command is using the default server (pid {pid}) right now: \
         both share its CPU and disk, so neither measures the server alone"
    )
}

/// Say which of this command's options a server that is already running does not follow.
pub(super) fn note_differences(state: &State, opts: &DefaultOptions) {
    if opts.fast != state.fast {
        let (want, has) = if opts.fast {
            ("--fast", "on")
        } else {
            ("durability", "off (--fast)")
        };
        say(
            opts,
            &format!(
                "the running server (pid {}) has fsync {has}; {want} not applied until it restarts",
                state.pid
            ),
        );
    }
    if let Some(p) = opts.port.filter(|p| *p != state.port) {
        say(
            opts,
            &format!("the running server listens on port {}, not {p}", state.port),
        );
    }
    if !opts.settings.is_empty() {
        say(
            opts,
            "the server is already running: extra settings are not applied",
        );
    }
}

impl DefaultGuard {
    /// A guard on a server someone else started (stops it only as its last user after the
    /// starter has left). Called with the base lock held.
    fn borrowed(layout: Layout, state: State, opts: &DefaultOptions) -> Result<DefaultGuard> {
        // Someone else registered as a user: two benchmarks on one server halve each other
        // without a word otherwise.
        let shared = users_exclusive(&layout.base).is_none();
        let users = users_shared(&layout.base)?;
        if shared {
            say(opts, &shared_warning(state.pid));
            // Tell the command already using it (it reads the time at its end); never written
            // through anything but a regular file.
            let regular_or_absent = std::fs::symlink_metadata(&layout.last_join)
                .map(|m| m.file_type().is_file())
                .unwrap_or(true);
            if regular_or_absent {
                let _ = std::fs::write(&layout.last_join, std::process::id().to_string());
            }
        }
        note_differences(&state, opts);
        let conn = conninfo_of(&layout, &state);
        Ok(DefaultGuard {
            inner: Arc::new(GuardInner {
                conn,
                layout,
                pid: AtomicU32::new(state.pid),
                state,
                owned: false,
                shared,
                since: std::time::SystemTime::now(),
                user_lock: Mutex::new(Some(users)),
                live: Mutex::new(None),
            }),
        })
    }

    /// Connection parameters.
    pub fn conninfo(&self) -> &ConnInfo {
        &self.inner.conn
    }

    /// `postgresql://postgres@127.0.0.1:PORT/postgres?passfile=PATH`: the URL to show (the
    /// password stays in the file; [`DefaultGuard::conninfo`] has it for clients).
    pub fn url(&self) -> String {
        self.inner.conn.display_url()
    }

    /// Did this guard start the server (so it stops it)?
    pub fn started_here(&self) -> bool {
        self.inner.owned
    }

    /// Was another hotbench command using the server when this one joined? (Its results and
    /// this one's share the server's CPU and disk.)
    pub fn shared_with_another(&self) -> bool {
        self.inner.shared
    }

    /// Did another command join the server while this one used it? (A command that joined
    /// a shared server was warned at once: false for it.)
    pub fn joined_by_another(&self) -> bool {
        !self.inner.shared && self.joined_since(self.inner.since)
    }

    /// Did another command join the server after `since`?
    pub fn joined_since(&self, since: std::time::SystemTime) -> bool {
        std::fs::symlink_metadata(&self.inner.layout.last_join)
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| m.modified().ok())
            // File times come from the kernel's coarse clock, a tick behind `since`'s.
            .is_some_and(|t| t + Duration::from_millis(50) >= since)
    }

    /// Was the running server started with durability off (`--fast`)? Reports must say so.
    pub fn is_fast(&self) -> bool {
        self.inner.state.fast
    }

    /// Server version ("15.10"; empty if the server was started outside hotbench).
    pub fn version(&self) -> &str {
        &self.inner.state.version
    }

    /// Postmaster pid (the new one after a restart).
    pub fn pid(&self) -> u32 {
        self.inner.pid.load(Ordering::SeqCst)
    }

    /// Data directory.
    pub fn data_dir(&self) -> &Path {
        &self.inner.layout.data
    }

    /// Handle for a signal handler.
    pub fn stopper(&self) -> Stopper {
        Stopper(Arc::clone(&self.inner))
    }

    /// Handle for the perturbations that restart or pause the server.
    pub fn control(&self) -> super::Control {
        super::Control::new(Arc::clone(&self.inner))
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
/// println!("{}", guard.url()); // never the password: it names the password file
/// drop(guard); // stops it if this command started it
/// # Ok(()) }
/// ```
pub fn ensure_default_server(opts: &DefaultOptions) -> Result<DefaultGuard> {
    crate::limits::raise_nofile_limit().ok();
    let mut cleaned = Vec::new();
    if let Some(l) = running_default(opts) {
        let _lock = Lock::take(&l.base)?;
        if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
            return DefaultGuard::borrowed(l, st, opts);
        }
    }
    let (l, bins, user) = prepare(opts)?;
    let _lock = Lock::take(&l.base)?;
    if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
        return DefaultGuard::borrowed(l, st, opts);
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
    let conn = conninfo_of(&l, &st);
    let users = match users_shared(&l.base) {
        Ok(u) => u,
        Err(e) => {
            process::stop(child.id(), StopMode::Fast, Duration::from_secs(60));
            let _ = remove_file(&l.state);
            guardian.finish();
            return Err(e);
        }
    };
    Ok(DefaultGuard {
        inner: Arc::new(GuardInner {
            conn,
            layout: l,
            pid: AtomicU32::new(st.pid),
            state: st,
            owned: true,
            shared: false,
            since: std::time::SystemTime::now(),
            user_lock: Mutex::new(Some(users)),
            live: Mutex::new(Some((child, guardian))),
        }),
    })
}
