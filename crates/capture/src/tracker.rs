//! Per-backend `pg_stat_activity` rows, sample after sample, turned into transactions: a
//! backend's `xact_start` names its transaction, `query_start` its statement (a statement's
//! text stays visible, idle in transaction or idle, until the next one starts), the
//! idle-in-transaction `state_change` is a statement's end and so the start of the client's
//! gap. Sampling sees only some statements: each one seen carries its inclusion weight (a
//! statement visible for less than the sampling period is seen with a probability of about
//! its visible time over the period; weighting it by the inverse keeps short and long
//! statements — cold and hot keys — in their true proportions). Pure: fed rows, tested
//! without a server.

use std::collections::{BTreeMap, BTreeSet};

use crate::observed::{ObservedStatement, ObservedTransaction};
use crate::sql_text::{Control, StatementText};

/// One backend as one sample saw it (times in seconds on the server's clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub pid: i64,
    pub xact_start: Option<f64>,
    pub query_start: Option<f64>,
    pub state_change: Option<f64>,
    /// When the row was read (`clock_timestamp()`).
    pub now: f64,
    pub state: String,
    pub query: String,
    pub remote: bool,
}

/// A transaction as sampling saw it, with what the sampler knows beyond the statements.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledTransaction {
    pub tx: ObservedTransaction,
    /// Per statement: its inclusion weight (1 when surely seen).
    pub weights: Vec<f64>,
    /// Per statement: the gap before it (s), from the previous statement's end, when both
    /// were seen back to back.
    pub gaps_s: Vec<Option<f64>>,
    /// Per statement: how long after its transaction began it started (s), when known.
    pub offsets_s: Vec<Option<f64>>,
}

/// A statement's visible time is taken to be at least this (s): a client's round trip, so
/// one seen a moment after it began does not weigh without bound.
const MIN_WINDOW_S: f64 = 0.000_5;
/// Transactions kept; later ones are counted only.
pub const MAX_TRANSACTIONS: usize = 100_000;
/// An autocommit statement starts its own transaction: `xact_start` and `query_start` agree
/// to within this (the extended protocol's Bind and Execute are microseconds apart).
const AUTOCOMMIT_SLACK_S: f64 = 0.000_5;
/// The extended protocol's Parse, Bind and Execute each restart `query_start` with the same
/// text: a statement seen running (never ended) whose text comes again this soon after is
/// the same run, not a second one (a second run waits for the first's result; psycopg 3
/// seen 40–120 µs apart, planning in between).
const PROTOCOL_STEPS_S: f64 = 0.002;

#[derive(Debug, Clone)]
struct SeenStatement {
    sql: String,
    start: f64,
    end: Option<f64>,
    max_age: f64,
    samples: u32,
    gap: Option<f64>,
    /// Its text's key (`StatementText::key`), and whether it is BEGIN or another control.
    key: String,
    control: bool,
    /// Samples that saw the backend idle in the transaction after it.
    idle: u32,
}

#[derive(Debug, Clone)]
struct OpenTx {
    xact_start: f64,
    statements: Vec<SeenStatement>,
    idle_in_tx: bool,
    begin: bool,
    aborted: bool,
    /// The last sample of this backend showed it idle in this transaction after its last
    /// statement (so the next statement seen follows it directly, or nearly).
    idle_after_last: bool,
}

#[derive(Debug, Default)]
struct Backend {
    open: Option<OpenTx>,
}

/// Rows in, transactions out.
#[derive(Debug)]
pub struct Tracker {
    period_s: f64,
    origin: Option<f64>,
    /// When the last round was read (server clock).
    last_now: Option<f64>,
    backends: BTreeMap<i64, Backend>,
    pub done: Vec<SampledTransaction>,
    /// Transactions not kept (over [`MAX_TRANSACTIONS`]).
    pub dropped: u64,
    /// Sampling rounds.
    pub samples: u64,
    /// Backend samples running a statement / idle in a transaction.
    pub active: u64,
    pub idle_in_tx: u64,
    /// Backends seen busy.
    pub sessions: BTreeSet<i64>,
    /// Backends seen connected over a network.
    pub remote: BTreeSet<i64>,
    /// Ages (s) of backends idle outside a transaction under a second: the time between a
    /// session's transactions is about twice their mean.
    pub idle_between: (f64, u64),
    /// Texts cut short by `track_activity_query_size`.
    pub truncated: u64,
    /// Rows whose text the role may not see.
    pub hidden: u64,
    /// Samples of a backend idle in its transaction, by the statement it idled after (its
    /// key; [`MAX_IDLE_KEYS`] at most, the rest in `idle_after_other`), and after BEGIN or
    /// another control statement: where the think time is, by Little's law.
    pub idle_after: BTreeMap<String, u64>,
    pub idle_after_control: u64,
    pub idle_after_other: u64,
}

/// Statements whose idle-in-transaction samples are told apart.
pub const MAX_IDLE_KEYS: usize = 2000;

impl Tracker {
    pub fn new(period_s: f64) -> Tracker {
        Tracker {
            period_s: period_s.max(1e-4),
            origin: None,
            last_now: None,
            backends: BTreeMap::new(),
            done: Vec::new(),
            dropped: 0,
            samples: 0,
            active: 0,
            idle_in_tx: 0,
            sessions: BTreeSet::new(),
            remote: BTreeSet::new(),
            idle_between: (0.0, 0),
            truncated: 0,
            hidden: 0,
            idle_after: BTreeMap::new(),
            idle_after_control: 0,
            idle_after_other: 0,
        }
    }

    /// One sampling round's rows.
    pub fn round(&mut self, rows: &[Row]) {
        self.samples += 1;
        if self.origin.is_none() {
            self.origin = rows.first().map(|r| r.now);
        }
        if let Some(r) = rows.first() {
            self.last_now = Some(r.now);
        }
        for r in rows {
            self.row(r);
        }
    }

    fn row(&mut self, r: &Row) {
        if r.query == "<insufficient privilege>" {
            self.hidden += 1;
            return;
        }
        if r.remote {
            self.remote.insert(r.pid);
        }
        match r.state.as_str() {
            "idle" => {
                self.close(r.pid);
                if let Some(sc) = r.state_change {
                    let age = r.now - sc;
                    if (0.0..1.0).contains(&age) {
                        self.idle_between.0 += age;
                        self.idle_between.1 += 1;
                    }
                }
            }
            state => {
                self.sessions.insert(r.pid);
                let idle = state.starts_with("idle in transaction");
                if idle {
                    self.idle_in_tx += 1;
                } else {
                    self.active += 1;
                }
                let (Some(xs), Some(qs)) = (r.xact_start, r.query_start) else {
                    return;
                };
                self.in_transaction(r, xs, qs, idle);
            }
        }
    }

    fn in_transaction(&mut self, r: &Row, xs: f64, qs: f64, idle: bool) {
        let same = self
            .backends
            .get(&r.pid)
            .and_then(|b| b.open.as_ref())
            .is_some_and(|o| o.xact_start == xs);
        if !same {
            self.close(r.pid);
        }
        let b = self.backends.entry(r.pid).or_default();
        let tx = b.open.get_or_insert_with(|| OpenTx {
            xact_start: xs,
            statements: Vec::new(),
            idle_in_tx: false,
            begin: false,
            aborted: false,
            idle_after_last: false,
        });
        tx.idle_in_tx |= idle;
        tx.aborted |= r.state == "idle in transaction (aborted)";
        let age = (r.now - qs).max(0.0);
        let same_run = |s: &SeenStatement| {
            s.start == qs
                || (s.end.is_none()
                    && s.sql == r.query
                    && (0.0..=PROTOCOL_STEPS_S).contains(&(qs - s.start)))
        };
        match tx.statements.last_mut() {
            Some(s) if same_run(s) => {
                s.samples += 1;
                s.max_age = s.max_age.max(age);
                if idle {
                    s.end = r.state_change.or(s.end);
                    s.idle += 1;
                }
            }
            last => {
                let gap = match last {
                    Some(p) if tx.idle_after_last => p.end.map(|e| (qs - e).max(0.0)),
                    _ => None,
                };
                let text = StatementText::parse(&r.query, &[]);
                if text.truncated {
                    self.truncated += 1;
                }
                if text.control() == Some(Control::Begin) {
                    tx.begin = true;
                }
                tx.statements.push(SeenStatement {
                    sql: r.query.clone(),
                    start: qs,
                    end: if idle { r.state_change } else { None },
                    max_age: age,
                    samples: 1,
                    gap,
                    key: text.key(),
                    control: text.control().is_some(),
                    idle: u32::from(idle),
                });
            }
        }
        tx.idle_after_last = idle;
    }

    /// Ends the backend's open transaction.
    fn close(&mut self, pid: i64) {
        let Some(tx) = self.backends.get_mut(&pid).and_then(|b| b.open.take()) else {
            return;
        };
        self.count_idle(&tx.statements);
        if self.done.len() >= MAX_TRANSACTIONS {
            self.dropped += 1;
            return;
        }
        let origin = self.origin.unwrap_or(0.0);
        let work: Vec<&SeenStatement> = tx
            .statements
            .iter()
            .filter(|s| StatementText::parse(&s.sql, &[]).control().is_none())
            .collect();
        let autocommit = !tx.begin
            && !tx.idle_in_tx
            && work.len() == 1
            && tx.statements.len() == 1
            && (work[0].start - tx.xact_start).abs() <= AUTOCOMMIT_SLACK_S;
        let statements = work
            .iter()
            .map(|s| ObservedStatement {
                sql: s.sql.clone(),
                params: Vec::new(),
                started_at_s: s.start - origin,
                duration_s: s.end.map(|e| (e - s.start).max(0.0)),
            })
            .collect();
        let weights = work.iter().map(|s| self.weight(s)).collect();
        let gaps_s = work.iter().map(|s| s.gap).collect();
        let offsets_s = work
            .iter()
            .map(|s| Some((s.start - tx.xact_start).max(0.0)))
            .collect();
        self.done.push(SampledTransaction {
            tx: ObservedTransaction {
                session: pid.to_string(),
                statements,
                autocommit,
                complete: false,
                rolled_back: tx.aborted,
            },
            weights,
            gaps_s,
            offsets_s,
        });
    }

    /// A closed transaction's idle samples, by the statement each followed.
    fn count_idle(&mut self, statements: &[SeenStatement]) {
        for s in statements.iter().filter(|s| s.idle > 0) {
            let n = u64::from(s.idle);
            if s.control {
                self.idle_after_control += n;
            } else if let Some(c) = self.idle_after.get_mut(&s.key) {
                *c += n;
            } else if self.idle_after.len() < MAX_IDLE_KEYS {
                self.idle_after.insert(s.key.clone(), n);
            } else {
                self.idle_after_other += n;
            }
        }
    }

    /// The period the rounds were really read at (a loaded server or a slowed sampler reads
    /// less often than asked), once a few were; the one asked for before.
    pub fn period(&self) -> f64 {
        match (self.origin, self.last_now) {
            (Some(a), Some(b)) if self.samples >= 5 && b > a => {
                ((b - a) / (self.samples - 1) as f64).max(self.period_s)
            }
            _ => self.period_s,
        }
    }

    /// Inverse of the chance a statement visible for about `2 × age` (one sample) was seen.
    fn weight(&self, s: &SeenStatement) -> f64 {
        if s.samples >= 2 {
            return 1.0;
        }
        let p = ((2.0 * s.max_age).max(MIN_WINDOW_S) / self.period()).min(1.0);
        1.0 / p
    }

    /// Ends sampling: open transactions are closed as they were seen.
    pub fn finish(&mut self) {
        let pids: Vec<i64> = self.backends.keys().copied().collect();
        for p in pids {
            self.close(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: i64, xs: Option<f64>, qs: f64, sc: f64, now: f64, state: &str, q: &str) -> Row {
        Row {
            pid,
            xact_start: xs,
            query_start: Some(qs),
            state_change: Some(sc),
            now,
            state: state.into(),
            query: q.into(),
            remote: false,
        }
    }

    #[test]
    fn statements_of_one_transaction_are_grouped_in_order_with_their_gaps() {
        let mut t = Tracker::new(0.01);
        t.round(&[row(1, Some(10.0), 10.0, 10.0, 10.0005, "active", "BEGIN")]);
        t.round(&[row(
            1,
            Some(10.0),
            10.001,
            10.002,
            10.004,
            "idle in transaction",
            "select * from a where id = 1 for update",
        )]);
        t.round(&[row(
            1,
            Some(10.0),
            10.005,
            10.005,
            10.006,
            "active",
            "update a set v = 2 where id = 1",
        )]);
        t.round(&[row(1, None, 10.01, 10.011, 10.02, "idle", "COMMIT")]);
        // An autocommit statement.
        t.round(&[row(
            1,
            Some(11.0),
            11.0,
            11.0,
            11.0002,
            "active",
            "select 1",
        )]);
        t.finish();
        assert_eq!(t.done.len(), 2);
        let tx = &t.done[0];
        assert_eq!(tx.tx.statements.len(), 2);
        assert!(!tx.tx.autocommit);
        assert!(tx.tx.statements[0].sql.contains("for update"));
        // 10.005 - 10.002: the statement followed the idle gap directly.
        assert!((tx.gaps_s[1].expect("gap") - 0.003).abs() < 1e-9);
        assert!(t.done[1].tx.autocommit);
        // Seen once, 0.2 ms old (taken as 0.5 ms visible), with the rounds read every
        // 250 ms (asked for every 10 ms): seen with a chance of 0.2%.
        assert!((t.period() - 0.249_925).abs() < 1e-6, "{}", t.period());
        assert!((t.done[1].weights[0] - t.period() / 0.000_5).abs() < 1e-6);
        assert_eq!(t.sessions.len(), 1);
        assert_eq!((t.active, t.idle_in_tx), (3, 1));
    }

    #[test]
    fn bind_and_execute_of_one_statement_are_one_run() {
        let q = "SELECT f($1)";
        let mut t = Tracker::new(0.01);
        t.round(&[row(
            1,
            Some(10.0),
            10.0,
            10.0,
            10.0001,
            "idle in transaction",
            "BEGIN",
        )]);
        // Seen between its Bind and its Execute, then after the Execute restarted
        // query_start 60 µs later: one run.
        t.round(&[row(1, Some(10.0), 10.004, 10.004, 10.00403, "active", q)]);
        t.round(&[row(
            1,
            Some(10.0),
            10.00406,
            10.0045,
            10.02,
            "idle in transaction",
            q,
        )]);
        // Run again after its result came (seen ended): a second run.
        t.round(&[row(1, Some(10.0), 10.021, 10.021, 10.0211, "active", q)]);
        t.finish();
        assert_eq!(t.done.len(), 1);
        assert_eq!(t.done[0].tx.statements.len(), 2, "{:?}", t.done[0].tx);
    }

    #[test]
    fn hidden_texts_are_counted_not_kept() {
        let mut t = Tracker::new(0.01);
        t.round(&[row(
            2,
            Some(1.0),
            1.0,
            1.0,
            1.1,
            "active",
            "<insufficient privilege>",
        )]);
        t.finish();
        assert_eq!((t.hidden, t.done.len()), (1, 0));
    }
}
