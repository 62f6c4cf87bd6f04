//! The default embedded server behind commands given no database, and `hotbench server …`.
//!
//! One persistent cluster per major version in `<data home>/pg<major>` (`data/`, `run/` socket
//! directory, `postgres.log`, `hotbench.state`), created on first use. A command calls
//! [`ensure_default_server`] and holds the [`DefaultGuard`]: if the guard started the server it
//! stops it when dropped (or when [`Stopper::stop`] is called from a Ctrl-C handler, or, if
//! the process dies, through its guardian). `hotbench server start` ([`server_start`]) leaves
//! one running until [`server_stop`]. Every entry point first reconciles the state file with
//! reality: an orphan postmaster whose owning command is gone is reported and stopped, a stale
//! state file or `postmaster.pid` is reported and removed. A `flock` on `<base>/lock`
//! serialises concurrent commands.

use std::path::PathBuf;

use crate::binaries::BinOptions;

mod commands;
mod control;
mod guard;
mod layout;
mod startup;

pub use commands::{
    server_reset, server_start, server_status, server_stop, server_url, Keeper, Running, Status,
};
pub use control::{Control, Restarted};
pub use guard::{ensure_default_server, DefaultGuard, Stopper};

/// Options of the default server (plain values, filled by the CLI from its flags).
#[derive(Debug, Clone, Default)]
pub struct DefaultOptions {
    /// `--pg-bin` / `--pg-version`.
    pub bins: BinOptions,
    /// `--dir D`: base directory instead of `<data home>/pg<major>`.
    pub dir: Option<PathBuf>,
    /// `--fast`: fsync, synchronous_commit and full_page_writes off for this start.
    pub fast: bool,
    /// TCP port (error if taken); default: the last one used, else a free one.
    pub port: Option<u16>,
    /// Extra settings for this start.
    pub settings: Vec<(String, String)>,
    /// Don't print progress lines to stderr.
    pub quiet: bool,
    /// `server stop|reset --force`: even while a command (a run, a ladder) uses the server.
    pub force: bool,
}

fn say(opts: &DefaultOptions, msg: &str) {
    if !opts.quiet {
        eprintln!("hotbench: {msg}");
    }
}
