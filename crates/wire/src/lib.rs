//! PostgreSQL connections for hotbench: connection options (conninfo, URL, `PG*`
//! environment, `~/.pgpass`), start-up (TCP/Unix, TLS via rustls, trust/password/md5/
//! SCRAM-SHA-256), message framing for a non-blocking engine, and a small blocking query
//! API for setup, probes and `-i`.
//!
//! The wire format itself comes from `postgres-protocol` (no I/O); this crate adds the
//! sockets and the libpq behaviour around it.
//!
//! # Flow
//!
//! ```no_run
//! use hotbench_wire::{Config, Connector};
//! let cfg = Config::from_cli(Some("localhost"), None, None, Some("bench"))?;
//! let params = cfg.resolve()?;              // environment, pgpass, defaults
//! let connector = Connector::new(params);   // share across clients (TLS config cached)
//! let mut conn = connector.connect()?;      // blocking start-up
//! let rows = conn.simple_query("SELECT 1")?;
//! # Ok::<(), hotbench_wire::Error>(())
//! ```
//!
//! # Non-blocking use (the engine)
//!
//! After `connect`, call [`Connection::set_nonblocking`]`(true)` and register
//! [`Connection::as_raw_fd`](std::os::fd::AsRawFd::as_raw_fd) with the poller. Per
//! transaction: encode into [`Connection::out_buf`] with [`encode`], call
//! [`Connection::flush`] (`false` → wait for WRITABLE and flush again); on READABLE call
//! [`Connection::fill`] (`Ok(0)` = server closed, `WouldBlock` = spurious) and pop
//! messages with [`Connection::next_message`] until `None`. With TLS, `fill` drains every
//! decrypted byte out of rustls, so level-triggered readiness stays truthful; after a
//! `flush` returning `false` keep WRITABLE interest until it returns `true`.

mod binding;
pub mod cancel;
pub mod config;
pub mod conn;
mod conninfo;
pub mod encode;
pub mod error;
pub mod pgpass;
pub mod query;
pub mod reader;
pub mod resolve;
pub mod sqlstate;
mod startup;
mod stream;
mod tls;

pub use cancel::CancelToken;
pub use config::{ChannelBindingMode, Config, Form, SslMode, TargetSessionAttrs};
pub use conn::{Connection, NoticeHandler, TxStatus};
pub use error::{ConfigError, ConnectAttempt, ConnectCause, ConnectError, DbError, Error};
pub use query::{CopyIn, QueryResult};
pub use reader::MessageReader;
pub use resolve::{ConnectParams, Environment, Host, Target};
pub use startup::Connector;

/// Backend messages as parsed by `postgres-protocol` (re-exported so the engine uses the
/// same version).
pub use postgres_protocol::message::backend;
pub use postgres_protocol::message::backend::Message;

/// Re-exported so callers use the same `bytes` version.
pub use bytes;
/// Re-exported: the trait behind `DataRowBody::ranges()` and friends.
pub use fallible_iterator;
