//! What a throwaway PgBouncer looks like: `pgbouncer.ini` (a private loopback port, the pool
//! mode and size, no unix socket, the admin console for our user) and the `userlist.txt` that
//! holds the password (a 0600 file in a 0700 directory: it is never on a command line, in
//! the ini or in a log). Pure functions of the settings, tested without a PgBouncer.
//!
//! Session settings (a scenario's `search_path`, `synchronous_commit`, …) cannot ride on the
//! `options` start-up parameter, which PgBouncer refuses (or, told to ignore it, drops). A
//! database alias whose `connect_query` sets them on every server connection it opens carries
//! them instead, whatever the pool mode.

use std::path::Path;

use crate::error::{Error, Result};

/// How server connections are shared between clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolMode {
    /// A server connection per transaction: session state (SET, session advisory locks,
    /// prepared statements before 1.21, temporary tables) does not follow the client.
    #[default]
    Transaction,
    /// A server connection per client session.
    Session,
}

impl PoolMode {
    /// The word PgBouncer uses.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolMode::Transaction => "transaction",
            PoolMode::Session => "session",
        }
    }

    /// `transaction` or `session`.
    pub fn parse(s: &str) -> Option<PoolMode> {
        match s {
            "transaction" => Some(PoolMode::Transaction),
            "session" => Some(PoolMode::Session),
            _ => None,
        }
    }
}

/// The server PgBouncer connects to, as the run's own connection options resolved it (its
/// `Debug` form masks the password).
#[derive(Clone, PartialEq, Eq)]
pub struct Upstream {
    /// TCP host, or a unix socket directory (starts with `/`).
    pub host: String,
    pub port: u16,
    /// Database the run uses.
    pub dbname: String,
    /// User the clients log in as (PgBouncer logs into the server as the same user).
    pub user: String,
    /// Its password, when the server wants one.
    pub password: Option<String>,
    /// Ask the server for TLS when it offers it (the run's sslmode was not `disable`).
    pub tls: bool,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("dbname", &self.dbname)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "********"))
            .field("tls", &self.tls)
            .finish()
    }
}

/// Everything `pgbouncer.ini` depends on.
#[derive(Debug, Clone)]
pub struct IniSettings<'a> {
    pub upstream: &'a Upstream,
    pub port: u16,
    pub mode: PoolMode,
    pub pool_size: u32,
    pub max_client_conn: u32,
    /// Where the pid file goes.
    pub dir: &'a Path,
    /// The clients' password was generated for this PgBouncer (the server wants none): 128
    /// random bits, so md5's challenge-response guards it as well as SCRAM, without SCRAM's
    /// PBKDF2 (4,096 HMAC rounds on each side) at every login, which would slow a thousand
    /// clients' connect on PgBouncer's single thread.
    pub generated_password: bool,
}

/// A database alias whose server connections run `connect_query` before serving a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    pub name: String,
    pub connect_query: String,
}

/// Session reset between clients of a session pool: `DISCARD ALL` without its `RESET ALL`,
/// which would undo the settings an alias's `connect_query` made (a client's own `SET`s
/// therefore outlive it, as they always do in a transaction pool).
pub const SESSION_RESET_QUERY: &str = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; \
     DEALLOCATE ALL; UNLISTEN *; SELECT pg_advisory_unlock_all(); DISCARD PLANS; \
     DISCARD SEQUENCES; DISCARD TEMP";

fn no_line_breaks(what: &str, v: &str) -> Result<()> {
    if v.contains(['\n', '\r', '\0']) {
        return Err(Error::Invalid(format!(
            "{what} contains a line break, which PgBouncer's configuration cannot hold"
        )));
    }
    Ok(())
}

/// A user name PgBouncer's lists (`admin_users`) and files can hold as is.
pub fn check_user(user: &str) -> Result<()> {
    no_line_breaks("the user name", user)?;
    if user.is_empty() || user.contains([',', '"', ' ', '\t']) {
        return Err(Error::Invalid(format!(
            "user name \"{user}\" cannot be put behind a PgBouncer hotbench starts \
             (commas, quotes and spaces are not allowed there)"
        )));
    }
    Ok(())
}

/// A value in a `[databases]` connection string: always quoted, `'` doubled.
fn connstr_value(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

fn sql_literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// The `connect_query` that puts `settings` in force: `set_config(name, value, false)`, which
/// reads a value exactly as `-c name=value` in `options` does (a `search_path` list stays a
/// list).
pub fn connect_query(settings: &[(String, String)]) -> Result<String> {
    let mut calls = Vec::new();
    for (k, v) in settings {
        no_line_breaks(&format!("setting {k}"), k)?;
        no_line_breaks(&format!("setting {k}"), v)?;
        calls.push(format!(
            "set_config({}, {}, false)",
            sql_literal(k),
            sql_literal(v)
        ));
    }
    Ok(format!("select {}", calls.join(", ")))
}

fn upstream_connstr(u: &Upstream) -> String {
    format!("host={} port={}", connstr_value(&u.host), u.port)
}

/// The contents of `pgbouncer.ini` with the given aliases.
pub fn render_ini(s: &IniSettings<'_>, aliases: &[Alias]) -> Result<String> {
    let u = s.upstream;
    no_line_breaks("the server's host", &u.host)?;
    no_line_breaks("the database name", &u.dbname)?;
    check_user(&u.user)?;
    let mut out = String::from("; Written by hotbench for one run; removed when it ends.\n");
    out.push_str("[databases]\n");
    // Any database name reaches the same-named database of the server.
    out.push_str(&format!("* = {}\n", upstream_connstr(u)));
    for a in aliases {
        no_line_breaks("a connect query", &a.connect_query)?;
        out.push_str(&format!(
            "{} = {} dbname={} connect_query={}\n",
            a.name,
            upstream_connstr(u),
            connstr_value(&u.dbname),
            connstr_value(&a.connect_query)
        ));
    }
    let auth = match (&u.password, s.generated_password) {
        (Some(_), true) => "md5",
        (Some(_), false) => "scram-sha-256",
        (None, _) => "trust",
    };
    let dir = s.dir.display().to_string();
    no_line_breaks("the pooler's directory", &dir)?;
    let mut kv: Vec<(&str, String)> = vec![
        ("listen_addr", "127.0.0.1".into()),
        ("listen_port", s.port.to_string()),
        // No socket: /tmp/.s.PGSQL.PORT would be shared with whatever else runs there.
        ("unix_socket_dir", String::new()),
        ("auth_type", auth.into()),
        ("auth_file", format!("{dir}/userlist.txt")),
        ("admin_users", u.user.clone()),
        ("stats_users", u.user.clone()),
        ("pidfile", format!("{dir}/pgbouncer.pid")),
        ("pool_mode", s.mode.as_str().into()),
        ("default_pool_size", s.pool_size.to_string()),
        ("min_pool_size", "0".into()),
        ("reserve_pool_size", "0".into()),
        ("max_client_conn", s.max_client_conn.to_string()),
        ("listen_backlog", "1024".into()),
        ("log_connections", "0".into()),
        ("log_disconnections", "0".into()),
        (
            "server_tls_sslmode",
            if u.tls { "prefer" } else { "disable" }.into(),
        ),
    ];
    if s.mode == PoolMode::Session {
        kv.push(("server_reset_query", SESSION_RESET_QUERY.into()));
    }
    out.push_str("\n[pgbouncer]\n");
    for (k, v) in kv {
        out.push_str(&format!("{k} = {v}\n"));
    }
    Ok(out)
}

/// `userlist.txt`: the user and its password (empty under trust), `"` doubled.
pub fn render_userlist(u: &Upstream) -> Result<String> {
    check_user(&u.user)?;
    let pw = u.password.as_deref().unwrap_or("");
    no_line_breaks("the password", pw)?;
    Ok(format!(
        "\"{}\" \"{}\"\n",
        u.user.replace('"', "\"\""),
        pw.replace('"', "\"\"")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(password: Option<&str>) -> Upstream {
        Upstream {
            host: "/tmp/hb-x/s".into(),
            port: 5433,
            dbname: "bench".into(),
            user: "postgres".into(),
            password: password.map(str::to_string),
            tls: false,
        }
    }

    fn ini(u: &Upstream, mode: PoolMode, aliases: &[Alias]) -> String {
        let s = IniSettings {
            upstream: u,
            port: 6543,
            mode,
            pool_size: 10,
            max_client_conn: 1100,
            dir: Path::new("/tmp/hb-p"),
            generated_password: false,
        };
        render_ini(&s, aliases).expect("renders")
    }

    #[test]
    fn the_ini_has_a_private_port_the_pool_and_no_password() {
        let u = upstream(Some("s3cret'pw"));
        let text = ini(&u, PoolMode::Transaction, &[]);
        assert!(
            text.contains("* = host='/tmp/hb-x/s' port=5433\n"),
            "{text}"
        );
        assert!(text.contains("listen_addr = 127.0.0.1\nlisten_port = 6543\n"));
        assert!(text.contains("unix_socket_dir = \n"));
        assert!(text.contains("pool_mode = transaction\ndefault_pool_size = 10\n"));
        assert!(text.contains("auth_type = scram-sha-256\n"));
        assert!(text.contains("admin_users = postgres\n"));
        assert!(
            !text.contains("s3cret"),
            "the password stays in the userlist"
        );
        assert!(
            !text.contains("server_reset_query"),
            "unused in transaction mode"
        );
        let trust = ini(&upstream(None), PoolMode::Session, &[]);
        assert!(trust.contains("auth_type = trust\n"));
        let mine = IniSettings {
            upstream: &u,
            port: 6543,
            mode: PoolMode::Transaction,
            pool_size: 10,
            max_client_conn: 1100,
            dir: Path::new("/tmp/hb-p"),
            generated_password: true,
        };
        let generated = render_ini(&mine, &[]).expect("renders");
        assert!(generated.contains("auth_type = md5\n"), "{generated}");
        assert!(trust.contains(&format!("server_reset_query = {SESSION_RESET_QUERY}\n")));
        assert!(!SESSION_RESET_QUERY.contains("RESET ALL"));
    }

    #[test]
    fn the_userlist_holds_the_password_quoted() {
        assert!(!format!("{:?}", upstream(Some("s3cret"))).contains("s3cret"));
        let text = render_userlist(&upstream(Some("a\"b"))).expect("renders");
        assert_eq!(text, "\"postgres\" \"a\"\"b\"\n");
        assert_eq!(
            render_userlist(&upstream(None)).expect("renders"),
            "\"postgres\" \"\"\n"
        );
        assert!(render_userlist(&upstream(Some("a\nb"))).is_err());
    }

    #[test]
    fn settings_become_a_quoted_connect_query_on_an_alias() {
        let q = connect_query(&[
            ("search_path".into(), "hb_daily_limit".into()),
            ("application_name".into(), "it's".into()),
        ])
        .expect("query");
        assert_eq!(
            q,
            "select set_config('search_path', 'hb_daily_limit', false), \
             set_config('application_name', 'it''s', false)"
        );
        let a = Alias {
            name: "hotbench_1".into(),
            connect_query: q,
        };
        let text = ini(&upstream(None), PoolMode::Transaction, &[a]);
        // Each ' of the query doubled again inside the connection string's quotes.
        assert!(
            text.contains(
                "hotbench_1 = host='/tmp/hb-x/s' port=5433 dbname='bench' connect_query='select \
                 set_config(''search_path'', ''hb_daily_limit'', false), \
                 set_config(''application_name'', ''it''''s'', false)'\n"
            ),
            "{text}"
        );
        assert!(connect_query(&[("x".into(), "a\nb".into())]).is_err());
    }

    #[test]
    fn users_the_lists_cannot_hold_are_refused() {
        for bad in ["a,b", "a b", "a\"b", ""] {
            assert!(check_user(bad).is_err(), "{bad:?}");
        }
        check_user("app_user-1@x").expect("plain names pass");
        assert_eq!(PoolMode::parse("session"), Some(PoolMode::Session));
        assert_eq!(PoolMode::parse("statement"), None);
    }
}
