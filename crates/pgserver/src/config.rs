//! What a cluster looks like: authentication, TLS, the benchmark-friendly settings we write
//! into `hotbench.conf` (included from `postgresql.conf`) and `pg_hba.conf`. Pure functions of
//! the options, so they are tested without a server.

use crate::binaries::PgBinaries;

/// Authentication method written to `pg_hba.conf` for local and loopback connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthMethod {
    /// The default: the unix socket, in a 0700 directory only the server's account (and root)
    /// can enter, is trusted; TCP wants SCRAM-SHA-256 with a password generated for the
    /// cluster (kept in a 0600 pgpass file, [`crate::secret`]), so no other local user gets in.
    #[default]
    Private,
    /// No password, socket and TCP alike: any local user gets in (tests that need it only).
    Trust,
    /// Cleartext password.
    Password,
    /// MD5 challenge (the password is stored MD5-hashed).
    Md5,
    /// SCRAM-SHA-256.
    ScramSha256,
}

impl AuthMethod {
    /// The `pg_hba.conf` keyword for TCP connections.
    pub fn keyword(self) -> &'static str {
        match self {
            AuthMethod::Private => "scram-sha-256",
            AuthMethod::Trust => "trust",
            AuthMethod::Password => "password",
            AuthMethod::Md5 => "md5",
            AuthMethod::ScramSha256 => "scram-sha-256",
        }
    }

    /// The `pg_hba.conf` keyword for unix-socket connections.
    pub fn local_keyword(self) -> &'static str {
        match self {
            AuthMethod::Private => "trust",
            m => m.keyword(),
        }
    }

    /// `password_encryption` to store the password with.
    fn encryption(self) -> &'static str {
        match self {
            AuthMethod::Md5 => "md5",
            _ => "scram-sha-256",
        }
    }
}

/// TLS on the TCP listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsMode {
    /// `ssl = off`.
    #[default]
    Off,
    /// `ssl = on` with a generated self-signed certificate; plain TCP still accepted.
    On,
    /// As `On`, and `pg_hba.conf` rejects TCP connections without TLS.
    Required,
}

/// Password set for the superuser when the auth method is not trust and none is given.
pub const DEFAULT_PASSWORD: &str = "hotbench";
/// Superuser created by initdb.
pub const DEFAULT_USER: &str = "postgres";
/// Default `max_connections`: 1,000 clients plus probes and headroom.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1200;

/// How a cluster is created and configured (plain values; the CLI fills them from flags).
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// Superuser name (initdb `-U`).
    pub user: String,
    /// pg_hba method for local and loopback connections.
    pub auth: AuthMethod,
    /// Superuser password; when `None`, generated for [`AuthMethod::Private`] (by whoever
    /// creates the cluster: [`crate::Server::start`], the default server's first start),
    /// [`DEFAULT_PASSWORD`] for the other methods but trust.
    pub password: Option<String>,
    /// TLS on TCP.
    pub tls: TlsMode,
    /// Turn off fsync, synchronous_commit and full_page_writes (unsafe; reports must say so).
    pub fast: bool,
    /// `max_connections`.
    pub max_connections: u32,
    /// `shared_buffers` in MiB; `None` sizes it to memory (1/8 of RAM, 128 MiB..8 GiB).
    pub shared_buffers_mb: Option<u64>,
    /// TCP port; `None` picks a free one.
    pub port: Option<u16>,
    /// Extra `name = value` settings, written last (they win).
    pub settings: Vec<(String, String)>,
    /// Copy a cached, freshly initdb'd cluster instead of running initdb (tests: ~4x faster).
    pub from_template: bool,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            user: DEFAULT_USER.into(),
            auth: AuthMethod::Private,
            password: None,
            tls: TlsMode::Off,
            fast: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            shared_buffers_mb: None,
            port: None,
            settings: Vec::new(),
            from_template: false,
        }
    }
}

impl ClusterOptions {
    /// `password_encryption` matching the auth method (MD5 auth needs an MD5-stored password).
    pub fn auth_encryption(&self) -> &'static str {
        self.auth.encryption()
    }

    /// The superuser password, if any is set (`None` for a [`AuthMethod::Private`] cluster
    /// until its creator generated one).
    pub fn effective_password(&self) -> Option<String> {
        match (&self.password, self.auth) {
            (Some(p), _) => Some(p.clone()),
            (None, AuthMethod::Trust | AuthMethod::Private) => None,
            (None, _) => Some(DEFAULT_PASSWORD.into()),
        }
    }
}

/// Quote a value for postgresql.conf.
pub fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// Quote an SQL string literal.
pub fn sql_literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// `shared_buffers` in MiB for a machine with `mem_bytes` of memory.
pub fn shared_buffers_for(mem_bytes: u64) -> u64 {
    (mem_bytes / 8 / (1024 * 1024)).clamp(128, 8192)
}

/// Memory available to us: MemTotal, lowered by a cgroup v2/v1 limit when there is one.
pub fn memory_bytes() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(1 << 30);
    let limit = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| std::fs::read_to_string(p).ok())
    .filter_map(|s| s.trim().parse::<u64>().ok())
    .min()
    .unwrap_or(u64::MAX);
    total.min(limit)
}

/// Runtime facts the settings depend on.
#[derive(Debug, Clone)]
pub struct Runtime<'a> {
    /// TCP port.
    pub port: u16,
    /// Unix socket directory.
    pub socket_dir: &'a std::path::Path,
    /// Binaries (for pg_stat_statements presence).
    pub bins: &'a PgBinaries,
}

/// The contents of `hotbench.conf`.
pub fn render_settings(opts: &ClusterOptions, rt: &Runtime<'_>) -> String {
    let sb = opts
        .shared_buffers_mb
        .unwrap_or_else(|| shared_buffers_for(memory_bytes()));
    let mut s: Vec<(String, String)> = vec![
        ("listen_addresses".into(), quote("127.0.0.1")),
        ("port".into(), rt.port.to_string()),
        (
            "unix_socket_directories".into(),
            quote(&rt.socket_dir.display().to_string()),
        ),
        // Only the server's account (and root) may connect through the socket: it is trusted.
        ("unix_socket_permissions".into(), "0700".into()),
        ("max_connections".into(), opts.max_connections.to_string()),
        ("shared_buffers".into(), format!("{sb}MB")),
        ("max_wal_size".into(), quote("4GB")),
        ("checkpoint_timeout".into(), quote("15min")),
        ("track_io_timing".into(), "on".into()),
        ("log_lock_waits".into(), "on".into()),
        ("log_checkpoints".into(), "on".into()),
        ("log_line_prefix".into(), quote("%m [%p] ")),
        ("logging_collector".into(), "off".into()),
        ("lc_messages".into(), quote("C")),
        ("dynamic_shared_memory_type".into(), "posix".into()),
        ("password_encryption".into(), opts.auth.encryption().into()),
    ];
    if opts.fast {
        s.push(("fsync".into(), "off".into()));
        s.push(("synchronous_commit".into(), "off".into()));
        s.push(("full_page_writes".into(), "off".into()));
    } else {
        s.push(("fsync".into(), "on".into()));
    }
    if rt.bins.has_pg_stat_statements() {
        s.push((
            "shared_preload_libraries".into(),
            quote("pg_stat_statements"),
        ));
        s.push(("pg_stat_statements.track".into(), "all".into()));
    }
    if opts.tls != TlsMode::Off {
        s.push(("ssl".into(), "on".into()));
        s.push(("ssl_cert_file".into(), quote("server.crt")));
        s.push(("ssl_key_file".into(), quote("server.key")));
    }
    for (k, v) in &opts.settings {
        s.push((k.clone(), quote(v)));
    }
    let mut out = String::from(
        "# Written by hotbench at each start; edit via ALTER SYSTEM or hotbench options.\n",
    );
    for (k, v) in s {
        out.push_str(&format!("{k} = {v}\n"));
    }
    out
}

/// The contents of `pg_hba.conf`.
pub fn render_hba(opts: &ClusterOptions) -> String {
    let m = opts.auth.keyword();
    let l = opts.auth.local_keyword();
    let mut out = String::from(
        "# Written by hotbench at each start.\n# TYPE  DATABASE  USER  ADDRESS  METHOD\n",
    );
    out.push_str(&format!("local all all {l}\nlocal replication all {l}\n"));
    let host = if opts.tls == TlsMode::Required {
        "hostssl"
    } else {
        "host"
    };
    for addr in ["127.0.0.1/32", "::1/128"] {
        out.push_str(&format!(
            "{host} all all {addr} {m}\n{host} replication all {addr} {m}\n"
        ));
    }
    if opts.tls == TlsMode::Required {
        out.push_str("hostnossl all all 0.0.0.0/0 reject\nhostnossl all all ::/0 reject\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bins() -> PgBinaries {
        PgBinaries {
            bin_dir: "/nonexistent".into(),
            version: "15.1".into(),
            major: 15,
            share_dir: None,
            pkglib_dir: None,
            downloaded: false,
        }
    }

    #[test]
    fn settings_safe_by_default_fast_when_asked() {
        let b = bins();
        let rt = Runtime {
            port: 5999,
            socket_dir: std::path::Path::new("/tmp/s"),
            bins: &b,
        };
        let conf = render_settings(&ClusterOptions::default(), &rt);
        assert!(conf.contains("fsync = on\n"));
        assert!(conf.contains("port = 5999\n"));
        assert!(conf.contains("max_connections = 1200\n"));
        assert!(conf.contains("unix_socket_directories = '/tmp/s'\n"));
        assert!(!conf.contains("ssl = on"));
        let fast = ClusterOptions {
            fast: true,
            ..Default::default()
        };
        let conf = render_settings(&fast, &rt);
        assert!(conf.contains("fsync = off\n") && conf.contains("synchronous_commit = off\n"));
        let extra = ClusterOptions {
            settings: vec![("work_mem".into(), "64MB".into())],
            ..Default::default()
        };
        assert!(render_settings(&extra, &rt).ends_with("work_mem = '64MB'\n"));
    }

    #[test]
    fn hba_follows_auth_and_tls() {
        let o = ClusterOptions {
            auth: AuthMethod::ScramSha256,
            tls: TlsMode::Required,
            ..Default::default()
        };
        let hba = render_hba(&o);
        assert!(hba.contains("local all all scram-sha-256\n"));
        assert!(hba.contains("hostssl all all 127.0.0.1/32 scram-sha-256\n"));
        assert!(hba.contains("hostnossl all all 0.0.0.0/0 reject\n"));
        assert_eq!(o.effective_password().as_deref(), Some(DEFAULT_PASSWORD));
        assert_eq!(ClusterOptions::default().effective_password(), None);
    }

    /// The default cluster trusts only its 0700 socket; TCP wants the generated password.
    #[test]
    fn the_default_trusts_the_private_socket_only() {
        let hba = render_hba(&ClusterOptions::default());
        assert!(hba.contains("local all all trust\n"), "{hba}");
        assert!(
            hba.contains("host all all 127.0.0.1/32 scram-sha-256\n"),
            "{hba}"
        );
        assert!(
            hba.contains("host all all ::1/128 scram-sha-256\n"),
            "{hba}"
        );
        assert!(!hba.contains("host all all 127.0.0.1/32 trust"), "{hba}");
        let b = bins();
        let rt = Runtime {
            port: 5999,
            socket_dir: std::path::Path::new("/tmp/s"),
            bins: &b,
        };
        let conf = render_settings(&ClusterOptions::default(), &rt);
        assert!(conf.contains("unix_socket_permissions = 0700\n"), "{conf}");
        assert!(
            conf.contains("password_encryption = scram-sha-256\n"),
            "{conf}"
        );
    }

    #[test]
    fn sizing_and_quoting() {
        assert_eq!(shared_buffers_for(24 << 30), 3072);
        assert_eq!(shared_buffers_for(512 << 20), 128);
        assert_eq!(shared_buffers_for(1 << 40), 8192);
        assert_eq!(quote("it's"), "'it''s'");
    }
}
