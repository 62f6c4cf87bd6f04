//! `hotbench server …`: manage the default embedded PostgreSQL.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::conn::EmbeddedArgs;

#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    #[command(subcommand)]
    pub action: ServerAction,
}

/// Options shared by every server action.
#[derive(Debug, Clone, Args)]
pub struct ServerOpts {
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    /// Base directory of the server instead of the default under the data directory
    #[arg(long = "dir", value_name = "D")]
    pub dir: Option<PathBuf>,
}

/// `--port`: a TCP port PostgreSQL accepts (1..65535; 0 would make it refuse to start).
fn port(s: &str) -> Result<u16, String> {
    s.parse::<u16>()
        .ok()
        .filter(|p| *p >= 1)
        .ok_or_else(|| format!("invalid --port \"{s}\": expected a TCP port, 1 to 65535"))
}

#[derive(Debug, Clone, Subcommand)]
pub enum ServerAction {
    /// Start the default server and keep it running; prints its URL
    Start {
        #[command(flatten)]
        opts: ServerOpts,
        /// Turn off fsync, synchronous_commit and full_page_writes (marked in every report)
        #[arg(long)]
        fast: bool,
        /// TCP port (default: the last one used, else a free one)
        #[arg(long, value_name = "PORT", value_parser = port)]
        port: Option<u16>,
    },
    /// Stop the default server
    Stop {
        #[command(flatten)]
        opts: ServerOpts,
        /// Stop it even while a run or ladder is using it
        #[arg(long)]
        force: bool,
    },
    /// Show whether it runs (and clean up after a killed hotbench)
    Status {
        #[command(flatten)]
        opts: ServerOpts,
    },
    /// Print its connection URL, naming its password file, never the password: psql "$(hotbench server url)" (starts nothing)
    Url {
        #[command(flatten)]
        opts: ServerOpts,
    },
    /// Stop it and delete its data directory (only a cluster hotbench created)
    Reset {
        #[command(flatten)]
        opts: ServerOpts,
        /// Reset it even while a run or ladder is using it
        #[arg(long)]
        force: bool,
    },
}
