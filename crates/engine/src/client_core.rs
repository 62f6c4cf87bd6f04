//! The engine core of one worker thread, without sockets (sans-I/O, like quinn-proto's
//! `Connection`): it holds the clients' protocol state, the run's retry policy and the
//! thread's statistics, takes events (a backend message arrived, a connection was opened or
//! lost, time passed) and answers with what the driver must do next ([`Action`]). The epoll
//! loop in `worker.rs` owns the connections and does the I/O; unit tests drive the core with
//! scripted server replies instead (`client_core_tests.rs`).
//!
//! The state machine itself is in `machine.rs`, error handling and retries in `retry.rs`,
//! transaction accounting in `accounting.rs`; this file holds the thread state and the
//! events that come from the network.

use std::sync::Arc;

use hotbench_script::{CommandKind, ThreadRandom};
use hotbench_stats::{ErrorSample, FailureKind};
use hotbench_wire::{DbError, Message};

use crate::collect::Step;
use crate::config::{Limit, OnDisconnect};
use crate::env::Env;
use crate::events::{Event, Events};
use crate::plan::Plan;
use crate::send::SendBuffers;
use crate::slot::{Phase, Resume, Slot};
use crate::tally::Tally;
use crate::timers::Timers;

/// What the driver must do for a client after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing until a message arrives or the client's `wake_at` passes. If the client is no
    /// longer `connected`, close its connection.
    Wait,
    /// Open a new connection (closing any old one), then call [`Core::on_connected`].
    Connect,
    /// Hand `slot.out` to the connection; results follow. Call [`Core::on_lost`] if the
    /// write fails.
    Send,
}

/// Reconnect attempts start this long after a loss, µs.
const RECONNECT_DELAY_US: i64 = 10_000;

/// One worker thread's clients, minus their sockets.
pub struct Core<E: Env> {
    pub env: E,
    pub plan: Arc<Plan>,
    pub tally: Tally,
    pub(crate) bufs: SendBuffers,
    pub(crate) rnd: ThreadRandom,
    /// Per group: the schedule's last start under -R, µs.
    pub(crate) trigger: Vec<i64>,
    /// Per group: mean delay between this thread's starts under -R, µs (a `rate`
    /// perturbation changes it for a while, `knobs.rs`).
    pub(crate) delay: Vec<Option<f64>>,
    /// Per group: the same as the run's `-R` gives it.
    pub(crate) base_delay: Vec<Option<f64>>,
    /// The emulated round trip, µs: `--rtt`, or an `rtt` perturbation's for a while.
    pub(crate) rtt_us: i64,
    /// End of a -T run (monotonic µs).
    pub end_us: Option<i64>,
    /// Distinct server errors seen, with counts (at most [`MAX_ERROR_SAMPLES`]).
    pub errors: Vec<ErrorSample>,
    /// What the driver must write or do (stderr lines, -l records, intervals).
    pub(crate) events: Events,
    /// The run's clock rules (`timers.rs`).
    pub(crate) timers: Timers,
    /// The thread's index (named in `--exit-on-abort`'s line).
    pub(crate) tid: usize,
    /// `debug()` output of the meta-command being run.
    pub(crate) debug_out: Vec<u8>,
    /// A client aborted (for `--exit-on-abort`).
    pub any_aborted: bool,
    /// When this thread's last transaction ended (committed, failed or skipped), µs: where
    /// the benchmark interval ends, not at teardown or at the cancellation of stuck ones.
    pub last_end_us: i64,
    /// A `--key` variable's text form when it holds a double or boolean (reused: counting a
    /// key does not allocate).
    pub(crate) key_text: String,
}

/// Distinct error messages remembered per thread.
pub const MAX_ERROR_SAMPLES: usize = 20;

impl<E: Env> Core<E> {
    /// The core of thread `tid` of `plan`; `rnd` are the thread's PRNGs.
    pub fn new(plan: Arc<Plan>, tid: usize, rnd: ThreadRandom, env: E) -> Self {
        let assigned = &plan.threads[tid].clients;
        let delay = (0..plan.groups.len())
            .map(|g| {
                let here = assigned.iter().filter(|(_, gg)| *gg == g).count();
                plan.throttle_delay_us(g, here)
            })
            .collect::<Vec<_>>();
        Core {
            env,
            tally: Tally::new(&plan.shape()),
            bufs: SendBuffers::default(),
            rnd,
            trigger: vec![0; plan.groups.len()],
            base_delay: delay.clone(),
            rtt_us: plan.cfg.settings.rtt_us,
            delay,
            end_us: None,
            errors: Vec::new(),
            events: Events::default(),
            timers: Timers::default(),
            tid,
            debug_out: Vec::new(),
            any_aborted: false,
            last_end_us: 0,
            key_text: String::new(),
            plan,
        }
    }

    /// The benchmark starts at `origin`: -R schedules, the -T end and the timeline
    /// intervals are counted from it.
    pub fn start(&mut self, origin: i64) {
        self.start_timers(origin);
        self.last_end_us = origin;
        for t in self.trigger.iter_mut() {
            *t = origin;
        }
        self.end_us = match self.plan.cfg.limit {
            Limit::Duration(d) => Some(origin + d),
            Limit::Transactions(_) => None,
        };
    }

    pub(crate) fn past_end(&self, now: i64) -> bool {
        self.end_us.is_some_and(|e| now >= e)
    }

    pub(crate) fn limit_reached(&self, slot: &Slot) -> bool {
        match self.plan.cfg.limit {
            Limit::Transactions(n) => slot.txns_done >= n,
            Limit::Duration(_) => false,
        }
    }

    pub(crate) fn finished(&self, slot: &Slot, now: i64) -> bool {
        self.limit_reached(slot) || self.past_end(now) || self.env.stop_requested()
    }

    /// A connection attempt requested by [`Action::Connect`] ended (`Err`: why it failed).
    pub fn on_connected(&mut self, slot: &mut Slot, result: Result<(), String>) {
        let asked_at = slot.connect_at;
        match (slot.phase, result) {
            (Phase::Reconnect, Ok(())) => {
                slot.mark_connected();
                slot.reconnect_attempts = 0;
                let gap = (self.env.now() - slot.disconnected_at).max(0) as u64;
                let (g, s) = (slot.group, slot.script);
                self.tally.each(g, s, |c| {
                    c.reconnects += 1;
                    c.disconnected_us += gap;
                });
                slot.phase = Phase::ChooseScript;
            }
            (Phase::Reconnect, Err(_)) => {
                slot.reconnect_attempts += 1;
                let backoff = (10_000i64 << slot.reconnect_attempts.min(7)).min(1_000_000);
                slot.wake_at = asked_at + backoff;
            }
            (_, Ok(())) => slot.mark_connected(),
            (_, Err(e)) => {
                if self.plan.cfg.connect_each_txn {
                    self.events.say(format!(
                        "hotbench: error: client {} aborted while establishing connection: {e}",
                        slot.id
                    ));
                    self.abort(slot);
                } else {
                    slot.phase = Phase::Reconnect;
                    slot.wake_at = asked_at + RECONNECT_DELAY_US;
                }
            }
        }
    }

    /// One backend message for the client. `None`: keep reading; `Some(action)`: stop
    /// reading and do `action` (the command's results were complete, or the session ended).
    pub fn on_message(&mut self, slot: &mut Slot, msg: &Message) -> Option<Action> {
        if !matches!(slot.phase, Phase::WaitResult | Phase::WaitRollback) {
            // Asynchronous messages (notices, parameter status) between commands.
            if let Message::ErrorResponse(body) = msg {
                let err = DbError::from_error_response(body).ok();
                self.on_lost(slot, err, "server sent an error outside a command");
                return Some(Action::Wait);
            }
            return None;
        }
        let sql = if slot.phase == Phase::WaitResult && slot.pipeline.is_none() {
            match self.plan.groups[slot.group].scripts[slot.script]
                .command(slot.cmd)
                .map(|c| &c.kind)
            {
                Some(CommandKind::Sql(s)) => Some(s),
                _ => None,
            }
        } else {
            None
        };
        let step = match slot.collector.on_message(msg, sql, &mut slot.interp.vars) {
            Ok(s) => s,
            Err(e) => {
                self.on_lost(slot, None, &e.to_string());
                return Some(Action::Wait);
            }
        };
        if !slot.collector.notices.is_empty() {
            for notice in slot.collector.notices.drain(..) {
                self.events.say(notice);
            }
        }
        if slot.collector.copy_started {
            // The server now waits for COPY data that no script can give (pgbench's words).
            self.events
                .say("hotbench: error: COPY is not supported in pgbench, aborting".into());
            self.abort(slot);
            return Some(Action::Wait);
        }
        if slot.collector.error.as_ref().is_some_and(DbError::is_fatal) {
            let err = slot.collector.error.take();
            self.on_lost(slot, err, "the server terminated the session");
            return Some(Action::Wait);
        }
        if step != Step::Done {
            return None;
        }
        if let Some(n) = slot.pipeline {
            if n > 1 {
                slot.pipeline = Some(n - 1);
                return None;
            }
        }
        // One clock read for the whole event: the result's time is also when the next
        // command starts.
        let now = self.env.now();
        // --rtt on every round trip; --think too when the result left the transaction open
        // (the client's own time between a transaction's statements, holding its locks).
        let mut rtt = self.rtt_us;
        if slot.collector.tx_status != b'I' {
            rtt += self.plan.cfg.settings.think_us;
        }
        if rtt > 0 {
            slot.resume = if slot.phase == Phase::WaitRollback {
                Resume::Rollback
            } else {
                Resume::Result
            };
            slot.wake_at = now + rtt;
            slot.phase = Phase::Sleep;
            return Some(Action::Wait);
        }
        let action = if slot.phase == Phase::WaitRollback {
            self.process_rollback(slot)
        } else {
            self.process_result(slot, now)
        };
        if action != Action::Wait {
            return Some(action);
        }
        if slot.is_runnable(now) {
            return Some(self.advance_at(slot, now));
        }
        Some(Action::Wait)
    }

    /// A command's results are complete at `now` (after the emulated round trip, if any).
    pub(crate) fn process_result(&mut self, slot: &mut Slot, now: i64) -> Action {
        if self.plan.cfg.display.debug {
            self.events
                .say(format!("hotbench: client {} receiving", slot.id));
        }
        let latency = now - slot.cmd_start;
        let in_pipeline = slot.pipeline.take().is_some();
        if let Some(err) = slot.collector.error.take() {
            if slot.parsed_named && !slot.collector.parsed && !in_pipeline {
                // The server rejected the Parse. pgbench logs a failed prepare, counts the
                // statement as prepared all the same and executes it: the server's answer
                // ("prepared statement … does not exist", or the aborted transaction's)
                // is the error that counts, on every later use too. The Bind sent with the
                // Parse was skipped, so send the command again, now without the Parse.
                let text = self.error_text(slot, &err);
                self.events.say(format!("hotbench: error: {text}"));
                let (g, s) = (slot.group, slot.script);
                self.record_server_error(g, s, &err);
                slot.parsed_named = false;
                slot.phase = Phase::Command;
                return Action::Wait;
            }
            return self.handle_sql_error(slot, err);
        }
        if let Some(e) = slot.collector.store_error.take() {
            self.events.say(format!(
                "hotbench: error: {}",
                e.pgbench_message(slot.id, slot.script, slot.cmd)
            ));
            self.abort(slot);
            return Action::Wait;
        }
        if let Some(c) = self.tally.command(slot.group, slot.script, slot.cmd) {
            c.latency.add(latency as f64);
            c.hist.record_us(latency.max(0) as u64);
        }
        slot.cmd += 1;
        slot.phase = Phase::Command;
        Action::Wait
    }

    /// Ends a client at the end of the run (`now`): a transaction still in flight is counted
    /// as unfinished, one waiting for a -R start already passed as unstarted. True if the
    /// driver should cancel the query on the server first (so its locks go away at once).
    pub fn abandon(&mut self, slot: &mut Slot, now: i64) -> bool {
        let mut cancel = false;
        let owed = self
            .schedule_horizon(now)
            .is_some_and(|h| slot.txn_scheduled <= h);
        if slot.phase == Phase::Throttle && owed {
            self.tally.groups[slot.group].counters.unstarted += 1;
        }
        if slot.in_transaction() {
            cancel = matches!(slot.phase, Phase::WaitResult | Phase::WaitRollback);
            let (g, s) = (slot.group, slot.script);
            self.tally.each(g, s, |c| c.unfinished += 1);
        }
        if slot.phase == Phase::Reconnect {
            let (g, s) = (slot.group, slot.script);
            self.tally.each(g, s, |c| c.ended_disconnected += 1);
        }
        slot.disconnect();
        slot.phase = Phase::Finished;
        cancel
    }

    pub(crate) fn abort(&mut self, slot: &mut Slot) {
        slot.disconnect();
        slot.phase = Phase::Aborted;
        self.note_abort();
    }

    /// The next thing the driver must write or do, in the order the core decided them.
    #[inline]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop()
    }

    /// The connection is gone (`err`: the server's last word, if any): fail the
    /// transaction in flight, then reconnect or abort.
    pub fn on_lost(&mut self, slot: &mut Slot, err: Option<DbError>, what: &str) {
        let (g, s) = (slot.group, slot.script);
        let err = err.or_else(|| slot.collector.farewell.take());
        let detail = match &err {
            Some(e) => {
                self.record_server_error(g, s, e);
                format!("{e}")
            }
            None => what.to_string(),
        };
        let was_in_tx = slot.in_transaction();
        slot.disconnect();
        slot.pipeline = None;
        if was_in_tx {
            let retried = slot.retried;
            self.tally.each(g, s, |c| {
                c.record_failure(FailureKind::Connection);
                if retried {
                    c.retried += 1;
                }
            });
            slot.txns_done += 1;
        }
        match self.plan.cfg.settings.on_disconnect {
            OnDisconnect::Abort => {
                self.events.say(format!(
                    "hotbench: error: client {} script {} aborted in command {}: connection lost: {detail}",
                    slot.id, s, slot.cmd
                ));
                slot.phase = Phase::Aborted;
                self.note_abort();
            }
            OnDisconnect::Reconnect => {
                if self.plan.cfg.display.verbose_errors {
                    self.events.say(format!(
                        "hotbench: client {} lost its connection ({detail}); reconnecting",
                        slot.id
                    ));
                }
                let now = self.env.now();
                slot.disconnected_at = now;
                slot.reconnect_attempts = 0;
                slot.wake_at = now + RECONNECT_DELAY_US;
                slot.phase = Phase::Reconnect;
            }
        }
    }
}
