//! Which database a command talks to: the one the user named (flags, positional dbname or
//! URL, `PG*` environment), or else the default embedded server, started for the command
//! and stopped afterwards unless `hotbench server start` keeps one running; and what stands
//! in front of it for the benchmark clients (a pooler, `crate::pooler`), from the run
//! settings every command resolves its target with.

use hotbench_pgserver::{ensure_default_server, DefaultGuard, DefaultOptions};
use hotbench_wire::Config;

use crate::fail::{Fail, Result};
use crate::flags::conn::{ConnArgs, EmbeddedArgs};
use crate::pooler::{Pooler, PoolerRequest};

/// Connection options as given on the command line.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TargetArgs {
    pub conn: ConnArgs,
    pub embedded: EmbeddedArgs,
    pub dbname: Option<String>,
    /// The command's run settings, for those about the target (what stands in front of the
    /// server, say): every command resolves its target with them.
    pub settings: hotbench_settings::RunSettings,
    /// The embedded server whatever names another (`diagnose --run`: its ladder writes, so
    /// it never runs where `PG*` variables, flags or a database name point).
    pub embedded_only: bool,
}

/// The resolved target; holds the embedded server (if any) alive.
pub struct Target {
    /// The server as named (straight to it; your PgBouncer when `--pooler-admin` reads it).
    pub config: Config,
    /// The pooler in front of it, if any (declared before `embedded`: it stops first).
    pub pooler: Option<Pooler>,
    pub embedded: Option<DefaultGuard>,
    /// What named the database (`-h`, `the database name "mydb"`, `PGHOST`), when one was.
    named_by: Option<String>,
}

impl Target {
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }

    /// The benchmark clients' connection options: through hotbench's PgBouncer when there
    /// is one, else the server as named.
    pub fn clients_config(&self) -> Result<Config> {
        match &self.pooler {
            Some(p) => p.clients(&self.config),
            None => Ok(self.config.clone()),
        }
    }

    /// Another hotbench was using the embedded server when this command joined it.
    pub fn is_shared(&self) -> bool {
        self.embedded
            .as_ref()
            .is_some_and(|g| g.shared_with_another())
    }

    /// Another hotbench joined the embedded server while this command used it.
    pub fn joined_by_another(&self) -> bool {
        self.embedded
            .as_ref()
            .is_some_and(|g| g.joined_by_another())
    }

    pub fn is_fast(&self) -> bool {
        self.embedded.as_ref().is_some_and(|g| g.is_fast())
    }

    pub fn describe(&self) -> String {
        match &self.embedded {
            Some(g) => format!("embedded PostgreSQL {} ({})", g.version(), g.url()),
            None => self.config.masked(),
        }
    }
}

/// Another hotbench command on the same embedded server, noted in every record alike.
impl hotbench_engine::SharedServer for Target {
    fn shared(&self) -> bool {
        self.is_shared()
    }

    fn joined_since(&self, since: std::time::SystemTime) -> bool {
        // A command that joined a shared server was warned at its start.
        self.embedded
            .as_ref()
            .is_some_and(|g| !g.shared_with_another() && g.joined_since(since))
    }
}

const TARGET_ENV: [&str; 5] = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"];

/// What named a database (so no embedded server is started), for the hint on a failed
/// connection.
fn named_by(args: &TargetArgs) -> Option<String> {
    if args.conn.host.is_some() {
        return Some("-h".into());
    }
    if args.conn.port.is_some() {
        return Some("-p".into());
    }
    if let Some(db) = &args.dbname {
        let shown = if db.contains('=') || db.contains("://") {
            "a connection string".to_string()
        } else {
            format!("the database name \"{db}\"")
        };
        return Some(shown);
    }
    TARGET_ENV
        .iter()
        .find(|v| std::env::var(v).is_ok_and(|s| !s.is_empty()))
        .map(|v| v.to_string())
}

/// Adds the one-line hint to a connection failure when the user's naming of a database is
/// what turned the embedded server off: otherwise `hotbench run -i mydb` on a fresh machine
/// fails with a socket error and nothing says why.
pub fn with_named_hint(f: Fail, target: &Target) -> Fail {
    match (&target.named_by, &f.hint) {
        (Some(by), None) => f.hint(format!(
            "{by} selects a server you run, so the embedded server was not started; \
             leave out the database name, -h, -p and PG* variables to use it"
        )),
        _ => f,
    }
}

pub fn resolve(args: &TargetArgs, quiet: bool) -> Result<Target> {
    if let Some(by) = named_by(args).filter(|_| !args.embedded_only) {
        let config = Config::from_cli(
            args.conn.host.as_deref(),
            args.conn.port.as_deref(),
            args.conn.username.as_deref(),
            args.dbname.as_deref(),
        )
        .map_err(|e| Fail::input(e.to_string()))?;
        let pooler = Pooler::start(&pooler_request(&args.settings)?, &config)?;
        return Ok(Target {
            config,
            pooler,
            embedded: None,
            named_by: Some(by),
        });
    }
    let opts = DefaultOptions {
        bins: args.embedded.bin_options(),
        quiet,
        ..DefaultOptions::default()
    };
    let guard = ensure_default_server(&opts)
        .map_err(|e| Fail::input(format!("could not start the embedded server: {e}")))?;
    let parse = |ci: &hotbench_pgserver::ConnInfo| -> Result<Config> {
        let mut c = Config::parse(&ci.socket_conninfo()).map_err(|e| Fail::input(e.to_string()))?;
        if args.embedded_only {
            pin_against_environment(&mut c)?;
        } else if let Some(user) = &args.conn.username {
            c.set("user", user)
                .map_err(|e| Fail::input(e.to_string()))?;
        }
        Ok(c)
    };
    let ci = guard.conninfo();
    let config = parse(ci)?;
    // A PgBouncer reaches the server through its trusted socket and needs no password: it
    // makes one of its own for the clients (cheaper to log in with than the server's SCRAM).
    let upstream = parse(&ci.with_user(&ci.user, None))?;
    let pooler = Pooler::start(&pooler_request(&args.settings)?, &upstream)?;
    Ok(Target {
        config,
        pooler,
        embedded: Some(guard),
        named_by: None,
    })
}

/// Every option a `PG*` variable (or `~/.pgpass`) could fill is set explicitly to libpq's
/// default, so wherever this configuration is resolved (the ladder's setup, its clients,
/// probes) nothing of the environment applies: `PGHOSTADDR` cannot send it to another
/// server, `PGOPTIONS`/`PGSSLMODE`/`PGPASSWORD` meant for the user's server never reach it.
fn pin_against_environment(config: &mut Config) -> Result<()> {
    let unset = |c: &Option<String>| c.is_none();
    let mut pins: Vec<(&str, &str)> = vec![
        ("hostaddr", ""),
        ("sslmode", "prefer"),
        ("sslrootcert", ""),
        ("sslcert", ""),
        ("sslkey", ""),
        ("application_name", ""),
        ("connect_timeout", "0"),
        ("options", ""),
        ("client_encoding", ""),
        ("target_session_attrs", "any"),
        ("channel_binding", "prefer"),
        ("load_balance_hosts", "disable"),
    ];
    // The embedded server's own password (file), when its conninfo names one, is kept.
    if unset(&config.password) {
        pins.push(("password", ""));
    }
    if unset(&config.passfile) {
        pins.push(("passfile", ""));
    }
    for (k, v) in pins {
        config
            .set(k, v)
            .map_err(|e| Fail::input(format!("embedded server connection: {e}")))?;
    }
    Ok(())
}

/// The pooler the run settings ask for: `--pooler pgbouncer[:MODE]`, `--pool-size N`
/// (implies a transaction pool), `--pgbouncer-bin`, or your own with `--pooler-admin`.
pub fn pooler_request(s: &hotbench_settings::RunSettings) -> Result<PoolerRequest> {
    let sizes = s.pool_size.as_ref().map(|p| p.0.as_slice()).unwrap_or(&[]);
    if sizes.len() > 1 {
        return Err(Fail::input(
            "--pool-size takes one size here; a list of sizes is for hotbench sweep",
        ));
    }
    Ok(PoolerRequest::new(
        s.pooler,
        sizes.first().copied(),
        s.pgbouncer_bin.clone(),
        s.pooler_admin.clone(),
    ))
}

/// The pool sizes `sweep --pool-size 4,8,16` goes through (empty: not a pool-size sweep).
pub fn pool_sizes(s: &hotbench_settings::RunSettings) -> Vec<u32> {
    match &s.pool_size {
        Some(p) if p.0.len() > 1 => p.0.clone(),
        _ => Vec::new(),
    }
}

/// `s` for one point of a pool-size sweep: a pool of `n`, or no pooler at all (`None`,
/// the baseline).
pub fn with_pool_size(
    s: &hotbench_settings::RunSettings,
    n: Option<u32>,
) -> hotbench_settings::RunSettings {
    let mut s = s.clone();
    match n {
        Some(n) => s.pool_size = Some(hotbench_settings::run::PoolSizes(vec![n])),
        None => {
            s.pool_size = None;
            s.pooler = None;
            s.pgbouncer_bin = None;
        }
    }
    s
}

/// The server a read-only sampler (`diagnose`, `capture`) reads, and its connection
/// parameters: resolved as every command resolves its target, with no run setting (they run
/// no workload).
pub fn sampled(
    conn: &ConnArgs,
    embedded: &EmbeddedArgs,
    dbname: &Option<String>,
) -> Result<(Target, hotbench_wire::ConnectParams)> {
    let target = resolve(
        &TargetArgs {
            conn: conn.clone(),
            embedded: embedded.clone(),
            dbname: dbname.clone(),
            settings: Default::default(),
            embedded_only: false,
        },
        false,
    )?;
    let params = target
        .config
        .resolve()
        .map_err(|e| Fail::input(e.to_string()))?;
    Ok((target, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_wire::{Environment, Host, SslMode};

    /// `diagnose --run`'s embedded connection resolves to the embedded server's socket, role
    /// and database with every libpq variable set to point elsewhere: no `PGHOSTADDR`
    /// detour, no `PGOPTIONS`, `PGSSLMODE`, `PGPASSWORD` or pgpass file of the user's server.
    #[test]
    fn the_embedded_connection_ignores_every_libpq_variable() {
        let mut config =
            Config::parse("host=/tmp/hb-embedded port=5499 user=hotbench dbname=hotbench")
                .expect("conninfo");
        pin_against_environment(&mut config).expect("pinned");
        let vars = [
            ("PGHOST", "db.example.com"),
            ("PGHOSTADDR", "192.0.2.7"),
            ("PGPORT", "6543"),
            ("PGUSER", "prod"),
            ("PGPASSWORD", "secret"),
            ("PGPASSFILE", "/etc/passwd"),
            ("PGDATABASE", "production"),
            ("PGSSLMODE", "verify-full"),
            ("PGSSLROOTCERT", "/nonexistent/root.crt"),
            ("PGSSLCERT", "/nonexistent/client.crt"),
            ("PGSSLKEY", "/nonexistent/client.key"),
            ("PGAPPNAME", "prod-app"),
            ("PGCONNECT_TIMEOUT", "1"),
            ("PGOPTIONS", "-c default_transaction_read_only=on"),
            ("PGCLIENTENCODING", "LATIN1"),
            ("PGTARGETSESSIONATTRS", "read-only"),
            ("PGCHANNELBINDING", "require"),
            ("PGLOADBALANCEHOSTS", "random"),
        ];
        let env = Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            os_user: Some("someone".into()),
            home: Some("/nonexistent-home".into()),
            probe_socket_dirs: false,
        };
        let p = config.resolve_in(&env).expect("resolves");
        assert_eq!(p.targets.len(), 1);
        let t = &p.targets[0];
        assert_eq!(t.host, Host::Unix("/tmp/hb-embedded".into()));
        assert_eq!(
            (t.hostaddr, t.port, t.password.as_deref()),
            (None, 5499, None)
        );
        assert_eq!(
            (p.user.as_str(), p.dbname.as_str()),
            ("hotbench", "hotbench")
        );
        assert_eq!(p.sslmode, SslMode::Prefer);
        assert_eq!(
            (
                p.options,
                p.client_encoding,
                p.sslrootcert,
                p.sslcert,
                p.sslkey
            ),
            (None, None, None, None, None)
        );
        assert_eq!((p.application_name, p.connect_timeout), (None, None));
        assert_eq!(p.target_session_attrs, Default::default());
        assert_eq!(p.channel_binding, Default::default());
        assert_eq!(p.load_balance_hosts, Default::default());
    }
}
