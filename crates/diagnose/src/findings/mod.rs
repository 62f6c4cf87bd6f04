//! From the sample to findings: each module judges one kind of contention from the facts
//! (hot rows and queues per relation, the xmin horizon, then server-wide symptoms), adds what
//! it looked at to the checks, and the findings are ranked by the share of active session
//! time they explain. Pure: the unit tests feed it hand-built probe records.

mod input;
mod locks;
mod rows;

pub use rows::{examples, hot_row_suggestion, queue_suggestion, HotPattern};
mod server;
mod xmin;

use hotbench_results::diagnosis_record::{Check, Finding};

use crate::facts::facts;
use input::check;
pub use input::Input;
pub use locks::MIN_SHARE as MIN_LOCK_WAIT_SHARE;

/// The ranked findings and every check made.
pub fn diagnose(input: &Input) -> (Vec<Finding>, Vec<Check>) {
    let f = facts(input.probe, &input.functions.bodies);
    let mut out = Vec::new();
    let mut checks = Vec::new();
    activity_check(input, &mut checks);
    functions_check(input, &mut checks);
    let xmin = xmin::find(input, &f, &mut checks);
    rows::find(input, &f, xmin.is_some(), &mut out, &mut checks);
    locks::find(input, &mut out, &mut checks);
    out.extend(xmin);
    server::find(input, &mut out, &mut checks);
    rank(&mut out);
    (out, checks)
}

/// Most explaining first; equal shares in the order of the kinds.
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.share
            .partial_cmp(&a.share)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.kind.cmp(&b.kind))
    });
}

fn activity_check(input: &Input, checks: &mut Vec<Check>) {
    let p = input.probe;
    let value = match &p.sessions {
        Some(s) if s.rounds > 0 => {
            let per = |n: u64| n as f64 / f64::from(s.rounds);
            let idle = s.idle_in_transaction_samples.min(s.busy_samples);
            format!(
                "{:.1} active and {:.1} idle in transaction on average over {} reads ({} \
                 statements seen); shares below are of the active time",
                per(s.busy_samples - idle),
                per(idle),
                s.rounds,
                s.statements.len()
            )
        }
        _ if p.samples > 0 => format!(
            "{:.1} busy on average over {} samples",
            p.busy_samples as f64 / p.samples as f64,
            p.samples
        ),
        _ => "no sample taken".to_string(),
    };
    checks.push(check("active sessions", value, false));
}

/// Which called functions' statements were seen (their bodies read) and which were not.
fn functions_check(input: &Input, checks: &mut Vec<Check>) {
    let b = input.functions;
    if b.bodies.is_empty() && b.unseen().is_empty() {
        return;
    }
    let read: Vec<&str> = b.bodies.keys().map(String::as_str).collect();
    let unseen = b.unseen();
    let mut v = Vec::new();
    if !read.is_empty() {
        v.push(format!(
            "bodies read (their statements count as the caller's): {}",
            read.join(", ")
        ));
    }
    if !unseen.is_empty() {
        v.push(format!(
            "not seen inside{}: {}",
            match &b.error {
                Some(e) => format!(" (the read failed: {e})"),
                None => " (no SQL or PL/pgSQL body to read)".into(),
            },
            unseen.join(", ")
        ));
    }
    checks.push(check("functions called", v.join("; "), false));
}

#[cfg(test)]
mod tests;
