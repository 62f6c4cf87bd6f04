//! Who the sampled sessions are (`ProbeOptions::observe_sessions`): once per stats interval
//! the statements they run (by `query_id`, else by normalized text), the sessions blocking
//! their lock waits (which also gives the blocking chains), and what holds the xmin horizon
//! (sessions, replication slots, prepared transactions); at every wait sample, how long
//! backends idle inside a transaction have been idle (the time between a transaction's
//! statements). Aggregated in bounded maps; [`Observer::finish`] makes the record.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_results::probe_record::{
    ActiveStatement, Blocker, RelationWaits, SessionsRecord, XminHolder,
};
use hotbench_wire::QueryResult;

use crate::classify::{float, int, parse_int_array};
use crate::normalize::normalize;
use crate::session::{Part, Session};

/// Distinct statements and blocker groups remembered; later ones are counted only in totals.
const MAX_ENTRIES: usize = 500;
/// Statements, blockers and xmin holders kept in the record.
const TOP_STATEMENTS: usize = 30;
const TOP_BLOCKERS: usize = 10;
const TOP_HOLDERS: usize = 5;
/// Pids remembered per statement (to count sessions).
const MAX_PIDS: usize = 2000;

/// `{F}`: the sampled backends (alias `a`); `{QID}`: `query_id` where the server has it;
/// `{IDLE_MS}`: sessions idle for less than this ran their last statement since the previous
/// round (they count as sessions of that statement, not as busy samples).
const ACTIVITY_SQL: &str = "select {QID}, left(a.query, 2000), a.state, \
     coalesce(a.wait_event_type, ''), count(*)::int8, array_agg(a.pid)::text, \
     count(*) filter (where a.client_addr is not null and not a.client_addr <<= '127.0.0.0/8' \
       and a.client_addr <> '::1')::int8 \
     from pg_stat_activity a where {F} and a.state is not null and a.state <> '' \
       and (a.state <> 'idle' or a.state_change > clock_timestamp() - interval '{IDLE_MS} ms') \
     group by 1, 2, 3, 4";

/// Waiting backend, blocking pid (0: a prepared transaction), and the blocker's state,
/// application, statement, time in that state and whether it waits on a lock itself.
const BLOCKERS_SQL: &str = "select a.pid, bp.pid, coalesce(b.state, ''), \
     coalesce(b.application_name, ''), {QIDB}, coalesce(left(b.query, 2000), ''), \
     coalesce(extract(epoch from clock_timestamp() - b.state_change), 0)::float8, \
     coalesce(b.wait_event_type = 'Lock', false) \
     from pg_stat_activity a cross join lateral unnest(pg_blocking_pids(a.pid)) as bp(pid) \
     left join pg_stat_activity b on b.pid = bp.pid \
     where {F} and a.wait_event_type = 'Lock'";

/// The oldest xmins of the database's sessions (and walsenders: standby feedback), the
/// replication slots' and this database's prepared transactions'.
const XMIN_HOLDERS_SQL: &str = "select * from ( \
     select 'session', a.pid::text, coalesce(a.application_name, ''), coalesce(a.state, ''), \
       a.backend_xmin::text, age(a.backend_xmin)::int8 as xmin_age, \
       extract(epoch from clock_timestamp() - a.xact_start)::float8, \
       coalesce(left(a.query, 2000), '') \
     from pg_stat_activity a where a.backend_xmin is not null and a.pid <> pg_backend_pid() \
       and (a.datname = current_database() or a.backend_type = 'walsender') \
     union all \
     select 'replication slot', slot_name::text, slot_type, \
       case when active then 'active' else 'inactive' end, xmin::text, age(xmin)::int8, \
       null::float8, '' from pg_replication_slots where xmin is not null \
     union all \
     select 'prepared transaction', gid, owner::text, 'prepared', transaction::text, \
       age(transaction)::int8, extract(epoch from clock_timestamp() - prepared)::float8, '' \
     from pg_prepared_xacts where database = current_database() \
   ) h order by xmin_age desc limit 5";

/// The wait sample with the idle-in-transaction ages (`{F}` as above): idles under a second
/// are round trips inside a transaction; longer ones are holders.
pub const WAITS_OBSERVE_SQL: &str = "select a.state, a.wait_event_type, a.wait_event, \
     count(*)::int8, coalesce(sum(extract(epoch from clock_timestamp() - a.state_change)) \
       filter (where clock_timestamp() - a.state_change < interval '1 second'), 0)::float8, \
     count(*) filter (where clock_timestamp() - a.state_change < interval '1 second') \
     from pg_stat_activity a where {F} group by 1, 2, 3";

#[derive(Default)]
struct StatementAcc {
    queryid: String,
    query: String,
    samples: u64,
    lock_waits: u64,
    idle_in_transaction: u64,
    pids: BTreeSet<i64>,
}

#[derive(Default)]
struct BlockerAcc {
    b: Blocker,
    pids: BTreeSet<i64>,
}

pub struct Observer {
    /// `query_id` expressions for `a` and `b`, or `''` before PostgreSQL 14.
    qid: (&'static str, &'static str),
    /// The stats interval (ms): how far back an idle session's last statement counts.
    idle_ms: u64,
    rounds: u32,
    busy: u64,
    /// Of `busy`: idle inside a transaction, and connected over a network (not a Unix
    /// socket or loopback).
    idle_in_transaction: u64,
    remote: u64,
    statements: BTreeMap<String, StatementAcc>,
    blockers: BTreeMap<(String, String), BlockerAcc>,
    xmin_rounds: u32,
    holders: BTreeMap<(String, String, String), XminHolder>,
    gap_sum_s: f64,
    gap_n: u64,
}

/// How statements are told apart: by normalized text (a backend reports no `query_id` in
/// some states, so keying by it would split one statement in two); the `query_id` is kept as
/// seen.
fn statement_key(_queryid: &str, text: &str) -> String {
    text.to_string()
}

impl Observer {
    /// For a server of `server_version_num`, reading activity every `stats_interval`.
    pub fn new(server_version_num: u32, stats_interval: std::time::Duration) -> Observer {
        let has_query_id = server_version_num >= 140000;
        Observer {
            idle_ms: stats_interval.as_millis().max(1) as u64,
            qid: if has_query_id {
                (
                    "coalesce(a.query_id::text, '')",
                    "coalesce(b.query_id::text, '')",
                )
            } else {
                ("''", "''")
            },
            rounds: 0,
            busy: 0,
            idle_in_transaction: 0,
            remote: 0,
            statements: BTreeMap::new(),
            blockers: BTreeMap::new(),
            xmin_rounds: 0,
            holders: BTreeMap::new(),
            gap_sum_s: 0.0,
            gap_n: 0,
        }
    }

    /// One wait-sample row (`WAITS_OBSERVE_SQL`): idle-in-transaction ages feed the gap.
    pub fn wait_row(&mut self, state: Option<&str>, age_sum_s: Option<&str>, n: Option<&str>) {
        if state.is_some_and(|s| s.starts_with("idle in transaction")) {
            self.gap_sum_s += float(age_sum_s).unwrap_or(0.0).max(0.0);
            self.gap_n += int(n).unwrap_or(0).max(0) as u64;
        }
    }

    /// One backend of a fed wait sample (`WaitFeed`), in `state` for `age_s`: an idle in a
    /// transaction for under a second feeds the gap, as [`Observer::wait_row`]'s.
    pub fn state_age(&mut self, state: &str, age_s: f64) {
        if state.starts_with("idle in transaction") && (0.0..1.0).contains(&age_s) {
            self.gap_sum_s += age_s;
            self.gap_n += 1;
        }
    }

    /// One activity round: the statements the sampled backends run.
    pub fn activity(&mut self, s: &mut Session, filter: &str) {
        let sql = ACTIVITY_SQL
            .replace("{QID}", self.qid.0)
            .replace("{IDLE_MS}", &self.idle_ms.to_string())
            .replace("{F}", filter);
        let Some(r) = s.run_prepared(Part::Activity, "hotbench_probe_activity", &sql) else {
            return;
        };
        self.rounds += 1;
        self.add_activity(&r);
    }

    fn add_activity(&mut self, r: &QueryResult) {
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let n = int(cell(4)).unwrap_or(0).max(0) as u64;
            let text = normalize(cell(1).unwrap_or(""));
            let queryid = cell(0).unwrap_or("").to_string();
            let idle = cell(2) == Some("idle");
            if !idle {
                self.busy += n;
                self.remote += int(cell(6)).unwrap_or(0).clamp(0, n as i64) as u64;
            }
            if cell(2).is_some_and(|s| s.starts_with("idle in transaction")) {
                self.idle_in_transaction += n;
            }
            let key = statement_key(&queryid, &text);
            if self.statements.len() >= MAX_ENTRIES && !self.statements.contains_key(&key) {
                continue;
            }
            let e = self.statements.entry(key).or_insert_with(|| StatementAcc {
                query: text,
                ..Default::default()
            });
            if e.queryid.is_empty() && !queryid.is_empty() && queryid != "0" {
                e.queryid = queryid;
            }
            if !idle {
                e.samples += n;
            }
            if cell(3) == Some("Lock") {
                e.lock_waits += n;
            }
            if cell(2).is_some_and(|s| s.starts_with("idle in transaction")) {
                e.idle_in_transaction += n;
            }
            for pid in parse_int_array(cell(5).unwrap_or("")) {
                if e.pids.len() < MAX_PIDS {
                    e.pids.insert(pid);
                }
            }
        }
    }

    /// The sessions blocking lock waits; returns the waits-for graph (waiting pid → blocking
    /// pids) for the longest chain, or `None` when the read failed.
    pub fn blockers(&mut self, s: &mut Session, filter: &str) -> Option<BTreeMap<i64, Vec<i64>>> {
        let sql = BLOCKERS_SQL
            .replace("{QIDB}", self.qid.1)
            .replace("{F}", filter);
        let r = s.run_prepared(Part::Blockers, "hotbench_probe_blockers", &sql)?;
        Some(self.add_blockers(&r))
    }

    fn add_blockers(&mut self, r: &QueryResult) -> BTreeMap<i64, Vec<i64>> {
        let mut graph: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let (Some(waiter), Some(pid)) = (int(cell(0)), int(cell(1))) else {
                continue;
            };
            graph.entry(waiter).or_default().push(pid);
            // A blocker waiting itself is a link of the chain, not its cause; one seen idle
            // has just committed (pg_stat_activity is read after pg_blocking_pids).
            if cell(7) == Some("t") || cell(2) == Some("idle") {
                continue;
            }
            let state = match cell(2).unwrap_or("") {
                "" if pid == 0 => "prepared transaction".to_string(),
                "" => "unknown (another role's session)".to_string(),
                s => s.to_string(),
            };
            let queryid = cell(4).unwrap_or("").to_string();
            let text = normalize(cell(5).unwrap_or(""));
            let key = (statement_key(&queryid, &text), state.clone());
            if self.blockers.len() >= MAX_ENTRIES && !self.blockers.contains_key(&key) {
                continue;
            }
            let e = self.blockers.entry(key).or_insert_with(|| BlockerAcc {
                b: Blocker {
                    queryid: if queryid == "0" {
                        String::new()
                    } else {
                        queryid
                    },
                    query: text,
                    state,
                    application_name: cell(3).unwrap_or("").to_string(),
                    ..Default::default()
                },
                pids: BTreeSet::new(),
            });
            e.b.samples += 1;
            e.b.max_state_s = e.b.max_state_s.max(float(cell(6)).unwrap_or(0.0));
            if e.pids.len() < MAX_PIDS {
                e.pids.insert(pid);
            }
        }
        graph
    }

    /// One read of the xmin horizon's holders.
    pub fn xmin_holders(&mut self, s: &mut Session) {
        let Some(r) = s.run_prepared(
            Part::XminHolders,
            "hotbench_probe_xmin_holders",
            XMIN_HOLDERS_SQL,
        ) else {
            return;
        };
        self.xmin_rounds += 1;
        self.add_holders(&r);
    }

    fn add_holders(&mut self, r: &QueryResult) {
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let text = |i: usize| cell(i).unwrap_or("").to_string();
            let key = (text(0), text(1), text(4));
            if self.holders.len() >= MAX_ENTRIES && !self.holders.contains_key(&key) {
                continue;
            }
            let h = self.holders.entry(key).or_insert_with(|| XminHolder {
                kind: text(0),
                id: text(1),
                application_name: text(2),
                xmin: text(4),
                ..Default::default()
            });
            h.state = text(3);
            h.xmin_age = h.xmin_age.max(int(cell(5)).unwrap_or(0));
            h.xact_age_s = float(cell(6));
            h.query = normalize(cell(7).unwrap_or(""));
            h.seen += 1;
        }
    }

    /// The record, with the relations lock waits queued on.
    pub fn finish(self, relation_waits: Vec<RelationWaits>) -> SessionsRecord {
        let mut statements: Vec<ActiveStatement> = self
            .statements
            .into_values()
            .map(|e| ActiveStatement {
                queryid: e.queryid,
                query: e.query,
                samples: e.samples,
                lock_waits: e.lock_waits,
                idle_in_transaction: e.idle_in_transaction,
                sessions: e.pids.len() as u32,
            })
            .collect();
        statements.sort_by(|a, b| {
            b.samples
                .cmp(&a.samples)
                .then_with(|| a.query.cmp(&b.query))
        });
        statements.truncate(TOP_STATEMENTS);
        let mut blockers: Vec<Blocker> = self
            .blockers
            .into_values()
            .map(|mut e| {
                e.b.sessions = e.pids.len() as u32;
                e.b.pids = e.pids.iter().copied().take(5).collect();
                e.b
            })
            .collect();
        blockers.sort_by(|a, b| {
            b.samples
                .cmp(&a.samples)
                .then_with(|| a.query.cmp(&b.query))
        });
        blockers.truncate(TOP_BLOCKERS);
        let mut xmin_holders: Vec<XminHolder> = self.holders.into_values().collect();
        xmin_holders.sort_by(|a, b| b.xmin_age.cmp(&a.xmin_age).then(b.seen.cmp(&a.seen)));
        xmin_holders.truncate(TOP_HOLDERS);
        SessionsRecord {
            rounds: self.rounds,
            busy_samples: self.busy,
            idle_in_transaction_samples: self.idle_in_transaction,
            remote_client_samples: self.remote,
            statements,
            blockers,
            xmin_rounds: self.xmin_rounds,
            xmin_holders,
            relation_waits,
            in_transaction_gap_ms: (self.gap_n > 0)
                .then(|| 2000.0 * self.gap_sum_s / self.gap_n as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(rows: &[&[Option<&str>]]) -> QueryResult {
        QueryResult {
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| c.map(str::to_string)).collect())
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn statements_group_by_normalized_text_and_keep_a_queryid() {
        let mut o = Observer::new(150000, std::time::Duration::from_secs(1));
        o.add_activity(&result(&[
            &[
                Some(""),
                Some("update t set n = n + 1 where id = 1"),
                Some("active"),
                Some("Lock"),
                Some("2"),
                Some("{10,11}"),
                // One of the two connected over a network.
                Some("1"),
            ],
            &[
                Some(""),
                Some("update t set n = n + 1 where id = 2"),
                Some("active"),
                Some(""),
                Some("1"),
                Some("{12}"),
            ],
            &[
                Some("77"),
                Some("select 1;"),
                Some("idle in transaction"),
                Some("Client"),
                Some("1"),
                Some("{10}"),
            ],
            &[
                Some(""),
                Some("select 1"),
                Some("active"),
                Some(""),
                Some("1"),
                Some("{14}"),
            ],
            &[
                Some(""),
                Some("select 1"),
                Some("idle"),
                Some("Client"),
                Some("2"),
                Some("{15,16}"),
            ],
        ]));
        o.add_activity(&result(&[&[
            Some(""),
            Some("update t set n = n + 1 where id = 9"),
            Some("active"),
            Some("Lock"),
            Some("1"),
            Some("{13}"),
        ]]));
        let rec = o.finish(Vec::new());
        assert_eq!(rec.busy_samples, 6);
        assert_eq!(
            (rec.idle_in_transaction_samples, rec.remote_client_samples),
            (1, 1)
        );
        let upd = &rec.statements[0];
        assert_eq!(upd.query, "update t set n = n + ? where id = ?");
        assert_eq!((upd.samples, upd.lock_waits, upd.sessions), (4, 3, 4));
        let sel = &rec.statements[1];
        // Sessions idle since their last statement count as its sessions, not as busy.
        assert_eq!(
            (
                sel.queryid.as_str(),
                sel.samples,
                sel.idle_in_transaction,
                sel.sessions
            ),
            ("77", 2, 1, 4)
        );
    }

    #[test]
    fn blockers_give_the_graph_and_group_by_statement_and_state() {
        let mut o = Observer::new(130000, std::time::Duration::from_secs(1));
        let g = o.add_blockers(&result(&[
            &[
                Some("3"),
                Some("2"),
                Some("active"),
                Some("app"),
                Some(""),
                Some("update t set v = 1 where id = 5"),
                Some("0.01"),
                Some("t"),
            ],
            &[
                Some("2"),
                Some("1"),
                Some("idle in transaction"),
                Some("app"),
                Some(""),
                Some("select 1"),
                Some("42.5"),
            ],
            &[Some("4"), Some("0"), None, None, None, None, None],
        ]));
        assert_eq!(crate::classify::longest_chain(&g), 2);
        let rec = o.finish(Vec::new());
        let idle = rec
            .blockers
            .iter()
            .find(|b| b.state == "idle in transaction")
            .expect("idle blocker");
        assert_eq!((idle.pids.as_slice(), idle.max_state_s), (&[1][..], 42.5));
        assert!(rec
            .blockers
            .iter()
            .any(|b| b.state == "prepared transaction"));
        // 2 waits itself: a link of the chain, not a cause.
        assert!(rec.blockers.iter().all(|b| b.state != "active"));
    }

    #[test]
    fn a_holder_seen_at_every_read_is_counted_each_time_and_gaps_are_doubled_means() {
        let mut o = Observer::new(180000, std::time::Duration::from_secs(1));
        for age in ["100", "250"] {
            o.xmin_rounds += 1;
            o.add_holders(&result(&[&[
                Some("session"),
                Some("4242"),
                Some("psql"),
                Some("idle in transaction"),
                Some("1000"),
                Some(age),
                Some("12.5"),
                Some("select count(*) from jobs where id > 10"),
            ]]));
        }
        o.wait_row(Some("idle in transaction"), Some("0.003"), Some("3"));
        o.wait_row(Some("active"), Some("9"), Some("9"));
        let rec = o.finish(Vec::new());
        let h = &rec.xmin_holders[0];
        assert_eq!((h.seen, h.xmin_age, rec.xmin_rounds), (2, 250, 2));
        assert_eq!(h.query, "select count(*) from jobs where id > ?");
        let gap = rec.in_transaction_gap_ms.expect("gap");
        assert!((gap - 2.0).abs() < 1e-9, "{gap}");
    }
}
