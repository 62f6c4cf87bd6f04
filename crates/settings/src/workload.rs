//! The value types of what a run executes, shared by the engine that executes them and the
//! result record that describes them: the limit (`-t`/`-T`), the query protocol (`-M`), the
//! goodput rule, what to do on a lost connection, and a shard's place in a spread run.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryMode {
    #[default]
    Simple,
    Extended,
    Prepared,
}

impl QueryMode {
    pub fn parse(text: &str) -> Option<QueryMode> {
        match text {
            "simple" => Some(QueryMode::Simple),
            "extended" => Some(QueryMode::Extended),
            "prepared" => Some(QueryMode::Prepared),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// What counts as one unit of useful work (goodput).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum GoodputRule {
    /// Every committed transaction counts, unless the script sets the variable
    /// `hotbench_ok` to a false value (0, false, empty) during the transaction.
    #[default]
    Committed,
    /// A committed transaction counts when the named variable is true at its end.
    Variable(String),
    /// A committed transaction counts when its last SQL command returned or affected rows.
    Rows,
    /// A committed transaction counts as many units of work as the named variable's whole
    /// value at its end (a dequeue that took 10 jobs counts 10), so goodput is in the
    /// workload's own unit rather than in transactions.
    Sum(String),
}

impl GoodputRule {
    /// `committed`, `rows`, `var:NAME` or `sum:NAME`; the error says what is expected.
    pub fn parse(text: &str) -> Result<GoodputRule, String> {
        let named = |prefix: &str| text.strip_prefix(prefix).filter(|n| !n.is_empty());
        match text {
            "committed" => Ok(GoodputRule::Committed),
            "rows" => Ok(GoodputRule::Rows),
            _ => {
                if let Some(n) = named("var:") {
                    Ok(GoodputRule::Variable(n.into()))
                } else if let Some(n) = named("sum:") {
                    Ok(GoodputRule::Sum(n.into()))
                } else {
                    Err(format!(
                        "invalid goodput rule \"{text}\": expected committed, rows, var:NAME or sum:NAME"
                    ))
                }
            }
        }
    }
}

/// The conventional goodput variable a script may set.
pub const GOODPUT_VARIABLE: &str = "hotbench_ok";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// Transactions per client (-t).
    Transactions(u64),
    /// Duration in µs (-T).
    Duration(i64),
}

impl Default for Limit {
    /// pgbench's: ten transactions per client.
    fn default() -> Limit {
        Limit::Transactions(10)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDisconnect {
    #[default]
    Reconnect,
    Abort,
}

impl OnDisconnect {
    /// `--on-disconnect`'s value parser.
    pub fn parse(text: &str) -> Result<OnDisconnect, String> {
        match text {
            "reconnect" => Ok(OnDisconnect::Reconnect),
            "abort" => Ok(OnDisconnect::Abort),
            o => Err(format!(
                "invalid --on-disconnect \"{o}\": expected reconnect or abort"
            )),
        }
    }
}

/// This process's part of a run spread over several processes or machines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardConfig {
    /// 0-based, as Kubernetes' `JOB_COMPLETION_INDEX`.
    pub index: usize,
    pub count: usize,
    /// Global id of this shard's first client: `client_id`s stay distinct across shards.
    #[serde(default)]
    pub first_client: usize,
    /// Clients of the whole run. Per-client random seeds are derived as for one process
    /// running them all, so a shard's client k draws what client `first_client + k` would.
    #[serde(default)]
    pub run_clients: usize,
    /// Identifies the run: equal in every shard of one run (`merge` checks it).
    pub run_key: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_forms_round_trip() {
        let limit = serde_json::to_string(&Limit::Duration(5)).unwrap();
        assert_eq!(limit, r#"{"duration":5}"#);
        assert_eq!(
            serde_json::from_str::<Limit>(&limit).unwrap(),
            Limit::Duration(5)
        );
        let rule = GoodputRule::Sum("n".into());
        let text = serde_json::to_string(&rule).unwrap();
        assert_eq!(text, r#"{"kind":"sum","name":"n"}"#);
        assert_eq!(serde_json::from_str::<GoodputRule>(&text).unwrap(), rule);
        assert_eq!(
            serde_json::from_str::<GoodputRule>(r#"{"kind":"committed"}"#).unwrap(),
            GoodputRule::Committed
        );
    }
}
