//! The twin's client groups: which kinds of session ran which shapes. A weighted script list
//! makes every client run every shape by its weight; an application whose threads are
//! dedicated (a queue's producers and consumers) does not, and the difference decides the
//! contention: kombu's eight consumer threads all queue on the queue's head row, while
//! twelve clients that spend a quarter of their transactions on gets rarely do. Two ways to
//! see the kinds, best first:
//! - **Sessions**: when the sessions seen (backends, or a log's sessions) ran disjoint sets
//!   of shapes, each set is a group, with as many clients as sessions were seen running it.
//! - **Busy sessions** (Little's law): through a connection pool a backend serves whichever
//!   thread asks next, so its sessions mix shapes and cannot show the threads; what they do
//!   show is how many sessions are busy in each shape at once (its tps × its latency, plus
//!   the busy time per transaction the latencies leave out). A
//!   queue's claim (`SELECT … LIMIT n FOR UPDATE`) is run by workers that loop on it, so the
//!   shapes holding a claim become the `consumers` group, sized by the sessions busy in them
//!   (that is how many queue on the head row), and the others one weighted group with the
//!   remaining sessions.
//!
//! Sessions that mix shapes with no claim among them stay one weighted group, as do
//! captures whose arrivals were open (the twin runs them at the captured rate). Each group's
//! clients idle between their transactions for (clients − busy) / its tps: Little's law per
//! group, as the capture does for all sessions at once. Pure.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_results::capture_record::ClientGroup;

/// What the grouping needs of one shape.
#[derive(Debug, Clone, Default)]
pub struct ShapeFacts {
    /// Its script's file name.
    pub script: String,
    /// Its statements' keys (as `crate::sql_text::StatementText::key`).
    pub keys: BTreeSet<String>,
    /// Its transactions per second.
    pub tps: f64,
    /// Its mean latency (ms), when known.
    pub latency_ms: Option<f64>,
    /// It holds a queue's claim (`… LIMIT n FOR UPDATE`).
    pub claim: bool,
}

/// What the grouping needs of the sample.
#[derive(Debug, Clone, Default)]
pub struct GroupInput<'a> {
    pub shapes: &'a [ShapeFacts],
    /// Each transaction seen: its session and its statements' keys.
    pub transactions: Vec<(&'a str, Vec<String>)>,
    /// Sessions seen (the twin's clients in all).
    pub seen: u32,
    /// Sessions busy at a sample on average (running or idle in a transaction).
    pub mean_busy: f64,
    /// Arrivals were open: the twin runs at the captured rate, one group.
    pub open_arrivals: bool,
}

/// The groups, each naming its shapes by index (in `shapes`' order) beside the record;
/// empty when every client runs every shape (one weighted group, as before).
pub fn groups(input: &GroupInput<'_>) -> Vec<(Vec<usize>, ClientGroup)> {
    let n = input.shapes.len();
    if n < 2 || input.seen < 2 || input.open_arrivals {
        return Vec::new();
    }
    let busy = busy_per_shape(input);
    let parts = match by_sessions(input) {
        Some(parts) => parts,
        None => match by_claim(input, &busy) {
            Some(parts) => parts,
            None => return Vec::new(),
        },
    };
    let claims = |shapes: &[usize]| shapes.iter().any(|&i| input.shapes[i].claim);
    let consumers = parts.iter().filter(|(s, ..)| claims(s)).count();
    let others = parts.len() - consumers;
    let mut others_seen = 0;
    parts
        .into_iter()
        .map(|(shapes, clients, sized_by)| {
            let name = if claims(&shapes) && consumers == 1 {
                "consumers".to_string()
            } else if !claims(&shapes) && consumers == 1 && others == 1 {
                "producers".to_string()
            } else {
                others_seen += 1;
                format!("group_{others_seen}")
            };
            let b: f64 = shapes.iter().map(|&i| busy[i]).sum();
            let tps: f64 = shapes.iter().map(|&i| input.shapes[i].tps).sum();
            let idle = (tps > 0.0).then(|| 1000.0 * (clients as f64 - b).max(0.0) / tps);
            let g = ClientGroup {
                name,
                scripts: shapes
                    .iter()
                    .map(|&i| input.shapes[i].script.clone())
                    .collect(),
                clients,
                sized_by: sized_by.into(),
                busy: b,
                idle_between_ms: idle,
            };
            (shapes, g)
        })
        .collect()
}

/// Sessions busy in each shape: its tps × (latency + the busy time per transaction the
/// latencies leave out), Little's law. A shape's latency is its statements' server time and
/// the gaps between them; BEGIN's and COMMIT's round trips and the client's time around them
/// are not in it, and come per transaction whatever the shape: the sessions sampled busy
/// beyond the latencies' sum, over all the transactions per second, is that time, added to
/// each transaction (as the scripts add it: each slept its share of the idle time at BEGIN
/// and COMMIT).
fn busy_per_shape(input: &GroupInput<'_>) -> Vec<f64> {
    let latency = |s: &ShapeFacts| s.latency_ms.unwrap_or(0.0).max(0.0) / 1000.0;
    let tps: f64 = input.shapes.iter().map(|s| s.tps.max(0.0)).sum();
    let known: f64 = input
        .shapes
        .iter()
        .map(|s| s.tps.max(0.0) * latency(s))
        .sum();
    let per_tx = if tps > 0.0 {
        (input.mean_busy - known).max(0.0) / tps
    } else {
        0.0
    };
    input
        .shapes
        .iter()
        .map(|s| s.tps.max(0.0) * (latency(s) + per_tx))
        .collect()
}

type Part = (Vec<usize>, u32, &'static str);

/// Transactions a session must be seen to run (each held by one shape) to count as evidence
/// of its kind: a session that mixes publish 75% and get 25% looks dedicated in 5 of its
/// transactions 24% of the time, seen once always.
const MIN_SESSION_TXS: usize = 5;

/// Sessions that ran disjoint sets of shapes: one group per set (shapes joined by a
/// session that ran both), sized by the sessions seen in it, scaled to all the sessions
/// seen. `None` unless every shape was seen in some session and there are two sets or more.
fn by_sessions(input: &GroupInput<'_>) -> Option<Vec<Part>> {
    let n = input.shapes.len();
    // A transaction belongs to the one shape holding all its statements; one that two
    // shapes could hold (a statement they share, seen alone) tells nothing.
    let mut seen: BTreeMap<&str, (BTreeSet<usize>, usize)> = BTreeMap::new();
    for (session, keys) in &input.transactions {
        if keys.is_empty() {
            continue;
        }
        let mut holders = (0..n).filter(|&i| keys.iter().all(|k| input.shapes[i].keys.contains(k)));
        if let (Some(i), None) = (holders.next(), holders.next()) {
            let e = seen.entry(session).or_default();
            e.0.insert(i);
            e.1 += 1;
        }
    }
    let ran: BTreeMap<&str, BTreeSet<usize>> = seen
        .into_iter()
        .filter(|(_, (_, k))| *k >= MIN_SESSION_TXS)
        .map(|(s, (shapes, _))| (s, shapes))
        .collect();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for shapes in ran.values() {
        let mut it = shapes.iter();
        let Some(&first) = it.next() else { continue };
        for &s in it {
            let (a, b) = (find(&mut parent, first), find(&mut parent, s));
            parent[a.max(b)] = a.min(b);
        }
    }
    let seen_in: BTreeSet<usize> = ran.values().flatten().copied().collect();
    if seen_in.len() < n {
        return None;
    }
    let mut sets: BTreeMap<usize, (Vec<usize>, u32)> = BTreeMap::new();
    for i in 0..n {
        let root = find(&mut parent, i);
        sets.entry(root).or_default().0.push(i);
    }
    if sets.len() < 2 {
        return None;
    }
    for shapes in ran.values() {
        if let Some(&s) = shapes.iter().next() {
            let root = find(&mut parent, s);
            if let Some(e) = sets.get_mut(&root) {
                e.1 += 1;
            }
        }
    }
    let sessions: Vec<(Vec<usize>, f64)> = sets
        .into_values()
        .map(|(shapes, k)| (shapes, k as f64))
        .collect();
    Some(
        apportion(&sessions, input.seen)
            .into_iter()
            .map(|(shapes, c)| (shapes, c, "sessions"))
            .collect(),
    )
}

/// Sessions that mix shapes, a queue's claim among them: the claim's shapes as one group
/// sized by the sessions busy in them, the rest as one with the other sessions.
fn by_claim(input: &GroupInput<'_>, busy: &[f64]) -> Option<Vec<Part>> {
    let (claim, rest): (Vec<usize>, Vec<usize>) =
        (0..input.shapes.len()).partition(|&i| input.shapes[i].claim);
    if claim.is_empty() || rest.is_empty() {
        return None;
    }
    if claim
        .iter()
        .chain(&rest)
        .any(|&i| input.shapes[i].latency_ms.is_none())
    {
        return None;
    }
    let busy_in_claim: f64 = claim.iter().map(|&i| busy[i]).sum();
    let consumers = (busy_in_claim.round() as u32).clamp(1, input.seen - 1);
    Some(vec![
        (rest, input.seen - consumers, "busy"),
        (claim, consumers, "busy"),
    ])
}

/// `total` clients shared in proportion to `weights`, at least 1 each, largest
/// remainders first; with `total` 0 each keeps its weight rounded.
fn apportion(parts: &[(Vec<usize>, f64)], total: u32) -> Vec<(Vec<usize>, u32)> {
    let sum: f64 = parts.iter().map(|p| p.1).sum();
    if total == 0 || sum <= 0.0 {
        return parts
            .iter()
            .map(|(s, w)| (s.clone(), w.round().max(1.0) as u32))
            .collect();
    }
    let exact: Vec<f64> = parts.iter().map(|p| p.1 * total as f64 / sum).collect();
    let mut out: Vec<u32> = exact.iter().map(|x| (x.floor() as u32).max(1)).collect();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().cycle().take(parts.len() * 2) {
        if out.iter().sum::<u32>() >= total {
            break;
        }
        out[i] += 1;
    }
    parts
        .iter()
        .zip(out)
        .map(|((s, _), c)| (s.clone(), c))
        .collect()
}

/// The grouping's view of the shapes: their keys, rates, latencies and claims.
pub fn facts(
    models: &[crate::shapes::ShapeModel],
    shapes: &[hotbench_results::capture_record::Shape],
) -> Vec<ShapeFacts> {
    use hotbench_diagnose::shape::{touches, Access};
    models
        .iter()
        .zip(shapes)
        .map(|(m, s)| ShapeFacts {
            script: s.script.clone(),
            keys: m.statements.iter().map(|st| st.key.clone()).collect(),
            tps: s.tps,
            latency_ms: s.latency_ms,
            claim: m.statements.iter().any(|st| {
                touches(&st.key)
                    .iter()
                    .any(|t| matches!(t.access, Access::Lock { limit: true, .. }))
            }),
        })
        .collect()
}

/// Each transaction as its session and its statements' keys (BEGIN/COMMIT left out).
pub fn transactions(txs: &[crate::tracker::SampledTransaction]) -> Vec<(&str, Vec<String>)> {
    txs.iter()
        .map(|t| {
            let keys =
                t.tx.statements
                    .iter()
                    .map(|st| crate::sql_text::StatementText::parse(&st.sql, &st.params))
                    .filter(|text| text.control().is_none())
                    .map(|text| text.key())
                    .filter(|k| !k.trim().is_empty())
                    .collect();
            (t.tx.session.as_str(), keys)
        })
        .collect()
}

#[cfg(test)]
#[path = "client_groups_tests.rs"]
mod tests;
