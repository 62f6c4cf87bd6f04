//! The null server: a PostgreSQL-protocol responder with canned replies (`hotbench
//! null-server`). It answers start-up, simple queries and the extended protocol well enough
//! for pgbench's and hotbench's built-in scripts in every query mode, and costs far less per
//! transaction than a real server (no parsing, planning, locking or WAL), so a client pinned
//! beside it becomes the bottleneck and client engines can be compared on a small machine
//! (`bench/client-bound`). It is a measuring instrument, not a database: every SELECT returns
//! one row, every UPDATE one row updated.

mod canned;
mod serve;
mod session;

pub use serve::{serve, Listeners, Options};
pub use session::{Flow, Session};
