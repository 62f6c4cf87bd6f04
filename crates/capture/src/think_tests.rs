//! The think time placed from synthetic sightings: sessions running a Django counter's
//! transaction (BEGIN, an `F("views") + 1` or `- 1` UPDATE, a SELECT, COMMIT) with a
//! different gap after each, sampled as `pg_stat_activity` shows them, at the dense default
//! period and at the sparse one a 10 ms/s budget gave on a loaded server; the tracker, the
//! shapes and the gaps as a capture makes them. No server.

use std::collections::BTreeMap;

use crate::shapes::{self, Counts, ShapeModel};
use crate::sql_text::StatementText;
use crate::tracker::{Row, Tracker};

/// xorshift64*: a fixed, seeded sequence.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform around `mean`, ±50%.
    fn around(&mut self, mean: f64) -> f64 {
        mean * (0.5 + self.unit())
    }
}

/// One stretch of a session's time in one state.
struct Segment {
    end: f64,
    start: f64,
    state: &'static str,
    /// Into [`texts`].
    query: usize,
    query_start: f64,
    xact_start: Option<f64>,
}

/// The true mean gaps (s): after BEGIN, after the UPDATE, after the SELECT.
const AFTER_BEGIN: f64 = 0.000_6;
const AFTER_UPDATE: f64 = 0.002_5;
const AFTER_SELECT: f64 = 0.001_2;

fn update(k: u32, minus: bool) -> String {
    format!(
        "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" {} 1) WHERE \"site_page\".\"id\" = {k}",
        if minus { "-" } else { "+" }
    )
}

fn select(k: u32) -> String {
    format!("SELECT \"site_page\".\"id\", \"site_page\".\"views\" FROM \"site_page\" WHERE \"site_page\".\"id\" = {k} LIMIT 21")
}

/// Every statement text the sessions run: BEGIN, COMMIT, then per page 1–4 its `+ 1`
/// UPDATE, its `- 1` UPDATE and its SELECT.
fn texts() -> Vec<String> {
    let mut v = vec!["BEGIN".to_string(), "COMMIT".to_string()];
    for k in 1..=4 {
        v.extend([update(k, false), update(k, true), select(k)]);
    }
    v
}

/// One session's timeline for `secs`, and the statements it ran (index into [`texts`] →
/// calls).
fn session(rng: &mut Rng, secs: f64, calls: &mut BTreeMap<usize, u64>) -> Vec<Segment> {
    let (begin, commit) = (0, 1);
    let mut out = Vec::new();
    let mut t = rng.unit() * 0.01;
    let push = |out: &mut Vec<Segment>, t: &mut f64, len: f64, state, query, qs, xs| {
        out.push(Segment {
            start: *t,
            end: *t + len,
            state,
            query,
            query_start: qs,
            xact_start: xs,
        });
        *t += len;
    };
    while t < secs {
        let page = (rng.unit() * 4.0) as usize;
        let xs = t;
        push(&mut out, &mut t, 0.000_05, "active", begin, xs, Some(xs));
        push(
            &mut out,
            &mut t,
            rng.around(AFTER_BEGIN),
            "idle in transaction",
            begin,
            xs,
            Some(xs),
        );
        let u = 2 + 3 * page + usize::from(rng.unit() < 0.1);
        let qs = t;
        // A lock wait now and then: a few ms, and rarely a long one behind a holder whose
        // client stalled (a loaded machine): the transactions seen in two samples.
        let run = 0.000_3
            + if rng.unit() < 0.3 {
                rng.around(0.004)
            } else {
                0.0
            }
            + if rng.unit() < 0.005 {
                rng.around(0.2)
            } else {
                0.0
            };
        push(&mut out, &mut t, run, "active", u, qs, Some(xs));
        push(
            &mut out,
            &mut t,
            rng.around(AFTER_UPDATE),
            "idle in transaction",
            u,
            qs,
            Some(xs),
        );
        let s = 4 + 3 * page;
        let qs = t;
        push(&mut out, &mut t, 0.000_2, "active", s, qs, Some(xs));
        push(
            &mut out,
            &mut t,
            rng.around(AFTER_SELECT),
            "idle in transaction",
            s,
            qs,
            Some(xs),
        );
        let qs = t;
        push(&mut out, &mut t, 0.000_1, "active", commit, qs, Some(xs));
        push(
            &mut out,
            &mut t,
            rng.around(0.001),
            "idle",
            commit,
            qs,
            None,
        );
        for q in [u, s] {
            *calls.entry(q).or_default() += 1;
        }
    }
    out
}

/// `sessions` sessions for `secs`, sampled every `period` (jittered by 10%): the tracker fed
/// every round, pg_stat_statements' calls by key, and the transactions per second.
fn sampled(period: f64, secs: f64, seed: u64) -> (Tracker, BTreeMap<String, Counts>, f64) {
    let mut rng = Rng(seed);
    let texts = texts();
    let mut calls = BTreeMap::new();
    let sessions: Vec<Vec<Segment>> = (0..8)
        .map(|_| session(&mut rng, secs, &mut calls))
        .collect();
    let transactions: usize = sessions
        .iter()
        .map(|s| {
            s.iter()
                .filter(|g| g.query == 0 && g.state == "active")
                .count()
        })
        .sum();
    let mut tracker = Tracker::new(period);
    let mut now = 0.02;
    while now < secs - 0.05 {
        let rows: Vec<Row> = sessions
            .iter()
            .enumerate()
            .map(|(pid, s)| {
                let g = &s[s.partition_point(|g| g.end <= now)];
                Row {
                    pid: pid as i64 + 1,
                    xact_start: g.xact_start,
                    query_start: Some(g.query_start),
                    state_change: Some(g.start),
                    now,
                    state: g.state.into(),
                    query: texts[g.query].clone(),
                    remote: false,
                }
            })
            .collect();
        tracker.round(&rows);
        now += period * (0.95 + 0.1 * rng.unit());
    }
    tracker.finish();
    let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
    for (q, n) in calls {
        let c = counts
            .entry(StatementText::parse(&texts[q], &[]).key())
            .or_default();
        c.calls += n;
        c.rows += n;
    }
    (tracker, counts, transactions as f64 / secs)
}

/// The shape's gaps (ms) as its script sleeps them: after BEGIN, before the SELECT, before
/// COMMIT.
fn placed(period: f64, secs: f64, seed: u64) -> (f64, f64, f64) {
    let (t, counts, tps) = sampled(period, secs, seed);
    let (mut models, _) = shapes::build(&shapes::Input {
        transactions: &t.done,
        counts: Some(&counts),
        period_s: Some(t.period()),
    });
    crate::workload::scale_gaps(&mut models, &t, tps, secs);
    let m: &ShapeModel = models.iter().find(|m| !m.autocommit).expect("the shape");
    let select = m
        .statements
        .iter()
        .position(|s| s.key.starts_with("select"))
        .expect("the SELECT");
    let ms = |g: Option<f64>| g.unwrap_or(0.0) * 1000.0;
    (
        ms(m.edge_gap_s),
        ms(m.gaps_s[select]),
        ms(m.commit_gap_s.or(m.edge_gap_s)),
    )
}

#[test]
fn each_gap_is_where_the_sessions_idled_at_the_dense_and_the_sparse_period() {
    for (period, secs) in [(0.01, 8.0), (0.05, 30.0), (0.17, 60.0)] {
        let (begin, before_select, before_commit) = placed(period, secs, 7);
        let near = |got: f64, want: f64| (got - want * 1000.0).abs() <= want * 1000.0 * 0.15;
        assert!(
            near(begin, AFTER_BEGIN) && near(before_select, AFTER_UPDATE) && near(before_commit, AFTER_SELECT),
            "every {period} s: after BEGIN {begin:.2} ms (true {}), before the SELECT {before_select:.2} ms (true {}), before COMMIT {before_commit:.2} ms (true {})",
            AFTER_BEGIN * 1e3,
            AFTER_UPDATE * 1e3,
            AFTER_SELECT * 1e3
        );
    }
}
