//! The connection pooler a command's clients go through: `--pooler pgbouncer[:transaction|
//! session]` starts a throwaway PgBouncer (`hotbench_pgserver::pgbouncer`) in front of the
//! target, embedded or yours, for the command; `--pooler-admin URL` reads your own
//! PgBouncer's admin console while the clients go to the target you named (that PgBouncer).
//!
//! With hotbench's own pooler only the benchmark clients go through it: setup, checks,
//! monitors and probes go straight to the server (they must not take server connections
//! from the pool being measured, nor queue behind its clients), and a scenario's session
//! settings reach the clients' server connections through a database alias
//! ([`ClientRoute`]), since PgBouncer refuses the `options` start-up parameter.

use std::path::PathBuf;
use std::sync::Mutex;

use hotbench_engine::QueryMode;
use hotbench_pgserver::pgbouncer::{self, PgBouncer, PgBouncerOptions, PoolMode, Upstream};
use hotbench_probe::pooler::{self as admin, AdminConsole, PoolerFacts, PoolerSource};
use hotbench_scenario::ClientRoute;
use hotbench_settings::PoolerSpec;
use hotbench_stats::PoolerSetup;
use hotbench_wire::{Config, ConnectParams, Host};

use crate::fail::{Fail, Result};

/// Server connections per pool when `--pool-size` is not given (PgBouncer's own default).
pub const DEFAULT_POOL_SIZE: u32 = 20;
/// Clients the pooler accepts (more than `-c` allows with the default open-files limit).
const MAX_CLIENTS: u32 = 5000;

/// What the command line asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolerRequest {
    /// `--pooler pgbouncer[:MODE]` (or implied by `--pool-size`).
    pub mode: Option<PoolMode>,
    /// `--pool-size N`.
    pub pool_size: Option<u32>,
    /// `--pgbouncer-bin PATH`.
    pub bin: Option<PathBuf>,
    /// `--pooler-admin URL`.
    pub admin: Option<String>,
}

/// PgBouncer's pool mode for a `--pooler` setting's.
fn pool_mode(m: hotbench_settings::PoolMode) -> PoolMode {
    match m {
        hotbench_settings::PoolMode::Transaction => PoolMode::Transaction,
        hotbench_settings::PoolMode::Session => PoolMode::Session,
    }
}

impl PoolerRequest {
    /// From the settings' values: `--pooler`'s pool mode, else a transaction pool when a
    /// pool size is given.
    pub fn new(
        spec: Option<PoolerSpec>,
        pool_size: Option<u32>,
        bin: Option<PathBuf>,
        admin: Option<String>,
    ) -> PoolerRequest {
        let mode = spec
            .map(|s| pool_mode(s.mode()))
            .or(pool_size.map(|_| PoolMode::Transaction));
        PoolerRequest {
            mode,
            pool_size,
            bin,
            admin,
        }
    }

    /// Flags that do not go together, before anything starts.
    pub fn check(&self) -> Result<()> {
        if self.mode.is_some() && self.admin.is_some() {
            return Err(Fail::input(
                "--pooler starts hotbench's own PgBouncer and --pooler-admin reads yours: give one",
            ));
        }
        if self.mode.is_none() && self.bin.is_some() {
            return Err(Fail::input(
                "--pgbouncer-bin picks the program of the PgBouncer --pooler pgbouncer starts",
            ));
        }
        Ok(())
    }
}

/// hotbench's own PgBouncer, for one run (or one point of a sweep).
pub struct OwnPooler {
    bouncer: PgBouncer,
    /// The target as named (straight to the server).
    direct: Config,
    /// The client-side database the clients use now (the last alias made, or the target's).
    current_db: Mutex<String>,
    password: Option<String>,
}

/// Your own PgBouncer, read through its admin console.
pub struct TheirPooler {
    admin: ConnectParams,
    facts: PoolerFacts,
}

/// The pooler of a command, if any.
pub enum Pooler {
    Own(Box<OwnPooler>),
    Theirs(Box<TheirPooler>),
}

fn one_target(p: &ConnectParams) -> Result<&hotbench_wire::Target> {
    match p.targets.as_slice() {
        [t] => Ok(t),
        _ => Err(Fail::input(
            "--pooler puts one PgBouncer in front of one server: name a single host",
        )),
    }
}

impl Pooler {
    /// hotbench's PgBouncer, when it no longer runs (killed mid-run): what a run that
    /// lost every connection lost first. `None` while it runs, or for your own.
    pub fn gone(&self) -> Option<String> {
        match self {
            Pooler::Own(o) if !hotbench_pgserver::process::alive(o.bouncer.pid()) => Some(format!(
                "PgBouncer (pid {}), which the clients connect through, no longer runs",
                o.bouncer.pid()
            )),
            _ => None,
        }
    }

    /// Starts hotbench's PgBouncer in front of `target`, or reads yours; `None` when neither
    /// was asked for.
    pub fn start(req: &PoolerRequest, target: &Config) -> Result<Option<Pooler>> {
        req.check()?;
        if let Some(url) = &req.admin {
            return TheirPooler::read(url, target).map(|p| Some(Pooler::Theirs(Box::new(p))));
        }
        let Some(mode) = req.mode else {
            return Ok(None);
        };
        let params = target.resolve().map_err(|e| Fail::input(e.to_string()))?;
        let t = one_target(&params)?;
        let host = match (&t.host, t.hostaddr) {
            (_, Some(ip)) => ip.to_string(),
            (Host::Tcp(h), None) => h.clone(),
            (Host::Unix(dir), None) => dir.display().to_string(),
        };
        let upstream = Upstream {
            host,
            port: t.port,
            dbname: params.dbname.clone(),
            user: params.user.clone(),
            password: t.password.clone(),
            tls: params.sslmode != hotbench_wire::SslMode::Disable,
        };
        let mut opts = PgBouncerOptions::new(upstream);
        opts.mode = mode;
        opts.pool_size = req.pool_size.unwrap_or(DEFAULT_POOL_SIZE);
        opts.max_clients = MAX_CLIENTS;
        opts.bin = req.bin.clone();
        let bouncer = PgBouncer::start(&opts)
            .map_err(|e| Fail::input(format!("could not start PgBouncer: {e}")))?;
        // The server's, or the one PgBouncer was given when the server wants none.
        let password = bouncer.upstream().password.clone();
        Ok(Some(Pooler::Own(Box::new(OwnPooler {
            bouncer,
            direct: target.clone(),
            current_db: Mutex::new(params.dbname.clone()),
            password,
        }))))
    }

    /// The pooler for the record.
    pub fn setup(&self) -> PoolerSetup {
        match self {
            Pooler::Own(o) => o.setup(),
            Pooler::Theirs(t) => PoolerSetup {
                kind: "pgbouncer".into(),
                version: t.facts.version.clone(),
                pool_mode: t.facts.pool_mode.clone(),
                pool_size: t.facts.pool_size,
                started_by_hotbench: false,
            },
        }
    }

    /// The connection options of `run`'s clients: through hotbench's PgBouncer, or the
    /// target as named (your PgBouncer).
    pub fn clients(&self, target: &Config) -> Result<Config> {
        match self {
            Pooler::Own(o) => o.through(target, None).map_err(Fail::input),
            Pooler::Theirs(_) => Ok(target.clone()),
        }
    }

    /// `-M prepared` through a transaction pool that cannot keep prepared statements fails
    /// before the run, with the fix.
    pub fn check_query_mode(&self, mode: QueryMode) -> Result<()> {
        let s = self.setup();
        if mode != QueryMode::Prepared
            || s.pool_mode != "transaction"
            || pgbouncer::keeps_prepared_statements(&s.version)
        {
            return Ok(());
        }
        Err(Fail::input(format!(
            "-M prepared cannot run through {}: a transaction pool hands each transaction \
             another server connection, where the client's prepared statements do not exist",
            s.describe()
        ))
        .hint(
            "use -M extended (the same protocol without named statements), a session pool \
             (--pooler pgbouncer:session), or PgBouncer 1.21+ with max_prepared_statements",
        ))
    }

    /// Where the probe reads the pooler, and which pools are the run's: `user`'s pools of
    /// the clients' database.
    pub fn probe_source(&self, clients: &Config) -> Option<PoolerSource> {
        let params = clients.resolve().ok()?;
        let (admin, db) = match self {
            Pooler::Own(o) => (o.admin_params().ok()?, o.current_db()),
            Pooler::Theirs(t) => (t.admin.clone(), params.dbname.clone()),
        };
        Some(PoolerSource {
            admin,
            databases: vec![db],
            user: Some(params.user),
        })
    }

    /// Does the probe's own connection go through a transaction pool (your PgBouncer as
    /// the target)? Then it keeps no session state there.
    pub fn probe_through_transaction_pool(&self) -> bool {
        matches!(self, Pooler::Theirs(t) if t.facts.pool_mode != "session")
    }

    /// A ladder's route for its clients (hotbench's own pooler only).
    pub fn route(&self) -> Option<&dyn ClientRoute> {
        match self {
            Pooler::Own(o) => Some(o.as_ref()),
            Pooler::Theirs(_) => None,
        }
    }
}

impl OwnPooler {
    fn setup(&self) -> PoolerSetup {
        PoolerSetup {
            kind: "pgbouncer".into(),
            version: self.bouncer.binary().version.clone(),
            pool_mode: self.bouncer.mode().as_str().into(),
            pool_size: Some(self.bouncer.pool_size()),
            started_by_hotbench: true,
        }
    }

    fn current_db(&self) -> String {
        self.current_db
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// `base` pointed at the pooler (database `db`, else `base`'s), with the password given
    /// explicitly (a pgpass entry for the server's host would not match the pooler's).
    fn through(&self, base: &Config, db: Option<&str>) -> std::result::Result<Config, String> {
        let mut c = base.clone();
        let port = self.bouncer.port().to_string();
        let mut set = |k: &str, v: &str| c.set(k, v).map_err(|e| e.to_string());
        set("host", "127.0.0.1")?;
        set("hostaddr", "")?;
        set("port", &port)?;
        set("sslmode", "disable")?;
        if let Some(db) = db {
            set("dbname", db)?;
        }
        if let Some(pw) = &self.password {
            set("password", pw)?;
        }
        Ok(c)
    }

    fn admin_params(&self) -> std::result::Result<ConnectParams, String> {
        self.through(&self.direct, Some(pgbouncer::ADMIN_DATABASE))?
            .resolve()
            .map_err(|e| e.to_string())
    }
}

impl ClientRoute for OwnPooler {
    fn clients(
        &self,
        base: &Config,
        settings: &[(String, String)],
    ) -> std::result::Result<Config, String> {
        let alias = self
            .bouncer
            .replace_alias(settings)
            .map_err(|e| format!("PgBouncer: {e}"))?;
        let mut console = AdminConsole::connect(&self.admin_params()?)?;
        let reloaded = console.command("RELOAD");
        console.close();
        reloaded?;
        *self.current_db.lock().unwrap_or_else(|p| p.into_inner()) = alias.clone();
        self.through(base, Some(&alias))
    }

    fn setup(&self) -> PoolerSetup {
        OwnPooler::setup(self)
    }

    fn keeps_sessions(&self) -> bool {
        self.bouncer.mode() == PoolMode::Session
    }

    fn keeps_prepared_statements(&self) -> bool {
        self.keeps_sessions() || self.bouncer.binary().keeps_prepared_statements()
    }
}

impl TheirPooler {
    /// Reads your PgBouncer's console (`--pooler-admin URL`) for the pool of `target`'s
    /// database.
    fn read(url: &str, target: &Config) -> Result<TheirPooler> {
        let admin = Config::parse(url)
            .and_then(|c| c.resolve())
            .map_err(|e| Fail::input(format!("--pooler-admin: {e}")))?;
        let db = target
            .resolve()
            .map(|p| p.dbname)
            .map_err(|e| Fail::input(e.to_string()))?;
        let mut console = AdminConsole::connect(&admin)
            .map_err(|e| Fail::input(format!("--pooler-admin: {e}")))?;
        let facts = admin::read_facts(&mut console, &db)
            .map_err(|e| Fail::input(format!("--pooler-admin: {e}")))?;
        console.close();
        Ok(TheirPooler { admin, facts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_modes_of_the_settings() {
        let session = PoolerSpec::PgBouncer(hotbench_settings::PoolMode::Session);
        let req = PoolerRequest::new(Some(session), Some(8), None, None);
        assert_eq!(req.mode, Some(PoolMode::Session));
        let implied = PoolerRequest::new(None, Some(8), None, None);
        assert_eq!(
            implied.mode,
            Some(PoolMode::Transaction),
            "a pool size implies a pool"
        );
        assert_eq!(
            PoolerRequest::new(None, None, None, None),
            PoolerRequest::default()
        );
    }

    #[test]
    fn flags_that_do_not_go_together_are_refused() {
        let both = PoolerRequest {
            mode: Some(PoolMode::Transaction),
            admin: Some("postgresql://x/pgbouncer".into()),
            ..Default::default()
        };
        assert!(both.check().is_err());
        let bin_alone = PoolerRequest {
            bin: Some("/usr/sbin/pgbouncer".into()),
            ..Default::default()
        };
        let e = bin_alone.check().unwrap_err();
        assert!(e.message.contains("--pgbouncer-bin"), "{}", e.message);
        assert!(PoolerRequest::default().check().is_ok());
    }
}
