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

/// All statistics of one worker thread.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub groups: Vec<GroupTally>,
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
        }
    }

    pub fn merge(&mut self, o: &Tally) {
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

    /// Applies `f` to the group's cumulative, interval and script counters alike.
    #[inline]
    pub fn each<F: FnMut(&mut TxnCounters)>(&mut self, group: usize, script: usize, mut f: F) {
        if let Some(g) = self.groups.get_mut(group) {
            f(&mut g.counters);
            f(&mut g.interval);
            if let Some(s) = g.scripts.get_mut(script) {
                f(&mut s.counters);
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
        t.each(0, 1, |c| c.record_success(100, None, true));
        t.each(0, 1, |c| c.record_success(300, None, false));
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
}
