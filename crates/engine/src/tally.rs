//! Per-thread statistics, owned by one worker and never shared while the run is going:
//! cumulative counters per group, script and command, plus the current timeline interval per
//! group. The coordinator merges them from messages, so there are no locks on the hot path.

use hotbench_stats::{LatencyHistogram, SimpleStats, TxnCounters};

/// Per-command statistics (pgbench's per-command `SimpleStats`, failures and retries).
#[derive(Debug, Clone, Default)]
pub struct CommandTally {
    pub latency: SimpleStats,
    pub hist: LatencyHistogram,
    pub failures: u64,
    pub retries: u64,
}

impl CommandTally {
    pub fn merge(&mut self, o: &CommandTally) {
        self.latency.merge(&o.latency);
        let _ = self.hist.merge(&o.hist);
        self.failures += o.failures;
        self.retries += o.retries;
    }
}

#[derive(Debug, Clone, Default)]
pub struct ScriptTally {
    pub counters: TxnCounters,
    pub commands: Vec<CommandTally>,
}

#[derive(Debug, Clone, Default)]
pub struct GroupTally {
    pub counters: TxnCounters,
    pub scripts: Vec<ScriptTally>,
    /// The timeline interval in progress.
    pub interval: TxnCounters,
}

/// One host of a multi-host target: what its connections did.
#[derive(Debug, Clone, Default)]
pub struct HostTally {
    pub counters: TxnCounters,
    /// Clients whose first connection went to this host.
    pub clients: u64,
    /// Reconnections that landed here after the client had been on another host.
    pub moved_in: u64,
}

/// All statistics of one worker thread.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub groups: Vec<GroupTally>,
    /// Per host, only for multi-host targets (empty otherwise, so a single host pays nothing).
    pub hosts: Vec<HostTally>,
    /// Per `--key` variable: the values' table (empty without `--key`).
    pub keys: Vec<hotbench_stats::hot_keys::KeySketch>,
    /// Per client, filled when the thread ends: `(client_id, group, tally)`.
    pub clients: Vec<(usize, usize, hotbench_stats::fairness::ClientTally)>,
}

impl Tally {
    /// Empty tallies shaped like the run: `shape[g][s]` = number of commands.
    pub fn new(shape: &[Vec<usize>]) -> Self {
        Tally {
            groups: shape
                .iter()
                .map(|scripts| GroupTally {
                    counters: TxnCounters::default(),
                    interval: TxnCounters::default(),
                    scripts: scripts
                        .iter()
                        .map(|&n| ScriptTally {
                            counters: TxnCounters::default(),
                            commands: vec![CommandTally::default(); n],
                        })
                        .collect(),
                })
                .collect(),
            hosts: Vec::new(),
            keys: Vec::new(),
            clients: Vec::new(),
        }
    }

    /// Keeps per-host statistics when the target has more than one host.
    pub fn track_hosts(&mut self, hosts: usize) {
        if hosts > 1 {
            self.hosts = vec![HostTally::default(); hosts];
        }
    }

    /// A client's connection went to `host` (`previous`: where it was before, if anywhere).
    pub fn connected_to(&mut self, host: usize, previous: Option<usize>) {
        if let Some(h) = self.hosts.get_mut(host) {
            match previous {
                None => h.clients += 1,
                Some(p) if p != host => h.moved_in += 1,
                Some(_) => {}
            }
        }
    }

    pub fn merge(&mut self, o: &Tally) {
        if self.hosts.len() < o.hosts.len() {
            self.hosts.resize(o.hosts.len(), HostTally::default());
        }
        if self.keys.is_empty() {
            self.keys = o.keys.clone();
        } else {
            for (k, ok) in self.keys.iter_mut().zip(&o.keys) {
                k.merge(ok);
            }
        }
        self.clients.extend(o.clients.iter().cloned());
        for (h, oh) in self.hosts.iter_mut().zip(&o.hosts) {
            h.counters.merge(&oh.counters);
            h.clients += oh.clients;
            h.moved_in += oh.moved_in;
        }
        for (g, og) in self.groups.iter_mut().zip(&o.groups) {
            g.counters.merge(&og.counters);
            for (s, os) in g.scripts.iter_mut().zip(&og.scripts) {
                s.counters.merge(&os.counters);
                for (c, oc) in s.commands.iter_mut().zip(&os.commands) {
                    c.merge(oc);
                }
            }
        }
    }

    /// Applies `f` to the group's cumulative, interval and script counters alike. A group's
    /// only script is counted by its group alone on the hot path (one histogram and set of
    /// sums less per transaction); [`Tally::finish`] gives it the group's figures.
    #[inline]
    pub fn each<F: FnMut(&mut TxnCounters)>(&mut self, group: usize, script: usize, mut f: F) {
        if let Some(g) = self.groups.get_mut(group) {
            f(&mut g.counters);
            f(&mut g.interval);
            if g.scripts.len() > 1 {
                if let Some(s) = g.scripts.get_mut(script) {
                    f(&mut s.counters);
                }
            }
        }
    }

    /// After the last merge: a single script's counters are its group's.
    pub fn finish(&mut self) {
        for g in &mut self.groups {
            if let [only] = g.scripts.as_mut_slice() {
                only.counters = g.counters.clone();
            }
        }
    }

    pub fn command(
        &mut self,
        group: usize,
        script: usize,
        cmd: usize,
    ) -> Option<&mut CommandTally> {
        self.groups
            .get_mut(group)?
            .scripts
            .get_mut(script)?
            .commands
            .get_mut(cmd)
    }

    /// Takes the interval counters of every group, leaving them empty.
    pub fn take_intervals(&mut self) -> Vec<TxnCounters> {
        self.groups
            .iter_mut()
            .map(|g| {
                let snapshot = g.interval.clone();
                g.interval.clear();
                snapshot
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_updates_all_levels_and_intervals_reset() {
        let mut t = Tally::new(&[vec![2, 3]]);
        t.each(0, 1, |c| c.record_success(100, None, 1));
        t.each(0, 1, |c| c.record_success(300, None, 0));
        assert_eq!(t.groups[0].counters.cnt, 2);
        assert_eq!(t.groups[0].scripts[1].counters.cnt, 2);
        assert_eq!(t.groups[0].scripts[0].counters.cnt, 0);
        let iv = t.take_intervals();
        assert_eq!(iv[0].cnt, 2);
        assert_eq!(iv[0].goodput, 1);
        assert_eq!(t.groups[0].interval.cnt, 0);
        assert_eq!(t.groups[0].counters.cnt, 2);
        let mut u = Tally::new(&[vec![2, 3]]);
        u.merge(&t);
        u.merge(&t);
        assert_eq!(u.groups[0].scripts[1].counters.cnt, 4);
    }

    #[test]
    fn a_single_script_gets_its_groups_counters_at_the_end() {
        let mut a = Tally::new(&[vec![2]]);
        a.each(0, 0, |c| c.record_success(100, None, 1));
        a.each(0, 0, |c| {
            c.record_failure(hotbench_stats::FailureKind::Deadlock)
        });
        let mut b = a.clone();
        b.each(0, 0, |c| c.record_success(300, None, 1));
        let mut all = Tally::new(&[vec![2]]);
        all.merge(&a);
        all.merge(&b);
        all.finish();
        let (g, s) = (&all.groups[0].counters, &all.groups[0].scripts[0].counters);
        assert_eq!((s.cnt, s.deadlock_failures), (3, 2));
        assert_eq!(s.hist.len(), g.hist.len());
        assert_eq!(s.latency.count, g.latency.count);
    }

    #[test]
    fn hosts_are_tracked_only_for_several_and_moves_counted() {
        let mut t = Tally::new(&[vec![1]]);
        t.track_hosts(1);
        t.connected_to(0, None);
        assert!(t.hosts.is_empty());
        t.track_hosts(2);
        t.connected_to(0, None);
        t.connected_to(1, None);
        t.connected_to(1, Some(0));
        t.connected_to(1, Some(1));
        assert_eq!((t.hosts[0].clients, t.hosts[1].clients), (1, 1));
        assert_eq!((t.hosts[0].moved_in, t.hosts[1].moved_in), (0, 1));
        let mut u = Tally::new(&[vec![1]]);
        u.merge(&t);
        assert_eq!(u.hosts.len(), 2);
        assert_eq!(u.hosts[1].moved_in, 1);
    }
}
