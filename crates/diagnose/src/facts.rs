//! The sample, per relation: which statements touched it and how (see [`crate::shape`]), how
//! much of the sessions' busy time they took and how much of it waiting on locks, the rows
//! lock waits queued on, how many sessions ran them, and the table's writes and dead tuples.
//! Everything the findings judge comes from here. Pure: a function of the probe's record.

use std::collections::BTreeMap;

use hotbench_results::diagnosis_record::KeyShare;
use hotbench_results::probe_record::{ActiveStatement, ProbeRecord, TableSummary};

use crate::shape::{relation_key, touches_via, Access};

/// A statement and what it does to one relation.
#[derive(Debug, Clone)]
pub struct StatementOn {
    pub statement: ActiveStatement,
    pub access: Vec<Access>,
}

#[derive(Debug, Clone, Default)]
pub struct RelationFacts {
    /// As the server names it (`regclass`), else as statements do.
    pub name: String,
    /// [`relation_key`] of the name.
    pub key: String,
    /// Lock-waiting samples placed on its rows, their percent of all placed at the reads, and
    /// distinct rows.
    pub lock_waits: u64,
    pub lock_pct: f64,
    pub rows: u64,
    /// Its hot rows' keys, most waited-on first.
    pub keys: Vec<KeyShare>,
    /// Busy samples of the statements touching it, and of those waiting on locks.
    pub busy: u64,
    pub lock_busy: u64,
    /// Idle-in-transaction samples after its statements (round trips holding its locks).
    pub idle_in_transaction: u64,
    /// Most sessions seen running one of its statements.
    pub sessions: u32,
    pub statements: Vec<StatementOn>,
    /// Its writes and dead tuples over the sample (tables written during it).
    pub table: Option<TableSummary>,
    /// A partitioned table's partitions whose rows were waited on.
    pub partitions: Vec<String>,
}

impl RelationFacts {
    fn any(&self, f: impl Fn(&Access) -> bool) -> bool {
        self.statements.iter().any(|s| s.access.iter().any(&f))
    }

    /// Row locks taken on the first rows of a select (`… LIMIT n FOR UPDATE`): a claim.
    pub fn claims(&self) -> bool {
        self.any(|a| matches!(a, Access::Lock { limit: true, .. }))
    }

    pub fn skip_locked_claims(&self) -> bool {
        self.any(|a| {
            matches!(
                a,
                Access::Lock {
                    limit: true,
                    skip_locked: true,
                    ..
                }
            )
        })
    }

    /// Rows read with a lock, not as a claim (`SELECT … FOR UPDATE` by key).
    pub fn locking_reads(&self) -> bool {
        self.any(|a| matches!(a, Access::Lock { limit: false, .. }))
    }

    pub fn increments(&self) -> bool {
        self.any(|a| matches!(a, Access::Update { increment: true }))
    }

    pub fn assignments(&self) -> bool {
        self.any(|a| matches!(a, Access::Update { increment: false }))
    }

    /// Deletes or updates, seen in statements or in the table's counters (a claim wrapped
    /// in a function shows only there).
    pub fn removes(&self) -> bool {
        self.any(|a| matches!(a, Access::Delete | Access::Update { .. }))
            || self
                .table
                .as_ref()
                .is_some_and(|t| t.deletes + t.updates > 0)
    }

    pub fn dead_growth(&self) -> i64 {
        self.table
            .as_ref()
            .map_or(0, |t| t.dead_tuples_end - t.dead_tuples_start)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Relations, those with the most lock-waiting time first.
    pub relations: Vec<RelationFacts>,
    /// Active samples over the activity rounds, idle-in-transaction ones left out (every
    /// share's denominator: a share is of truly active time).
    pub busy: u64,
    pub rounds: u32,
}

impl Facts {
    pub fn share(&self, samples: u64) -> f64 {
        if self.busy == 0 {
            0.0
        } else {
            samples as f64 / self.busy as f64
        }
    }

    pub fn relation(&self, key: &str) -> Option<&RelationFacts> {
        self.relations.iter().find(|r| r.key == key)
    }
}

/// The facts of `p`; `bodies`: the bodies of functions its statements call (what they do
/// counts as the calling statement's).
pub fn facts(p: &ProbeRecord, bodies: &BTreeMap<String, String>) -> Facts {
    let Some(s) = &p.sessions else {
        return Facts::default();
    };
    let mut by: BTreeMap<String, RelationFacts> = BTreeMap::new();
    // `name` as the server or a statement wrote it, `key` its relation_key (statements'
    // touches are keys already: a key is never keyed twice, `"Accounts"` stays `Accounts`).
    let entry_keyed = |by: &mut BTreeMap<String, RelationFacts>, name: &str, key: String| {
        by.entry(key.clone())
            .or_insert_with(|| RelationFacts {
                name: name.to_string(),
                key,
                ..Default::default()
            })
            .key
            .clone()
    };
    let entry = |by: &mut BTreeMap<String, RelationFacts>, name: &str| {
        entry_keyed(by, name, relation_key(name))
    };
    for w in &s.relation_waits {
        let k = entry(&mut by, &w.relation);
        let r = by.get_mut(&k).expect("just inserted");
        r.name = w.relation.clone();
        r.lock_waits += w.lock_waits;
        r.lock_pct += w.pct;
        r.rows += w.rows;
        r.partitions.extend(w.partitions.iter().cloned());
    }
    for h in &p.hot_rows {
        let k = entry(&mut by, &h.relation);
        if let Some(r) = by.get_mut(&k) {
            r.keys.push(KeyShare {
                key: h.key.clone(),
                count: h.count,
                pct: h.pct,
            });
        }
    }
    for t in &p.tables {
        let k = entry(&mut by, &t.name);
        if let Some(r) = by.get_mut(&k) {
            r.table = Some(t.clone());
            if r.lock_waits == 0 {
                r.name = t.name.clone();
            }
        }
    }
    for st in &s.statements {
        let mut per: BTreeMap<String, Vec<Access>> = BTreeMap::new();
        for t in touches_via(&st.query, bodies) {
            per.entry(t.relation).or_default().push(t.access);
        }
        for (rel, access) in per {
            let k = entry_keyed(&mut by, &rel, rel.clone());
            let Some(r) = by.get_mut(&k) else { continue };
            // Active time only: the samples idle in a transaction after it were the client's.
            r.busy += st.samples.saturating_sub(st.idle_in_transaction);
            r.lock_busy += st.lock_waits;
            r.idle_in_transaction += st.idle_in_transaction;
            r.sessions = r.sessions.max(st.sessions);
            r.statements.push(StatementOn {
                statement: st.clone(),
                access,
            });
        }
    }
    let mut relations: Vec<RelationFacts> = by.into_values().collect();
    relations.sort_by(|a, b| {
        (b.lock_busy, b.lock_waits, b.busy)
            .cmp(&(a.lock_busy, a.lock_waits, a.busy))
            .then_with(|| a.key.cmp(&b.key))
    });
    Facts {
        relations,
        busy: s.busy_samples.saturating_sub(s.idle_in_transaction_samples),
        rounds: s.rounds,
    }
}

/// Mean time per call of the statements `queryids` in the first and the last third of the
/// probe's timeline (pg_stat_statements), when both are known: a claim getting slower.
pub fn trend_ms(p: &ProbeRecord, queryids: &[&str]) -> Option<(f64, f64)> {
    let points: Vec<(f64, i64)> = p
        .timeline
        .iter()
        .filter_map(|iv| {
            let (ms, calls) = iv
                .statements
                .iter()
                .filter(|s| queryids.contains(&s.queryid.as_str()))
                .fold((0.0, 0), |(ms, n), s| {
                    (ms + s.mean_ms * s.calls as f64, n + s.calls)
                });
            (calls > 0).then_some((ms, calls))
        })
        .collect();
    if points.len() < 3 {
        return None;
    }
    let third = points.len() / 3;
    let mean = |v: &[(f64, i64)]| {
        let (ms, n) = v.iter().fold((0.0, 0), |(a, b), (m, c)| (a + m, b + c));
        ms / n.max(1) as f64
    };
    Some((
        mean(&points[..third]),
        mean(&points[points.len() - third..]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{record, stmt};
    use hotbench_results::probe_record::StatementInterval;

    #[test]
    fn statements_tables_and_waits_meet_on_the_relation() {
        let p = record(
            &[
                stmt(
                    "select remaining from daily_limit where customer_id = ? for update",
                    60,
                    50,
                    16,
                ),
                stmt(
                    "update daily_limit set remaining = ? where customer_id = ?",
                    10,
                    0,
                    12,
                ),
                stmt(
                    "insert into ledger (customer_id, amount) values (?, ?)",
                    5,
                    0,
                    9,
                ),
            ],
            &[
                ("app.daily_limit", "customer_id=1", 40),
                ("app.daily_limit", "customer_id=2", 10),
            ],
        );
        let f = facts(&p, &BTreeMap::new());
        let r = &f.relations[0];
        assert_eq!(
            (r.name.as_str(), r.key.as_str()),
            ("app.daily_limit", "daily_limit")
        );
        assert_eq!((r.busy, r.lock_busy, r.sessions, r.rows), (70, 50, 16, 2));
        assert!(r.locking_reads() && r.assignments() && !r.increments() && !r.claims());
        assert_eq!(r.keys[0].key, "customer_id=1");
        assert!((f.share(r.busy) - 70.0 / 75.0).abs() < 1e-9);
        assert_eq!(f.relation("ledger").map(|l| l.busy), Some(5));
    }

    /// Sessions idle in a transaction are waiting on their client: shares are of the truly
    /// active time (the idle samples were counted as busy: 4.0 "busy" for 1.6 active).
    #[test]
    fn shares_are_of_active_time_idle_in_transaction_left_out() {
        let mut a = stmt("select * from jobs where id = ? for update", 100, 30, 4);
        a.idle_in_transaction = 60;
        let b = stmt("select now()", 20, 0, 2);
        let mut p = record(&[a, b], &[]);
        if let Some(s) = p.sessions.as_mut() {
            s.idle_in_transaction_samples = 60;
        }
        let f = facts(&p, &BTreeMap::new());
        let r = f.relation("jobs").expect("jobs");
        assert_eq!((f.busy, r.busy, r.lock_busy), (60, 40, 30));
        assert!((f.share(r.lock_busy) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn quoted_names_meet_their_statements() {
        for (name, sql) in [
            (
                "\"Accounts\"",
                "update \"Accounts\" set v = v + ? where id = ?",
            ),
            ("\"We.ird\"", "update \"We.ird\" set v = v + ? where id = ?"),
            (
                "app.\"Say \"\"hi\"\"\"",
                "update app.\"Say \"\"hi\"\"\" set v = v + ? where id = ?",
            ),
        ] {
            let p = record(&[stmt(sql, 60, 50, 8)], &[(name, "id=1", 40)]);
            let f = facts(&p, &BTreeMap::new());
            assert_eq!(f.relations.len(), 1, "{name}: {:?}", f.relations);
            let r = &f.relations[0];
            assert_eq!((r.name.as_str(), r.lock_busy), (name, 50), "{name}");
            assert!(r.increments(), "{name}");
        }
    }

    #[test]
    fn a_long_in_list_keeps_its_for_update() {
        // As the probe records it: the statement normalized from pg_stat_activity's text.
        let ids: Vec<String> = (1..=150).map(|i| (i * 7919).to_string()).collect();
        let text = hotbench_probe::normalize::normalize(&format!(
            "select id, balance from accounts where id in ({}) order by id for update",
            ids.join(", ")
        ));
        let p = record(
            &[
                stmt(&text, 60, 50, 8),
                stmt(
                    "update accounts set balance = balance + ? where id = ?",
                    20,
                    0,
                    8,
                ),
            ],
            &[("accounts", "id=7919", 40)],
        );
        let f = facts(&p, &BTreeMap::new());
        let r = &f.relations[0];
        assert!(r.locking_reads(), "{text}");
    }

    #[test]
    fn a_claim_getting_slower_shows_in_the_trend() {
        let mut p = record(&[], &[]);
        for (i, ms) in [1.0, 1.1, 1.0, 2.0, 2.2, 2.4].iter().enumerate() {
            p.timeline
                .push(hotbench_results::probe_record::ProbeInterval {
                    t: i as f64,
                    statements: vec![StatementInterval {
                        queryid: "7".into(),
                        calls: 10,
                        mean_ms: *ms,
                        ..Default::default()
                    }],
                    ..Default::default()
                });
        }
        let (a, b) = trend_ms(&p, &["7"]).expect("trend");
        assert!((a - 1.05).abs() < 1e-9 && (b - 2.3).abs() < 1e-9, "{a} {b}");
        assert!(trend_ms(&p, &["8"]).is_none());
    }
}
