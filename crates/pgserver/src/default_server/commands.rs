//! `hotbench server start|status|url|stop|reset`.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::layout::{
    conninfo_of, locate, reconcile, remove_file, users_exclusive, Layout, Lock, KEPT, LAST_USER,
};
use super::startup::{initdb_if_needed, prepare, running_default, start};
use super::{say, DefaultOptions};
use crate::account::RunAs;
use crate::conninfo::ConnInfo;
use crate::error::{Error, Result};
use crate::process::{self, StopMode};
use crate::state::State;

/// Who stops a running default server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeper {
    /// Kept running by `hotbench server start` until `hotbench server stop`.
    Kept,
    /// Started for this hotbench command (pid); stopped when it ends.
    Command(u32),
    /// Its command ended while others used it; the last of them stops it.
    LastUser,
}

/// A running default server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Postmaster pid.
    pub pid: u32,
    /// How to connect.
    pub conn: ConnInfo,
    /// Version ("" if started outside hotbench).
    pub version: String,
    /// Durability off?
    pub fast: bool,
    /// The command that started it for itself; `None` when kept running by `server start`.
    pub keeper: Keeper,
}

/// What `hotbench server status` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// Base directory.
    pub base_dir: PathBuf,
    /// Data directory.
    pub data_dir: PathBuf,
    /// Does the cluster exist?
    pub initialized: bool,
    /// The server, when running.
    pub running: Option<Running>,
    /// Orphans or stale files cleaned on the way (already printed unless quiet).
    pub cleaned: Vec<String>,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.running {
            Some(r) => {
                let v = if r.version.is_empty() {
                    String::new()
                } else {
                    format!("PostgreSQL {} ", r.version)
                };
                // Never the password: the URL names the file that holds it.
                writeln!(f, "running: {v}pid {} at {}", r.pid, r.conn.display_url())?;
                writeln!(f, "socket: {}", r.conn.socket_dir.display())?;
                match r.keeper {
                    Keeper::Command(o) => {
                        writeln!(f, "started for hotbench pid {o} (stopped when it ends)")?
                    }
                    Keeper::LastUser => writeln!(
                        f,
                        "in use by hotbench commands (stopped when the last ends)"
                    )?,
                    Keeper::Kept => writeln!(f, "kept running (hotbench server stop to stop it)")?,
                }
                if r.fast {
                    writeln!(
                        f,
                        "durability: OFF (--fast: fsync, synchronous_commit, full_page_writes off)"
                    )?;
                }
            }
            None if self.initialized => writeln!(f, "stopped")?,
            None => writeln!(f, "not created yet (created on first use)")?,
        }
        write!(f, "data: {}", self.data_dir.display())
    }
}

fn status_of(l: &Layout, st: Option<State>, cleaned: Vec<String>) -> Status {
    Status {
        base_dir: l.base.clone(),
        data_dir: l.data.clone(),
        initialized: l.initialized(),
        running: st.map(|s| Running {
            pid: s.pid,
            conn: conninfo_of(l, &s),
            version: s.version.clone(),
            fast: s.fast,
            keeper: match s.owner {
                KEPT => Keeper::Kept,
                LAST_USER => Keeper::LastUser,
                pid => Keeper::Command(pid),
            },
        }),
        cleaned,
    }
}

/// `hotbench server start`: keep the default server running (adopting one started by a
/// command). Returns its status; print `status.running.conn.display_url()`.
pub fn server_start(opts: &DefaultOptions) -> Result<Status> {
    crate::limits::raise_nofile_limit().ok();
    let mut cleaned = Vec::new();
    if let Some(l) = running_default(opts) {
        let _lock = Lock::take(&l.base)?;
        if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
            return keep(&l, st, opts, cleaned);
        }
    }
    let (l, bins, user) = prepare(opts)?;
    let _lock = Lock::take(&l.base)?;
    if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
        return keep(&l, st, opts, cleaned);
    }
    initdb_if_needed(&l, &bins, user, opts)?;
    let (_child, st) = start(&l, &bins, user, opts, None, 0)?;
    Ok(status_of(&l, Some(st), cleaned))
}

/// Mark a running server as kept running (adopting it from the command that started it).
fn keep(l: &Layout, mut st: State, opts: &DefaultOptions, cleaned: Vec<String>) -> Result<Status> {
    if st.owner != KEPT {
        st.owner = KEPT;
        st.save(&l.state)?;
    }
    say(opts, &format!("already running (pid {})", st.pid));
    super::guard::note_differences(&st, opts);
    Ok(status_of(l, Some(st), cleaned))
}

/// `hotbench server status` (also cleans orphans and stale files, reporting them).
pub fn server_status(opts: &DefaultOptions) -> Result<Status> {
    let l = Layout::new(locate(opts)?);
    if !l.base.exists() {
        return Ok(status_of(&l, None, Vec::new()));
    }
    let _lock = Lock::take(&l.base)?;
    let mut cleaned = Vec::new();
    let st = reconcile(&l, opts, &mut cleaned)?;
    Ok(status_of(&l, st, cleaned))
}

/// `hotbench server url`: the running server's URL (naming its password file, never the
/// password: `psql "$(hotbench server url)"` reads it from there), or an error saying how to
/// start it.
pub fn server_url(opts: &DefaultOptions) -> Result<String> {
    match server_status(opts)?.running {
        Some(r) => Ok(r.conn.display_url()),
        None => Err(Error::State(
            "the default server is not running; start it with `hotbench server start`".into(),
        )),
    }
}

/// `hotbench server stop`: fast shutdown; returns whether it was running.
pub fn server_stop(opts: &DefaultOptions) -> Result<bool> {
    let l = Layout::new(locate(opts)?);
    if !l.base.exists() {
        return Ok(false);
    }
    let _lock = Lock::take(&l.base)?;
    let mut cleaned = Vec::new();
    let Some(st) = reconcile(&l, opts, &mut cleaned)? else {
        return Ok(false);
    };
    refuse_while_used(&l, opts)?;
    process::stop(st.pid, StopMode::Fast, Duration::from_secs(60));
    if process::is_postmaster_of(st.pid, &l.data) {
        return Err(Error::State(format!(
            "PostgreSQL pid {} did not stop",
            st.pid
        )));
    }
    remove_file(&l.state)?;
    say(opts, &format!("stopped PostgreSQL (pid {})", st.pid));
    Ok(true)
}

/// A run or ladder registered as a user (a shared lock on `<base>/users`) would lose its
/// server, or its data directory, mid-measurement: refused unless `--force`. Called with
/// the base lock held, so no command can register between the check and the stop.
fn refuse_while_used(l: &Layout, opts: &DefaultOptions) -> Result<()> {
    if opts.force || users_exclusive(&l.base).is_some() {
        return Ok(());
    }
    Err(Error::State(
        "the default server is in use by a running hotbench command; wait for it to finish, \
         or add --force to stop it anyway"
            .into(),
    ))
}

/// `hotbench server reset`: stop it and delete the cluster; the next use creates a new one.
pub fn server_reset(opts: &DefaultOptions) -> Result<()> {
    let l = Layout::new(locate(opts)?);
    if !l.base.exists() {
        return Ok(());
    }
    // Only what hotbench's marker says it made: never a cluster, or files beside it, of
    // someone else's.
    l.refuse_foreign()?;
    if !l.ours() {
        // No cluster and no marker: nothing here is hotbench's to delete.
        return Ok(());
    }
    server_stop(opts)?;
    let _lock = Lock::take(&l.base)?;
    refuse_while_used(&l, opts)?;
    let user = RunAs::get()?;
    let sock = l.socket_dir(user);
    for p in [&l.data, &sock] {
        if p.exists() {
            std::fs::remove_dir_all(p).map_err(|e| Error::io("cannot remove", p, e))?;
        }
    }
    for p in [
        &l.log,
        &l.state,
        &l.last_port,
        &l.passfile,
        &l.base.join(super::layout::MARKER),
    ] {
        remove_file(p)?;
    }
    say(
        opts,
        &format!("removed the default cluster in {}", l.data.display()),
    );
    Ok(())
}
