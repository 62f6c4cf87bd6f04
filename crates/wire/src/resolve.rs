//! From what the user gave to what to connect to: libpq's environment variables,
//! defaults and `~/.pgpass`, applied with libpq's precedence (explicit option, then
//! `PG*` variable, then built-in default).
//!
//! The environment is passed in as an [`Environment`] value so every rule is testable
//! without touching the process environment.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{parse_int, ChannelBindingMode, Config, SslMode, TargetSessionAttrs};
use crate::error::ConfigError;
use crate::pgpass;

/// Socket directories tried when no host is given (Debian's, then PostgreSQL's default).
pub const DEFAULT_SOCKET_DIRS: [&str; 2] = ["/var/run/postgresql", "/tmp"];
/// The default port.
pub const DEFAULT_PORT: u16 = 5432;

/// The libpq environment variables read, with the keyword each one stands for.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("PGHOST", "host"),
    ("PGHOSTADDR", "hostaddr"),
    ("PGPORT", "port"),
    ("PGUSER", "user"),
    ("PGPASSWORD", "password"),
    ("PGPASSFILE", "passfile"),
    ("PGDATABASE", "dbname"),
    ("PGSSLMODE", "sslmode"),
    ("PGSSLROOTCERT", "sslrootcert"),
    ("PGSSLCERT", "sslcert"),
    ("PGSSLKEY", "sslkey"),
    ("PGAPPNAME", "application_name"),
    ("PGCONNECT_TIMEOUT", "connect_timeout"),
    ("PGOPTIONS", "options"),
    ("PGCLIENTENCODING", "client_encoding"),
    ("PGTARGETSESSIONATTRS", "target_session_attrs"),
    ("PGCHANNELBINDING", "channel_binding"),
    ("PGLOADBALANCEHOSTS", "load_balance_hosts"),
];

/// What resolution reads from the outside world.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// Environment variables (only the `PG*` ones matter).
    pub vars: HashMap<String, String>,
    /// The operating-system user name (the default role).
    pub os_user: Option<String>,
    /// The home directory (for `~/.pgpass` and `~/.postgresql/root.crt`).
    pub home: Option<PathBuf>,
    /// Look for the default socket directories on disk (off in tests: all are listed).
    pub probe_socket_dirs: bool,
}

impl Environment {
    /// The current process's environment.
    pub fn current() -> Environment {
        let vars = ENV_VARS
            .iter()
            .filter_map(|(k, _)| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        let (pw_user, pw_home) = passwd_entry();
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or(pw_home);
        Environment {
            vars,
            os_user: pw_user,
            home,
            probe_socket_dirs: true,
        }
    }

    fn var(&self, k: &str) -> Option<&str> {
        self.vars
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// The user name and home directory of the effective uid.
fn passwd_entry() -> (Option<String>, Option<PathBuf>) {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: `pwd` is plain data; getpwuid_r writes only into `pwd` and `buf` (whose
    // length we pass) and sets `result` to null or to `&pwd`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() {
            return (None, None);
        }
        let cstr = |p: *const libc::c_char| {
            if p.is_null() {
                None
            } else {
                Some(std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
            }
        };
        (cstr(pwd.pw_name), cstr(pwd.pw_dir).map(PathBuf::from))
    }
}

/// Where one host entry lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// TCP: a name to resolve (or an address literal).
    Tcp(String),
    /// A Unix-domain socket directory (`<dir>/.s.PGSQL.<port>`).
    Unix(PathBuf),
}

/// One host to try, fully resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Where to connect.
    pub host: Host,
    /// `hostaddr`: connect here instead of resolving `host` (which still names the server
    /// for TLS and pgpass).
    pub hostaddr: Option<IpAddr>,
    /// Port.
    pub port: u16,
    /// Password for this host (`password`, `PGPASSWORD`, or the pgpass entry).
    pub password: Option<String>,
}

impl Target {
    /// The host name for TLS verification, pgpass and messages (`""` for sockets).
    pub fn host_name(&self) -> &str {
        match &self.host {
            Host::Tcp(h) => h,
            Host::Unix(_) => "",
        }
    }

    /// The socket file for a Unix-domain target.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.host {
            Host::Unix(dir) => Some(dir.join(format!(".s.PGSQL.{}", self.port))),
            Host::Tcp(_) => None,
        }
    }

    /// libpq's prefix for messages about this target:
    /// `connection to server at "h" (addr), port 5432` or
    /// `connection to server on socket "/tmp/.s.PGSQL.5432"`.
    pub fn describe(&self, addr: Option<&std::net::SocketAddr>) -> String {
        match (&self.host, self.socket_path()) {
            (_, Some(p)) => format!("connection to server on socket \"{}\"", p.display()),
            (Host::Tcp(h), None) => {
                let ip = addr.map(|a| a.ip()).or(self.hostaddr);
                match ip {
                    Some(ip) if h.is_empty() || ip.to_string() == *h => {
                        format!("connection to server at \"{ip}\", port {}", self.port)
                    }
                    Some(ip) => {
                        format!("connection to server at \"{h}\" ({ip}), port {}", self.port)
                    }
                    None => format!("connection to server at \"{h}\", port {}", self.port),
                }
            }
            (Host::Unix(_), None) => String::new(),
        }
    }
}

/// Everything needed to connect, after environment and defaults.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectParams {
    /// Hosts to try in order (never empty).
    pub targets: Vec<Target>,
    /// Role name.
    pub user: String,
    /// Database name.
    pub dbname: String,
    /// TLS mode.
    pub sslmode: SslMode,
    /// Root certificates: a PEM file, `system`, or `None` (then `~/.postgresql/root.crt`
    /// if it exists, otherwise the system roots).
    pub sslrootcert: Option<String>,
    /// `sslrootcert` was given explicitly (libpq then treats `require` as `verify-ca`).
    pub sslrootcert_explicit: bool,
    /// Client certificate file (`None`: `~/.postgresql/postgresql.crt` if it exists).
    pub sslcert: Option<String>,
    /// Client key file (`None`: `~/.postgresql/postgresql.key`).
    pub sslkey: Option<String>,
    /// Home directory (for `~/.postgresql/root.crt`).
    pub home: Option<PathBuf>,
    /// application_name to send.
    pub application_name: Option<String>,
    /// options to send.
    pub options: Option<String>,
    /// client_encoding to send.
    pub client_encoding: Option<String>,
    /// Per-host connect timeout (`None`: wait forever).
    pub connect_timeout: Option<Duration>,
    /// Which kind of server is acceptable.
    pub target_session_attrs: TargetSessionAttrs,
    /// `load_balance_hosts`.
    pub load_balance_hosts: crate::config::LoadBalanceHosts,
    /// SCRAM channel binding policy.
    pub channel_binding: ChannelBindingMode,
    /// Warnings to print (pgpass permissions, …), libpq wording.
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for ConnectParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let targets: Vec<String> = self
            .targets
            .iter()
            .map(|t| format!("{:?}:{} pw={}", t.host, t.port, t.password.is_some()))
            .collect();
        f.debug_struct("ConnectParams")
            .field("targets", &targets)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .field("sslmode", &self.sslmode)
            .field("connect_timeout", &self.connect_timeout)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Resolves against the current process environment.
    pub fn resolve(&self) -> Result<ConnectParams, ConfigError> {
        self.resolve_in(&Environment::current())
    }

    /// Resolves against `env`: option, else `PG*` variable, else default; passwords from
    /// `password`, `PGPASSWORD`, then the pgpass file, per host.
    pub fn resolve_in(&self, env: &Environment) -> Result<ConnectParams, ConfigError> {
        // Options given explicitly win; the environment fills the rest.
        let mut c = Config::new();
        for (var, kw) in ENV_VARS {
            if let Some(v) = env.var(var) {
                c.set(kw, v)
                    .map_err(|e| ConfigError::new(format!("{e} (from {var})")))?;
            }
        }
        c.apply(self);

        let user = match c.user.as_deref().filter(|u| !u.is_empty()) {
            Some(u) => u.to_string(),
            None => env.os_user.clone().ok_or_else(|| {
                ConfigError::new("could not look up local user name and no user given")
            })?,
        };
        let dbname = c
            .dbname
            .clone()
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| user.clone());

        let entries = host_entries(&c, env)?;
        let (targets, warnings) = with_passwords(&c, env, entries, &dbname, &user);

        let connect_timeout = match c.connect_timeout.as_deref() {
            None | Some("") => None,
            Some(t) => {
                let v = parse_int(t, "connect_timeout")?;
                if v <= 0 {
                    None
                } else {
                    Some(Duration::from_secs(v.max(2) as u64))
                }
            }
        };
        let sslrootcert_explicit = c.sslrootcert.as_deref().is_some_and(|s| !s.is_empty());

        Ok(ConnectParams {
            targets,
            user,
            dbname,
            sslmode: c.sslmode.unwrap_or_default(),
            sslrootcert: c.sslrootcert.clone().filter(|s| !s.is_empty()),
            sslrootcert_explicit,
            sslcert: c.sslcert.clone().filter(|s| !s.is_empty()),
            sslkey: c.sslkey.clone().filter(|s| !s.is_empty()),
            home: env.home.clone(),
            application_name: c
                .application_name
                .clone()
                .filter(|s| !s.is_empty())
                .or(c.fallback_application_name.clone()),
            options: c.options.clone().filter(|s| !s.is_empty()),
            client_encoding: c.client_encoding.clone().filter(|s| !s.is_empty()),
            connect_timeout,
            target_session_attrs: c.target_session_attrs.unwrap_or_default(),
            load_balance_hosts: c.load_balance_hosts.unwrap_or_default(),
            channel_binding: c.channel_binding.unwrap_or_default(),
            warnings,
        })
    }
}

/// The hosts to try, in order, from the `host`, `hostaddr` and `port` lists (libpq's
/// matching rules; no host: the default socket directories).
fn host_entries(
    c: &Config,
    env: &Environment,
) -> Result<Vec<(Host, Option<IpAddr>, u16)>, ConfigError> {
    // Host, hostaddr and port lists.
    let split = |s: &Option<String>| -> Vec<String> {
        match s.as_deref() {
            None | Some("") => Vec::new(),
            Some(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
        }
    };
    let hosts = split(&c.host);
    let addrs = split(&c.hostaddr);
    let ports = split(&c.port);
    let n = if !addrs.is_empty() {
        if !hosts.is_empty() && hosts.len() != addrs.len() {
            return Err(ConfigError::new(format!(
                "could not match {} host names to {} hostaddr values",
                hosts.len(),
                addrs.len()
            )));
        }
        addrs.len()
    } else {
        hosts.len().max(1)
    };
    if ports.len() > 1 && ports.len() != n {
        return Err(ConfigError::new(format!(
            "could not match {} port numbers to {} hosts",
            ports.len(),
            n
        )));
    }

    let mut entries: Vec<(Host, Option<IpAddr>, u16)> = Vec::new();
    for i in 0..n {
        let port_s = if ports.len() == 1 {
            ports.first()
        } else {
            ports.get(i)
        };
        let port = match port_s.map(String::as_str) {
            None | Some("") => DEFAULT_PORT,
            Some(p) => {
                let v = parse_int(p, "port")?;
                u16::try_from(v)
                    .ok()
                    .filter(|&v| v > 0)
                    .ok_or_else(|| ConfigError::new(format!("invalid port number: \"{p}\"")))?
            }
        };
        let addr = match addrs.get(i).map(String::as_str) {
            None | Some("") => None,
            Some(a) => Some(a.parse::<IpAddr>().map_err(|_| {
                ConfigError::new(format!("could not parse network address \"{a}\""))
            })?),
        };
        let host = hosts.get(i).map(String::as_str).unwrap_or("");
        if let Some(a) = addr {
            let name = if host.is_empty() {
                a.to_string()
            } else {
                host.to_string()
            };
            entries.push((Host::Tcp(name), Some(a), port));
        } else if host.is_empty() {
            let existing: Vec<&str> = DEFAULT_SOCKET_DIRS
                .iter()
                .copied()
                .filter(|d| {
                    !env.probe_socket_dirs
                        || PathBuf::from(d).join(format!(".s.PGSQL.{port}")).exists()
                })
                .collect();
            let dirs = if existing.is_empty() {
                DEFAULT_SOCKET_DIRS.to_vec()
            } else {
                existing
            };
            for d in dirs {
                entries.push((Host::Unix(PathBuf::from(d)), None, port));
            }
        } else if host.starts_with('/') {
            entries.push((Host::Unix(PathBuf::from(host)), None, port));
        } else {
            entries.push((Host::Tcp(host.to_string()), None, port));
        }
    }
    Ok(entries)
}

/// Each host with its password: the explicit one or `PGPASSWORD` for all, else the pgpass
/// file's line for that host; the pgpass warnings, each once.
fn with_passwords(
    c: &Config,
    env: &Environment,
    entries: Vec<(Host, Option<IpAddr>, u16)>,
    dbname: &str,
    user: &str,
) -> (Vec<Target>, Vec<String>) {
    // Passwords: explicit/PGPASSWORD for all hosts, else pgpass per host.
    let mut warnings = Vec::new();
    let passfile = c
        .passfile
        .clone()
        .map(PathBuf::from)
        .or_else(|| env.home.as_ref().map(|h| h.join(".pgpass")));
    let mut targets = Vec::with_capacity(entries.len());
    for (host, hostaddr, port) in entries {
        let password = match c.password.clone().filter(|p| !p.is_empty()) {
            Some(p) => Some(p),
            None => match &passfile {
                Some(pf) => {
                    let name = match &host {
                        Host::Tcp(h) => h.clone(),
                        Host::Unix(d) => {
                            let d = d.to_string_lossy();
                            if DEFAULT_SOCKET_DIRS.contains(&d.as_ref()) || d == "/run/postgresql" {
                                "localhost".to_string()
                            } else {
                                d.into_owned()
                            }
                        }
                    };
                    let r = pgpass::lookup(pf, &name, &port.to_string(), dbname, user);
                    for w in r.warnings {
                        if !warnings.contains(&w) {
                            warnings.push(w);
                        }
                    }
                    r.password
                }
                None => None,
            },
        };
        targets.push(Target {
            host,
            hostaddr,
            port,
            password,
        });
    }
    (targets, warnings)
}
