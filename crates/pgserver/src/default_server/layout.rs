//! Where a default cluster lives (`<base>/data`, `run/`, `postgres.log`, `hotbench.state`),
//! which base a command means, the lock serialising commands, and reconciling the state file
//! with the processes actually running (orphans, stale files).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{say, DefaultOptions};
use crate::account::RunAs;
use crate::binaries::{self, BinOptions};
use crate::conninfo::ConnInfo;
use crate::error::{Error, Result};
use crate::lock_file::{self, LockMode};
use crate::paths;
use crate::process::{self, StopMode};
use crate::state::State;

/// Where one default cluster lives.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub(super) base: PathBuf,
    pub(super) data: PathBuf,
    pub(super) log: PathBuf,
    pub(super) state: PathBuf,
    pub(super) last_port: PathBuf,
    /// Touched when a command joins the server while another uses it (its mtime tells a
    /// running command that someone shared the server with it).
    pub(super) last_join: PathBuf,
    /// The superuser's generated password, a pgpass file ([`crate::secret`]).
    pub(super) passfile: PathBuf,
}

impl Layout {
    pub(super) fn new(base: PathBuf) -> Layout {
        Layout {
            data: base.join("data"),
            log: base.join("postgres.log"),
            state: base.join("hotbench.state"),
            last_port: base.join("last-port"),
            last_join: base.join("last-join"),
            passfile: base.join(crate::secret::PASSFILE),
            base,
        }
    }

    pub(super) fn initialized(&self) -> bool {
        self.data.join("PG_VERSION").is_file()
    }

    /// Whether hotbench made the cluster here (so it may stop, adopt or delete it): its
    /// marker, written when initdb completed, is a regular file; or the base is one of
    /// hotbench's own under its data home (clusters made before the marker existed).
    pub(super) fn ours(&self) -> bool {
        let marked = std::fs::symlink_metadata(self.base.join(MARKER)).is_ok_and(|m| m.is_file());
        marked || paths::data_home().is_ok_and(|h| self.base.parent() == Some(h.as_path()))
    }

    /// Refuses a base whose cluster hotbench did not make (`--dir` at someone's cluster):
    /// nothing of it is started, adopted, stopped or deleted.
    pub(super) fn refuse_foreign(&self) -> Result<()> {
        if !self.data.exists() || self.ours() {
            return Ok(());
        }
        Err(Error::State(format!(
            "{} is not a PostgreSQL cluster hotbench created (no {} marker in {}); \
             hotbench does not start, stop or delete it: choose another --dir (if an older \
             hotbench made it, create that marker file to claim it)",
            self.data.display(),
            MARKER,
            self.base.display()
        )))
    }

    pub(super) fn data_major(&self) -> Option<u32> {
        std::fs::read_to_string(self.data.join("PG_VERSION"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    pub(super) fn socket_dir(&self, user: &RunAs) -> PathBuf {
        let local = self.base.join("run");
        if paths::socket_dir_fits(&local) {
            return local;
        }
        let mut h: u64 = 0xcbf29ce484222325;
        for b in self.base.as_os_str().as_encoded_bytes() {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100000001b3);
        }
        PathBuf::from(format!("/tmp/hotbench-{}-{:08x}", user.uid, h as u32))
    }
}

/// Exclusive `flock` on `<base>/lock`, released on drop.
pub(super) struct Lock {
    _file: std::fs::File,
}

impl Lock {
    pub(super) fn take(base: &Path) -> Result<Lock> {
        Ok(Lock {
            _file: lock_file::lock(&base.join("lock"), LockMode::Exclusive)?,
        })
    }
}

pub(super) fn default_base(major: u32) -> Result<PathBuf> {
    Ok(paths::data_home()?.join(format!("pg{major}")))
}

/// Base directories of default clusters that exist under the data home.
pub(super) fn existing_bases() -> Vec<PathBuf> {
    let Ok(home) = paths::data_home() else {
        return Vec::new();
    };
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(&home)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e
                .file_name()
                .to_str()?
                .strip_prefix("pg")?
                .parse::<u32>()
                .ok()?;
            Some((n, e.path()))
        })
        .collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.0));
    v.into_iter().map(|x| x.1).collect()
}

pub(super) fn running_in(base: &Path) -> bool {
    let l = Layout::new(base.to_path_buf());
    State::load(&l.state)
        .map(|s| process::is_postmaster_of(s.pid, &l.data))
        .unwrap_or(false)
        || process::read_pid_file(&l.data)
            .map(|p| process::is_postmaster_of(p.pid, &l.data))
            .unwrap_or(false)
}

/// Written in the base when hotbench's initdb completed: what hotbench may stop or delete.
pub(super) const MARKER: &str = "hotbench.cluster";

/// `State::owner` of a server kept running by `hotbench server start`.
pub(super) const KEPT: u32 = 0;
/// `State::owner` of a server whose starting command ended while others still used it: the
/// last user to leave stops it (users hold a shared `flock` on `<base>/users`).
pub(super) const LAST_USER: u32 = u32::MAX;

/// Register as a user of the running server (shared lock held until the file is dropped).
pub(super) fn users_shared(base: &Path) -> Result<std::fs::File> {
    lock_file::lock(&base.join("users"), LockMode::Shared)
}

/// `Some` (holding an exclusive lock) when no command uses the server.
pub(super) fn users_exclusive(base: &Path) -> Option<std::fs::File> {
    lock_file::try_lock_exclusive(&base.join("users"))
}

/// Base directory for commands that don't need binaries (status, stop, url, reset): `--dir`,
/// else `--pg-version`, else a running default cluster, else the installed major's.
pub(super) fn locate(opts: &DefaultOptions) -> Result<PathBuf> {
    if let Some(d) = &opts.dir {
        return absolute(d);
    }
    if let Some(v) = opts.bins.pg_version {
        return default_base(v);
    }
    let bases = existing_bases();
    if let Some(b) = bases.iter().find(|b| running_in(b)) {
        return Ok(b.clone());
    }
    let no_dl = BinOptions {
        no_download: true,
        ..opts.bins.clone()
    };
    match binaries::find(&no_dl) {
        Ok(b) => default_base(b.major),
        Err(e) => bases.into_iter().next().ok_or(e),
    }
}

/// Bring the state file in line with reality; returns the state of a usable running server.
pub(super) fn reconcile(
    l: &Layout,
    opts: &DefaultOptions,
    cleaned: &mut Vec<String>,
) -> Result<Option<State>> {
    // Someone else's cluster: no state of ours, no pid file of ours.
    l.refuse_foreign()?;
    let mut note = |m: String| {
        say(opts, &m);
        cleaned.push(m);
    };
    if let Some(st) = State::load(&l.state) {
        if process::is_postmaster_of(st.pid, &l.data) {
            if st.owner == LAST_USER && users_exclusive(&l.base).is_some() {
                note(format!(
                    "found an orphan PostgreSQL (pid {}) whose hotbench commands have all ended; stopping it",
                    st.pid
                ));
                process::stop(st.pid, StopMode::Fast, Duration::from_secs(60));
                remove_file(&l.state)?;
            } else if st.owner != KEPT && st.owner != LAST_USER && !process::alive(st.owner) {
                note(format!(
                    "found an orphan PostgreSQL (pid {}) left by hotbench pid {} which no longer runs; stopping it",
                    st.pid, st.owner
                ));
                process::stop(st.pid, StopMode::Fast, Duration::from_secs(60));
                remove_file(&l.state)?;
            } else {
                return Ok(Some(st));
            }
        } else {
            let who = if st.owner != KEPT && st.owner != LAST_USER {
                format!(" started by hotbench pid {}", st.owner)
            } else {
                String::new()
            };
            note(format!(
                "cleaned stale state of a PostgreSQL (pid {}){who} that no longer runs",
                st.pid
            ));
            remove_file(&l.state)?;
        }
    } else if l.state.exists() {
        note("removed an unreadable state file".into());
        remove_file(&l.state)?;
    }
    if let Some(pf) = process::read_pid_file(&l.data) {
        if process::is_postmaster_of(pf.pid, &l.data) {
            // Running but not recorded (started by hand or the state file was lost): adopt it
            // as a kept-running server.
            let st = State {
                pid: pf.pid,
                owner: KEPT,
                guardian: 0,
                port: pf.port,
                socket_dir: pf.socket_dir.clone().unwrap_or_default(),
                bin_dir: PathBuf::new(),
                version: String::new(),
                fast: false,
            };
            st.save(&l.state)?;
            return Ok(Some(st));
        }
        note(format!(
            "removed a stale postmaster.pid (pid {} is not running)",
            pf.pid
        ));
        remove_file(&l.data.join("postmaster.pid"))?;
    }
    Ok(None)
}

pub(super) fn remove_file(p: &Path) -> Result<()> {
    match std::fs::remove_file(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("cannot remove", p, e)),
    }
}

/// How to reach the server `st` of `l`: the password from its password file (none for a
/// server started by an older hotbench, which trusts TCP until it restarts).
pub(super) fn conninfo_of(l: &Layout, st: &State) -> ConnInfo {
    let password = crate::secret::read(&l.passfile);
    ConnInfo {
        socket_dir: st.socket_dir.clone(),
        tcp_host: "127.0.0.1".into(),
        port: st.port,
        user: crate::config::DEFAULT_USER.into(),
        dbname: "postgres".into(),
        passfile: password.is_some().then(|| l.passfile.clone()),
        password,
        ssl_root_cert: None,
    }
}
pub(super) fn absolute(d: &std::path::Path) -> Result<PathBuf> {
    std::path::absolute(d).map_err(|e| Error::io("cannot resolve directory", d, e))
}
