//! What a server error does to a transaction (pgbench's `--max-tries` rules plus hotbench's
//! `--retry-on`, `--continue-on-error` and back-off): classify it by its typed SQLSTATE,
//! then retry after rolling back, fail the transaction, or abort the client.

use hotbench_stats::FailureKind;
use hotbench_wire::{DbError, SqlState};

use crate::client_core::{Action, Core};
use crate::env::Env;
use crate::slot::{Outcome, Phase, Resume, Slot};

/// How a server error counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Retried by default, as pgbench 15+ (40001, 40P01).
    Serialization,
    Deadlock,
    /// Listed in `--retry-on`.
    OtherRetriable,
    /// Not retried: fails the transaction (`--continue-on-error`) or aborts the client.
    Other,
}

impl ErrorClass {
    /// The class of `code` given the codes of `--retry-on`.
    pub fn of(code: SqlState, extra: &[SqlState]) -> ErrorClass {
        if code.is_serialization_failure() {
            ErrorClass::Serialization
        } else if code.is_deadlock() {
            ErrorClass::Deadlock
        } else if extra.contains(&code) {
            ErrorClass::OtherRetriable
        } else {
            ErrorClass::Other
        }
    }

    /// The failure a retriable error counts as when it is not retried again.
    fn retriable_failure(self) -> Option<FailureKind> {
        match self {
            ErrorClass::Serialization => Some(FailureKind::Serialization),
            ErrorClass::Deadlock => Some(FailureKind::Deadlock),
            ErrorClass::OtherRetriable => Some(FailureKind::Other),
            ErrorClass::Other => None,
        }
    }
}

impl<E: Env> Core<E> {
    /// The text sent for `slot`'s command, in which a server error's position counts
    /// (rendered again from the variables on this error path; none inside a pipeline, where
    /// the failing command is not the slot's current one).
    fn sent_text(&self, slot: &Slot) -> Option<String> {
        if slot.pipeline.is_some() {
            return None;
        }
        let command = self.plan.groups[slot.group].scripts[slot.script].command(slot.cmd)?;
        let hotbench_script::CommandKind::Sql(sql) = &command.kind else {
            return None;
        };
        let mut text = String::new();
        match self.plan.cfg.query_mode {
            crate::config::QueryMode::Simple => sql.render_simple(&slot.interp.vars, &mut text),
            _ if sql.has_dynamic_text() => sql.render_extended(&slot.interp.vars, &mut text),
            _ => text.push_str(sql.extended_text()),
        }
        Some(text)
    }

    /// `collect::one_line` with libpq's `LINE n:` and caret lines under the message where the error
    /// has a position in what `slot` sent (pgbench prints them).
    pub(crate) fn error_text(&self, slot: &Slot, err: &DbError) -> String {
        let sent = self.sent_text(slot);
        err.render_at(sent.as_deref(), &|s| hotbench_results::terminal::escape(s))
    }

    /// The command in flight failed with `err`.
    pub(crate) fn handle_sql_error(&mut self, slot: &mut Slot, err: DbError, now: i64) -> Action {
        let plan = self.plan.clone();
        let cfg = &plan.cfg;
        let (g, s, c) = (slot.group, slot.script, slot.cmd);
        self.record_server_error(g, s, &err);
        slot.last_error = Some(err.code());
        let class = ErrorClass::of(err.code(), &cfg.retry.extra_codes);
        let in_tx = slot.collector.tx_status != b'I';
        if cfg.display.verbose_errors {
            self.events.say(format!(
                "hotbench: client {} got an error in command {} (SQL) of script {}; {}",
                slot.id,
                c,
                s,
                self.error_text(slot, &err)
            ));
        }
        match class.retriable_failure() {
            Some(kind) => {
                if self.can_retry(slot, now) {
                    if let Some(t) = self.tally.command(g, s, c) {
                        t.retries += 1;
                    }
                    if cfg.display.verbose_errors {
                        let max = cfg.retry.max_tries;
                        self.events.say(format!(
                            "hotbench: client {} repeats the transaction after the error (try {}/{})",
                            slot.id,
                            slot.tries,
                            if max == 0 {
                                "unlimited".to_string()
                            } else {
                                max.to_string()
                            }
                        ));
                    }
                    slot.retry_after_rollback = true;
                } else {
                    if let Some(t) = self.tally.command(g, s, c) {
                        t.failures += 1;
                    }
                    slot.retry_after_rollback = false;
                    slot.failure_after_rollback = Some(kind);
                }
                self.finish_error(slot, in_tx, now)
            }
            None if cfg.retry.continue_on_error => {
                if let Some(t) = self.tally.command(g, s, c) {
                    t.failures += 1;
                }
                slot.retry_after_rollback = false;
                slot.failure_after_rollback = Some(FailureKind::Other);
                self.finish_error(slot, in_tx, now)
            }
            None => {
                if let Some(t) = self.tally.command(g, s, c) {
                    t.failures += 1;
                }
                self.events.say(format!(
                    "hotbench: error: client {} script {} aborted in command {} query {}: {}",
                    slot.id,
                    s,
                    c,
                    0,
                    self.error_text(slot, &err)
                ));
                self.abort(slot);
                Action::Wait
            }
        }
    }

    /// Another try is allowed: tries left, within -L of the scheduled start, before the end.
    pub(crate) fn can_retry(&self, slot: &Slot, now: i64) -> bool {
        let cfg = &self.plan.cfg;
        if cfg.retry.max_tries != 0 && slot.tries >= cfg.retry.max_tries {
            return false;
        }
        if let Some(limit) = cfg.latency_limit_us {
            if now - slot.txn_scheduled > limit {
                return false;
            }
        }
        !self.past_end(now) && !self.env.stop_requested()
    }

    /// After an error at `now`: roll back if a transaction block is open, then retry or fail.
    fn finish_error(&mut self, slot: &mut Slot, in_tx: bool, now: i64) -> Action {
        if in_tx
            && slot.connected
            && hotbench_wire::encode::query(&mut slot.out, "ROLLBACK").is_ok()
        {
            slot.collector.start(None);
            slot.phase = Phase::WaitRollback;
            return Action::Send;
        }
        self.process_rollback(slot, now)
    }

    /// The ROLLBACK after an error completed at `now` (or was not needed): retry or end as
    /// failed.
    pub(crate) fn process_rollback(&mut self, slot: &mut Slot, now: i64) -> Action {
        if slot.collector.error.take().is_some() {
            self.events.say(format!(
                "hotbench: error: client {} aborted: could not roll back the failed transaction",
                slot.id
            ));
            self.abort(slot);
            return Action::Wait;
        }
        if slot.retry_after_rollback {
            slot.retry_after_rollback = false;
            let (g, s) = (slot.group, slot.script);
            self.tally.each(g, s, |c| c.retries += 1);
            slot.retried = true;
            slot.tries += 1;
            slot.interp.restart_transaction();
            slot.cmd = 0;
            let delay = self
                .plan
                .cfg
                .retry
                .backoff
                .delay_us(slot.tries, slot.jitter.next_unit());
            if delay > 0 {
                slot.wake_at = now + delay;
                slot.resume = Resume::Command;
                slot.phase = Phase::Sleep;
            } else {
                slot.phase = Phase::Command;
            }
        } else {
            let kind = slot
                .failure_after_rollback
                .take()
                .unwrap_or(FailureKind::Other);
            self.end_transaction(slot, Outcome::Failed(kind), now);
        }
        Action::Wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_by_typed_sqlstate() {
        let extra = [SqlState::LOCK_NOT_AVAILABLE];
        let of = |c: &str| ErrorClass::of(SqlState::parse(c).unwrap(), &extra);
        assert_eq!(of("40001"), ErrorClass::Serialization);
        assert_eq!(of("40P01"), ErrorClass::Deadlock);
        assert_eq!(of("55p03"), ErrorClass::OtherRetriable);
        assert_eq!(of("23505"), ErrorClass::Other);
    }
}
