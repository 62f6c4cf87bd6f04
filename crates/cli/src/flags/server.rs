//! `hotbench server …`: manage the default embedded PostgreSQL.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    #[command(subcommand)]
    pub action: ServerAction,
}

/// Options shared by every server action.
#[derive(Debug, Clone, Args)]
pub struct ServerOpts {
    /// PostgreSQL major version (downloaded when not installed)
    #[arg(long = "pg-version", value_name = "N")]
    pub pg_version: Option<u32>,
    /// Directory holding the PostgreSQL binaries to use
    #[arg(long = "pg-bin", value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
    /// Base directory of the server instead of the default under the data directory
    #[arg(long = "dir", value_name = "D")]
    pub dir: Option<PathBuf>,
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
        #[arg(long, value_name = "PORT")]
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
    /// Print its connection URL (starts nothing)
    Url {
        #[command(flatten)]
        opts: ServerOpts,
    },
    /// Stop it and delete its data directory
    Reset {
        #[command(flatten)]
        opts: ServerOpts,
        /// Reset it even while a run or ladder is using it
        #[arg(long)]
        force: bool,
    },
}
