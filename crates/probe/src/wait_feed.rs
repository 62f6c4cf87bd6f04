//! Wait samples another reader already took: every read of `pg_stat_activity` copies the
//! status of every backend slot (its cost follows `max_connections`, not what it selects),
//! so two readers of the same backends at once pay twice for one picture. `hotbench capture`'s
//! activity sampler reads each client backend's row (its state and wait event among its
//! columns) every `--interval`; during a capture it hands each read's rows to the probe
//! through a [`WaitFeed`], and the probe counts them as its wait samples instead of making
//! its own wait read. Its other reads (`pg_locks`, statements, blockers, tables) stay its own.
//! When the feeding reader stops (its connection lost, its thread ended) it closes the feed
//! and the probe reads for itself again. Shared between two threads; no I/O.

use std::sync::{Arc, Mutex};

/// One backend in one read: what the probe's wait read would have counted.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitRow {
    /// `pg_stat_activity.state`.
    pub state: String,
    pub wait_event_type: Option<String>,
    pub wait_event: Option<String>,
    /// How long the backend has been in its state (s), when known: an idle-in-transaction
    /// one's is the gap between a transaction's statements so far.
    pub state_age_s: Option<f64>,
}

/// Reads held for the probe at most (a probe that stopped taking them does not make the
/// feeder grow without bound); older ones are dropped, and counted.
const MAX_HELD: usize = 10_000;

#[derive(Debug, Default)]
struct Held {
    reads: Vec<Vec<WaitRow>>,
    closed: bool,
    dropped: u64,
    fed: u64,
}

/// The reads one sampler hands to a probe. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct WaitFeed {
    held: Arc<Mutex<Held>>,
}

impl WaitFeed {
    /// An open feed: the probe takes its wait samples from it until it is closed.
    pub fn new() -> WaitFeed {
        WaitFeed::default()
    }

    /// One read's rows (the sampled backends, each once).
    pub fn push(&self, rows: Vec<WaitRow>) {
        let Ok(mut h) = self.held.lock() else {
            return;
        };
        if h.closed {
            return;
        }
        if h.reads.len() >= MAX_HELD {
            h.reads.remove(0);
            h.dropped += 1;
        }
        h.reads.push(rows);
        h.fed += 1;
    }

    /// The feeder stopped: the probe reads for itself from now on.
    pub fn close(&self) {
        if let Ok(mut h) = self.held.lock() {
            h.closed = true;
            h.reads.clear();
        }
    }

    /// The reads since the last take (none when the feeder has not read since), or `None`
    /// when the feed is closed: then the caller makes its own read.
    pub fn take(&self) -> Option<Vec<Vec<WaitRow>>> {
        let mut h = self.held.lock().ok()?;
        (!h.closed).then(|| std::mem::take(&mut h.reads))
    }

    /// Reads handed over in all, and of them dropped untaken.
    pub fn counts(&self) -> (u64, u64) {
        self.held.lock().map_or((0, 0), |h| (h.fed, h.dropped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(state: &str) -> WaitRow {
        WaitRow {
            state: state.into(),
            wait_event_type: None,
            wait_event: None,
            state_age_s: None,
        }
    }

    #[test]
    fn reads_are_taken_once_and_a_closed_feed_hands_the_reading_back() {
        let feed = WaitFeed::new();
        let probe_side = feed.clone();
        assert_eq!(probe_side.take(), Some(vec![]), "open, nothing read yet");
        feed.push(vec![row("active")]);
        feed.push(vec![row("idle in transaction"), row("active")]);
        let reads = probe_side.take().expect("open");
        assert_eq!(reads.len(), 2);
        assert_eq!(probe_side.take(), Some(vec![]), "each read taken once");
        feed.push(vec![row("active")]);
        feed.close();
        assert_eq!(
            probe_side.take(),
            None,
            "closed: the probe reads for itself"
        );
        feed.push(vec![row("active")]);
        assert_eq!(feed.counts(), (3, 0));
    }

    #[test]
    fn an_untaken_feed_stays_bounded() {
        let feed = WaitFeed::new();
        for _ in 0..MAX_HELD + 5 {
            feed.push(vec![row("active")]);
        }
        assert_eq!(feed.counts(), ((MAX_HELD + 5) as u64, 5));
        assert_eq!(feed.take().map(|r| r.len()), Some(MAX_HELD));
    }
}
