//! What the engine core tells the world, as values: lines for stderr (pgbench's wording),
//! `-l` log records, timeline intervals and a request to stop every thread. The core queues
//! them and never writes anything itself; the driver (`worker.rs`) drains the queue with
//! `Core::poll_event` after every step and does the I/O, so unit tests read the same events.

use std::collections::VecDeque;

use hotbench_stats::TxnCounters;

use crate::slot::Outcome;

/// One thing the driver must carry out for the core.
#[derive(Debug, Clone)]
pub enum Event {
    /// A line for stderr (no trailing newline).
    Stderr(String),
    /// One transaction for the `-l` log (already sampled by `--sampling-rate`).
    Txn(TxnRecord),
    /// Timeline interval `index` ended: the thread's counters of it, per group.
    Interval {
        index: u64,
        groups: Vec<TxnCounters>,
    },
    /// `--exit-on-abort`: every thread must stop now (results kept).
    StopAll,
}

/// A `-l` log record: a finished transaction, or one skipped under -L (`outcome` None).
#[derive(Debug, Clone, PartialEq)]
pub struct TxnRecord {
    pub client: usize,
    /// Numbered from 1 per client.
    pub txn_no: u64,
    pub script: usize,
    /// Monotonic µs at the end.
    pub now: i64,
    pub latency: u64,
    /// Under -R: start minus schedule.
    pub lag: Option<u64>,
    pub outcome: Option<Outcome>,
    pub tries: u32,
}

/// The core's outbox.
#[derive(Debug, Default)]
pub struct Events {
    queue: VecDeque<Event>,
}

impl Events {
    pub fn push(&mut self, e: Event) {
        self.queue.push_back(e);
    }

    /// A stderr line.
    pub fn say(&mut self, line: String) {
        self.queue.push_back(Event::Stderr(line));
    }

    /// The oldest event. Checked for emptiness first: the driver asks after every step, and
    /// moving an empty slot out of the queue costs a copy of the whole enum.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.queue.is_empty() {
            return None;
        }
        self.queue.pop_front()
    }

    #[cfg(test)]
    pub fn drain(&mut self) -> Vec<Event> {
        self.queue.drain(..).collect()
    }
}
