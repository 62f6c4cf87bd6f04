//! Accounting by client and by key: each client's commits and latency (fairness), and with
//! `--key VAR` each value of VAR at the end of the transaction (hot keys). Kept apart from
//! the group/script accounting because it is keyed by who and what, not by where in the
//! script; without `--key` it costs one counter and one histogram slot per transaction.

use hotbench_script::{Value, VarValue};
use hotbench_stats::hot_keys::{bounded_key, KeyOutcome, KeyRef};
use hotbench_stats::FailureKind;
use hotbench_wire::SqlState;

use crate::client_core::Core;
use crate::env::Env;
use crate::slot::{Outcome, Slot};

impl<E: Env> Core<E> {
    pub(crate) fn count_client_and_keys(
        &mut self,
        slot: &mut Slot,
        outcome: Outcome,
        latency: u64,
    ) {
        match outcome {
            Outcome::Committed => {
                slot.fair.committed += 1;
                slot.fair.latency.record_us(latency);
            }
            Outcome::Failed(_) => slot.fair.failed += 1,
        }
        if self.tally.keys.is_empty() {
            return;
        }
        let last_error = slot.last_error;
        let failed_with = match outcome {
            Outcome::Committed => None,
            Outcome::Failed(kind) => Some(match (&last_error, kind) {
                (_, FailureKind::Serialization) => SqlState::SERIALIZATION_FAILURE.as_str(),
                (_, FailureKind::Deadlock) => SqlState::DEADLOCK_DETECTED.as_str(),
                (_, FailureKind::Connection) => SqlState::CONNECTION_FAILURE.as_str(),
                (Some(code), FailureKind::Other) => code.as_str(),
                (None, FailureKind::Other) => "other",
            }),
        };
        let o = KeyOutcome {
            tries: slot.tries,
            committed: outcome == Outcome::Committed,
            failed_with,
            latency_us: latency,
        };
        let vars = &slot.interp.vars;
        let Some(group) = self.plan.groups.get(slot.group) else {
            return;
        };
        for &i in &group.key_sketches {
            let Some(sketch) = self.tally.keys.get_mut(i) else {
                continue;
            };
            // Borrowed: a known value costs no allocation (text is copied only into a new
            // or evicted entry); integers never allocate.
            // Text is bounded (`hot_keys::bounded_key`): a script's megabyte value must not
            // become a megabyte per entry.
            let key = match vars.get(&sketch.variable) {
                None => continue,
                Some(VarValue::Value(Value::Int(i))) => KeyRef::Int(*i),
                Some(VarValue::Text(t)) => match t.trim().parse::<i64>() {
                    Ok(i) => KeyRef::Int(i),
                    Err(_) => KeyRef::Text(bounded_key(t, &mut self.key_text)),
                },
                Some(VarValue::Value(_)) => {
                    self.key_text.clear();
                    vars.write_text(&sketch.variable, &mut self.key_text);
                    KeyRef::Text(&self.key_text)
                }
            };
            sketch.record(key, o);
        }
    }
}
