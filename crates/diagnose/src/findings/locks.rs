//! Heavyweight lock waits that are not on rows (`Lock:tuple` and `Lock:transactionid` are
//! the hot rows' and queues'): `Lock:object`, above all the lock every committing transaction
//! that issued NOTIFY takes (one at a time, database-wide, held through the commit's WAL
//! flush), and `Lock:relation`, `Lock:extend`, `Lock:advisory` and the rest, each with what
//! to do; NOTIFY's gets the `queue` ladder's notify variants.

use hotbench_results::diagnosis_record::{Evidence, Finding, FindingKind, FindingStatement};

use super::input::{check, pct, statement, Input};
use crate::catalog::{Catalog, Seen, Shape};
use crate::suggest::{estimate, Suggestion};
use hotbench_results::diagnosis_record::Check;

/// Share of active time a non-row lock's waits must take to be a finding.
pub const MIN_SHARE: f64 = 0.10;

/// Wait events of row locks (judged per relation by [`super::rows`]).
const ROW_LOCKS: [&str; 2] = ["Lock:tuple", "Lock:transactionid"];

pub fn find(input: &Input, out: &mut Vec<Finding>, checks: &mut Vec<Check>) {
    let p = input.probe;
    let others: Vec<_> = p
        .waits
        .iter()
        .filter(|w| w.event.starts_with("Lock:") && !ROW_LOCKS.contains(&w.event.as_str()))
        .collect();
    let mut found = 0;
    for w in &others {
        let share = w.pct / 100.0;
        if share < MIN_SHARE {
            continue;
        }
        found += 1;
        out.push(finding(input, &w.event, share));
    }
    checks.push(check(
        "other heavyweight locks",
        if others.is_empty() {
            "no wait on a lock other than a row's".to_string()
        } else {
            others
                .iter()
                .map(|w| format!("{} {}", w.event, pct(w.pct / 100.0)))
                .collect::<Vec<_>>()
                .join(", ")
        },
        found > 0,
    ));
}

/// Whether `sql` (or a function it calls) issues NOTIFY.
fn notifies(sql: &str, bodies: &std::collections::BTreeMap<String, String>) -> bool {
    let says = |t: &str| {
        let l = t.to_ascii_lowercase();
        l.contains("pg_notify") || l.split_whitespace().any(|w| w == "notify")
    };
    says(sql)
        || crate::shape::calls(sql)
            .iter()
            .any(|c| bodies.get(c).is_some_and(|b| says(b)))
}

fn finding(input: &Input, event: &str, share: f64) -> Finding {
    let p = input.probe;
    let bodies = &input.functions.bodies;
    let mut statements: Vec<FindingStatement> = Vec::new();
    let mut notifying_sessions = 0;
    let mut waiting_sessions = 0;
    // Row locks' waits are the smaller part: a statement's lock waits are this lock's.
    let row_pct: f64 = p
        .waits
        .iter()
        .filter(|w| ROW_LOCKS.contains(&w.event.as_str()))
        .map(|w| w.pct)
        .sum();
    let mostly_this = row_pct < share * 100.0;
    if let Some(s) = &p.sessions {
        for st in &s.statements {
            let n = event == "Lock:object" && notifies(&st.query, bodies);
            let commit = st.query.trim().eq_ignore_ascii_case("commit")
                || st.query.trim().eq_ignore_ascii_case("end");
            if n {
                notifying_sessions = notifying_sessions.max(st.sessions);
                statements.push(statement("notifying", st, st.samples));
            } else if st.lock_waits > 0 && (commit || mostly_this) {
                waiting_sessions = waiting_sessions.max(st.sessions);
                statements.push(statement("waiting", st, st.lock_waits));
            }
        }
        for b in s.blockers.iter().take(4) {
            statements.push(FindingStatement {
                role: "blocking".into(),
                queryid: b.queryid.clone(),
                query: b.query.clone(),
                samples: b.samples,
                state: b.state.clone(),
            });
        }
    }
    statements.truncate(8);
    let (what, advice) = explain(event);
    let mut f = Finding {
        kind: FindingKind::LockWait,
        title: format!("{event}: {} of active time waits on {what}", pct(share)),
        share,
        statements,
        evidence: vec![Evidence::new("active time waiting on it", pct(share))],
        advice: advice.into(),
        ..Default::default()
    };
    if event == "Lock:object" {
        f.evidence.push(Evidence::new(
            "statements that NOTIFY",
            if notifying_sessions > 0 {
                format!("seen, from {notifying_sessions} sessions (in their text or a function they call)")
            } else {
                "none seen: a trigger may (pg_notify in a trigger function on the tables written)"
                    .into()
            },
        ));
        let producers = notifying_sessions.max(waiting_sessions);
        if let Some(sug) = notify_suggestion(producers, input.catalog) {
            sug.apply(&mut f);
        }
    }
    f
}

/// The queue ladder with producers that notify per job, per batch or not at all (the
/// scenario that reproduces NOTIFY's commit lock), as many producers as sessions notified.
pub fn notify_suggestion(producers: u32, catalog: &Catalog) -> Option<Suggestion> {
    let seen = Seen {
        sessions: Some(producers.clamp(1, crate::suggest::MAX_CLIENTS)),
        ..Seen::default()
    };
    Some(
        catalog
            .find(Shape::Notify)?
            .suggest(estimate(4, None, None), &seen),
    )
}

/// What the lock is, and what to do about it.
fn explain(event: &str) -> (&'static str, &'static str) {
    match event {
        "Lock:object" => (
            "a lock on a database object: NOTIFY's commit lock (every transaction that issued \
             NOTIFY or pg_notify takes the one notification-queue lock of the database when \
             it commits, and holds it through the commit's WAL flush: notifying commits go \
             one at a time)",
            "notify once per transaction or per batch of jobs, not per row (a trigger \
             FOR EACH ROW notifies per job), or not at all where consumers poll anyway; keep \
             notifying transactions few and short; the queue ladder's notify variants measure \
             the difference",
        ),
        "Lock:relation" => (
            "table-level locks (DDL, LOCK TABLE, or an ACCESS EXCLUSIVE request queued behind \
             a long reader, which makes every later reader queue too)",
            "run DDL with a short lock_timeout and retry, and never behind long transactions",
        ),
        "Lock:extend" => (
            "extending a relation (many sessions inserting into one table or index at once)",
            "fewer, larger inserts (COPY, multi-row INSERT), or spread the inserts over \
             partitions",
        ),
        "Lock:advisory" => (
            "the application's advisory locks",
            "hold advisory locks for less time, or key them finer",
        ),
        _ => (
            "a heavyweight lock other than a row's",
            "see which statements hold it (blocking) and shorten their transactions",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_is_seen_in_text_and_in_function_bodies() {
        let mut b = std::collections::BTreeMap::new();
        b.insert(
            "enqueue".to_string(),
            "begin perform pg_notify('q', ''); end".to_string(),
        );
        assert!(notifies("select pg_notify(?, ?)", &b));
        assert!(notifies("NOTIFY jobs", &b));
        assert!(notifies("select enqueue(?)", &b));
        assert!(!notifies("select notified from t", &b));
    }
}
