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
//! Start-up is blocking (bounded by `connect_timeout`); afterwards:
//!
//! 1. [`Connection::set_nonblocking`]`(true)`; register
//!    [`as_raw_fd`](std::os::fd::AsRawFd::as_raw_fd) with the poller (level-triggered).
//! 2. Per transaction, encode into [`Connection::out_buf`] with [`encode`] (one Query, or
//!    Parse/Bind/Describe/Execute…/Sync) and call [`Connection::flush`]: `Ok(true)` = all
//!    sent; `Ok(false)` = keep WRITABLE interest and call `flush` again when writable.
//! 3. On READABLE call [`Connection::fill`]: `Ok(0)` = the server closed the connection,
//!    `Err(WouldBlock)` = spurious wake-up, other errors = connection lost. Then pop
//!    [`Connection::next_message`] until `Ok(None)`; messages are `Bytes` views into one
//!    reused buffer (no allocation per message in steady state).
//! 4. Server errors: [`DbError::from_error_response`], classify by [`DbError::code`], a [`SqlState`];
//!    [`DbError::is_fatal`] means the session is over. [`Connection::cancel_token`] sends
//!    a CancelRequest from any thread.
//!
//! **TLS caveats.** rustls sits between the socket and the plaintext. `fill` drains every
//! decrypted byte out of rustls, so after `fill` + popping all messages nothing hides in
//! rustls and level-triggered readiness stays truthful; if you read some other way, check
//! [`Connection::has_buffered_input`] before sleeping. Encrypted output can remain inside
//! rustls after the socket refuses more: `flush` then returns `false` and
//! [`Connection::wants_write`] stays true until a later `flush` succeeds; keep WRITABLE
//! interest meanwhile. A read may also make rustls want to write (key update, alert); `fill`
//! tries that opportunistically, and `wants_write` reports what is left.
//!
//! **Blocking use** (setup, probes, `-i`): [`Connection::simple_query`],
//! [`Connection::execute`], [`Connection::query_params`], [`Connection::copy_in`] /
//! [`Connection::copy_in_start`]. They work in either socket mode (polling on
//! `WouldBlock`); [`Connection::set_io_timeout`] bounds them in blocking mode.
//!
//! Not supported: GSSAPI/SSPI/Kerberos auth, `service` files, direct TLS negotiation
//! (`sslnegotiation=direct`), non-blocking start-up, COPY TO STDOUT data (discarded).

pub mod binary;
mod binding;
pub mod cancel;
pub mod config;
pub mod conn;
mod conninfo;
pub mod encode;
pub mod engine_profile;
pub mod error;
mod error_position;
pub mod flavor;
pub mod pgpass;
pub mod query;
pub mod reader;
pub mod resolve;
pub mod results;
mod sqlstate;
mod startup;
mod stream;
mod tls;

pub use binary::BinaryResult;
pub use cancel::{cancel_all, CancelToken};
pub use config::{ChannelBindingMode, Config, Form, LoadBalanceHosts, SslMode, TargetSessionAttrs};
pub use conn::{Connection, NoticeHandler, TxStatus};
pub use engine_profile::Engine;
pub use error::{ConfigError, ConnectAttempt, ConnectCause, ConnectError, DbError, Error};
pub use error_position::lines as error_position_lines;
pub use flavor::engine_of;
pub use query::{CopyIn, QueryResult};
pub use reader::MessageReader;
pub use resolve::{ConnectParams, Environment, Host, Target};
pub use sqlstate::SqlState;
pub use startup::{Connector, Spread};
pub use stream::Interrupter;

/// Backend messages as parsed by `postgres-protocol` (re-exported so the engine uses the
/// same version).
pub use postgres_protocol::message::backend;
pub use postgres_protocol::message::backend::Message;

/// Re-exported so callers use the same `bytes` version.
pub use bytes;
/// Re-exported: the trait behind `DataRowBody::ranges()` and friends.
pub use fallible_iterator;
