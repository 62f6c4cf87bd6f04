//! Connection options as libpq knows them, before any defaulting.
//!
//! A [`Config`] holds only what the user said (a conninfo string, a URL, the CLI's
//! `-h -p -U dbname`); [`Config::resolve`](crate::Config::resolve) later adds the
//! environment, `~/.pgpass` and the defaults with libpq's precedence. Keeping the two apart
//! lets the CLI merge sources in the right order and lets the report print exactly what the
//! user gave, password masked.

use std::str::FromStr;

pub use crate::binding::ChannelBindingMode;
use crate::error::ConfigError;

/// libpq `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain first; TLS only if the server rejects the plain connection.
    Allow,
    /// TLS if the server offers it, plain otherwise (libpq's default).
    #[default]
    Prefer,
    /// TLS or fail; any certificate accepted (unless `sslrootcert` is set: then as verify-ca).
    Require,
    /// TLS, certificate chain checked against the root certificates.
    VerifyCa,
    /// TLS, chain and host name checked.
    VerifyFull,
}

impl SslMode {
    /// libpq's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

impl FromStr for SslMode {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return Err(ConfigError::new(format!("invalid sslmode value: \"{s}\""))),
        })
    }
}

/// libpq `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetSessionAttrs {
    /// Any server.
    #[default]
    Any,
    /// A server accepting writes (`transaction_read_only = off`).
    ReadWrite,
    /// A server in read-only mode.
    ReadOnly,
    /// A server not in recovery.
    Primary,
    /// A server in recovery.
    Standby,
    /// A standby if there is one, any server otherwise.
    PreferStandby,
}

impl TargetSessionAttrs {
    /// libpq's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetSessionAttrs::Any => "any",
            TargetSessionAttrs::ReadWrite => "read-write",
            TargetSessionAttrs::ReadOnly => "read-only",
            TargetSessionAttrs::Primary => "primary",
            TargetSessionAttrs::Standby => "standby",
            TargetSessionAttrs::PreferStandby => "prefer-standby",
        }
    }
}

impl FromStr for TargetSessionAttrs {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Ok(match s {
            "any" => TargetSessionAttrs::Any,
            "read-write" => TargetSessionAttrs::ReadWrite,
            "read-only" => TargetSessionAttrs::ReadOnly,
            "primary" => TargetSessionAttrs::Primary,
            "standby" => TargetSessionAttrs::Standby,
            "prefer-standby" => TargetSessionAttrs::PreferStandby,
            _ => {
                return Err(ConfigError::new(format!(
                    "invalid target_session_attrs value: \"{s}\""
                )))
            }
        })
    }
}

/// libpq `load_balance_hosts` (PostgreSQL 16+): `random` spreads connections over the hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadBalanceHosts {
    /// Hosts are tried in the order given.
    #[default]
    Disable,
    /// Each connection tries the hosts starting from a random one.
    Random,
}

impl LoadBalanceHosts {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadBalanceHosts::Disable => "disable",
            LoadBalanceHosts::Random => "random",
        }
    }
}

impl FromStr for LoadBalanceHosts {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "disable" => Ok(LoadBalanceHosts::Disable),
            "random" => Ok(LoadBalanceHosts::Random),
            _ => Err(ConfigError::new(format!(
                "invalid load_balance_hosts value: \"{s}\""
            ))),
        }
    }
}

/// The form a [`Config`] was written in, so [`Config::masked`] can answer in kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// `key=value …`
    #[default]
    Conninfo,
    /// `postgresql://…`
    Url,
}

/// libpq keywords that are accepted and ignored (so real-world strings don't fail).
pub(crate) const IGNORED_KEYWORDS: &[&str] = &[
    "service",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "gssencmode",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "requirepeer",
    "sslcompression",
    "sslcrl",
    "sslcrldir",
    "sslpassword",
    "sslcertmode",
    "sslsni",
    "sslnegotiation",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "require_auth",
    "replication",
    "min_protocol_version",
    "max_protocol_version",
];

/// Connection options as given (all optional; `None` = not given).
///
/// `host`, `hostaddr` and `port` are libpq's comma-separated lists, kept raw.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Host names or socket directories, comma-separated.
    pub host: Option<String>,
    /// Numeric addresses, comma-separated (skip DNS; `host` still used for TLS and pgpass).
    pub hostaddr: Option<String>,
    /// Ports, comma-separated (one for all hosts, or one per host).
    pub port: Option<String>,
    /// Role name.
    pub user: Option<String>,
    /// Password (never displayed).
    pub password: Option<String>,
    /// Password file (default `~/.pgpass`).
    pub passfile: Option<String>,
    /// Database name.
    pub dbname: Option<String>,
    /// `sslmode`.
    pub sslmode: Option<SslMode>,
    /// Root certificate file for verify-ca/verify-full (`system`: the OS's roots).
    pub sslrootcert: Option<String>,
    /// Client certificate (PEM) for TLS client authentication.
    pub sslcert: Option<String>,
    /// Private key (PEM) of `sslcert`.
    pub sslkey: Option<String>,
    /// `application_name`.
    pub application_name: Option<String>,
    /// Used when `application_name` is not set anywhere.
    pub fallback_application_name: Option<String>,
    /// Seconds, as libpq (`0` or negative: wait forever; 1 counts as 2).
    pub connect_timeout: Option<String>,
    /// Command-line options sent to the server (`-c name=value …`).
    pub options: Option<String>,
    /// `client_encoding`.
    pub client_encoding: Option<String>,
    /// `target_session_attrs`.
    pub target_session_attrs: Option<TargetSessionAttrs>,
    /// `load_balance_hosts`.
    pub load_balance_hosts: Option<LoadBalanceHosts>,
    /// `channel_binding` (SCRAM over TLS).
    pub channel_binding: Option<ChannelBindingMode>,
    /// The form this was parsed from.
    pub form: Form,
}

impl Config {
    /// No option set.
    pub fn new() -> Config {
        Config::default()
    }

    /// Sets one libpq keyword. Unknown keywords are an error (libpq's wording); keywords
    /// hotbench does not act on (`keepalives`, `gssencmode`, …) are accepted and ignored.
    pub fn set(&mut self, keyword: &str, value: &str) -> Result<(), ConfigError> {
        if value.contains('\0') {
            return Err(ConfigError::new(format!(
                "connection option \"{keyword}\" contains a NUL character"
            )));
        }
        let v = Some(value.to_string());
        match keyword {
            "host" => self.host = v,
            "hostaddr" => self.hostaddr = v,
            "port" => self.port = v,
            "user" => self.user = v,
            "password" => self.password = v,
            "passfile" => self.passfile = v,
            "dbname" => self.dbname = v,
            "sslmode" => self.sslmode = Some(value.parse()?),
            "sslrootcert" => self.sslrootcert = v,
            "sslcert" => self.sslcert = v,
            "sslkey" => self.sslkey = v,
            "application_name" => self.application_name = v,
            "fallback_application_name" => self.fallback_application_name = v,
            "connect_timeout" => {
                parse_int(value, "connect_timeout")?;
                self.connect_timeout = v
            }
            "options" => self.options = v,
            "client_encoding" => self.client_encoding = v,
            "target_session_attrs" => self.target_session_attrs = Some(value.parse()?),
            "load_balance_hosts" => self.load_balance_hosts = Some(value.parse()?),
            "channel_binding" => self.channel_binding = Some(value.parse()?),
            k if IGNORED_KEYWORDS.contains(&k) => {}
            k => {
                return Err(ConfigError::new(format!(
                    "invalid connection option \"{k}\""
                )))
            }
        }
        Ok(())
    }

    /// Every option set in `other` overrides the one in `self`.
    pub fn apply(&mut self, other: &Config) {
        fn ov<T: Clone>(a: &mut Option<T>, b: &Option<T>) {
            if b.is_some() {
                a.clone_from(b);
            }
        }
        ov(&mut self.host, &other.host);
        ov(&mut self.hostaddr, &other.hostaddr);
        ov(&mut self.port, &other.port);
        ov(&mut self.user, &other.user);
        ov(&mut self.password, &other.password);
        ov(&mut self.passfile, &other.passfile);
        ov(&mut self.dbname, &other.dbname);
        ov(&mut self.sslmode, &other.sslmode);
        ov(&mut self.sslrootcert, &other.sslrootcert);
        ov(&mut self.sslcert, &other.sslcert);
        ov(&mut self.sslkey, &other.sslkey);
        ov(&mut self.application_name, &other.application_name);
        ov(
            &mut self.fallback_application_name,
            &other.fallback_application_name,
        );
        ov(&mut self.connect_timeout, &other.connect_timeout);
        ov(&mut self.options, &other.options);
        ov(&mut self.client_encoding, &other.client_encoding);
        ov(&mut self.target_session_attrs, &other.target_session_attrs);
        ov(&mut self.load_balance_hosts, &other.load_balance_hosts);
        ov(&mut self.channel_binding, &other.channel_binding);
    }

    /// The options as (keyword, value) pairs in libpq order, password included.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut push = |k: &'static str, v: Option<String>| {
            if let Some(v) = v {
                out.push((k, v));
            }
        };
        push("host", self.host.clone());
        push("hostaddr", self.hostaddr.clone());
        push("port", self.port.clone());
        push("user", self.user.clone());
        push("password", self.password.clone());
        push("passfile", self.passfile.clone());
        push("dbname", self.dbname.clone());
        push("sslmode", self.sslmode.map(|m| m.as_str().to_string()));
        push("sslrootcert", self.sslrootcert.clone());
        push("sslcert", self.sslcert.clone());
        push("sslkey", self.sslkey.clone());
        push("application_name", self.application_name.clone());
        push(
            "fallback_application_name",
            self.fallback_application_name.clone(),
        );
        push("connect_timeout", self.connect_timeout.clone());
        push("options", self.options.clone());
        push("client_encoding", self.client_encoding.clone());
        push(
            "target_session_attrs",
            self.target_session_attrs.map(|m| m.as_str().to_string()),
        );
        push(
            "channel_binding",
            self.channel_binding.map(|m| m.as_str().to_string()),
        );
        push(
            "load_balance_hosts",
            self.load_balance_hosts.map(|m| m.as_str().to_string()),
        );
        out
    }
}

/// libpq's integer option parsing (surrounding whitespace allowed).
pub(crate) fn parse_int(value: &str, keyword: &str) -> Result<i64, ConfigError> {
    value.trim().parse::<i64>().map_err(|_| {
        ConfigError::new(format!(
            "invalid integer value \"{value}\" for connection option \"{keyword}\""
        ))
    })
}
