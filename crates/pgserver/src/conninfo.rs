//! How clients reach a server: socket directory, TCP port, user, database, password and TLS
//! root certificate, rendered as a libpq keyword string or a `postgresql://` URL (the one
//! for people to see, [`ConnInfo::display_url`], names the password file, never the password).

use std::path::PathBuf;

/// Connection parameters of a running server (its `Debug` form masks the password).
#[derive(Clone, PartialEq, Eq)]
pub struct ConnInfo {
    /// Unix socket directory (libpq `host` when it starts with `/`).
    pub socket_dir: PathBuf,
    /// Loopback TCP host, "127.0.0.1".
    pub tcp_host: String,
    /// Port (TCP, and the socket file's suffix).
    pub port: u16,
    /// Superuser name.
    pub user: String,
    /// Database name.
    pub dbname: String,
    /// Password, when the server requires one.
    pub password: Option<String>,
    /// The server's self-signed certificate when TLS is on (libpq `sslrootcert`).
    pub ssl_root_cert: Option<PathBuf>,
    /// The pgpass file holding the password of a server hotbench created
    /// ([`crate::secret`]), for people's own clients (`PGPASSFILE`).
    pub passfile: Option<PathBuf>,
}

impl std::fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnInfo")
            .field("socket_dir", &self.socket_dir)
            .field("tcp_host", &self.tcp_host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .field("password", &self.password.as_ref().map(|_| "********"))
            .field("ssl_root_cert", &self.ssl_root_cert)
            .field("passfile", &self.passfile)
            .finish()
    }
}

fn kv(value: &str) -> String {
    if !value.is_empty() && !value.contains([' ', '\'', '\\']) {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

fn pct(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl ConnInfo {
    /// Same server, another database.
    pub fn with_dbname(&self, dbname: &str) -> ConnInfo {
        ConnInfo {
            dbname: dbname.into(),
            ..self.clone()
        }
    }

    /// Same server, another user/password.
    pub fn with_user(&self, user: &str, password: Option<&str>) -> ConnInfo {
        ConnInfo {
            user: user.into(),
            password: password.map(str::to_string),
            ..self.clone()
        }
    }

    fn keywords(&self, host: &str) -> String {
        let mut s = format!(
            "host={} port={} user={} dbname={}",
            kv(host),
            self.port,
            kv(&self.user),
            kv(&self.dbname)
        );
        if let Some(p) = &self.password {
            s.push_str(&format!(" password={}", kv(p)));
        }
        s
    }

    /// libpq keyword string over the unix socket: `host=/tmp/hb-x/s port=… user=… dbname=…`.
    pub fn socket_conninfo(&self) -> String {
        self.keywords(&self.socket_dir.to_string_lossy())
    }

    /// libpq keyword string over TCP (adds `sslrootcert` when TLS is on).
    pub fn tcp_conninfo(&self) -> String {
        let mut s = self.keywords(&self.tcp_host);
        if let Some(c) = &self.ssl_root_cert {
            s.push_str(&format!(" sslrootcert={}", kv(&c.to_string_lossy())));
        }
        s
    }

    fn userinfo(&self) -> String {
        match &self.password {
            Some(p) => format!("{}:{}@", pct(&self.user), pct(p)),
            None => format!("{}@", pct(&self.user)),
        }
    }

    /// `postgresql://user[:password]@127.0.0.1:PORT/db` (what `hotbench server url` prints).
    pub fn url(&self) -> String {
        format!(
            "postgresql://{}{}:{}/{}",
            self.userinfo(),
            self.tcp_host,
            self.port,
            pct(&self.dbname)
        )
    }

    /// The URL to show people: [`ConnInfo::url`] without the password, with
    /// `?passfile=PATH` (libpq reads the password from there) when there is one.
    pub fn display_url(&self) -> String {
        let base = format!(
            "postgresql://{}@{}:{}/{}",
            pct(&self.user),
            self.tcp_host,
            self.port,
            pct(&self.dbname)
        );
        match &self.passfile {
            // `/` needs no escape in a query value: the path stays readable.
            Some(p) => format!(
                "{base}?passfile={}",
                pct(&p.to_string_lossy()).replace("%2F", "/")
            ),
            None => base,
        }
    }

    /// `postgresql://user@/db?host=/tmp/hb-x/s&port=PORT`: the unix-socket URL.
    pub fn socket_url(&self) -> String {
        format!(
            "postgresql://{}/{}?host={}&port={}",
            self.userinfo(),
            pct(&self.dbname),
            pct(&self.socket_dir.to_string_lossy()),
            self.port
        )
    }

    /// Environment variables libpq programs (psql, pgbench) understand.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("PGHOST", self.socket_dir.to_string_lossy().into_owned()),
            ("PGPORT", self.port.to_string()),
            ("PGUSER", self.user.clone()),
            ("PGDATABASE", self.dbname.clone()),
        ];
        if let Some(p) = &self.password {
            v.push(("PGPASSWORD", p.clone()));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci() -> ConnInfo {
        ConnInfo {
            socket_dir: "/tmp/hb-1/s".into(),
            tcp_host: "127.0.0.1".into(),
            port: 5433,
            user: "postgres".into(),
            dbname: "postgres".into(),
            password: None,
            ssl_root_cert: None,
            passfile: None,
        }
    }

    #[test]
    fn renders() {
        let c = ci();
        assert_eq!(
            c.socket_conninfo(),
            "host=/tmp/hb-1/s port=5433 user=postgres dbname=postgres"
        );
        assert_eq!(
            c.tcp_conninfo(),
            "host=127.0.0.1 port=5433 user=postgres dbname=postgres"
        );
        assert_eq!(c.url(), "postgresql://postgres@127.0.0.1:5433/postgres");
        assert_eq!(
            c.socket_url(),
            "postgresql://postgres@/postgres?host=%2Ftmp%2Fhb-1%2Fs&port=5433"
        );
        let p = c.with_user("bob", Some("it's a:b"));
        assert_eq!(
            p.url(),
            "postgresql://bob:it%27s%20a%3Ab@127.0.0.1:5433/postgres"
        );
        assert!(p.tcp_conninfo().ends_with("password='it\\'s a:b'"));
        let shown = ConnInfo {
            passfile: Some("/var/lib/hotbench/pg15/passfile".into()),
            ..p
        };
        assert!(!format!("{shown:?}").contains("it's a:b"), "{shown:?}");
        assert_eq!(
            shown.display_url(),
            "postgresql://bob@127.0.0.1:5433/postgres?passfile=/var/lib/hotbench/pg15/passfile"
        );
    }
}
