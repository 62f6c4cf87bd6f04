//! The coordinator's interval merger: worker threads report each timeline interval's
//! counters separately and at their own pace; an interval is complete, and handed out in
//! order, once every thread still running has reported it (a finished thread reports no
//! more). Pure bookkeeping, unit-tested without threads.

use std::collections::BTreeMap;

use hotbench_stats::TxnCounters;

pub struct IntervalMerger {
    ngroups: usize,
    /// Per interval index: threads that reported it and their merged counters per group.
    pending: BTreeMap<u64, Vec<TxnCounters>>,
    done: Vec<bool>,
    /// Per thread: one past the last interval index it reported.
    reported: Vec<u64>,
    next_index: u64,
}

impl IntervalMerger {
    pub fn new(nthreads: usize, ngroups: usize) -> Self {
        IntervalMerger {
            ngroups,
            pending: BTreeMap::new(),
            done: vec![false; nthreads],
            reported: vec![0; nthreads],
            next_index: 0,
        }
    }

    /// Thread `thread` reported interval `index`.
    pub fn add(&mut self, thread: usize, index: u64, groups: &[TxnCounters]) {
        if let Some(r) = self.reported.get_mut(thread) {
            *r = index + 1;
        }
        let ngroups = self.ngroups;
        let entry = self
            .pending
            .entry(index)
            .or_insert_with(|| vec![TxnCounters::default(); ngroups]);
        for (acc, g) in entry.iter_mut().zip(groups) {
            acc.merge(g);
        }
    }

    /// Thread `thread` ended: it reports no more intervals.
    pub fn thread_done(&mut self, thread: usize) {
        if let Some(d) = self.done.get_mut(thread) {
            *d = true;
        }
    }

    pub fn all_done(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// The next complete interval: its index and counters per group.
    pub fn pop(&mut self) -> Option<(u64, Vec<TxnCounters>)> {
        loop {
            let next = self.next_index;
            let complete = self
                .done
                .iter()
                .zip(&self.reported)
                .all(|(&d, &r)| d || r > next);
            if !complete {
                return None;
            }
            if let Some(groups) = self.pending.remove(&next) {
                self.next_index += 1;
                return Some((next, groups));
            }
            if self.all_done() {
                return None;
            }
            // No live thread has this interval: nothing to hand out for it.
            self.next_index += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(n: u64) -> Vec<TxnCounters> {
        vec![TxnCounters {
            cnt: n,
            ..Default::default()
        }]
    }

    fn popped(m: &mut IntervalMerger) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| m.pop())
            .map(|(i, g)| (i, g[0].cnt))
            .collect()
    }

    #[test]
    fn an_interval_waits_for_every_live_thread_then_sums_them() {
        let mut m = IntervalMerger::new(2, 1);
        m.add(0, 0, &counts(3));
        m.add(0, 1, &counts(4));
        assert!(
            popped(&mut m).is_empty(),
            "thread 1 has not reported interval 0"
        );
        m.add(1, 0, &counts(10));
        assert_eq!(popped(&mut m), [(0, 13)]);
        m.add(1, 1, &counts(1));
        assert_eq!(popped(&mut m), [(1, 5)]);
    }

    #[test]
    fn a_finished_thread_no_longer_holds_intervals_back() {
        let mut m = IntervalMerger::new(2, 1);
        m.add(0, 0, &counts(1));
        m.add(1, 0, &counts(1));
        m.add(1, 1, &counts(2));
        m.thread_done(0);
        assert_eq!(popped(&mut m), [(0, 2), (1, 2)]);
        assert!(!m.all_done());
        m.add(1, 2, &counts(7));
        m.thread_done(1);
        assert!(m.all_done());
        assert_eq!(popped(&mut m), [(2, 7)]);
        assert!(m.pop().is_none());
    }

    #[test]
    fn groups_are_merged_group_by_group() {
        let mut m = IntervalMerger::new(2, 2);
        let mut a = vec![TxnCounters::default(); 2];
        a[0].cnt = 1;
        a[1].cnt = 2;
        m.add(0, 0, &a);
        m.add(1, 0, &a);
        let (_, g) = m.pop().expect("complete");
        assert_eq!((g[0].cnt, g[1].cnt), (2, 4));
    }
}
