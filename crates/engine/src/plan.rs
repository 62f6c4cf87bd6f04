//! The immutable, shared description of a run that every worker reads: groups with their
//! parsed scripts and weights, the global client numbering, and per-thread assignments.

use std::sync::Arc;

use hotbench_script::Script;

use crate::config::{GoodputRule, RunConfig};

#[derive(Debug, Clone)]
pub struct GroupPlan {
    pub name: String,
    pub scripts: Vec<Script>,
    pub weights: Vec<i32>,
    pub clients: usize,
    pub rate: Option<f64>,
    pub goodput: GoodputRule,
    /// Global id of the group's first client.
    pub first_client: usize,
    /// Indices into [`Plan::key_vars`] counted for this group's transactions.
    pub key_sketches: Vec<usize>,
}

/// Which clients a thread runs: `(global client id, group index)`.
#[derive(Debug, Clone)]
pub struct ThreadPlan {
    pub clients: Vec<(usize, usize)>,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub cfg: RunConfig,
    pub groups: Vec<GroupPlan>,
    pub threads: Vec<ThreadPlan>,
    /// Every key variable of the run, once: the run's `--key`s, then groups' own.
    pub key_vars: Vec<String>,
}

impl Plan {
    pub fn new(cfg: RunConfig) -> Arc<Plan> {
        let mut groups = Vec::new();
        // Client ids are global: a shard's clients continue the previous shards' numbering.
        let base = cfg.shard.as_ref().map_or(0, |s| s.first_client);
        let mut first = base;
        let mut key_vars = Vec::new();
        for g in &cfg.groups {
            let key_sketches = key_indices(&mut key_vars, &cfg.keys, &g.keys);
            groups.push(GroupPlan {
                name: g.name.clone(),
                scripts: g.scripts.iter().map(|s| s.script.clone()).collect(),
                weights: g
                    .scripts
                    .iter()
                    .map(|s| s.weight.min(i32::MAX as u32) as i32)
                    .collect(),
                clients: g.clients,
                rate: g.rate,
                goodput: g.goodput.clone(),
                first_client: first,
                key_sketches,
            });
            first += g.clients;
        }
        let total = first;
        let counts = hotbench_script::clients_per_thread((total - base).max(1), cfg.threads.max(1));
        let mut threads = Vec::new();
        let mut next = base;
        for n in counts {
            let clients = (next..(next + n).min(total))
                .map(|id| (id, group_of(&groups, id)))
                .collect();
            threads.push(ThreadPlan { clients });
            next += n;
        }
        Arc::new(Plan {
            cfg,
            groups,
            threads,
            key_vars,
        })
    }

    /// Shape for [`crate::tally::Tally::new`].
    pub fn shape(&self) -> Vec<Vec<usize>> {
        self.groups
            .iter()
            .map(|g| g.scripts.iter().map(|s| s.len()).collect())
            .collect()
    }

    /// Per-thread Poisson mean delay (µs) for group `g` on a thread running `here` of its
    /// clients: the group's rate is shared in proportion to clients.
    pub fn throttle_delay_us(&self, g: usize, here: usize) -> Option<f64> {
        let group = self.groups.get(g)?;
        let rate = group.rate?;
        if here == 0 || rate <= 0.0 {
            return None;
        }
        Some(1e6 / rate * group.clients as f64 / here as f64)
    }
}

/// The sketches a group counts into: the run's keys and its own, each variable once
/// (`all` grows with the group's new variables).
fn key_indices(all: &mut Vec<String>, run: &[String], own: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for var in run.iter().chain(own) {
        let i = match all.iter().position(|v| v == var) {
            Some(i) => i,
            None => {
                all.push(var.clone());
                all.len() - 1
            }
        };
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn group_of(groups: &[GroupPlan], id: usize) -> usize {
    groups
        .iter()
        .position(|g| id >= g.first_client && id < g.first_client + g.clients)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_group_counts_the_run_keys_and_its_own_each_variable_once() {
        let mut all = Vec::new();
        let run = ["aid".to_string()];
        let a = key_indices(&mut all, &run, &["bid".into(), "aid".into()]);
        let b = key_indices(&mut all, &run, &[]);
        let c = key_indices(&mut all, &run, &["tid".into(), "bid".into()]);
        assert_eq!(all, ["aid", "bid", "tid"]);
        assert_eq!(a, [0, 1]);
        assert_eq!(b, [0]);
        assert_eq!(c, [0, 2, 1]);
        let mut none = Vec::new();
        assert!(key_indices(&mut none, &[], &[]).is_empty());
        assert!(none.is_empty());
    }
}
