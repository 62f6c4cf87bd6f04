//! One description of a run. A record's `config` (a [`ConfigRecord`]) is what the run was:
//! its clients, threads, limit, protocol, retries, rates and groups. `bench` (a
//! [`BenchInfo`]) is pgbench's report header: what it shares with `config` is derived from it
//! here, by [`BenchInfo::derive_from`], when a run starts (`engine::RunConfig::starting_record`)
//! and when `merge` combines runs (it merges the descriptions with [`merged_config`], then
//! derives), so the two never disagree. A file whose `config` does not describe its run (one
//! written before `config` was typed, or made by hand: no clients in it) is read through its
//! `bench` and groups instead ([`described`]).

use hotbench_settings::{Limit, QueryMode};

use crate::config_record::{ConfigGroup, ConfigRecord};
use crate::record::BenchInfo;
use crate::RunRecord;

impl BenchInfo {
    /// Sets what pgbench's header shares with the run's description from `c`: clients,
    /// threads, maximum tries, `-T` or `-t`, `-R`, `-L`, `-C`, `--rtt`, the seed and `-M`.
    /// The rest (script, scale, partitions, display) is the header's own.
    pub fn derive_from(&mut self, c: &ConfigRecord) {
        self.clients = c.clients;
        self.threads = c.threads;
        self.max_tries = c.retry.max_tries;
        (self.duration_s, self.transactions_per_client) = match c.limit {
            Limit::Duration(us) => (
                Some(u64::try_from(us.max(0) / 1_000_000).unwrap_or(0)),
                None,
            ),
            Limit::Transactions(n) => (None, Some(n)),
        };
        self.rate = c.rate;
        self.latency_limit_ms = c.latency_limit_us.map(|us| us as f64 / 1000.0);
        self.connect_each_txn = c.connect_each_txn;
        self.rtt_us = c.settings.rtt_us;
        self.random_seed = c.random_seed;
        self.query_mode = c.query_mode.name().into();
    }
}

/// The run's description: its `config`, or, when that names no clients although the
/// header does (an older or hand-made file), the same facts read back from `bench` and
/// `groups`.
pub fn described(r: &RunRecord) -> ConfigRecord {
    let mut c = r.config.clone();
    if c.clients > 0 || r.bench.clients == 0 {
        return c;
    }
    let b = &r.bench;
    c.clients = b.clients;
    c.threads = b.threads;
    c.retry.max_tries = b.max_tries;
    c.limit = match (b.duration_s, b.transactions_per_client) {
        (Some(s), _) => Limit::Duration(
            i64::try_from(s)
                .unwrap_or(i64::MAX / 1_000_000)
                .saturating_mul(1_000_000),
        ),
        (None, Some(n)) => Limit::Transactions(n),
        (None, None) => c.limit,
    };
    c.rate = b.rate;
    c.latency_limit_us = b.latency_limit_ms.map(|ms| (ms * 1000.0).round() as i64);
    c.connect_each_txn = b.connect_each_txn;
    c.settings.rtt_us = b.rtt_us;
    c.random_seed = b.random_seed;
    c.query_mode = QueryMode::parse(&b.query_mode).unwrap_or(c.query_mode);
    if c.groups.is_empty() {
        c.groups = r
            .groups
            .iter()
            .map(|g| ConfigGroup {
                name: g.name.clone(),
                clients: g.clients,
                rate: g.rate,
                ..Default::default()
            })
            .collect();
    }
    c
}

/// The description of runs merged into one: the first's, with clients and threads summed,
/// the rate summed (none when any input was unthrottled) and the groups merged by name
/// (clients and rates summed, scripts united), as `merge` sums the counts.
pub fn merged_config(records: &[(String, RunRecord)]) -> ConfigRecord {
    let mut all = records.iter().map(|(_, r)| described(r));
    let Some(mut out) = all.next() else {
        return ConfigRecord::default();
    };
    for c in all {
        out.clients = out.clients.saturating_add(c.clients);
        out.threads = out.threads.saturating_add(c.threads);
        out.rate = sum_rates(out.rate, c.rate);
        for g in c.groups {
            match out.groups.iter_mut().find(|o| o.name == g.name) {
                None => out.groups.push(g),
                Some(o) => {
                    o.clients = o.clients.saturating_add(g.clients);
                    o.rate = sum_rates(o.rate, g.rate);
                    for s in g.scripts {
                        if !o.scripts.iter().any(|x| x.name == s.name) {
                            o.scripts.push(s);
                        }
                    }
                }
            }
        }
    }
    out
}

fn sum_rates(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

#[cfg(test)]
#[path = "run_description_tests.rs"]
mod tests;
