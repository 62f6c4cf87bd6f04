//! Who the sampled sessions were (`ProbeRecord::sessions`): which statements they ran, who
//! blocked their lock waits, who held the xmin horizon, which relations their lock waits
//! queued on, and how long they sat idle inside a transaction between statements. The probe
//! records it when asked to observe sessions (`hotbench diagnose` does; a benchmark run's
//! probe does not), so a diagnosis can name the statements and holders behind a wait.
//!
//! Query texts are normalized by the probe (literals replaced by `?`): a diagnosis shows the
//! shape of a statement, never the values in it. Hot-row keys are the exception, and are in
//! `ProbeRecord::hot_rows`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionsRecord {
    /// Activity rounds: the statements of the sampled backends were read this many times (one
    /// per stats interval).
    pub rounds: u32,
    /// Backend samples over those rounds that were not idle (active, or idle inside a
    /// transaction): the denominator of every statement's share.
    pub busy_samples: u64,
    /// Of those, samples of sessions idle inside a transaction (waiting for their client: not
    /// active time).
    pub idle_in_transaction_samples: u64,
    /// Of those, samples of sessions whose client connected over a network (`client_addr`
    /// neither empty, a Unix socket, nor loopback): zero means every client was on the
    /// server's host, and the time between their statements was the client's, not network.
    pub remote_client_samples: u64,
    /// Statements by busy samples, most first.
    pub statements: Vec<ActiveStatement>,
    /// Sessions that blocked the sampled backends' lock waits without waiting on a lock
    /// themselves (the causes of the chains, not their links), grouped by statement and
    /// state, most seen first.
    pub blockers: Vec<Blocker>,
    /// Reads of the xmin horizon's holders (one per stats interval).
    pub xmin_rounds: u32,
    /// Whatever held the oldest xmin (sessions, replication slots, prepared transactions),
    /// oldest first.
    pub xmin_holders: Vec<XminHolder>,
    /// Relations the lock waits queued on (rows placed by `pg_locks` tuple locks), most first.
    pub relation_waits: Vec<RelationWaits>,
    /// Estimated time between two statements of a transaction (ms): twice the mean time
    /// backends idle inside a transaction had been idle when sampled (a sample lands anywhere
    /// in the gap; idles of a second or more are holders, not round trips, and are left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_transaction_gap_ms: Option<f64>,
}

/// A statement the sampled backends ran, by its normalized text (with its `queryid` when the
/// server computes one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ActiveStatement {
    /// pg_stat_statements' `queryid` (`pg_stat_activity.query_id`, PostgreSQL 14+), or empty.
    pub queryid: String,
    /// Normalized text (literals replaced by `?`), first 300 characters.
    pub query: String,
    /// Busy backend samples running it (or idle inside a transaction after it).
    pub samples: u64,
    /// … of which waiting on a heavyweight lock.
    pub lock_waits: u64,
    /// … of which idle inside a transaction after it (a client round trip).
    pub idle_in_transaction: u64,
    /// Distinct backends seen running it (or idle just after it: a pool's sessions between
    /// transactions).
    pub sessions: u32,
}

/// Sessions blocking the sampled lock waits, with one statement and state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Blocker {
    pub queryid: String,
    /// Normalized text of the blocker's current (or, when idle, last) statement.
    pub query: String,
    /// `active`, `idle in transaction`, … (`prepared transaction` for a blocker with no
    /// session).
    pub state: String,
    pub application_name: String,
    /// Waiter/blocker pairs seen.
    pub samples: u64,
    /// Distinct blocking backends.
    pub sessions: u32,
    /// Some of their pids (at most 5).
    pub pids: Vec<i64>,
    /// Longest time one of them had been in `state` when seen (s).
    pub max_state_s: f64,
}

/// What held back the xmin horizon at some read: a session, a replication slot or a prepared
/// transaction, identified with the xmin it held.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct XminHolder {
    /// `session`, `replication slot` or `prepared transaction`.
    pub kind: String,
    /// The pid, slot name or gid.
    pub id: String,
    /// Application name (sessions), slot type or the transaction's owner.
    pub application_name: String,
    /// `idle in transaction`, `active`, … (sessions); `active`/`inactive` (slots).
    pub state: String,
    /// The xmin it held.
    pub xmin: String,
    /// Largest `age(xmin)` seen (transactions).
    pub xmin_age: i64,
    /// Age of its transaction when last seen (s), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xact_age_s: Option<f64>,
    /// Normalized text of its current (or last) statement.
    pub query: String,
    /// Reads at which it held this xmin among the oldest (out of `xmin_rounds`).
    pub seen: u32,
}

/// A relation the lock waits queued on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RelationWaits {
    pub relation: String,
    /// Lock-waiting backend samples queued on its rows.
    pub lock_waits: u64,
    /// Percent of all lock-waiting backend samples at the `pg_locks` reads.
    pub pct: f64,
    /// Distinct rows waited on (keys, or ctids without a primary key or SELECT on the table).
    pub rows: u64,
    /// For a partitioned table, the partitions whose rows were waited on (their waits count
    /// here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<String>,
}
