//! One way to build a run, whoever asks for it (`hotbench run`, `sweep`, scenario ladders):
//! [`RunConfig::new`] gives every setting pgbench's default, so a caller sets only what its
//! options say and a new setting is added in one place; [`RunConfig::starting_record`] is
//! the result record a run starts from, its description derived from the configuration.

use hotbench_stats::{BenchInfo, RunRecord, ServerInfo};

use crate::config::{GroupConfig, Limit, OnDisconnect, QueryMode, RetryPolicy, RunConfig};

/// The note a result carries when the embedded server ran without durability.
pub const FAST_NOTE: &str = "embedded server ran with fsync and synchronous_commit off (--fast)";

impl RunConfig {
    /// A run of `groups` against `conn`, every other setting as pgbench's default (`-t 10`,
    /// one thread, simple protocol, one try, no rate, no logs, 1 s timeline intervals).
    /// `application_name` tells the run's backends apart for probes.
    pub fn new(
        groups: Vec<GroupConfig>,
        conn: hotbench_wire::Config,
        application_name: String,
    ) -> RunConfig {
        RunConfig {
            groups,
            limit: Limit::Transactions(10),
            threads: 1,
            query_mode: QueryMode::Simple,
            retry: RetryPolicy::default(),
            latency_limit_us: None,
            connect_each_txn: false,
            random_seed: 0,
            rtt_us: 0,
            log: None,
            conn,
            exit_on_abort: false,
            report_per_command: false,
            interval_us: 1_000_000,
            on_disconnect: OnDisconnect::Reconnect,
            defines: Vec::new(),
            scale: 1,
            application_name,
            shard: None,
            spread: hotbench_wire::Spread::First,
            keys: Vec::new(),
            key_capacity: 1000,
            start_at_us: None,
            display: Default::default(),
        }
    }

    /// The record a run of this configuration starts from (status `starting`, no results
    /// yet). `transaction_type` is pgbench's header line; `command_line` is already masked.
    pub fn starting_record(
        &self,
        transaction_type: String,
        server: ServerInfo,
        command_line: Vec<String>,
    ) -> RunRecord {
        let notes = if server.fast {
            vec![FAST_NOTE.to_string()]
        } else {
            Vec::new()
        };
        RunRecord {
            command_line,
            config: self.to_json(),
            bench: self.bench_info(transaction_type),
            server,
            notes,
            // Format, tool, version and status `starting`: a record that has nothing yet.
            ..RunRecord::default()
        }
    }

    /// pgbench's report header, from the configuration (no partitions: the caller knows).
    fn bench_info(&self, transaction_type: String) -> BenchInfo {
        BenchInfo {
            transaction_type,
            scale: self.scale,
            query_mode: self.query_mode.name().into(),
            clients: self.total_clients(),
            threads: self.threads,
            max_tries: self.retry.max_tries,
            duration_s: match self.limit {
                Limit::Duration(us) => Some((us / 1_000_000) as u64),
                Limit::Transactions(_) => None,
            },
            transactions_per_client: match self.limit {
                Limit::Transactions(n) => Some(n),
                Limit::Duration(_) => None,
            },
            rate: self
                .is_throttled()
                .then(|| self.groups.iter().filter_map(|g| g.rate).sum()),
            latency_limit_ms: self.latency_limit_us.map(|us| us as f64 / 1000.0),
            progress: self.display.progress_s.is_some(),
            connect_each_txn: self.connect_each_txn,
            failures_detailed: self.display.failures_detailed,
            report_per_command: self.report_per_command,
            partition_method: None,
            partitions: 0,
            rtt_us: self.rtt_us,
            random_seed: self.random_seed,
            pgbench_compat: self.display.pgbench_compat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starting_record_describes_the_configuration() {
        let mut cfg = RunConfig::new(Vec::new(), hotbench_wire::Config::new(), "t".into());
        cfg.limit = Limit::Duration(30_000_000);
        cfg.threads = 2;
        cfg.latency_limit_us = Some(1_500);
        cfg.retry.max_tries = 3;
        let server = ServerInfo {
            fast: true,
            ..Default::default()
        };
        let r = cfg.starting_record("tpcb-like".into(), server, vec!["run".into()]);
        assert_eq!(r.status, hotbench_stats::RunStatus::Starting);
        assert_eq!(r.format, hotbench_stats::RESULT_FORMAT);
        assert_eq!(r.bench.duration_s, Some(30));
        assert_eq!(r.bench.transactions_per_client, None);
        assert_eq!((r.bench.threads, r.bench.max_tries), (2, 3));
        assert_eq!(r.bench.latency_limit_ms, Some(1.5));
        assert_eq!(r.bench.rate, None);
        assert_eq!(r.notes, [FAST_NOTE]);
        assert_eq!(r.config["threads"], 2);
    }
}
