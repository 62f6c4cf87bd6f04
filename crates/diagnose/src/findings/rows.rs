//! Contention on a relation's rows: a **queue** when its statements claim the first rows
//! (`… LIMIT n FOR UPDATE [SKIP LOCKED]`) and rows leave it (deletes or updates), and the
//! claims wait on each other, or its dead tuples grow, or the claims get slower; else a **hot
//! row** when lock waits on it take a good part of the active time. A hot row's statements
//! tell the lab apart: increments on one table are `counters`, increments on several
//! aggregates with a history insert are pgbench's `tpcb-hotspot`, a read-lock-then-write (or
//! any other write) is `daily-limit`.

use hotbench_results::diagnosis_record::{Estimate, Evidence, Finding, FindingKind};

use super::input::{check, pct, statement, Input};
use crate::catalog::{Catalog, Observation, Seen, Shape};
use crate::facts::{trend_ms, Facts, RelationFacts};
use crate::shape::Access;
use crate::suggest::{estimate, Suggestion};

/// Share of active time a relation's statements must spend waiting on locks to be a hot row.
pub const MIN_LOCK_SHARE: f64 = 0.10;
/// … and lock-waiting samples placed on its rows.
pub const MIN_PLACED: u64 = 3;
/// Share of active time a queue's statements must take to be worth a finding.
pub const MIN_QUEUE_SHARE: f64 = 0.10;
/// A claim whose mean time grew by this factor from the first to the last third is slower.
const SLOWER: f64 = 1.3;

pub fn find(
    input: &Input,
    f: &Facts,
    old_snapshot: bool,
    out: &mut Vec<Finding>,
    checks: &mut Vec<super::Check>,
) {
    let mut hot = 0;
    let mut queues = 0;
    let lock_share = input.probe.lock_wait_pct() / 100.0;
    for r in &f.relations {
        if r.claims() && r.removes() {
            if let Some(q) = queue(input, f, r, old_snapshot) {
                queues += 1;
                out.push(q);
            } else {
                checks.push(check(
                    "queue table",
                    format!(
                        "{}: claims{} without waits, growing dead tuples or slower claims ({} of active time)",
                        r.name,
                        if r.skip_locked_claims() { " with SKIP LOCKED" } else { "" },
                        pct(f.share(r.busy))
                    ),
                    false,
                ));
            }
            continue;
        }
        // Statements unseen (another role's sessions): judge by the lock waits alone.
        let waiting = if f.busy > 0 {
            f.share(r.lock_busy)
        } else {
            lock_share * r.lock_pct / 100.0
        };
        if waiting >= MIN_LOCK_SHARE && r.lock_waits >= MIN_PLACED {
            hot += 1;
            out.push(hot_row(input, f, r, waiting));
        }
    }
    let top = f.relations.iter().find(|r| r.lock_waits > 0);
    checks.push(check(
        "lock waits",
        match top {
            Some(r) => format!(
                "{} of active time waiting on heavyweight locks; most on {} ({:.0}% of lock waits, {} rows)",
                pct(lock_share),
                r.name,
                r.lock_pct,
                r.rows
            ),
            None => format!("{} of active time waiting on heavyweight locks; none on rows", pct(lock_share)),
        },
        hot > 0,
    ));
    if queues == 0 && !f.relations.iter().any(|r| r.claims()) {
        checks.push(check(
            "queue tables",
            "no claims (… LIMIT n FOR UPDATE) seen",
            false,
        ));
    }
}

/// The client's time between two statements of a transaction, by Little's law: sessions
/// idle in a transaction at once on average, over the transactions committed per second,
/// is each transaction's idle time; divided by its statements less one (pg_stat_statements'
/// calls per commit), the time between two of them. `None` without those counts. (The
/// idle age of sampled sessions overweights the rare long gaps: a client descheduled for
/// 10 ms once in a hundred gaps of 0.05 ms read as 3 ms a gap, and a lab run with that think
/// time ran at 7% of pgbench's rate.)
fn client_gap_ms(input: &Input) -> Option<f64> {
    let p = input.probe;
    let s = p.sessions.as_ref()?;
    let commits = p.server.database.as_ref()?.commits as f64;
    if s.rounds == 0 || commits <= 0.0 || input.duration_s <= 0.0 {
        return None;
    }
    let tps = commits / input.duration_s;
    let idle = s.idle_in_transaction_samples as f64 / f64::from(s.rounds);
    let calls: i64 = p.statements.iter().map(|st| st.calls.max(0)).sum();
    let per_txn = calls as f64 / input.duration_s / tps;
    (per_txn > 1.0).then(|| idle / tps / (per_txn - 1.0) * 1000.0)
}

/// Whether most busy samples were of sessions whose client connected over a network.
fn remote_clients(input: &Input) -> bool {
    input
        .probe
        .sessions
        .as_ref()
        .is_some_and(|s| s.remote_client_samples * 2 > s.busy_samples)
}

/// Whether the keys are real keys (ctids change with every update: not countable rows).
fn keys_read(r: &RelationFacts) -> bool {
    r.keys.first().is_some_and(|k| !k.key.starts_with("ctid="))
}

/// Hot rows when they were named by ctid: at most the row versions waited on (every update
/// makes a row a new version) and at most the table's live rows; `None` when neither is
/// known.
fn rows_bound(r: &RelationFacts) -> Option<u64> {
    let live = r
        .table
        .as_ref()
        .map(|t| t.live_tuples_end)
        .filter(|n| *n > 0)
        .map(|n| n as u64);
    let versions = Some(r.rows).filter(|n| *n > 0);
    match (versions, live) {
        (Some(v), Some(l)) => Some(v.min(l)),
        (v, l) => v.or(l),
    }
}

fn hot_row(input: &Input, f: &Facts, r: &RelationFacts, waiting: f64) -> Finding {
    let p = input.probe;
    let little = client_gap_ms(input);
    let gap = little.or(p.sessions.as_ref().and_then(|s| s.in_transaction_gap_ms));
    let rows = if keys_read(r) {
        Some(r.rows)
    } else {
        rows_bound(r)
    };
    // The gap is network latency only for clients across a network; on the server's host it
    // is the client's own time (think time), which --rtt would replay on every round trip.
    let est = if remote_clients(input) {
        estimate(r.sessions, rows, gap)
    } else {
        crate::suggest::think_time(estimate(r.sessions, rows, None), gap)
    };
    let pattern = hot_pattern(f, r);
    let mut est = est;
    if pattern == HotPattern::Tpcb {
        // The scale is the branches' row count, not the hot rows seen (at scale 1 the ten
        // tellers' rows are the ones waited on).
        est.hot_keys = tpcb_scale(f);
    }
    if est.rtt_ms.is_some_and(|g| g < crate::suggest::MIN_RTT_MS) {
        est.rtt_ms = None;
    }
    if est
        .think_ms
        .is_some_and(|g| g < crate::suggest::MIN_THINK_MS)
    {
        est.think_ms = None;
    }
    let lab = input.catalog.find(pattern.shape());
    let hot_param = lab.and_then(|l| l.param_for(Observation::HotRows));
    let sug = hot_row_suggestion(pattern, est.clone(), input.catalog);
    let share = f.share(r.busy).max(waiting);
    let top_keys: Vec<String> = r.keys.iter().take(3).map(|k| k.key.clone()).collect();
    let mut finding = Finding {
        kind: FindingKind::HotRow,
        title: format!(
            "hot row: {} ({}) — {}; {} of active time waits on its row locks",
            r.name,
            if top_keys.is_empty() {
                "keys unknown".into()
            } else {
                top_keys.join("; ")
            },
            pattern.describe(),
            pct(waiting)
        ),
        relation: Some(r.name.clone()),
        keys: r.keys.clone(),
        share,
        statements: relation_statements(r, "waiting"),
        evidence: vec![
            time_on(f, r),
            time_waiting(waiting),
            Evidence::new(
                "lock waits placed on its rows",
                format!("{} ({:.0}% of lock waits)", r.lock_waits, r.lock_pct),
            ),
            // Named by ctid, one row is a new ctid after every update: say what is counted.
            Evidence::new(
                if keys_read(r) {
                    "distinct rows waited on"
                } else {
                    "distinct row versions (ctids) waited on"
                },
                r.rows.to_string(),
            ),
            Evidence::new("sessions on its statements", r.sessions.to_string()),
        ],
        advice: pattern.advice().into(),
        ..Default::default()
    };
    if let (HotPattern::Tpcb, None, Some(p)) = (pattern, est.hot_keys, hot_param) {
        finding.evidence.push(Evidence::new(
            p,
            format!(
                "not estimated (the aggregate tables' row counts were not read): pass --param {p}=N"
            ),
        ));
    }
    if let Some(g) = gap {
        finding
            .evidence
            .push(gap_evidence(input, g, little.is_some()));
    }
    key_evidence(r, pattern, (est.hot_keys, hot_param), &mut finding);
    add_blockers(input, r, &mut finding);
    if let Some(sug) = sug {
        sug.apply(&mut finding);
    }
    finding
}

/// Which of the lab's hot-row patterns the statements on `r` follow.
fn hot_pattern(f: &Facts, r: &RelationFacts) -> HotPattern {
    let increments_elsewhere = f
        .relations
        .iter()
        .filter(|o| o.key != r.key && o.increments())
        .count();
    let history = f.relations.iter().any(|o| {
        o.key != r.key
            && o.statements
                .iter()
                .any(|s| s.access.contains(&Access::Insert))
    });
    if r.increments() && increments_elsewhere > 0 && history {
        HotPattern::Tpcb
    } else if r.increments() && !r.locking_reads() {
        HotPattern::Counters {
            in_transaction: r.idle_in_transaction > 0 && r.plain_reads(),
        }
    } else {
        HotPattern::Payments {
            locking_reads: r.locking_reads(),
            share_locks: r.any_share_lock(),
        }
    }
}

/// What the time between a transaction's statements is taken for: network latency for
/// clients across a network, think time for clients on the server's host.
fn gap_evidence(input: &Input, g: f64, by_little: bool) -> Evidence {
    let p = input.probe;
    let how = if by_little {
        ""
    } else if p.statements.is_empty() {
        "; from the sampled idle age of sessions in a transaction, which overweights long \
         gaps: without pg_stat_statements the statements per transaction are unknown"
    } else {
        "; from the sampled idle age of sessions in a transaction, which overweights long \
         gaps"
    };
    Evidence::new(
        "time between a transaction's statements",
        if remote_clients(input) {
            format!(
                "{g:.2} ms (clients across a network: suggested as --rtt, an upper bound \
                 that includes the client's own time{how})"
            )
        } else {
            format!(
                "{g:.2} ms of client think time (the clients are on the server's host: \
                 Unix socket or loopback, so no network round trip): suggested as --think, \
                 added only inside a transaction, not as --rtt{how}"
            )
        },
    )
}

/// Partitions, how the rows are named, and the hot-row count the command is given (`hot`:
/// the count estimated, and the scenario's parameter that takes it).
fn key_evidence(
    r: &RelationFacts,
    pattern: HotPattern,
    hot: (Option<u32>, Option<&str>),
    finding: &mut Finding,
) {
    if !r.partitions.is_empty() {
        finding
            .evidence
            .push(Evidence::new("in partitions", r.partitions.join(", ")));
    }
    if !keys_read(r) && !r.keys.is_empty() {
        finding.evidence.push(Evidence::new(
            "keys",
            "not read (no primary key, no SELECT on the table, row-level security, a key of \
             a user-defined type, or --no-keys; the notes say which): rows named by ctid",
        ));
    }
    match (pattern, hot, keys_read(r)) {
        (HotPattern::Tpcb, ..) => {}
        (_, (Some(n), Some(p)), false) => finding.evidence.push(Evidence::new(
            "hot rows",
            format!(
                "at most {}, a guess (keys unread: a row is a new ctid after every update): the \
                 fewer of the row versions waited on ({}) and the table's live rows ({}); \
                 suggested as --param {p}={}: with fewer hot rows the lab contends more",
                n,
                r.rows,
                r.table
                    .as_ref()
                    .map_or("unknown".to_string(), |t| t.live_tuples_end.to_string()),
                n,
            ),
        )),
        (_, (None, Some(p)), _) => finding.evidence.push(Evidence::new(
            "hot rows",
            format!(
                "not estimated (no row waited on was named): the command runs the scenario's \
                 default; pass --param {p}=N"
            ),
        )),
        _ => {}
    }
}

fn queue(input: &Input, f: &Facts, r: &RelationFacts, old_snapshot: bool) -> Option<Finding> {
    let p = input.probe;
    let waiting = f.share(r.lock_busy);
    let dead = r.dead_growth();
    let claims: Vec<&str> = r
        .statements
        .iter()
        .filter(|s| {
            s.access
                .iter()
                .any(|a| matches!(a, Access::Lock { limit: true, .. }))
        })
        .map(|s| s.statement.queryid.as_str())
        .filter(|q| !q.is_empty())
        .collect();
    let trend = trend_ms(p, &claims);
    let slower = trend.is_some_and(|(a, b)| a > 0.0 && b / a >= SLOWER);
    let skip = r.skip_locked_claims();
    let share = f.share(r.busy).max(waiting);
    let symptom = waiting >= 0.05 || !skip || dead > 0 || slower;
    if share < MIN_QUEUE_SHARE || !symptom {
        return None;
    }
    let claimers = r
        .statements
        .iter()
        .filter(|s| {
            s.access
                .iter()
                .any(|a| matches!(a, Access::Lock { limit: true, .. }))
        })
        .map(|s| s.statement.sessions)
        .max()
        .unwrap_or(r.sessions);
    let sug = queue_suggestion(
        estimate(claimers, None, None),
        skip,
        old_snapshot,
        input.catalog,
    );
    let mut why = Vec::new();
    if !skip {
        why.push(format!(
            "consumers claim with FOR UPDATE and wait on each other ({} of active time)",
            pct(waiting)
        ));
    } else if waiting >= 0.05 {
        why.push(format!(
            "claims wait on locks ({} of active time)",
            pct(waiting)
        ));
    }
    if dead > 0 {
        why.push(format!("dead tuples grew by {dead}"));
    }
    if let (true, Some((a, b))) = (slower, trend) {
        why.push(format!("claims got slower ({a:.2} → {b:.2} ms)"));
    }
    let mut finding = Finding {
        kind: FindingKind::Queue,
        title: format!("queue: {} — {}", r.name, why.join("; ")),
        relation: Some(r.name.clone()),
        keys: r.keys.iter().take(5).cloned().collect(),
        share,
        statements: relation_statements(r, "claiming"),
        evidence: vec![
            time_on(f, r),
            time_waiting(waiting),
            Evidence::new(
                "claims",
                if skip {
                    "FOR UPDATE SKIP LOCKED … LIMIT"
                } else {
                    "FOR UPDATE … LIMIT (no SKIP LOCKED)"
                },
            ),
            Evidence::new("consumers", claimers.to_string()),
        ],
        advice: if skip {
            "keep the scan short: claim newest-first or from a watermark, or rotate partitions, \
             so dead entries left by old snapshots are not walked on every claim"
        } else {
            "claim with FOR UPDATE SKIP LOCKED (each consumer takes the next free job), in \
             batches when jobs are small"
        }
        .into(),
        ..Default::default()
    };
    if let Some(t) = &r.table {
        finding.evidence.push(Evidence::new(
            "table writes",
            format!(
                "{} inserted, {} updated, {} deleted; dead tuples {} → {}",
                t.inserts, t.updates, t.deletes, t.dead_tuples_start, t.dead_tuples_end
            ),
        ));
    }
    if let Some((a, b)) = trend {
        finding.evidence.push(Evidence::new(
            "claim mean time, first → last third",
            format!("{a:.2} → {b:.2} ms"),
        ));
    }
    add_blockers(input, r, &mut finding);
    if let Some(sug) = sug {
        sug.apply(&mut finding);
    }
    Some(finding)
}

/// What a hot row's statements do to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HotPattern {
    /// Increments of several aggregate rows beside a history insert.
    Tpcb,
    /// Increments of one table's rows; `in_transaction`: in transactions that also read the
    /// relation and hold it across a client round trip (Django's view).
    Counters { in_transaction: bool },
    /// Anything else: read (with a lock) and write back, or plain writes.
    Payments {
        locking_reads: bool,
        share_locks: bool,
    },
}

impl HotPattern {
    /// The shape a scenario's `[[reproduces]]` names it by.
    pub fn shape(self) -> Shape {
        match self {
            HotPattern::Tpcb => Shape::AggregateIncrements,
            HotPattern::Counters {
                in_transaction: false,
            } => Shape::Counter,
            HotPattern::Counters {
                in_transaction: true,
            } => Shape::CounterInTransaction,
            HotPattern::Payments {
                share_locks: true, ..
            } => Shape::ReadCheckWriteShared,
            HotPattern::Payments {
                locking_reads: true,
                ..
            } => Shape::ReadCheckWrite,
            HotPattern::Payments { .. } => Shape::RowWrites,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            HotPattern::Tpcb => {
                "increments of aggregate rows beside a history insert (pgbench's TPC-B shape)"
            }
            HotPattern::Counters {
                in_transaction: false,
            } => "counter increments (SET n = n + …)",
            HotPattern::Counters {
                in_transaction: true,
            } => "counter increments (SET n = n + …) in transactions that read the row and wait on their client",
            HotPattern::Payments {
                locking_reads: true,
                ..
            } => "read-check-write payments (SELECT … FOR UPDATE, then UPDATE)",
            HotPattern::Payments { .. } => "writes to the same rows",
        }
    }

    /// What to try, for the statements seen (a counter is not a payment).
    fn advice(self) -> &'static str {
        match self {
            HotPattern::Tpcb => {
                "every transaction updates the same few aggregate rows and holds them until it \
                 commits: spread each aggregate over several rows summed when read (the \
                 `bucketed` variant), or record the deltas (as the history insert does) and \
                 roll them up in batches; the ladder measures which wins at your concurrency"
            }
            HotPattern::Counters { .. } => {
                "spread each counter over several slot rows summed when read (`slotted`), or \
                 insert the increments and roll them up in batches (`events-rollup`); keep the \
                 increment the last statement of its transaction, so the row is held briefly"
            }
            HotPattern::Payments {
                locking_reads: true,
                ..
            } => {
                "one statement per payment (UPDATE … WHERE remaining >= … RETURNING) instead of \
                 a locking read then a write, a procedure, or spreading the hot row over \
                 several (escrow): the ladder measures which wins at your concurrency"
            }
            HotPattern::Payments { .. } => {
                "write the hot rows last in their transactions and commit at once (they are \
                 held from the write to the commit), or spread a hot row over several \
                 (escrow): the ladder measures which wins at your concurrency"
            }
        }
    }
}

/// pgbench's scale: the row count of the smallest table whose rows are incremented (the
/// branches: one per scale unit, beside 10 tellers and 100,000 accounts per unit).
fn tpcb_scale(f: &Facts) -> Option<u32> {
    f.relations
        .iter()
        .filter(|r| r.increments())
        .filter_map(|r| r.table.as_ref().map(|t| t.live_tuples_end))
        .filter(|n| *n > 0)
        .min()
        .map(|n| n.clamp(1, i64::from(crate::suggest::MAX_KEYS)) as u32)
}

/// The ladder that reproduces a hot row of this pattern (the scenario that declares its
/// shape), given its hot rows' count; `None` when no scenario reproduces it.
pub fn hot_row_suggestion(p: HotPattern, est: Estimate, catalog: &Catalog) -> Option<Suggestion> {
    let seen = Seen {
        hot_rows: est.hot_keys,
        ..Seen::default()
    };
    Some(catalog.find(p.shape())?.suggest(est, &seen))
}

/// The queue ladder with the variants that fit the claims: FOR UPDATE ones, or SKIP LOCKED
/// ones (with the old snapshot, when one was held).
pub fn queue_suggestion(
    est: Estimate,
    skip_locked: bool,
    old_snapshot: bool,
    catalog: &Catalog,
) -> Option<Suggestion> {
    let shape = if skip_locked {
        Shape::ClaimSkipLocked
    } else {
        Shape::Claim
    };
    let seen = Seen {
        old_snapshot,
        ..Seen::default()
    };
    Some(catalog.find(shape)?.suggest(est, &seen))
}

/// Every suggestion these findings can make from `catalog`, with extreme estimates (for
/// checking them against the scenarios).
pub fn examples(catalog: &Catalog) -> Vec<Suggestion> {
    let ests = [
        estimate(1, Some(1), Some(0.3)),
        crate::suggest::think_time(estimate(8, Some(4), None), Some(8.6)),
        estimate(100_000, Some(1 << 40), Some(50.0)),
        estimate(16, None, None),
    ];
    let mut v = Vec::new();
    for e in ests {
        for p in [
            HotPattern::Tpcb,
            HotPattern::Counters {
                in_transaction: false,
            },
            HotPattern::Counters {
                in_transaction: true,
            },
            HotPattern::Payments {
                locking_reads: true,
                share_locks: true,
            },
            HotPattern::Payments {
                locking_reads: false,
                share_locks: false,
            },
        ] {
            v.extend(hot_row_suggestion(p, e.clone(), catalog));
        }
        for (skip, old) in [(false, false), (true, true), (true, false), (false, true)] {
            v.extend(queue_suggestion(e.clone(), skip, old, catalog));
        }
    }
    for producers in [0, 12, 100_000] {
        v.extend(super::locks::notify_suggestion(producers, catalog));
    }
    v
}

/// The relation's statements: those waiting on locks first (`role`), then the others.
/// Evidence both row findings give: the relation's share of the sampled active time…
fn time_on(f: &Facts, r: &RelationFacts) -> Evidence {
    Evidence::new("active time on its statements", pct(f.share(r.busy)))
}

/// …and the share spent waiting on its locks.
fn time_waiting(waiting: f64) -> Evidence {
    Evidence::new("active time waiting on its locks", pct(waiting))
}

fn relation_statements(
    r: &RelationFacts,
    role: &str,
) -> Vec<hotbench_results::diagnosis_record::FindingStatement> {
    let mut v: Vec<_> = r.statements.iter().collect();
    v.sort_by(|a, b| {
        (b.statement.lock_waits, b.statement.samples)
            .cmp(&(a.statement.lock_waits, a.statement.samples))
    });
    v.iter()
        .take(4)
        .map(|s| {
            let claims = s
                .access
                .iter()
                .any(|a| matches!(a, Access::Lock { limit: true, .. }));
            let r = if s.statement.lock_waits > 0 || (role == "claiming" && claims) {
                role
            } else if s.access.iter().any(|a| !matches!(a, Access::Read)) {
                "writing"
            } else {
                "running"
            };
            statement(r, &s.statement, s.statement.samples)
        })
        .collect()
}

/// The sessions that blocked waits, when their statement touches the relation (or, for the
/// relation with the most lock waits, whatever they run: a holder's current statement may be
/// another table's).
fn add_blockers(input: &Input, r: &RelationFacts, f: &mut Finding) {
    let Some(s) = &input.probe.sessions else {
        return;
    };
    let most_waited = s
        .relation_waits
        .first()
        .is_some_and(|w| crate::shape::relation_key(&w.relation) == r.key);
    for b in &s.blockers {
        let touches = crate::shape::touches(&b.query)
            .iter()
            .any(|t| t.relation == r.key);
        if touches || most_waited {
            f.statements
                .push(hotbench_results::diagnosis_record::FindingStatement {
                    role: "blocking".into(),
                    queryid: b.queryid.clone(),
                    query: b.query.clone(),
                    samples: b.samples,
                    state: b.state.clone(),
                });
        }
        if f.statements.len() >= 8 {
            break;
        }
    }
}

impl RelationFacts {
    /// Statements that only read the relation (no lock, no write).
    fn plain_reads(&self) -> bool {
        self.statements
            .iter()
            .any(|s| s.access.iter().all(|a| matches!(a, Access::Read)))
    }

    fn any_share_lock(&self) -> bool {
        self.statements.iter().any(|s| {
            s.access
                .iter()
                .any(|a| matches!(a, Access::Lock { share: true, .. }))
        })
    }
}
