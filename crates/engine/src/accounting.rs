//! Transaction accounting of the core: how an ended, failed, skipped or unstarted
//! transaction and a server error are counted (per group, script and timeline interval), logged (`-l`) and
//! sampled for the result record (`stats::ErrorSample`).

use hotbench_results::ErrorSample;
use hotbench_wire::DbError;

use crate::client_core::{Core, MAX_ERROR_SAMPLES};
use crate::config::GoodputRule;
use crate::config::GOODPUT_VARIABLE;
use crate::env::Env;
use crate::events::{Event, TxnRecord};
use crate::slot::{Outcome, Phase, Slot};

/// At most this many -R starts are drawn one by one by [`Core::count_unstarted`].
const MAX_DRAWS: u64 = 1_000_000;

impl<E: Env> Core<E> {
    /// The transaction ended at `now`: count it, log it, and go on with the next one.
    pub(crate) fn end_transaction(&mut self, slot: &mut Slot, outcome: Outcome, now: i64) {
        self.last_end_us = self.last_end_us.max(now);
        let (g, s) = (slot.group, slot.script);
        // pgbench counts the transaction first, then aborts a client left inside a block.
        let incomplete = outcome == Outcome::Committed && slot.collector.tx_status != b'I';
        let throttled = self.delay[g].is_some();
        let latency = (now - slot.txn_scheduled).max(0) as u64;
        let lag = throttled.then(|| (slot.txn_begin - slot.txn_scheduled).max(0) as u64);
        let retried = slot.retried;
        if let Some(h) = slot.host.and_then(|h| self.tally.hosts.get_mut(h)) {
            let c = &mut h.counters;
            match outcome {
                Outcome::Committed => c.record_success(latency, lag, 1),
                Outcome::Failed(kind) => c.record_failure(kind),
            }
            if retried {
                c.retried += 1;
            }
        }
        self.count_client_and_keys(slot, outcome, latency);
        match outcome {
            Outcome::Committed => {
                let useful = self.useful_work(slot);
                let late = self
                    .plan
                    .cfg
                    .latency_limit_us
                    .is_some_and(|l| latency as i64 > l);
                self.tally.each(g, s, |c| {
                    c.record_success(latency, lag, 0);
                    c.add_work(useful);
                    if late {
                        c.late += 1;
                    }
                    if retried {
                        c.retried += 1;
                    }
                });
            }
            Outcome::Failed(kind) => {
                self.tally.each(g, s, |c| {
                    c.record_failure(kind);
                    if retried {
                        c.retried += 1;
                    }
                });
            }
        }
        // pgbench counts the transaction first: its log numbers them from 1.
        slot.txns_done += 1;
        if let Some(log) = &self.plan.cfg.log {
            // --sampling-rate (never with --aggregate-interval): pgbench draws from the
            // thread's sampling PRNG per logged transaction.
            let sampled = log.aggregate_interval > 0
                || log
                    .sampling_rate
                    .is_none_or(|rate| self.rnd.sample.double() <= rate);
            if sampled {
                self.events.push(Event::Txn(TxnRecord {
                    client: slot.id,
                    txn_no: slot.txns_done,
                    script: s,
                    now,
                    latency,
                    lag,
                    outcome: Some(outcome),
                    tries: slot.tries,
                }));
            }
        }
        if incomplete {
            self.events.say(format!(
                "hotbench: error: client {} aborted: end of script reached without completing the last transaction",
                slot.id
            ));
            self.abort(slot);
            return;
        }
        if self.plan.cfg.connect_each_txn {
            slot.disconnect();
        }
        slot.phase = Phase::ChooseScript;
    }

    /// A scheduled start already later than -L: skipped without running (pgbench).
    pub(crate) fn skip(&mut self, slot: &mut Slot, now: i64) {
        let (g, s) = (slot.group, slot.script);
        self.last_end_us = self.last_end_us.max(now);
        self.tally.each(g, s, |c| c.skipped += 1);
        slot.txns_done += 1;
        if self.plan.cfg.log.is_some() {
            self.events.push(Event::Txn(TxnRecord {
                client: slot.id,
                txn_no: slot.txns_done,
                script: s,
                now,
                latency: 0,
                lag: None,
                outcome: None,
                tries: slot.tries,
            }));
        }
    }

    /// Where the -R schedule stops owing starts: the -T end, or `now` if the run stopped
    /// before it (Ctrl-C). None for -t runs: they owe transactions per client, not a
    /// schedule up to an end.
    pub(crate) fn schedule_horizon(&self, now: i64) -> Option<i64> {
        self.end_us.map(|e| e.min(now))
    }

    /// The thread's clients are all done at `now`: under -R in a -T run, every start the
    /// schedule owed before the end that no client took (they were all held up: a stalled
    /// server, or one slower than the rate) is counted as unstarted, so that committed,
    /// failed, skipped, unfinished and unstarted add up to the schedule. The starts are
    /// drawn as the schedule would have drawn them (the thread's throttle PRNG); past
    /// [`MAX_DRAWS`] the rest is the schedule's expected count.
    pub fn count_unstarted(&mut self, now: i64) {
        let Some(horizon) = self.schedule_horizon(now) else {
            return;
        };
        for g in 0..self.delay.len() {
            let Some(delay) = self.delay[g] else {
                continue;
            };
            let mut at = self.trigger[g];
            let mut n: u64 = 0;
            while n < MAX_DRAWS {
                at =
                    at.saturating_add(hotbench_script::poisson_rand(&mut self.rnd.throttle, delay));
                if at > horizon {
                    break;
                }
                n += 1;
            }
            if n == MAX_DRAWS && at < horizon && delay > 0.0 {
                n = n.saturating_add(((horizon - at) as f64 / delay) as u64);
            }
            self.trigger[g] = at;
            if let Some(t) = self.tally.groups.get_mut(g) {
                t.counters.unstarted = t.counters.unstarted.saturating_add(n);
            }
        }
    }

    /// Goodput: units of useful work of the committed transaction by the group's rule (0
    /// or 1, but the variable's value under `sum:`, fractions included: they add up).
    fn useful_work(&self, slot: &Slot) -> f64 {
        let truthy = |name: &str| -> Option<bool> {
            let text = slot.interp.vars.text(name)?;
            let t = text.trim().to_ascii_lowercase();
            Some(!(t.is_empty() || t == "0" || t == "f" || t == "false" || t == "off" || t == "no"))
        };
        let one = |b: bool| if b { 1.0 } else { 0.0 };
        match &self.plan.groups[slot.group].goodput {
            GoodputRule::Committed => one(truthy(GOODPUT_VARIABLE).unwrap_or(true)),
            GoodputRule::Variable(name) => one(truthy(name).unwrap_or(false)),
            GoodputRule::Rows => one(slot.collector.last_rows > 0),
            GoodputRule::Sum(name) => slot
                .interp
                .vars
                .text(name)
                .and_then(|t| t.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n > 0.0)
                .unwrap_or(0.0),
        }
    }

    /// Counts a server error by SQLSTATE and keeps a sample of its message.
    pub(crate) fn record_server_error(&mut self, group: usize, script: usize, err: &DbError) {
        self.tally
            .each(group, script, |c| c.record_error_code(err.code.as_str()));
        if let Some(e) = self
            .errors
            .iter_mut()
            .find(|e| e.sqlstate == err.code.as_str() && e.message == err.message)
        {
            e.count += 1;
        } else if self.errors.len() < MAX_ERROR_SAMPLES {
            self.errors.push(ErrorSample {
                sqlstate: err.code.to_string(),
                message: err.message.clone(),
                count: 1,
            });
        }
    }
}
