//! Where a sampled transaction's think time is: each gap by Little's law on the samples that
//! saw a backend idle in its transaction after that statement. A sample seeing a backend
//! idle in its transaction also names the statement it idles after (`pg_stat_activity`'s
//! text stays the last statement's), so the sessions idle after statement `s` on average
//! (its idle samples over the rounds), over how often `s` runs (its calls per second), is
//! the mean time a transaction idles after `s`: the gap before the next statement, or
//! before COMMIT after the last; after BEGIN, the same over the explicit transactions. Every
//! sample counts alike whatever the sampling period, so the estimate is as unbiased at one
//! read in 170 ms as at one in 10 ms (only its noise grows). Gaps measured between two
//! sightings of one transaction (a statement's end seen idle, then the next one's start)
//! are not: at a sparse period they are seen only in transactions longer than the period
//! (those that waited on a lock), and a gap never seen so left its time to the others.
//! Pure arithmetic on the tracker's counts and the shapes.

use std::collections::BTreeMap;

use crate::script;
use crate::shapes::ShapeModel;

/// The idle-in-transaction samples, by what the backend idled after.
pub struct IdleSamples<'a> {
    /// By the statement's key.
    pub by_key: &'a BTreeMap<String, u64>,
    /// After BEGIN (or another control statement: SAVEPOINT, …).
    pub after_control: u64,
    /// Sampling rounds.
    pub rounds: u64,
}

/// Sets every explicit shape's gaps (before each statement after the first), its gap after
/// BEGIN (`edge_gap_s`) and before COMMIT (`commit_gap_s`) from the idle samples, with the
/// shapes' calls counted over `duration_s` and `tps` the transactions committed per second.
/// A statement's rate is its calls (exact from `pg_stat_statements`, whatever shape it was
/// assembled into); the transactions' rate, for BEGIN, is the explicit shapes' count, at most
/// `tps` (a statement sampling could not join to its shape is a shape of its own, and its
/// transactions are counted twice). `false` (nothing set) when no idle sample named a
/// statement or nothing ran.
pub fn place(models: &mut [ShapeModel], idle: &IdleSamples<'_>, tps: f64, duration_s: f64) -> bool {
    let attributed = idle.by_key.values().sum::<u64>() + idle.after_control;
    if tps <= 0.0 || duration_s <= 0.0 || idle.rounds == 0 || attributed == 0 {
        return false;
    }
    let rounds = idle.rounds as f64;
    let mut calls: BTreeMap<&str, f64> = BTreeMap::new();
    let mut explicit = 0.0;
    for m in models.iter().filter(|m| !m.autocommit) {
        explicit += m.count;
        for s in &m.statements {
            *calls.entry(s.key.as_str()).or_default() += s.calls;
        }
    }
    if explicit <= 0.0 {
        return false;
    }
    // Seconds idle after one execution of each statement: sessions idle after it on
    // average, over its executions per second.
    let per_run: BTreeMap<String, f64> = calls
        .iter()
        .filter(|(_, c)| **c > 0.0)
        .map(|(k, c)| {
            let n = idle.by_key.get(*k).copied().unwrap_or(0) as f64;
            (k.to_string(), n / rounds / (c / duration_s))
        })
        .collect();
    let explicit_per_s = (explicit / duration_s).min(tps);
    let after_begin = idle.after_control as f64 / rounds / explicit_per_s;
    for m in models.iter_mut().filter(|m| !m.autocommit) {
        let slots = slots(m);
        let after = |slot: &[usize]| -> f64 {
            slot.iter()
                .map(|&i| {
                    let s = &m.statements[i];
                    per_run.get(&s.key).copied().unwrap_or(0.0) * s.per_tx
                })
                .sum()
        };
        let idle_after: Vec<f64> = slots.iter().map(|s| after(s)).collect();
        let mut gaps = vec![None; m.statements.len()];
        for (k, slot) in slots.iter().enumerate().skip(1) {
            gaps[slot[0]] = Some(idle_after[k - 1]);
        }
        m.gaps_s = gaps;
        m.edge_gap_s = Some(after_begin);
        m.commit_gap_s = idle_after.last().copied();
    }
    true
}

/// The statements in the order the script runs them, each with its alternative (one slot:
/// a transaction runs one of the two).
fn slots(m: &ShapeModel) -> Vec<Vec<usize>> {
    let alternative = script::alternatives(m);
    let mut done = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for i in 0..m.statements.len() {
        if !done.insert(i) {
            continue;
        }
        match alternative.get(&i) {
            Some(&other) => {
                done.insert(other);
                out.push(vec![i, other]);
            }
            None => out.push(vec![i]),
        }
    }
    out
}

#[cfg(test)]
#[path = "think_tests.rs"]
mod tests;
