//! Server-wide symptoms: deadlocks and rollbacks (`pg_stat_database` deltas; PostgreSQL
//! counts serialization failures only among rollbacks), commits waiting on the WAL, lock
//! holders idle inside their transaction, and more sessions running than the server has
//! cores.

use hotbench_results::diagnosis_record::{Evidence, Finding, FindingKind, FindingStatement};

use super::input::{check, pct, Input};
use hotbench_results::diagnosis_record::Check;

/// Rolled-back share of transactions that is a finding (with at least [`MIN_ROLLBACKS`]).
pub const MIN_ROLLBACK_SHARE: f64 = 0.05;
pub const MIN_ROLLBACKS: i64 = 10;
/// Share of active time waiting on the WAL that makes a load commit-bound.
pub const MIN_WAL_SHARE: f64 = 0.20;
/// A lock holder idle in its transaction this long is not a round trip.
pub const IDLE_HOLDER_S: f64 = 1.0;
/// Sessions on CPU per core beyond which the server is oversubscribed.
pub const OVERSUBSCRIBED: f64 = 1.25;

/// Wait events of commits and WAL writes.
const WAL_WAITS: [&str; 7] = [
    "LWLock:WALWrite",
    "LWLock:WALInsert",
    "LWLock:WALBufMapping",
    "IO:WALSync",
    "IO:WALWrite",
    "IO:WALInitSync",
    "IO:WALInitWrite",
];

pub fn find(input: &Input, out: &mut Vec<Finding>, checks: &mut Vec<Check>) {
    database(input, out, checks);
    commit_bound(input, out, checks);
    idle_holders(input, out, checks);
    oversubscribed(input, out, checks);
}

fn database(input: &Input, out: &mut Vec<Finding>, checks: &mut Vec<Check>) {
    let Some(d) = &input.probe.server.database else {
        checks.push(check(
            "deadlocks and rollbacks",
            "pg_stat_database not read",
            false,
        ));
        return;
    };
    let total = (d.commits + d.rollbacks).max(1) as f64;
    let per_min = |n: i64| n as f64 * 60.0 / input.duration_s.max(1.0);
    if d.deadlocks > 0 {
        out.push(Finding {
            kind: FindingKind::Deadlocks,
            title: format!(
                "deadlocks: {} during the sample ({:.1} a minute); each cost its victims up to \
                 deadlock_timeout of waiting",
                d.deadlocks,
                per_min(d.deadlocks)
            ),
            share: d.deadlocks as f64 / total,
            evidence: vec![
                Evidence::new("deadlocks", d.deadlocks.to_string()),
                Evidence::new(
                    "transactions",
                    format!("{} committed, {} rolled back", d.commits, d.rollbacks),
                ),
            ],
            advice: "lock rows in one order everywhere, and take the strongest lock first \
                     (FOR UPDATE, not FOR SHARE then UPDATE)"
                .into(),
            ..Default::default()
        });
    }
    checks.push(check("deadlocks", d.deadlocks.to_string(), d.deadlocks > 0));
    let share = d.rollbacks as f64 / total;
    let found = d.rollbacks >= MIN_ROLLBACKS && share >= MIN_ROLLBACK_SHARE;
    if found {
        out.push(Finding {
            kind: FindingKind::Serialization,
            title: format!(
                "rollbacks: {} of transactions rolled back ({}): serialization failures, \
                 deadlocks or the application's own (PostgreSQL counts them together)",
                pct(share),
                d.rollbacks
            ),
            share,
            evidence: vec![
                Evidence::new(
                    "rolled back",
                    format!("{} of {}", d.rollbacks, d.commits + d.rollbacks),
                ),
                Evidence::new("per minute", format!("{:.0}", per_min(d.rollbacks))),
            ],
            advice: "retry serialization failures (40001) with backoff, and shorten the \
                     transactions that conflict; a hot row under REPEATABLE READ fails instead \
                     of waiting"
                .into(),
            ..Default::default()
        });
    }
    checks.push(check(
        "rollbacks",
        format!(
            "{} of {} transactions",
            d.rollbacks,
            d.commits + d.rollbacks
        ),
        found,
    ));
}

fn commit_bound(input: &Input, out: &mut Vec<Finding>, checks: &mut Vec<Check>) {
    let waits: Vec<_> = input
        .probe
        .waits
        .iter()
        .filter(|w| WAL_WAITS.contains(&w.event.as_str()))
        .collect();
    let share: f64 = waits.iter().map(|w| w.pct).sum::<f64>() / 100.0;
    let found = share >= MIN_WAL_SHARE;
    checks.push(check(
        "WAL waits",
        format!("{} of active time", pct(share)),
        found,
    ));
    if !found {
        return;
    }
    out.push(Finding {
        kind: FindingKind::CommitBound,
        title: format!(
            "commit-bound: {} of active time waits on the WAL (flushes at commit)",
            pct(share)
        ),
        share,
        evidence: waits
            .iter()
            .map(|w| Evidence::new(w.event.clone(), format!("{:.0}%", w.pct)))
            .chain(input.probe.server.wal_bytes.map(|b| {
                Evidence::new(
                    "WAL written",
                    format!("{:.1} MB/s", b as f64 / 1e6 / input.duration_s.max(0.001)),
                )
            }))
            .collect(),
        advice: "fewer, larger transactions; synchronous_commit = off for writes that may lose \
                 the last moments; commit_delay to group flushes; a faster WAL device"
            .into(),
        ..Default::default()
    });
}

fn idle_holders(input: &Input, out: &mut Vec<Finding>, checks: &mut Vec<Check>) {
    let Some(s) = &input.probe.sessions else {
        return;
    };
    let all: u64 = s.blockers.iter().map(|b| b.samples).sum();
    let idle: Vec<_> = s
        .blockers
        .iter()
        .filter(|b| b.state.starts_with("idle in transaction") && b.max_state_s >= IDLE_HOLDER_S)
        .collect();
    let n: u64 = idle.iter().map(|b| b.samples).sum();
    checks.push(check(
        "idle-in-transaction lock holders",
        format!("{n} of {all} blocker samples idle over {IDLE_HOLDER_S:.0} s"),
        n > 0,
    ));
    if n == 0 {
        return;
    }
    let share = n as f64 / all.max(1) as f64 * input.probe.lock_wait_pct() / 100.0;
    let pids: Vec<String> = idle
        .iter()
        .flat_map(|b| b.pids.iter().map(|p| p.to_string()))
        .take(5)
        .collect();
    let longest = idle.iter().map(|b| b.max_state_s).fold(0.0, f64::max);
    out.push(Finding {
        kind: FindingKind::IdleInTransaction,
        title: format!(
            "idle in transaction while holding locks others wait for: pid {} (idle up to {longest:.1} s)",
            pids.join(", ")
        ),
        share,
        statements: idle
            .iter()
            .map(|b| FindingStatement {
                role: "blocking".into(),
                queryid: b.queryid.clone(),
                query: b.query.clone(),
                samples: b.samples,
                state: b.state.clone(),
            })
            .collect(),
        evidence: vec![
            Evidence::new("blocker samples idle in transaction", format!("{n} of {all}")),
            Evidence::new("longest idle", format!("{longest:.1} s")),
            Evidence::new("applications", idle.iter().map(|b| b.application_name.as_str()).collect::<Vec<_>>().join(", ")),
        ],
        advice: "the application holds a transaction open between statements (or forgot to \
                 commit): set idle_in_transaction_session_timeout and commit before slow work"
            .into(),
        ..Default::default()
    });
}

fn oversubscribed(input: &Input, out: &mut Vec<Finding>, checks: &mut Vec<Check>) {
    let p = input.probe;
    let cpu = p
        .waits
        .iter()
        .find(|w| w.event == "CPU")
        .map_or(0, |w| w.count);
    let per_sample = cpu as f64 / p.samples.max(1) as f64;
    let Some(cores) = input.server_cores.filter(|c| *c > 0) else {
        checks.push(check(
            "sessions on CPU",
            format!(
                "{per_sample:.1} on average; the server's cores are unknown (--server-cores N)"
            ),
            false,
        ));
        return;
    };
    let c = f64::from(cores);
    let found = per_sample > c * OVERSUBSCRIBED && per_sample >= c + 1.0;
    checks.push(check(
        "sessions on CPU",
        format!("{per_sample:.1} on average for {cores} cores"),
        found,
    ));
    if !found {
        return;
    }
    let share = 1.0 - c / per_sample;
    out.push(Finding {
        kind: FindingKind::Oversubscribed,
        title: format!(
            "oversubscribed: {per_sample:.1} sessions running on average for {cores} cores; \
             about {} of their time is waiting for a core",
            pct(share)
        ),
        share,
        evidence: vec![
            Evidence::new(
                "sessions active without a wait event",
                format!("{per_sample:.1} on average"),
            ),
            Evidence::new("cores", cores.to_string()),
        ],
        advice: "a connection pool sized to a few times the cores (more sessions only queue \
                 for CPU and hold their locks longer); `hotbench sweep` finds the knee"
            .into(),
        ..Default::default()
    });
}
