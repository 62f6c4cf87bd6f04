//! Which database a command talks to: the one the user named (flags, positional dbname or
//! URL, `PG*` environment), or else the default embedded server, started for the command
//! and stopped afterwards unless `hotbench server start` keeps one running.

use hotbench_pgserver::{ensure_default_server, BinOptions, DefaultGuard, DefaultOptions};
use hotbench_wire::Config;

use crate::fail::{Fail, Result};

/// Connection options as given on the command line.
#[derive(Debug, Default, Clone)]
pub struct TargetArgs {
    pub host: Option<String>,
    pub port: Option<String>,
    pub username: Option<String>,
    pub dbname: Option<String>,
    pub pg_version: Option<u32>,
    pub pg_bin: Option<std::path::PathBuf>,
}

/// The resolved target; holds the embedded server (if any) alive.
pub struct Target {
    pub config: Config,
    pub embedded: Option<DefaultGuard>,
}

impl Target {
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
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

const TARGET_ENV: [&str; 5] = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"];

/// True when the user named a database (so no embedded server is started).
pub fn names_a_database(args: &TargetArgs) -> bool {
    args.host.is_some()
        || args.port.is_some()
        || args.dbname.is_some()
        || TARGET_ENV
            .iter()
            .any(|v| std::env::var(v).is_ok_and(|s| !s.is_empty()))
}

pub fn resolve(args: &TargetArgs, quiet: bool) -> Result<Target> {
    if names_a_database(args) {
        let config = Config::from_cli(
            args.host.as_deref(),
            args.port.as_deref(),
            args.username.as_deref(),
            args.dbname.as_deref(),
        )
        .map_err(|e| Fail::input(e.to_string()))?;
        return Ok(Target {
            config,
            embedded: None,
        });
    }
    let opts = DefaultOptions {
        bins: BinOptions {
            pg_bin: args.pg_bin.clone(),
            pg_version: args.pg_version,
            no_download: false,
        },
        quiet,
        ..DefaultOptions::default()
    };
    let guard = ensure_default_server(&opts)
        .map_err(|e| Fail::input(format!("could not start the embedded server: {e}")))?;
    let conninfo = guard.conninfo().socket_conninfo();
    let mut config = Config::parse(&conninfo).map_err(|e| Fail::input(e.to_string()))?;
    if let Some(user) = &args.username {
        config
            .set("user", user)
            .map_err(|e| Fail::input(e.to_string()))?;
    }
    Ok(Target {
        config,
        embedded: Some(guard),
    })
}
