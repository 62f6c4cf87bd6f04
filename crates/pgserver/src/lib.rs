//! hotbench-pgserver: the embedded throwaway PostgreSQL used when no database is given, and
//! the test harness every hotbench test gets its server from.
//!
//! - [`testing`]: `shared()` / `private()` servers for tests, cleaned up even on panic or kill.
//! - [`Server`]: start a throwaway server with [`ServerOptions`].
//! - [`default_server`]: the persistent default server and `hotbench server …` commands.
//! - [`binaries`]: find (or download, [`download`]) PostgreSQL binaries.
//! - [`pgbouncer`]: a throwaway PgBouncer in front of a server, cleaned up the same way.
//! - [`pause`] and [`default_server::Control`]: what perturbations do to a server's processes.
//!
//! PostgreSQL refuses to run as root; as root we run it as a dedicated unprivileged account
//! ([`account`]). Every cluster we create trusts only its 0700 socket directory and wants a
//! generated password over TCP ([`secret`]), which hotbench's own clients are given.

pub mod account;
pub mod binaries;
pub mod child;
pub mod cluster;
pub mod config;
pub mod conninfo;
pub mod default_server;
pub mod download;
pub mod error;
pub mod guardian;
pub mod limits;
pub mod lock_file;
pub mod paths;
pub mod pause;
pub mod pgbouncer;
pub mod ports;
pub mod process;
pub mod secret;
pub mod server;
pub mod state;
pub mod template;
#[cfg(feature = "testing")]
pub mod testing;

pub use binaries::{BinOptions, PgBinaries};
pub use config::{AuthMethod, ClusterOptions, TlsMode};
pub use conninfo::ConnInfo;
pub use default_server::{
    ensure_default_server, Control, DefaultGuard, DefaultOptions, Restarted, Status, Stopper,
};
pub use error::{Error, Result};
pub use server::{Server, ServerOptions};
