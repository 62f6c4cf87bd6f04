//! The result record's `config`: the resolved configuration of the run (passwords masked),
//! typed. The settings every command shares are [`RunSettings`], flattened in whole, so a
//! setting added there is recorded without a line here; the rest is what the command resolved
//! (clients, threads, the seed actually used) or the workload it ran (groups, limit, protocol,
//! retries). Documented field by field in `docs/results.md`.

use std::collections::BTreeMap;

use hotbench_settings::{Backoff, GoodputRule, Limit, QueryMode, RunSettings, ShardConfig};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfigRecord {
    /// Connection target, password masked.
    pub target: String,
    pub clients: usize,
    pub threads: usize,
    pub limit: Limit,
    pub query_mode: QueryMode,
    pub retry: RetryRecord,
    /// -L in µs.
    pub latency_limit_us: Option<i64>,
    /// -R summed over the groups (transactions/s), when throttled.
    pub rate: Option<f64>,
    /// The seed actually used (also when derived from the time).
    pub random_seed: u64,
    /// -C.
    pub connect_each_txn: bool,
    pub groups: Vec<ConfigGroup>,
    /// -D assignments, `NAME=VALUE`.
    pub defines: Vec<String>,
    /// This process's part of a spread run; null in a merged result.
    pub shard: Option<ShardConfig>,
    /// `--load-balance`: first, round-robin or random.
    pub load_balance: String,
    /// `--key` variables counted in every group.
    pub keys: Vec<String>,
    /// `--start-at` as Unix µs.
    pub start_at_us: Option<i64>,
    /// The settings every command shares (`--rtt`, `--interval`, …), each under its own name.
    #[serde(flatten)]
    pub settings: RunSettings,
    /// Scenario ladders: the scenario, variant, parameters and session settings it ran with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<BTreeMap<String, String>>,
    /// The variant's session settings (`SET name = value` for every connection), in order.
    #[serde(rename = "settings", skip_serializing_if = "Option::is_none")]
    pub session_settings: Option<Vec<(String, String)>>,
    /// Merged results of a spread run: which shards were merged and which are missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardsRecord>,
}

/// Retries: `--max-tries` (0 = unlimited), `--retry-backoff`, `--retry-on`,
/// `--continue-on-error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryRecord {
    pub max_tries: u32,
    pub backoff: Backoff,
    /// SQLSTATEs retried besides 40001 and 40P01, as their five characters.
    pub extra_codes: Vec<String>,
    pub continue_on_error: bool,
}

impl Default for RetryRecord {
    /// pgbench's: one try.
    fn default() -> RetryRecord {
        RetryRecord {
            max_tries: 1,
            backoff: Backoff::None,
            extra_codes: Vec::new(),
            continue_on_error: false,
        }
    }
}

/// A client group as configured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfigGroup {
    pub name: String,
    pub clients: usize,
    pub rate: Option<f64>,
    pub goodput: GoodputRule,
    pub keys: Vec<String>,
    pub scripts: Vec<ConfigScript>,
}

/// A script of a group, with its weight.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfigScript {
    pub name: String,
    pub weight: u32,
}

/// The shards `hotbench merge` put together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardsRecord {
    pub count: u64,
    pub run_key: String,
    /// Indexes of the shards not among the inputs.
    pub missing: Vec<u64>,
    pub parts: Vec<ShardPart>,
}

/// One merged shard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardPart {
    pub index: u64,
    /// The input it came from.
    pub file: String,
    pub status: String,
    pub clients: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_written_flat_and_scenario_fields_only_for_ladders() {
        let mut c = ConfigRecord {
            settings: RunSettings {
                rtt_us: 1000,
                ..Default::default()
            },
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["rtt_us"], 1000);
        assert_eq!(v["interval_us"], 1_000_000);
        assert!(
            v.get("scenario").is_none() && v.get("shards").is_none(),
            "{v}"
        );
        assert_eq!(v["limit"]["transactions"], 10);
        c.session_settings = Some(vec![("search_path".into(), "hb_x".into())]);
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["settings"][0][1], "hb_x");
        let back: ConfigRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn an_older_or_partial_config_reads_with_defaults() {
        let c: ConfigRecord = serde_json::from_str(r#"{"clients": 3, "shard": null}"#).unwrap();
        assert_eq!(c.clients, 3);
        assert_eq!(c.retry.max_tries, 1);
        assert_eq!(c.settings.key_capacity, 1000);
    }
}
