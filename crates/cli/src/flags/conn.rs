//! Where the database is: the connection flags (`-h`, `-p`, `-U`) and the embedded server's
//! (`--pg-version`, `--pg-bin`), declared once and flattened into every command that
//! connects (`run`, `sweep`, `scenario run`, `demo`; `server` takes the embedded ones).

use std::path::PathBuf;

use clap::Args;
use hotbench_pgserver::BinOptions;

const COMMON: &str = "Common options";
const EMBEDDED: &str = "Embedded server (used when no database is given)";

/// The server the user names; none of them set (and no database name or `PG*` variable)
/// means the embedded server.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct ConnArgs {
    /// Database server host or socket directory
    #[arg(
        short = 'h',
        long = "host",
        value_name = "HOSTNAME",
        help_heading = COMMON
    )]
    pub host: Option<String>,
    /// Database server port number
    #[arg(
        short = 'p',
        long = "port",
        value_name = "PORT",
        help_heading = COMMON
    )]
    pub port: Option<String>,
    /// Connect as specified database user
    #[arg(
        short = 'U',
        long = "username",
        value_name = "USERNAME",
        help_heading = COMMON
    )]
    pub username: Option<String>,
}

/// Which PostgreSQL the embedded server runs.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct EmbeddedArgs {
    /// PostgreSQL major version of the embedded server (downloaded when not installed)
    #[arg(long = "pg-version", value_name = "N", help_heading = EMBEDDED)]
    pub pg_version: Option<u32>,
    /// Directory holding the PostgreSQL binaries to use
    #[arg(long = "pg-bin", value_name = "DIR", help_heading = EMBEDDED)]
    pub pg_bin: Option<PathBuf>,
}

impl EmbeddedArgs {
    /// Where the embedded server's binaries come from.
    pub fn bin_options(&self) -> BinOptions {
        BinOptions {
            pg_bin: self.pg_bin.clone(),
            pg_version: self.pg_version,
            no_download: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{scenario::ScenarioCommand, Command};

    /// The connection and embedded-server flags a command line parses to.
    fn parsed(argv: &[&str]) -> (ConnArgs, EmbeddedArgs) {
        let (cli, _) = crate::parse_command_line(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        match cli.command {
            Command::Run(a) => (a.conn, a.embedded),
            Command::Sweep(a) => (a.run.conn, a.run.embedded),
            Command::Demo(a) => (a.ladder.conn, a.ladder.embedded),
            Command::Scenario(s) => match s.command {
                ScenarioCommand::Run(a) => (a.ladder.conn, a.ladder.embedded),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_connecting_command_reads_the_same_flags() {
        let flags = ["-h", "db1", "-p", "5433", "-U", "app", "--pg-version", "16"];
        let prefixes: [&[&str]; 4] = [
            &["hotbench", "run"],
            &["hotbench", "sweep", "-c", "1,2"],
            &["hotbench", "demo"],
            &["hotbench", "scenario", "run", "queue"],
        ];
        for prefix in prefixes {
            let argv: Vec<&str> = prefix.iter().chain(&flags).copied().collect();
            let (conn, embedded) = parsed(&argv);
            let got = (
                conn.host.as_deref(),
                conn.port.as_deref(),
                conn.username.as_deref(),
                embedded.pg_version,
            );
            assert_eq!(
                got,
                (Some("db1"), Some("5433"), Some("app"), Some(16)),
                "{prefix:?}"
            );
        }
    }
}
