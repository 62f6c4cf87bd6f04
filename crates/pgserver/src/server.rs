//! A running PostgreSQL server we started, and the one place that knows the start sequence:
//! find binaries, create the directory, arm the guardian, initdb (with a generated password,
//! [`crate::secret`]), write settings and `pg_hba.conf`, spawn, wait until ready, retry on a
//! port race, write the password file for that port. [`Server::stop`] is idempotent and callable from any
//! thread (a Ctrl-C handler included); dropping a `Server` stops it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::account::RunAs;
use crate::binaries::{self, BinOptions, PgBinaries};
use crate::cluster;
use crate::config::{self, AuthMethod, ClusterOptions, TlsMode};
use crate::conninfo::ConnInfo;
use crate::error::{Error, Result};
use crate::guardian::{Guarded, Guardian};
use crate::paths;
use crate::ports;
use crate::process::{self, StopMode};
use crate::secret;

/// Options for a throwaway server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Which binaries.
    pub bins: BinOptions,
    /// How the cluster is created and configured.
    pub cluster: ClusterOptions,
    /// How long to wait for the server to accept connections.
    pub start_timeout: Duration,
    /// Parent of the `hb-XXXXXX` directory; default [`paths::temp_root`].
    pub temp_root: Option<PathBuf>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            bins: BinOptions::default(),
            cluster: ClusterOptions::default(),
            start_timeout: Duration::from_secs(60),
            temp_root: None,
        }
    }
}

/// A running server. Temporary ones live in `hb-XXXXXX` under the temp dir and vanish on stop,
/// on drop, and (through the guardian) when the process dies.
#[derive(Debug)]
pub struct Server {
    conn: ConnInfo,
    bins: PgBinaries,
    base_dir: PathBuf,
    data_dir: PathBuf,
    log_file: PathBuf,
    pid: u32,
    fast: bool,
    temporary: bool,
    inner: Mutex<Guarded>,
}

/// Parts of a started postmaster, shared with the default-server lifecycle.
pub(crate) struct Launched {
    pub child: Child,
    pub port: u16,
}

/// Write settings, spawn, wait for ready; on a port race with an automatic port, try again.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    socket_dir: &Path,
    log: &Path,
    opts: &ClusterOptions,
    timeout: Duration,
    detached: bool,
    guardian: Option<&mut Guardian>,
) -> Result<Launched> {
    let mut guardian = guardian;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let port = match opts.port {
            Some(p) => {
                if ports::in_use(p) {
                    return Err(Error::PortInUse { port: p });
                }
                p
            }
            None => ports::free_port().map_err(|e| Error::Io {
                what: "cannot find a free TCP port".into(),
                source: e,
            })?,
        };
        let rt = config::Runtime {
            port,
            socket_dir,
            bins,
        };
        cluster::write_settings(user, data, &config::render_settings(opts, &rt))?;
        // Rewritten at each start too: a cluster made by an older hotbench trusted TCP.
        cluster::write_hba(user, data, opts)?;
        let from = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
        let mut child = process::spawn(bins, user, data, log, detached)?;
        if let Some(g) = guardian.as_deref_mut() {
            g.watch(child.id());
        }
        match process::wait_ready(&mut child, data, log, from, port, bins.major, timeout) {
            Ok(()) => return Ok(Launched { child, port }),
            Err(e) => {
                process::stop(child.id(), StopMode::Immediate, Duration::from_secs(5));
                let _ = child.wait();
                if let Some(g) = guardian.as_deref_mut() {
                    g.unwatch(child.id());
                }
                if matches!(e, Error::PortInUse { .. }) && opts.port.is_none() && attempts < 5 {
                    continue;
                }
                return Err(e);
            }
        }
    }
}

impl Server {
    /// Start a throwaway server: temp dir, initdb, start, wait ready.
    pub fn start(opts: &ServerOptions) -> Result<Server> {
        let user = RunAs::get()?;
        let bins = binaries::find(&opts.bins)?;
        let mut root = opts.temp_root.clone().unwrap_or_else(paths::temp_root);
        if !paths::socket_dir_fits(&root.join("hb-XXXXXX/s")) {
            // The socket lives inside the directory: keep its path under the 107-byte limit.
            root = PathBuf::from("/tmp");
        }
        cluster::check_space(&root)?;
        let base = make_temp_dir(&root)?;
        // Armed before anything else exists: whatever happens next, the directory goes away.
        let mut guardian = match Guardian::spawn(Some(&base), false) {
            Ok(g) => g,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&base);
                return Err(e);
            }
        };
        // Lets a later sweep ([`sweep_abandoned`]) recognise our directories and their guardian.
        let _ = std::fs::write(base.join(GUARDIAN_PID), format!("{}\n", guardian.pid()));
        match Self::start_in(&base, &bins, user, opts, &mut guardian) {
            Ok((child, conn)) => {
                let pid = child.id();
                Ok(Server {
                    conn,
                    bins,
                    data_dir: base.join("data"),
                    log_file: base.join("postgres.log"),
                    base_dir: base,
                    pid,
                    fast: opts.cluster.fast,
                    temporary: true,
                    inner: Mutex::new(Guarded::new(child, guardian)),
                })
            }
            Err(e) => {
                guardian.finish();
                Err(e)
            }
        }
    }

    fn start_in(
        base: &Path,
        bins: &PgBinaries,
        user: &RunAs,
        opts: &ServerOptions,
        guardian: &mut Guardian,
    ) -> Result<(Child, ConnInfo)> {
        paths::set_mode(base, 0o755)?;
        user.chown(base)?;
        let socket_dir = base.join("s");
        paths::create_private_dir(&socket_dir, user)?;
        let data = base.join("data");
        let log = base.join("postgres.log");
        let mut co = opts.cluster.clone();
        if co.auth == AuthMethod::Private && co.password.is_none() {
            co.password = Some(secret::generate()?);
        }
        cluster::init(bins, user, &data, &co, &log)?;
        let l = launch(
            bins,
            user,
            &data,
            &socket_dir,
            &log,
            &co,
            opts.start_timeout,
            false,
            Some(guardian),
        )?;
        let password = co.effective_password();
        let passfile = match &password {
            Some(pw) => {
                let path = base.join(secret::PASSFILE);
                let text = secret::render(&co.user, pw, &socket_dir, Some(l.port));
                secret::write(&path, &text)?;
                Some(path)
            }
            None => None,
        };
        let conn = ConnInfo {
            socket_dir,
            tcp_host: "127.0.0.1".into(),
            port: l.port,
            user: co.user.clone(),
            dbname: "postgres".into(),
            password,
            ssl_root_cert: (co.tls != TlsMode::Off).then(|| data.join("server.crt")),
            passfile,
        };
        Ok((l.child, conn))
    }

    /// Connection parameters.
    pub fn conninfo(&self) -> &ConnInfo {
        &self.conn
    }

    /// `postgresql://postgres:PASSWORD@127.0.0.1:PORT/postgres` (for clients; never print it:
    /// [`ConnInfo::display_url`] is the one to show).
    pub fn url(&self) -> String {
        self.conn.url()
    }

    /// Unix socket directory (libpq `host`).
    pub fn host(&self) -> &Path {
        &self.conn.socket_dir
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.conn.port
    }

    /// Superuser name.
    pub fn user(&self) -> &str {
        &self.conn.user
    }

    /// Database name ("postgres").
    pub fn dbname(&self) -> &str {
        &self.conn.dbname
    }

    /// Binaries in use.
    pub fn binaries(&self) -> &PgBinaries {
        &self.bins
    }

    /// Data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Directory holding data, socket and log (removed on stop for temporary servers).
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// Server log file.
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// Postmaster pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Was the server started with fsync/synchronous_commit/full_page_writes off?
    pub fn is_fast(&self) -> bool {
        self.fast
    }

    /// Last `n` lines of the server log.
    pub fn log_tail(&self, n: usize) -> String {
        process::log_tail(&self.log_file, 0, n)
    }

    /// Run SQL with `psql` (from the server's bin dir, else PATH) as the superuser over the
    /// socket; returns unaligned, tuples-only output. For test fixtures.
    pub fn psql(&self, sql: &str) -> Result<String> {
        psql(&self.bins, &self.conn, sql)
    }

    /// Create database `name` and return its connection parameters.
    pub fn create_database(&self, name: &str) -> Result<ConnInfo> {
        self.psql(&format!(
            "CREATE DATABASE \"{}\"",
            name.replace('"', "\"\"")
        ))?;
        Ok(self.conn.with_dbname(name))
    }

    /// Stop the server (immediate shutdown) and remove its directory. Idempotent, thread-safe.
    pub fn stop(&self) {
        let mode = if self.temporary {
            StopMode::Immediate
        } else {
            StopMode::Fast
        };
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.stop(|pid| process::stop(pid, mode, Duration::from_secs(30)));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Run `sql` through psql against `conn`.
pub fn psql(bins: &PgBinaries, conn: &ConnInfo, sql: &str) -> Result<String> {
    let local = bins.program("psql");
    let program = if local.is_file() {
        local
    } else {
        PathBuf::from("psql")
    };
    let mut cmd = Command::new(&program);
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]);
    cmd.envs(conn.env()).stdin(Stdio::null());
    let out = cmd
        .output()
        .map_err(|e| Error::io("cannot run psql", &program, e))?;
    if !out.status.success() {
        return Err(Error::Command {
            what: format!("psql -c {sql:?}"),
            log: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// File in a throwaway server's directory naming its guardian's pid.
pub const GUARDIAN_PID: &str = "guardian.pid";

/// Remove throwaway clusters under `root` whose guardian is gone (it was killed together with
/// its owner, or the machine went down mid-run): stop their postmaster, delete the directory.
/// Only directories named `hb-*` holding a [`GUARDIAN_PID`] file are touched. Returns them.
pub fn sweep_abandoned(root: &Path) -> Vec<PathBuf> {
    let mut swept = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return swept;
    };
    for e in entries.flatten() {
        let dir = e.path();
        let named = e
            .file_name()
            .to_str()
            .map(|n| n.starts_with("hb-"))
            .unwrap_or(false);
        let Ok(text) = std::fs::read_to_string(dir.join(GUARDIAN_PID)) else {
            continue;
        };
        let Ok(guardian) = text.trim().parse::<u32>() else {
            continue;
        };
        if !named || process::alive(guardian) {
            continue;
        }
        let data = dir.join("data");
        if let Some(pf) = process::read_pid_file(&data) {
            if process::is_postmaster_of(pf.pid, &data) {
                process::stop(pf.pid, StopMode::Immediate, Duration::from_secs(5));
            }
        }
        for pid in process::processes_in(&dir) {
            process::stop(pid, StopMode::Immediate, Duration::from_secs(1));
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            swept.push(dir);
        }
    }
    swept
}

pub(crate) fn make_temp_dir(root: &Path) -> Result<PathBuf> {
    let mut template = root.join("hb-XXXXXX").into_os_string().into_encoded_bytes();
    template.push(0);
    // SAFETY: template is a writable NUL-terminated buffer ending in XXXXXX, as mkdtemp wants.
    let p = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(Error::io(
            "cannot create temporary directory",
            root,
            std::io::Error::last_os_error(),
        ));
    }
    template.pop();
    // SAFETY: mkdtemp only replaced the X's with ASCII characters.
    let s = unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(template) };
    Ok(PathBuf::from(s))
}
