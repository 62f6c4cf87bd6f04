//! A throwaway PgBouncer in front of a server, started beside the embedded PostgreSQL and
//! cleaned up the same way: an `hb-XXXXXX` directory (config, userlist, pid file, log) armed
//! with a [`Guardian`] before anything else exists, the program run as the unprivileged
//! account when we are root (PgBouncer refuses root, as PostgreSQL does), in its own process
//! group with its working directory in ours (so [`crate::server::sweep_abandoned`] and
//! [`crate::process::processes_in`] find it), on a free loopback port, retried on a port race.
//! It is ready when the socket listening on its port is its own (its pid holds it,
//! [`ports::listener`]): a process that took the port first answers too, and must never be
//! sent a client's password; it means a port race, and another port is tried.
//! [`PgBouncer::stop`] is idempotent and thread-safe; dropping the handle stops it; if we
//! die, the guardian sends it SIGTERM (its immediate shutdown) and removes the directory.

mod binary;
pub mod config;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use binary::{find as find_binary, keeps_prepared_statements, PgBouncerBinary};
pub use config::{Alias, PoolMode, Upstream};

use crate::account::RunAs;
use crate::error::{Error, Result};
use crate::guardian::{Guarded, Guardian};
use crate::{paths, ports, process};

/// The database name of PgBouncer's admin console (`SHOW POOLS`, `RELOAD`, …).
pub const ADMIN_DATABASE: &str = "pgbouncer";

/// Connections beyond the clients a pooler accepts (probes, admin console, scenario sessions).
const CLIENT_HEADROOM: u32 = 100;

/// How to start a PgBouncer.
#[derive(Debug, Clone)]
pub struct PgBouncerOptions {
    /// `--pgbouncer-bin`: the program or its directory; `None` searches PATH and /usr/sbin.
    pub bin: Option<PathBuf>,
    pub mode: PoolMode,
    /// Server connections per database/user pair (`default_pool_size`).
    pub pool_size: u32,
    /// Clients the run opens at most (the pooler accepts these plus some headroom).
    pub max_clients: u32,
    pub upstream: Upstream,
    /// Parent of the `hb-XXXXXX` directory; default [`paths::temp_root`].
    pub temp_root: Option<PathBuf>,
    /// How long to wait for it to accept connections.
    pub start_timeout: Duration,
    /// The port to try first (a free one after a race); `None`: a free one. For tests that
    /// hand it a port another process listens on.
    pub first_port: Option<u16>,
}

impl PgBouncerOptions {
    /// Transaction pooling, 20 server connections (PgBouncer's own default), 1,000 clients.
    pub fn new(upstream: Upstream) -> PgBouncerOptions {
        PgBouncerOptions {
            bin: None,
            mode: PoolMode::Transaction,
            pool_size: 20,
            max_clients: 1000,
            upstream,
            temp_root: None,
            start_timeout: Duration::from_secs(20),
            first_port: None,
        }
    }
}

/// A running PgBouncer we started.
#[derive(Debug)]
pub struct PgBouncer {
    binary: PgBouncerBinary,
    dir: PathBuf,
    port: u16,
    pid: u32,
    mode: PoolMode,
    pool_size: u32,
    max_client_conn: u32,
    upstream: Upstream,
    /// The clients' password was made here (see [`config::IniSettings::generated_password`]).
    generated_password: bool,
    user: &'static RunAs,
    aliases: Mutex<Vec<Alias>>,
    next_alias: Mutex<u32>,
    inner: Mutex<Guarded>,
}

impl PgBouncer {
    /// Finds the program, writes the configuration, starts it and waits until it accepts.
    pub fn start(opts: &PgBouncerOptions) -> Result<PgBouncer> {
        if opts.pool_size == 0 {
            return Err(Error::Invalid("the pool size must be at least 1".into()));
        }
        let binary = binary::find(opts.bin.as_deref())?;
        let user = RunAs::get()?;
        // Clients log in with the server's password (SCRAM); when the server wants none, with
        // one made for this PgBouncer (md5: see `IniSettings::generated_password`): trust on
        // its TCP port would let every local user in as the run's role.
        // [`PgBouncer::upstream`] has it for the clients.
        let mut upstream = opts.upstream.clone();
        let generated_password = upstream.password.is_none();
        if generated_password {
            upstream.password = Some(crate::secret::generate()?);
        }
        config::render_userlist(&upstream)?;
        // PgBouncer inherits our open-files limit: a thousand clients need more than 1,024.
        let _ = crate::limits::raise_nofile_limit();
        let root = opts.temp_root.clone().unwrap_or_else(paths::temp_root);
        let dir = crate::server::make_temp_dir(&root)?;
        // Armed first: whatever happens next, the directory (and the password in it) goes.
        let mut guardian = match Guardian::spawn(Some(&dir), false) {
            Ok(g) => g,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let _ = std::fs::write(
            dir.join(crate::server::GUARDIAN_PID),
            format!("{}\n", guardian.pid()),
        );
        let mut me = PgBouncer {
            binary,
            dir,
            port: 0,
            pid: 0,
            mode: opts.mode,
            pool_size: opts.pool_size,
            max_client_conn: opts.max_clients.saturating_add(CLIENT_HEADROOM),
            upstream,
            generated_password,
            user,
            aliases: Mutex::new(Vec::new()),
            next_alias: Mutex::new(0),
            inner: Mutex::new(Guarded::default()),
        };
        match me.launch(&mut guardian, opts.start_timeout, opts.first_port) {
            Ok(child) => {
                me.pid = child.id();
                *me.inner.get_mut().unwrap_or_else(|p| p.into_inner()) =
                    Guarded::new(child, guardian);
                Ok(me)
            }
            Err(e) => {
                guardian.finish();
                Err(e)
            }
        }
    }

    fn launch(
        &mut self,
        guardian: &mut Guardian,
        timeout: Duration,
        first_port: Option<u16>,
    ) -> Result<Child> {
        paths::set_mode(&self.dir, 0o700)?;
        self.user.chown(&self.dir)?;
        let users = self.dir.join("userlist.txt");
        self.write_private(&users, &config::render_userlist(&self.upstream)?)?;
        let log = self.log_file();
        let mut attempts = 0;
        loop {
            attempts += 1;
            self.port = match first_port.filter(|_| attempts == 1) {
                Some(p) => p,
                None => ports::free_port().map_err(|e| Error::Io {
                    what: "cannot find a free TCP port for PgBouncer".into(),
                    source: e,
                })?,
            };
            self.write_ini(&[])?;
            let from = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
            let mut child = self.spawn(&log)?;
            guardian.watch_with(child.id(), "TERM");
            match wait_ready(&mut child, self.port, &log, from, timeout) {
                Ok(()) => return Ok(child),
                Err(e) => {
                    process::terminate(child.id(), Duration::from_secs(2));
                    let _ = child.wait();
                    guardian.unwatch(child.id());
                    if matches!(e, Error::PortInUse { .. }) && attempts < 5 {
                        continue;
                    }
                    return Err(e);
                }
            }
        }
    }

    fn spawn(&self, log: &Path) -> Result<Child> {
        let out = process::log_handle(log)?;
        let err = out
            .try_clone()
            .map_err(|e| Error::io("cannot open log file", log, e))?;
        let mut cmd = Command::new(&self.binary.path);
        cmd.arg(self.ini_file())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        self.user.apply(&mut cmd);
        cmd.spawn()
            .map_err(|e| Error::io("cannot start pgbouncer", &self.binary.path, e))
    }

    /// Writes `text` to `path` readable only by the account PgBouncer runs as.
    fn write_private(&self, path: &Path, text: &str) -> Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let tmp = path.with_extension("tmp");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        drop(f);
        self.user.chown(&tmp)?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot write", path, e))
    }

    fn write_ini(&self, aliases: &[Alias]) -> Result<()> {
        let settings = config::IniSettings {
            upstream: &self.upstream,
            port: self.port,
            mode: self.mode,
            pool_size: self.pool_size,
            max_client_conn: self.max_client_conn,
            dir: &self.dir,
            generated_password: self.generated_password,
        };
        self.write_private(&self.ini_file(), &config::render_ini(&settings, aliases)?)
    }

    /// Makes a fresh database alias whose server connections run `settings` (`set_config`
    /// in its `connect_query`) and returns its name; the alias before it leaves the
    /// configuration, so its server connections (and any session state a variant leaked
    /// into them) go at the next `RELOAD`, which the caller sends on the admin console.
    pub fn replace_alias(&self, settings: &[(String, String)]) -> Result<String> {
        let query = config::connect_query(settings)?;
        let mut n = self.next_alias.lock().unwrap_or_else(|p| p.into_inner());
        *n += 1;
        let alias = Alias {
            name: format!("hotbench_{n}"),
            connect_query: query,
        };
        let mut aliases = self.aliases.lock().unwrap_or_else(|p| p.into_inner());
        self.write_ini(std::slice::from_ref(&alias))?;
        *aliases = vec![alias.clone()];
        Ok(alias.name)
    }

    /// The program and its version.
    pub fn binary(&self) -> &PgBouncerBinary {
        &self.binary
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn mode(&self) -> PoolMode {
        self.mode
    }

    pub fn pool_size(&self) -> u32 {
        self.pool_size
    }

    /// The server it pools for, with the password clients log in to PgBouncer with (the
    /// server's, or one generated for this PgBouncer when the server wants none).
    pub fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// Directory of its configuration and log (removed when it stops).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn ini_file(&self) -> PathBuf {
        self.dir.join("pgbouncer.ini")
    }

    /// Its log (stderr).
    pub fn log_file(&self) -> PathBuf {
        self.dir.join("pgbouncer.log")
    }

    /// Last `n` lines of its log.
    pub fn log_tail(&self, n: usize) -> String {
        process::log_tail(&self.log_file(), 0, n)
    }

    /// Is the process still there (it may have been killed under us)?
    pub fn is_running(&self) -> bool {
        process::alive(self.pid)
    }

    /// Stops it (SIGTERM, then SIGKILL) and removes its directory. Idempotent, thread-safe.
    pub fn stop(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.stop(|pid| process::terminate(pid, Duration::from_secs(5)));
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits until PgBouncer listens on `port` itself (the listening socket is its pid's: not
/// merely that something accepts there); a failed start is explained from its log, and
/// another process on the port is a port race ([`Error::PortInUse`]).
fn wait_ready(
    child: &mut Child,
    port: u16,
    log: &Path,
    from: u64,
    timeout: Duration,
) -> Result<()> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let tail = process::log_tail(log, from, 10);
            if tail.contains("Address already in use") {
                return Err(Error::PortInUse { port });
            }
            return Err(Error::Command {
                what: format!("pgbouncer exited at start ({status})"),
                log: tail,
            });
        }
        match ports::listener(child.id(), port) {
            Some(ports::Listener::Ours) => return Ok(()),
            Some(ports::Listener::Foreign) => return Err(Error::PortInUse { port }),
            Some(ports::Listener::Nobody) => {}
            None => {
                return Err(Error::Command {
                    what: format!(
                        "cannot tell whether PgBouncer (pid {}) or another process listens on \
                         port {port}: /proc/net/tcp or /proc/{}/fd is unreadable",
                        child.id(),
                        child.id()
                    ),
                    log: process::log_tail(log, from, 10),
                })
            }
        }
        if start.elapsed() > timeout {
            return Err(Error::Command {
                what: format!(
                    "pgbouncer did not accept connections within {} s",
                    timeout.as_secs()
                ),
                log: process::log_tail(log, from, 10),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
