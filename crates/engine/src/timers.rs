//! The core owns time (quinn-proto's `poll_timeout` / `handle_timeout`): when the next
//! timeline interval ends, when a -T run ends and when its grace for transactions still in
//! flight runs out, and what `--exit-on-abort` does. The driver asks [`Core::poll_timeout`]
//! how long it may sleep, calls [`Core::handle_timeout`] when it wakes, and ends every client
//! when [`Core::must_abandon`] says so; the rules themselves are unit-tested here.

use crate::client_core::Core;
use crate::env::Env;
use crate::events::Event;
use crate::slot::Slot;

/// How long transactions may run past the end of a -T run before they are cancelled.
pub const END_GRACE_US: i64 = 2_000_000;

/// The shortest timeline interval, µs.
const MIN_INTERVAL_US: i64 = 1000;

impl<E: Env> Core<E> {
    /// The earliest time the driver, at `now`, must wake the core: the end of the current timeline
    /// interval, a sleeping client's wake time (-R schedule, `\sleep`, reconnect, `--rtt`),
    /// the end of a -T run, then the end of its grace.
    pub fn poll_timeout<'a>(&self, now: i64, slots: impl IntoIterator<Item = &'a Slot>) -> i64 {
        let mut at = self.timers.next_boundary;
        if let Some(end) = self.end_us {
            at = at.min(if end > now { end } else { end + END_GRACE_US });
        }
        for s in slots {
            if s.is_sleeping() {
                at = at.min(s.wake_at);
            }
        }
        at
    }

    /// Time has passed to `now`: every timeline interval that ended is handed out as an
    /// [`Event::Interval`] (several if the thread was held up). True if any was.
    pub fn handle_timeout(&mut self, now: i64) -> bool {
        let mut any = false;
        while now >= self.timers.next_boundary {
            self.emit_interval();
            self.timers.next_boundary += self.timers.interval_us;
            any = true;
        }
        any
    }

    /// Every client must end now (their transactions in flight cancelled and counted as
    /// unfinished): a stop was requested (Ctrl-C, SIGTERM, `--exit-on-abort`), or a -T run's
    /// end plus [`END_GRACE_US`] passed, so transactions stuck in a lock queue cannot keep
    /// the run going forever.
    pub fn must_abandon(&self, now: i64) -> bool {
        self.env.stop_requested() || self.end_us.is_some_and(|e| now >= e + END_GRACE_US)
    }

    /// The run's last (usually partial) interval, at the end of the thread.
    pub fn finish_intervals(&mut self) {
        self.emit_interval();
    }

    /// Where this thread's benchmark interval ended, the loop having exited at `exit_us`:
    /// at its last transaction's end, or at -T when stuck ones were cancelled after it (or at
    /// Ctrl-C); closing connections is not part of it.
    pub fn bench_end(&self, exit_us: i64) -> i64 {
        self.last_end_us
            .max(self.end_us.map_or(exit_us, |e| e.min(exit_us)))
    }

    /// A client aborted: with `--exit-on-abort`, pgbench 17's line once, and every thread
    /// stops gracefully (results kept).
    pub(crate) fn note_abort(&mut self) {
        self.any_aborted = true;
        if self.plan.cfg.exit_on_abort && !self.timers.abort_reported {
            self.timers.abort_reported = true;
            self.events.say(format!(
                "hotbench: error: Run was aborted due to an error in thread {}",
                self.tid
            ));
            self.events.push(Event::StopAll);
        }
    }

    /// Starts the timers at `origin`.
    pub(crate) fn start_timers(&mut self, origin: i64) {
        let interval = self.plan.cfg.settings.interval_us.max(MIN_INTERVAL_US);
        self.timers.interval_us = interval;
        self.timers.next_boundary = origin + interval;
        self.timers.index = 0;
    }

    fn emit_interval(&mut self) {
        let groups = self.tally.take_intervals();
        self.events.push(Event::Interval {
            index: self.timers.index,
            groups,
        });
        self.timers.index += 1;
    }
}
