//! The default embedded server behind commands given no database, and `hotbench server …`.
//!
//! One persistent cluster per major version in `<data home>/pg<major>` (`data/`, `run/` socket
//! directory, `postgres.log`, `hotbench.state`), created on first use. A command calls
//! [`ensure_default_server`] and holds the [`DefaultGuard`]: if the guard started the server it
//! stops it when dropped (or when [`Stopper::stop`] is called from a Ctrl-C handler, or, if
//! the process dies, through its guardian). `hotbench server start` ([`server_start`]) leaves
//! one running until [`server_stop`]. Every entry point first reconciles the state file with
//! reality: an orphan postmaster whose owning command is gone is reported and stopped, a stale
//! state file or `postmaster.pid` is reported and removed. A `flock` on `<base>/lock`
//! serialises concurrent commands.

use std::fmt;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::account::RunAs;
use crate::binaries::{self, BinOptions, PgBinaries};
use crate::cluster;
use crate::config::ClusterOptions;
use crate::conninfo::ConnInfo;
use crate::error::{Error, Result};
use crate::guardian::Guardian;
use crate::paths;
use crate::ports;
use crate::process::{self, StopMode};
use crate::server;
use crate::state::State;

/// Options of the default server (plain values, filled by the CLI from its flags).
#[derive(Debug, Clone, Default)]
pub struct DefaultOptions {
    /// `--pg-bin` / `--pg-version`.
    pub bins: BinOptions,
    /// `--dir D`: base directory instead of `<data home>/pg<major>`.
    pub dir: Option<PathBuf>,
    /// `--fast`: fsync, synchronous_commit and full_page_writes off for this start.
    pub fast: bool,
    /// TCP port (error if taken); default: the last one used, else a free one.
    pub port: Option<u16>,
    /// Extra settings for this start.
    pub settings: Vec<(String, String)>,
    /// Don't print progress lines to stderr.
    pub quiet: bool,
}

fn say(opts: &DefaultOptions, msg: &str) {
    if !opts.quiet {
        eprintln!("hotbench: {msg}");
    }
}

/// Where one default cluster lives.
#[derive(Debug, Clone)]
struct Layout {
    base: PathBuf,
    data: PathBuf,
    log: PathBuf,
    state: PathBuf,
    last_port: PathBuf,
}

impl Layout {
    fn new(base: PathBuf) -> Layout {
        Layout {
            data: base.join("data"),
            log: base.join("postgres.log"),
            state: base.join("hotbench.state"),
            last_port: base.join("last-port"),
            base,
        }
    }

    fn initialized(&self) -> bool {
        self.data.join("PG_VERSION").is_file()
    }

    fn data_major(&self) -> Option<u32> {
        std::fs::read_to_string(self.data.join("PG_VERSION"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn socket_dir(&self, user: &RunAs) -> PathBuf {
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
struct Lock {
    _file: std::fs::File,
}

impl Lock {
    fn take(base: &Path) -> Result<Lock> {
        let p = base.join("lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(|e| Error::io("cannot open lock file", &p, e))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(Error::io(
                "cannot lock",
                &p,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Lock { _file: f })
    }
}

fn default_base(major: u32) -> Result<PathBuf> {
    Ok(paths::data_home()?.join(format!("pg{major}")))
}

/// Base directories of default clusters that exist under the data home.
fn existing_bases() -> Vec<PathBuf> {
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

fn running_in(base: &Path) -> bool {
    let l = Layout::new(base.to_path_buf());
    State::load(&l.state)
        .map(|s| process::is_postmaster_of(s.pid, &l.data))
        .unwrap_or(false)
        || process::read_pid_file(&l.data)
            .map(|p| process::is_postmaster_of(p.pid, &l.data))
            .unwrap_or(false)
}

/// Base directory for commands that don't need binaries (status, stop, url, reset): `--dir`,
/// else `--pg-version`, else a running default cluster, else the installed major's.
fn locate(opts: &DefaultOptions) -> Result<PathBuf> {
    if let Some(d) = &opts.dir {
        return Ok(d.clone());
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
fn reconcile(
    l: &Layout,
    opts: &DefaultOptions,
    cleaned: &mut Vec<String>,
) -> Result<Option<State>> {
    let mut note = |m: String| {
        say(opts, &m);
        cleaned.push(m);
    };
    if let Some(st) = State::load(&l.state) {
        if process::is_postmaster_of(st.pid, &l.data) {
            if st.owner != 0 && !process::alive(st.owner) {
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
            let who = if st.owner != 0 {
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
                owner: 0,
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

fn remove_file(p: &Path) -> Result<()> {
    match std::fs::remove_file(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("cannot remove", p, e)),
    }
}

fn conninfo_of(st: &State) -> ConnInfo {
    ConnInfo {
        socket_dir: st.socket_dir.clone(),
        tcp_host: "127.0.0.1".into(),
        port: st.port,
        user: crate::config::DEFAULT_USER.into(),
        dbname: "postgres".into(),
        password: None,
        ssl_root_cert: None,
    }
}

/// Prepare the base directory (owned by the run-as user) and pick binaries.
fn prepare(opts: &DefaultOptions) -> Result<(Layout, PgBinaries, &'static RunAs)> {
    let user = RunAs::get()?;
    let base = if opts.dir.is_none() && opts.bins.pg_version.is_none() && opts.bins.pg_bin.is_none()
    {
        existing_bases().into_iter().find(|b| running_in(b))
    } else {
        None
    };
    let (base, bins) = match base {
        Some(b) => {
            let bins = binaries::find(&opts.bins)?;
            (b, bins)
        }
        None => {
            let bins = binaries::find(&opts.bins)?;
            let base = match &opts.dir {
                Some(d) => d.clone(),
                None => default_base(bins.major)?,
            };
            (base, bins)
        }
    };
    if !user.can_traverse(&base) {
        return Err(Error::Invalid(format!(
            "{} is not reachable by user `{}` that PostgreSQL runs as; choose a directory outside a private home",
            base.display(),
            user.name
        )));
    }
    let fresh = !base.exists();
    paths::create_dir_all(&base)?;
    if fresh {
        paths::set_mode(&base, 0o755)?;
        user.chown(&base)?;
    }
    Ok((Layout::new(base), bins, user))
}

fn initdb_if_needed(
    l: &Layout,
    bins: &PgBinaries,
    user: &RunAs,
    opts: &DefaultOptions,
) -> Result<()> {
    if l.initialized() {
        if let Some(m) = l.data_major() {
            if m != bins.major {
                return Err(Error::State(format!(
                    "{} holds a PostgreSQL {m} cluster but the binaries found are {} ({}); pass --pg-version {m} or run `hotbench server reset`",
                    l.data.display(),
                    bins.version,
                    bins.bin_dir.display()
                )));
            }
        }
        return Ok(());
    }
    if l.data.exists() {
        // A half-made cluster from an interrupted initdb.
        std::fs::remove_dir_all(&l.data)
            .map_err(|e| Error::io("cannot remove incomplete cluster", &l.data, e))?;
    }
    say(
        opts,
        &format!(
            "creating the default PostgreSQL {} cluster in {} (first use)…",
            bins.version,
            l.data.display()
        ),
    );
    let t = Instant::now();
    let co = ClusterOptions {
        fast: false,
        ..ClusterOptions::default()
    };
    if let Err(e) = cluster::init(bins, user, &l.data, &co, &l.log) {
        let _ = std::fs::remove_dir_all(&l.data);
        return Err(e);
    }
    say(
        opts,
        &format!("cluster created in {:.1} s", t.elapsed().as_secs_f64()),
    );
    Ok(())
}

/// Start the postmaster of `l`; `guardian` present for command-scoped starts.
fn start(
    l: &Layout,
    bins: &PgBinaries,
    user: &RunAs,
    opts: &DefaultOptions,
    mut guardian: Option<&mut Guardian>,
    owner: u32,
) -> Result<(Child, State)> {
    let socket_dir = l.socket_dir(user);
    paths::create_dir_all(&socket_dir)?;
    user.chown(&socket_dir)?;
    let last: Option<u16> = std::fs::read_to_string(&l.last_port)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let port = opts.port.or(last.filter(|p| !ports::in_use(*p)));
    let co = ClusterOptions {
        fast: opts.fast,
        port,
        settings: opts.settings.clone(),
        ..ClusterOptions::default()
    };
    let detached = guardian.is_none();
    let gpid = guardian.as_ref().map(|g| g.pid()).unwrap_or(0);
    let t = Instant::now();
    let launched = match server::launch(
        bins,
        user,
        &l.data,
        &socket_dir,
        &l.log,
        &co,
        Duration::from_secs(120),
        detached,
        guardian.as_deref_mut(),
    ) {
        Err(Error::PortInUse { .. }) if opts.port.is_none() && port.is_some() => {
            let co = ClusterOptions { port: None, ..co };
            server::launch(
                bins,
                user,
                &l.data,
                &socket_dir,
                &l.log,
                &co,
                Duration::from_secs(120),
                detached,
                guardian,
            )?
        }
        r => r?,
    };
    let _ = std::fs::write(&l.last_port, launched.port.to_string());
    let st = State {
        pid: launched.child.id(),
        owner,
        guardian: gpid,
        port: launched.port,
        socket_dir,
        bin_dir: bins.bin_dir.clone(),
        version: bins.version.clone(),
        fast: opts.fast,
    };
    st.save(&l.state)?;
    say(
        opts,
        &format!(
            "started PostgreSQL {} (pid {}) in {:.1} s",
            bins.version,
            st.pid,
            t.elapsed().as_secs_f64()
        ),
    );
    Ok((launched.child, st))
}

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
    let (l, bins, user) = prepare(opts)?;
    let _lock = Lock::take(&l.base)?;
    let mut cleaned = Vec::new();
    if let Some(st) = reconcile(&l, opts, &mut cleaned)? {
        let conn = conninfo_of(&st);
        return Ok(DefaultGuard {
            inner: Arc::new(GuardInner {
                conn,
                layout: l,
                state: st,
                owned: false,
                live: Mutex::new(None),
            }),
        });
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
    pub owner: Option<u32>,
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
                writeln!(f, "running: {v}pid {} at {}", r.pid, r.conn.url())?;
                writeln!(f, "socket: {}", r.conn.socket_dir.display())?;
                match r.owner {
                    Some(o) => writeln!(f, "started for hotbench pid {o} (stopped when it ends)")?,
                    None => writeln!(f, "kept running (hotbench server stop to stop it)")?,
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
            conn: conninfo_of(&s),
            version: s.version.clone(),
            fast: s.fast,
            owner: (s.owner != 0).then_some(s.owner),
        }),
        cleaned,
    }
}

/// `hotbench server start`: keep the default server running (adopting one started by a
/// command). Returns its status; print `status.running.conn.url()`.
pub fn server_start(opts: &DefaultOptions) -> Result<Status> {
    crate::limits::raise_nofile_limit().ok();
    let (l, bins, user) = prepare(opts)?;
    let _lock = Lock::take(&l.base)?;
    let mut cleaned = Vec::new();
    if let Some(mut st) = reconcile(&l, opts, &mut cleaned)? {
        if st.owner != 0 {
            st.owner = 0;
            st.save(&l.state)?;
        }
        say(opts, &format!("already running (pid {})", st.pid));
        return Ok(status_of(&l, Some(st), cleaned));
    }
    initdb_if_needed(&l, &bins, user, opts)?;
    let (_child, st) = start(&l, &bins, user, opts, None, 0)?;
    Ok(status_of(&l, Some(st), cleaned))
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

/// `hotbench server url`: the running server's URL, or an error saying how to start it.
pub fn server_url(opts: &DefaultOptions) -> Result<String> {
    match server_status(opts)?.running {
        Some(r) => Ok(r.conn.url()),
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

/// `hotbench server reset`: stop it and delete the cluster; the next use creates a new one.
pub fn server_reset(opts: &DefaultOptions) -> Result<()> {
    let l = Layout::new(locate(opts)?);
    if !l.base.exists() {
        return Ok(());
    }
    server_stop(opts)?;
    let _lock = Lock::take(&l.base)?;
    let user = RunAs::get()?;
    let sock = l.socket_dir(user);
    for p in [&l.data, &sock] {
        if p.exists() {
            std::fs::remove_dir_all(p).map_err(|e| Error::io("cannot remove", p, e))?;
        }
    }
    for p in [&l.log, &l.state, &l.last_port] {
        remove_file(p)?;
    }
    say(
        opts,
        &format!("removed the default cluster in {}", l.data.display()),
    );
    Ok(())
}
