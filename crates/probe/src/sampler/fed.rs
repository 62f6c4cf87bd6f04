//! Wait samples counted: the probe's own wait read's rows, or the reads a [`WaitFeed`]
//! handed over (another reader's `pg_stat_activity` rows of the same backends, each read one
//! sample, as if the probe had read it), and what follows a sample: the hidden sessions'
//! note and, while some backends wait on locks, `pg_locks` about once a second.

use super::*;
use crate::wait_feed::WaitRow;

impl Sampler {
    /// The feed's reads since the last wait interval, each one wait sample. Idle sessions
    /// are left out, as the probe's own read leaves them out.
    pub(super) fn fed_waits(&mut self, reads: Vec<Vec<WaitRow>>) {
        if reads.is_empty() {
            return;
        }
        let (mut lock_waiting_max, mut hidden) = (0u32, 0u64);
        for rows in reads {
            self.samples += 1;
            self.cur.samples += 1;
            let mut lock_waiting = 0u32;
            for r in rows.iter().filter(|r| r.state != "idle") {
                if let (Some(o), Some(age)) = (&mut self.observer, r.state_age_s) {
                    o.state_age(&r.state, age);
                }
                let sampled = classify(
                    Some(&r.state),
                    r.wait_event_type.as_deref(),
                    r.wait_event.as_deref(),
                );
                let (l, h) = self.count_wait(sampled, 1);
                lock_waiting += l;
                hidden += h;
            }
            lock_waiting_max = lock_waiting_max.max(lock_waiting);
        }
        self.after_waits(lock_waiting_max, hidden);
    }

    /// `n` backends sampled as `sampled`: (lock-waiting, hidden) among them.
    pub(super) fn count_wait(&mut self, sampled: Sampled, n: u64) -> (u32, u64) {
        match sampled {
            Sampled::Counted(label) => {
                let lock = if label.starts_with("Lock:") {
                    n as u32
                } else {
                    0
                };
                self.busy += n;
                *self.cur.waits.entry(label.clone()).or_default() += n;
                *self.totals.entry(label).or_default() += n;
                (lock, 0)
            }
            Sampled::Idle => {
                self.idle += n;
                (0, 0)
            }
            Sampled::Hidden => (0, n),
        }
    }

    /// After a wait sample: the hidden sessions' note, and `pg_locks` while some wait.
    pub(super) fn after_waits(&mut self, lock_waiting: u32, hidden: u64) {
        if hidden > 0 && !self.hidden_noted {
            self.hidden_noted = true;
            let whose = match self.scope {
                Scope::Run => "the run's",
                Scope::Database => "other roles'",
            };
            self.s.note(format!(
                "some of {whose} sessions are hidden from the probe's role \
                 (grant pg_read_all_stats, or pg_monitor): their waits are not counted"
            ));
        }
        self.max_waiting = self.max_waiting.max(lock_waiting);
        self.cur.lock_waiting_max = self.cur.lock_waiting_max.max(lock_waiting);
        if lock_waiting > 0 {
            if self.lock_skip == 0 {
                self.sample_lock_spots();
                self.hot_rows.read(&mut self.s, &self.filter, lock_waiting);
                self.lock_skip = self.lock_every;
            }
            self.lock_skip -= 1;
        }
    }

    /// The record's note on where its wait samples came from, when a feed gave them.
    pub(super) fn note_feed(&mut self) {
        let Some((fed, dropped)) = self.feed.as_ref().map(WaitFeed::counts) else {
            return;
        };
        if fed > 0 {
            self.s.note(format!(
                "wait samples: the {fed} pg_stat_activity reads of capture's activity sampler \
                 (the probe made no wait read of its own while they came{})",
                if dropped > 0 {
                    format!("; {dropped} not taken")
                } else {
                    String::new()
                }
            ));
        }
    }
}
