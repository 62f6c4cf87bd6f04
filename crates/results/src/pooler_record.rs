//! A run through a connection pooler: which pooler stood between the clients and the server
//! (`RunRecord::pooler`), and what its admin console showed while the run went
//! (`ProbeRecord::pooler`, and `pooler` on each probe interval): clients active and waiting
//! for a server connection (PgBouncer `SHOW POOLS`), server connections in use and idle, the
//! longest wait, and the average wait, transaction and query time (`SHOW STATS` differences).
//! Typed here so the text, JSON and HTML renderers read the same fields.

use serde::{Deserialize, Serialize};

/// Above this share of client samples waiting in the pooler, a run's "top wait" is the
/// pooler's (`pooler wait 91%`) rather than the server's busiest wait event.
pub const POOLER_WAIT_TOP_PCT: f64 = 50.0;

/// The pooler a run went through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolerSetup {
    /// `pgbouncer`.
    pub kind: String,
    /// Its version (`1.18.0`).
    pub version: String,
    /// `transaction` or `session`.
    pub pool_mode: String,
    /// Server connections per pool, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_size: Option<u32>,
    /// hotbench started it for this run (`--pooler`); false: the user's own, read through
    /// `--pooler-admin`.
    pub started_by_hotbench: bool,
}

impl PoolerSetup {
    /// `PgBouncer 1.18.0, transaction pool of 10`.
    pub fn describe(&self) -> String {
        let name = if self.kind == "pgbouncer" {
            "PgBouncer"
        } else {
            self.kind.as_str()
        };
        let size = self
            .pool_size
            .map(|n| format!(" of {n}"))
            .unwrap_or_default();
        format!("{name} {}, {} pool{size}", self.version, self.pool_mode)
    }
}

/// What the pooler's admin console showed over a whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolerSummary {
    /// The pools followed (`database/user`).
    pub pools: Vec<String>,
    /// `SHOW POOLS` samples taken.
    pub samples: u64,
    /// Mean clients with a server connection or idle between transactions, per sample.
    pub clients_active_avg: f64,
    /// Mean clients that had sent a query and waited for a server connection.
    pub clients_waiting_avg: f64,
    pub clients_waiting_max: u32,
    /// Mean server connections running a client's transaction, and idle in the pool.
    pub servers_active_avg: f64,
    pub servers_idle_avg: f64,
    /// Most server connections open at once (active, idle, used, tested, logging in).
    pub servers_max: u32,
    /// Percent of client samples spent waiting in the pooler: waiting / (active + waiting).
    pub wait_pct: f64,
    /// Longest a waiting client had waited at any sample (`maxwait`), ms.
    pub max_wait_ms: f64,
    /// `SHOW STATS` over the run: transactions and queries through the pools…
    pub transactions: u64,
    pub queries: u64,
    /// …and what they took per transaction (JSON: the fields inline).
    #[serde(flatten)]
    pub times: PoolerTimes,
}

/// Per transaction through the pools: the time its client waited for a server connection,
/// the time it held one, PgBouncer's own transaction time (from the first query to the end,
/// the wait included: measured so on 1.18), and PgBouncer's time per query (likewise), ms;
/// absent without transactions (queries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolerTimes {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_wait_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_hold_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_xact_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_query_ms: Option<f64>,
}

impl PoolerSummary {
    /// `pooler wait 91%` when clients mostly waited in the pooler.
    pub fn top_wait_label(&self) -> Option<String> {
        (self.samples > 0 && self.wait_pct >= POOLER_WAIT_TOP_PCT)
            .then(|| format!("pooler wait {:.0}%", self.wait_pct))
    }
}

/// The pooler over one probe stats interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolerInterval {
    /// Means over the interval's `SHOW POOLS` samples.
    pub clients_active: f64,
    pub clients_waiting: f64,
    pub servers_active: f64,
    pub servers_idle: f64,
    /// Longest wait seen at a sample of the interval, ms.
    pub max_wait_ms: f64,
    /// Transactions through the pools in the interval, and what they took.
    pub transactions: u64,
    #[serde(flatten)]
    pub times: PoolerTimes,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pooler_is_the_top_wait_only_when_clients_mostly_wait_there() {
        let mut s = PoolerSummary {
            samples: 30,
            wait_pct: 90.4,
            ..Default::default()
        };
        assert_eq!(s.top_wait_label().as_deref(), Some("pooler wait 90%"));
        s.wait_pct = 49.9;
        assert_eq!(s.top_wait_label(), None);
        s.wait_pct = 100.0;
        s.samples = 0;
        assert_eq!(s.top_wait_label(), None, "nothing sampled, nothing said");
    }

    #[test]
    fn per_transaction_times_stay_fields_of_the_record_in_json() {
        let s = PoolerSummary {
            transactions: 7,
            times: PoolerTimes {
                avg_wait_ms: Some(4.0),
                avg_hold_ms: Some(1.5),
                ..Default::default()
            },
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::to_value(&s).unwrap();
        assert_eq!(v["avg_wait_ms"], 4.0);
        assert_eq!(v["avg_hold_ms"], 1.5);
        assert!(
            v.get("avg_xact_ms").is_none() && v.get("times").is_none(),
            "{v}"
        );
        let back: PoolerSummary = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
        let iv: PoolerInterval =
            serde_json::from_str(r#"{"transactions": 3, "avg_query_ms": 0.25}"#).unwrap();
        assert_eq!((iv.transactions, iv.times.avg_query_ms), (3, Some(0.25)));
    }

    #[test]
    fn a_setup_describes_itself() {
        let s = PoolerSetup {
            kind: "pgbouncer".into(),
            version: "1.18.0".into(),
            pool_mode: "transaction".into(),
            pool_size: Some(10),
            started_by_hotbench: true,
        };
        assert_eq!(s.describe(), "PgBouncer 1.18.0, transaction pool of 10");
        let back: PoolerSetup = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
