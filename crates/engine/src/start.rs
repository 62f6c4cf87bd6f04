//! One way to build a run, whoever asks for it (`hotbench run`, `sweep`, scenario ladders):
//! [`RunConfig::build`] takes the [`Workload`] the command decided on (from pgbench's flags
//! or a scenario's manifest) and the [`RunSettings`] every command shares, so a setting
//! reaches the engine the same way from every command; [`RunConfig::starting_record`] is
//! the result record a run starts from, its description derived from the configuration.

use std::time::SystemTime;

use hotbench_settings::{RunSettings, ThreadsDefault};
use hotbench_stats::{BenchInfo, RunRecord, ServerInfo};

use crate::config::{GroupConfig, Limit, QueryMode, RetryPolicy, RunConfig};

/// The note a result carries when the embedded server ran without durability.
pub const FAST_NOTE: &str = "embedded server ran with fsync and synchronous_commit off (--fast)";
/// … when another command was using the embedded server as the run started.
pub const SHARED_NOTE: &str = "another hotbench command was using the embedded server when \
                               this run started: the two shared its CPU and disk";
/// … when another command joined the embedded server during the run.
pub const JOINED_NOTE: &str = "another hotbench command joined the embedded server during \
                               this run: the two shared its CPU and disk";

/// Whether the server a run uses is shared with another hotbench command (the embedded
/// server can be): every command's records say so alike.
pub trait SharedServer {
    /// Another command was using the server when this one started using it.
    fn shared(&self) -> bool;
    /// Another command joined the server after `since`.
    fn joined_since(&self, since: SystemTime) -> bool;
}

/// A server nobody else uses (one the user named).
impl SharedServer for () {
    fn shared(&self) -> bool {
        false
    }
    fn joined_since(&self, _: SystemTime) -> bool {
        false
    }
}

/// What a command decided to run: pgbench's flags (`hotbench run`, `sweep`) or a scenario's
/// manifest and parameters (ladders).
#[derive(Debug, Clone)]
pub struct Workload {
    pub groups: Vec<GroupConfig>,
    pub limit: Limit,
    pub query_mode: QueryMode,
    pub retry: RetryPolicy,
    /// Variables set in every client (`-D`, a scenario's parameters).
    pub defines: Vec<(String, String)>,
    /// Value of the `scale` variable.
    pub scale: i64,
    /// Key variables counted in every group.
    pub keys: Vec<String>,
    /// The seed actually used (`--random-seed` resolved by the caller).
    pub random_seed: u64,
    /// `-j`'s default for this command.
    pub threads_default: ThreadsDefault,
}

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
            log: None,
            conn,
            exit_on_abort: false,
            report_per_command: false,
            defines: Vec::new(),
            scale: 1,
            application_name,
            shard: None,
            spread: hotbench_wire::Spread::First,
            keys: Vec::new(),
            start_at_us: None,
            settings: RunSettings::default(),
            display: Default::default(),
            perturb_conn: None,
            server: None,
        }
    }

    /// The run of `workload` with `settings`, against `conn`: how every command builds its
    /// run. What only `hotbench run` has (pgbench's `-L`, `-C`, `-l`, `-r`, shards, display)
    /// stays at pgbench's default for the caller to set.
    pub fn build(
        workload: Workload,
        settings: RunSettings,
        conn: hotbench_wire::Config,
        application_name: String,
    ) -> RunConfig {
        let mut cfg = RunConfig::new(workload.groups, conn, application_name);
        cfg.threads = settings.threads(cfg.total_clients(), workload.threads_default);
        cfg.limit = workload.limit;
        cfg.query_mode = workload.query_mode;
        cfg.retry = workload.retry;
        cfg.defines = workload.defines;
        cfg.scale = workload.scale;
        cfg.keys = workload.keys;
        cfg.random_seed = workload.random_seed;
        cfg.settings = settings;
        cfg
    }

    /// The record a run of this configuration starts from (status `starting`, no results
    /// yet). `transaction_type` is pgbench's header line; `command_line` is already masked.
    pub fn starting_record(
        &self,
        transaction_type: String,
        server: ServerInfo,
        command_line: Vec<String>,
        sharing: &dyn SharedServer,
    ) -> RunRecord {
        let mut notes = Vec::new();
        if server.fast {
            notes.push(FAST_NOTE.to_string());
        }
        if sharing.shared() {
            notes.push(SHARED_NOTE.to_string());
        }
        let config = self.record();
        let mut bench = self.bench_info(transaction_type);
        bench.derive_from(&config);
        RunRecord {
            command_line,
            config,
            bench,
            server,
            notes,
            // Format, tool, version and status `starting`: a record that has nothing yet.
            ..RunRecord::default()
        }
    }

    /// pgbench's report header's own lines (no partitions: the caller knows); what it
    /// shares with the run's description (`config`) is derived from that
    /// (`BenchInfo::derive_from`), so the two cannot disagree.
    fn bench_info(&self, transaction_type: String) -> BenchInfo {
        BenchInfo {
            transaction_type,
            scale: self.scale,
            progress: self.display.progress_s.is_some(),
            failures_detailed: self.display.failures_detailed,
            report_per_command: self.report_per_command,
            partition_method: None,
            partitions: 0,
            pgbench_compat: self.display.pgbench_compat,
            ..BenchInfo::default()
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
        let r = cfg.starting_record("tpcb-like".into(), server, vec!["run".into()], &());
        assert_eq!(r.status, hotbench_stats::RunStatus::Starting);
        assert_eq!(r.format, hotbench_stats::RESULT_FORMAT);
        assert_eq!(r.bench.duration_s, Some(30));
        assert_eq!(r.bench.transactions_per_client, None);
        assert_eq!((r.bench.threads, r.bench.max_tries), (2, 3));
        assert_eq!(r.bench.latency_limit_ms, Some(1.5));
        assert_eq!(r.bench.rate, None);
        assert_eq!(r.notes, [FAST_NOTE]);
        assert_eq!(r.config.threads, 2);
    }

    #[test]
    fn every_command_builds_its_run_the_same_way() {
        let workload = Workload {
            groups: Vec::new(),
            limit: Limit::Duration(2_000_000),
            query_mode: QueryMode::Prepared,
            retry: RetryPolicy::default(),
            defines: vec![("a".into(), "1".into())],
            scale: 3,
            keys: vec!["k".into()],
            random_seed: 7,
            threads_default: ThreadsDefault::PerCore,
        };
        let settings = RunSettings {
            rtt_us: 1000,
            jobs: Some(4),
            ..Default::default()
        };
        let cfg = RunConfig::build(workload, settings, hotbench_wire::Config::new(), "t".into());
        // No clients: never more threads than clients, whatever -j says.
        assert_eq!(cfg.threads, 1);
        let rec = cfg.record();
        assert_eq!((rec.settings.rtt_us, rec.random_seed), (1000, 7));
        assert_eq!(rec.defines, ["a=1"]);
        assert_eq!(rec.query_mode, QueryMode::Prepared);
    }
}
