//! Transaction shapes from what was seen of the transactions: statements are told apart by
//! their normalized text ([`crate::sql_text`]); statements seen in one explicit transaction
//! belong to one shape (sampling sees a few statements of each transaction, so a shape is
//! assembled from many partial views: union of co-occurring statements, ordered by which
//! came first when seen together); a statement never seen beside another, that started its
//! own transaction, is an autocommit shape. Statements of a transaction too short for two
//! samples, seen apart, are joined by their calls ([`crate::shape_join`]), and a statement
//! two shapes share is cut out of both ([`crate::shape_split`]); a sampled transaction that
//! either shape could be is counted to each by its share of the calls. How often each shape and statement ran comes from
//! `pg_stat_statements` when it has them (exact calls), else from the weighted sample; a
//! statement running in fewer transactions of its shape than its anchor is conditional, one
//! running more is repeated. Per statement and slot the values seen (weighted) are kept for
//! [`crate::params`], with which slots carried the same value in the same transaction. Pure.

use std::collections::BTreeMap;

use crate::sql_text::{StatementText, Value};
use crate::tracker::SampledTransaction;

/// `pg_stat_statements` counters of one statement over the capture.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    pub calls: u64,
    pub total_ms: f64,
    pub rows: u64,
}

/// One statement of a shape.
#[derive(Debug, Clone)]
pub struct ShapeStatement {
    pub key: String,
    /// A text of it as seen (the SQL between its slots).
    pub text: StatementText,
    /// Runs per transaction of the shape (1 always; < 1 conditional; > 1 repeated).
    pub per_tx: f64,
    /// Per slot, the values seen with their weights.
    pub values: Vec<Vec<(Value, f64)>>,
    /// Mean server time per call (ms), from `pg_stat_statements`.
    pub mean_ms: Option<f64>,
    /// Calls over the capture (exact or estimated).
    pub calls: f64,
}

/// Evidence that two slots carry one value in a transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Agreement {
    pub seen: u64,
    pub equal: u64,
}

#[derive(Debug, Clone)]
pub struct ShapeModel {
    /// Pairs of statements (indices, lower first) seen in one transaction.
    pub together: std::collections::BTreeSet<(usize, usize)>,
    pub statements: Vec<ShapeStatement>,
    pub autocommit: bool,
    /// Transactions of this shape over the capture (estimated).
    pub count: f64,
    /// Transactions seen (partly).
    pub observed: u64,
    /// Mean gap (s) before statement `i` (index 0: none), when seen.
    pub gaps_s: Vec<Option<f64>>,
    /// The round trips after BEGIN and before COMMIT (s), each, when known.
    pub edge_gap_s: Option<f64>,
    /// Before COMMIT (s), when known apart from the one after BEGIN (`capture::think`).
    pub commit_gap_s: Option<f64>,
    /// ((statement, slot), (statement, slot)) → how often they agreed, earlier first.
    pub agreements: Agreements,
}

impl ShapeModel {
    /// Statements `a` and `b` were seen in one transaction.
    pub fn seen_together(&self, a: usize, b: usize) -> bool {
        self.together.contains(&(a.min(b), a.max(b)))
    }
}

/// Statement `.0`'s slot `.1` and a later statement's slot → how often they agreed.
pub type Agreements = BTreeMap<((usize, usize), (usize, usize)), Agreement>;

/// A transaction as the builder sees it: autocommit, and its statements (template, text,
/// weight, gap before it).
type SeenTx = (bool, Vec<(usize, StatementText, f64, Option<f64>)>);

/// What shapes are built from.
pub struct Input<'a> {
    pub transactions: &'a [SampledTransaction],
    /// By statement key, when `pg_stat_statements` was read.
    pub counts: Option<&'a BTreeMap<String, Counts>>,
    /// The sampling period (s), when the transactions were sampled: a gap seen while a
    /// session idled is seen with a chance of about its length over the period, so gaps are
    /// averaged with the inverse as weight. `None` (a log): every gap counts once.
    pub period_s: Option<f64>,
}

#[derive(Default)]
struct Template {
    text: Option<StatementText>,
    weight: f64,
    in_explicit: f64,
    in_autocommit: f64,
    /// Most times seen in one transaction.
    max_per_tx: usize,
    /// Transactions it was seen run in twice or more, and those it was seen in once but
    /// at length (in two samples or more): a repeat is told from an artifact by their ratio.
    repeats: (f64, f64),
    /// Transactions (weighted) it was seen in.
    tx_weight: f64,
    values: Vec<Vec<(Value, f64)>>,
    /// Sum of its relative position in multi-statement transactions, and how many.
    pos: (f64, f64),
    /// Sum of how long after its transaction's start it began (s), and how many (weighted,
    /// each weight at most [`MAX_ORDER_WEIGHT`]): statements later in a transaction start
    /// later on average, seen together or not.
    offset: (f64, f64),
    /// The same over every sighting, autocommit ones too (a statement of a 0.1 ms
    /// transaction seen alone may start within the autocommit slack of its transaction).
    start: (f64, f64),
}

/// The most one sighting weighs in a statement's mean offset: the inclusion weight of a
/// sighting at the default 10 ms period (10 ms over 0.5 ms).
const MAX_ORDER_WEIGHT: f64 = 20.0;
/// Most distinct statements told apart; the rest are left out (said in a note).
pub const MAX_TEMPLATES: usize = 500;
/// Values kept per slot.
const MAX_VALUES: usize = 200_000;

/// Builds the shapes, most frequent first; notes say what was left out.
pub fn build(input: &Input<'_>) -> (Vec<ShapeModel>, Vec<String>) {
    let mut notes = Vec::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut t: Vec<Template> = Vec::new();
    // Per transaction: its statements as (template, text, weight, gap).
    let mut txs: Vec<SeenTx> = Vec::new();
    let mut over = 0u64;
    for s in input.transactions {
        let mut v = Vec::new();
        for (i, st) in s.tx.statements.iter().enumerate() {
            let text = StatementText::parse(&st.sql, &st.params);
            let key = text.key();
            // Transaction bounds are the script's own; an empty text is no statement.
            if text.control().is_some() || key.trim().is_empty() {
                continue;
            }
            let id = match ids.get(&key) {
                Some(id) => *id,
                None if t.len() < MAX_TEMPLATES => {
                    ids.insert(key, t.len());
                    t.push(Template::default());
                    t.len() - 1
                }
                None => {
                    over += 1;
                    continue;
                }
            };
            let w = s.weights.get(i).copied().unwrap_or(1.0);
            let gap = s.gaps_s.get(i).copied().flatten();
            if let Some(o) = s.offsets_s.get(i).copied().flatten() {
                t[id].start.0 += w * o;
                t[id].start.1 += w;
                // Weighted by its inclusion weight, at most [`MAX_ORDER_WEIGHT`]: unweighted, a
                // statement seen longer in a transaction that started it late (tpcb-like's
                // branch UPDATE queueing in a burst of lock waits) pulls its mean late, past
                // the next statement's; weighted without a bound (up to the period over
                // 0.5 ms, 340 at one read in 170 ms) a few young sightings decide the mean.
                if !s.tx.autocommit {
                    let w = w.min(MAX_ORDER_WEIGHT);
                    t[id].offset.0 += w * o;
                    t[id].offset.1 += w;
                }
            }
            v.push((id, text, w, gap));
        }
        if !v.is_empty() {
            txs.push((s.tx.autocommit, v));
        }
    }
    if over > 0 {
        notes.push(format!(
            "{over} statement executions of more than {MAX_TEMPLATES} distinct statements were left out of the shapes"
        ));
    }
    learn_templates(&mut t, &txs);
    let comp = components(t.len(), &txs);
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (id, c) in comp.iter().enumerate() {
        groups.entry(*c).or_default().push(id);
    }
    let key_of_id: BTreeMap<usize, String> = ids.iter().map(|(k, v)| (*v, k.clone())).collect();
    let scale = sample_scale(&t, &key_of_id, input.counts);
    let together = explicit_pairs(&txs);
    let calls = |id: usize| {
        let key = key_of_id.get(&id)?;
        input.counts?.get(key).map(|c| c.calls as f64)
    };
    let place = |id: usize| place_of(&t[id]);
    // A log's transactions are whole (every statement between BEGIN and COMMIT): nothing
    // to join, and a statement that began late in its transaction is no fragment.
    let joined = match input.period_s {
        Some(_) => {
            crate::shape_join::join(groups.into_values().collect(), &together, &calls, &place)
        }
        None => crate::shape_join::Joined {
            groups: groups.into_values().collect(),
            linked: together.clone(),
            ..Default::default()
        },
    };
    notes.extend(joined.notes(&|id| key_of_id.get(&id).cloned().unwrap_or_default()));
    let mut parts: Vec<Part> = Vec::new();
    for members in &joined.groups {
        match crate::shape_split::split_shared(members, &joined.linked, &calls) {
            Some(split) => parts.extend(split.groups.into_iter().map(|(mut g, share)| {
                g.extend(split.shared.iter().copied());
                (g, Some((split.shared.clone(), share)))
            })),
            None => parts.push((members.clone(), None)),
        }
    }
    let observed = crate::shape_split::observed(
        &parts
            .iter()
            .map(|(m, s)| (m.clone(), s.as_ref().map_or(1.0, |s| s.1)))
            .collect::<Vec<_>>(),
        &txs.iter()
            .map(|(_, v)| v.iter().map(|x| x.0).collect())
            .collect::<Vec<_>>(),
    );
    let mut shapes = Vec::new();
    for ((members, share), observed) in parts.into_iter().zip(observed) {
        let order = order(&members, &txs, &t);
        let mut shape = assemble(
            &order,
            &txs,
            &mut t,
            &key_of_id,
            (input.counts, scale, input.period_s, share),
        );
        shape.observed = observed;
        shapes.push(shape);
    }
    shapes.sort_by(|a, b| b.count.total_cmp(&a.count));
    (shapes, notes)
}

/// Calls per unit of sampled weight, from the statements `pg_stat_statements` counted: a
/// statement it did not list (evicted, or not tracked) keeps the sample's estimate in the
/// same unit.
fn sample_scale(
    t: &[Template],
    key_of_id: &BTreeMap<usize, String>,
    counts: Option<&BTreeMap<String, Counts>>,
) -> f64 {
    let Some(counts) = counts else { return 1.0 };
    let (mut calls, mut weight) = (0.0, 0.0);
    for (id, key) in key_of_id {
        if let Some(c) = counts.get(key) {
            calls += c.calls as f64;
            weight += t[*id].weight;
        }
    }
    if weight > 0.0 && calls > 0.0 {
        calls / weight
    } else {
        1.0
    }
}

/// A statement that began this long after its transaction did was not its first: the
/// tracker's autocommit slack (an autocommit statement's `query_start` is its `xact_start`,
/// or its Bind's a moment before under the extended protocol).
const INSIDE_AFTER_S: f64 = 0.000_5;
/// A statement this share of whose sightings were judged inside an explicit transaction
/// (seen idle in it, after BEGIN, or late) is inside one: an autocommit statement is judged
/// so only when its backend stalled between Bind and Execute.
const INSIDE_SHARE: f64 = 0.1;

/// Where sampling saw a statement in its transactions ([`crate::shape_join`]'s evidence).
fn place_of(t: &Template) -> crate::shape_join::Place {
    let mean = |(s, n): (f64, f64)| (n > 0.0).then(|| s / n);
    let start = mean(t.start);
    let seen = t.in_explicit + t.in_autocommit;
    crate::shape_join::Place {
        offset_s: mean(t.offset).or(start),
        inside: (t.in_explicit > 0.0 && t.in_explicit >= INSIDE_SHARE * seen)
            || start.is_some_and(|o| o >= INSIDE_AFTER_S),
    }
}

fn learn_templates(t: &mut [Template], txs: &[SeenTx]) {
    learn_each(t, txs);
    // A statement run twice in its transactions is seen twice in one of them about as
    // often as one run is seen twice (the sampler looked at it at length); a repeat seen
    // far less often than that is an artifact of what the server reports (psycopg 3's
    // prepare round trip shows the text ended, then running again), not a second run.
    for tm in t.iter_mut() {
        let (rep, once) = tm.repeats;
        if tm.max_per_tx > 1 && rep < REPEAT_SHARE * (rep + once) {
            tm.max_per_tx = 1;
        }
    }
}

/// Of the transactions a statement was seen in at length, the share it must have been
/// seen run twice or more in for its repeats to count.
const REPEAT_SHARE: f64 = 0.1;

fn learn_each(t: &mut [Template], txs: &[SeenTx]) {
    for (autocommit, v) in txs {
        let n = v.len();
        let mut per: BTreeMap<usize, usize> = BTreeMap::new();
        for (pos, (id, text, w, _)) in v.iter().enumerate() {
            let tm = &mut t[*id];
            *per.entry(*id).or_default() += 1;
            tm.weight += w;
            if *autocommit {
                tm.in_autocommit += w;
            } else {
                tm.in_explicit += w;
            }
            if n > 1 {
                tm.pos.0 += pos as f64 / (n - 1) as f64;
                tm.pos.1 += 1.0;
            }
            let better = match &tm.text {
                None => true,
                Some(old) => old.truncated && !text.truncated,
            };
            if better {
                tm.text = Some(text.clone());
                tm.values = vec![Vec::new(); text.values.len()];
            }
            for (slot, val) in text.values.iter().enumerate() {
                if let Some(vs) = tm.values.get_mut(slot) {
                    if vs.len() < MAX_VALUES {
                        vs.push((val.clone(), *w));
                    }
                }
            }
        }
        for (id, k) in per {
            let tm = &mut t[id];
            tm.max_per_tx = tm.max_per_tx.max(k);
            if k >= 2 {
                tm.repeats.0 += 1.0;
            } else if v.iter().any(|x| x.0 == id && x.2 <= 1.0) {
                tm.repeats.1 += 1.0;
            }
            tm.tx_weight += v
                .iter()
                .filter(|x| x.0 == id)
                .map(|x| x.2)
                .fold(0.0, f64::max);
        }
    }
}

/// The pairs of statements (lower id first) seen in one explicit transaction.
fn explicit_pairs(txs: &[SeenTx]) -> std::collections::BTreeSet<(usize, usize)> {
    let mut out = std::collections::BTreeSet::new();
    for (_, v) in txs.iter().filter(|(autocommit, _)| !autocommit) {
        for x in v {
            for y in v {
                if x.0 < y.0 {
                    out.insert((x.0, y.0));
                }
            }
        }
    }
    out
}

/// Union of statements seen in one explicit transaction.
fn components(n: usize, txs: &[SeenTx]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for (autocommit, v) in txs {
        if *autocommit {
            continue;
        }
        let Some(first) = v.first().map(|x| x.0) else {
            continue;
        };
        for (id, ..) in v.iter().skip(1) {
            let (a, b) = (find(&mut parent, first), find(&mut parent, *id));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    (0..n).map(|x| find(&mut parent, x)).collect()
}

/// Members in the order they run: by how long after its transaction's start each began on
/// average (every statement starts after the ones before it, so the means are in order
/// whether or not two were ever seen in one transaction), then by the pairs each led when
/// seen together (a majority), then by mean position.
fn order(members: &[usize], txs: &[SeenTx], t: &[Template]) -> Vec<usize> {
    let mut before: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    if members.len() > 1 {
        let inside: std::collections::BTreeSet<usize> = members.iter().copied().collect();
        for (_, v) in txs {
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    let (a, b) = (v[i].0, v[j].0);
                    if a != b && inside.contains(&a) && inside.contains(&b) {
                        *before.entry((a, b)).or_default() += 1;
                    }
                }
            }
        }
    }
    let wins = |a: usize| {
        members
            .iter()
            .filter(|b| {
                let ab = before.get(&(a, **b)).copied().unwrap_or(0);
                let ba = before.get(&(**b, a)).copied().unwrap_or(0);
                ab > ba
            })
            .count()
    };
    let mean_pos = |id: usize| {
        let (s, n) = t[id].pos;
        if n > 0.0 {
            s / n
        } else {
            0.5
        }
    };
    let mean_offset = |id: usize| {
        let (s, n) = t[id].offset;
        (n > 0.0).then(|| s / n)
    };
    let mut v: Vec<usize> = members.to_vec();
    v.sort_by(|a, b| {
        let by_offset = match (mean_offset(*a), mean_offset(*b)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => std::cmp::Ordering::Equal,
        };
        by_offset
            .then(wins(*b).cmp(&wins(*a)))
            .then(mean_pos(*a).total_cmp(&mean_pos(*b)))
            .then(a.cmp(b))
    });
    // Where two neighbours were seen together in one order only (one transaction's
    // statements are seen in the order they ran: exact, however rarely), or often enough in
    // both with a majority, the order they were seen in wins over the mean offsets (noisy
    // when one is seen rarely: at a sparse period, two statements of a short transaction
    // are seen together rarely).
    let seen_first = |a: usize, b: usize| {
        let ab = before.get(&(a, b)).copied().unwrap_or(0);
        let ba = before.get(&(b, a)).copied().unwrap_or(0);
        ab > ba && (ba == 0 || ab + ba >= 3)
    };
    for _ in 0..v.len() * v.len() {
        let mut swapped = false;
        for i in 1..v.len() {
            if seen_first(v[i], v[i - 1]) {
                v.swap(i, i - 1);
                swapped = true;
            }
        }
        if !swapped {
            break;
        }
    }
    v
}

/// What [`assemble`] weighs with: the counts, the sample's scale, the sampling period, and
/// the statement it shares with another shape (with its share of the calls).
type AssembleWith<'a> = (
    Option<&'a BTreeMap<String, Counts>>,
    f64,
    Option<f64>,
    Option<(Vec<usize>, f64)>,
);

/// A shape's statements (ids), and the statements it shares with others with its share of
/// their calls.
type Part = (Vec<usize>, Option<(Vec<usize>, f64)>);

fn assemble(
    order: &[usize],
    txs: &[SeenTx],
    t: &mut [Template],
    key_of_id: &BTreeMap<usize, String>,
    (counts, scale, period, shared): AssembleWith<'_>,
) -> ShapeModel {
    let index: BTreeMap<usize, usize> = order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let explicit: f64 = order.iter().map(|id| t[*id].in_explicit).sum();
    let auto: f64 = order.iter().map(|id| t[*id].in_autocommit).sum();
    let autocommit = order.len() == 1 && auto > explicit;
    let mut gaps: Vec<(f64, f64)> = vec![(0.0, 0.0); order.len()];
    let mut agreements: Agreements = BTreeMap::new();
    let mut observed = 0u64;
    let mut together = std::collections::BTreeSet::new();
    for (_, v) in txs {
        if !v.iter().any(|x| index.contains_key(&x.0)) {
            continue;
        }
        observed += 1;
        for x in v {
            for y in v {
                if let (Some(&a), Some(&b)) = (index.get(&x.0), index.get(&y.0)) {
                    if a < b {
                        together.insert((a, b));
                    }
                }
            }
        }
        for w in v.windows(2) {
            let (Some(&a), Some(&b)) = (index.get(&w[0].0), index.get(&w[1].0)) else {
                continue;
            };
            if let Some(g) = w[1].3 {
                if b == a + 1 {
                    let w = period.map_or(1.0, |p| (p / g.max(1e-9)).clamp(1.0, 20.0));
                    gaps[b].0 += w * g;
                    gaps[b].1 += w;
                }
            }
        }
        agree(v, &index, &mut agreements);
    }
    // The anchor: the statement seen in the most transactions (of those it could be seen in).
    let stmts: Vec<ShapeStatement> = order
        .iter()
        .map(|id| {
            let key = key_of_id.get(id).cloned().unwrap_or_default();
            let c = counts.and_then(|m| m.get(&key)).copied();
            let tm = &mut t[*id];
            // A statement two shapes share (`shape_split`): its values stay for the other,
            // its calls are split.
            let share = shared.as_ref().filter(|s| s.0.contains(id)).map(|s| s.1);
            ShapeStatement {
                key,
                text: tm
                    .text
                    .clone()
                    .unwrap_or_else(|| StatementText::parse("", &[])),
                per_tx: 1.0,
                values: match share {
                    Some(_) => tm.values.clone(),
                    None => std::mem::take(&mut tm.values),
                },
                mean_ms: c
                    .filter(|c| c.calls > 0)
                    .map(|c| c.total_ms / c.calls as f64),
                calls: c.map_or(tm.weight * scale, |c| c.calls as f64) * share.unwrap_or(1.0),
            }
        })
        .collect();
    // The anchor: of the statements never seen twice in one transaction, the one called
    // most (every transaction runs it; a conditional one is called less).
    let anchor = order
        .iter()
        .enumerate()
        .filter(|(_, id)| t[**id].max_per_tx <= 1)
        .max_by(|a, b| stmts[a.0].calls.total_cmp(&stmts[b.0].calls))
        .or_else(|| {
            order
                .iter()
                .enumerate()
                .max_by(|a, b| t[*a.1].tx_weight.total_cmp(&t[*b.1].tx_weight))
        })
        .map_or(0, |(i, _)| i);
    let per_anchor = t[order[anchor]].max_per_tx.max(1) as f64;
    let count = stmts[anchor].calls / per_anchor;
    let mut stmts = stmts;
    for s in &mut stmts {
        s.per_tx = if count > 0.0 { s.calls / count } else { 1.0 };
    }
    ShapeModel {
        edge_gap_s: None,
        commit_gap_s: None,
        together,
        statements: stmts,
        autocommit,
        count,
        observed,
        gaps_s: gaps
            .iter()
            .map(|(s, n)| (*n > 0.0).then(|| s / n))
            .collect(),
        agreements,
    }
}

/// Counts, per pair of slots of two statements seen in one transaction, how often their
/// values were equal.
fn agree(
    v: &[(usize, StatementText, f64, Option<f64>)],
    index: &BTreeMap<usize, usize>,
    out: &mut Agreements,
) {
    for i in 0..v.len() {
        for j in i + 1..v.len() {
            let (Some(&a), Some(&b)) = (index.get(&v[i].0), index.get(&v[j].0)) else {
                continue;
            };
            if a == b {
                continue;
            }
            let (first, second, fa, fb) = if a < b {
                (&v[i].1, &v[j].1, a, b)
            } else {
                (&v[j].1, &v[i].1, b, a)
            };
            for (sa, va) in first.values.iter().enumerate() {
                for (sb, vb) in second.values.iter().enumerate() {
                    if matches!(va, Value::Unknown) || matches!(vb, Value::Unknown) {
                        continue;
                    }
                    let e = out.entry(((fa, sa), (fb, sb))).or_default();
                    e.seen += 1;
                    if same(va, vb) {
                        e.equal += 1;
                    }
                }
            }
        }
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observed::{ObservedStatement, ObservedTransaction};

    fn tx(stmts: &[&str], autocommit: bool) -> SampledTransaction {
        SampledTransaction {
            tx: ObservedTransaction {
                session: "1".into(),
                statements: stmts
                    .iter()
                    .map(|s| ObservedStatement {
                        sql: s.to_string(),
                        params: Vec::new(),
                        started_at_s: 0.0,
                        duration_s: None,
                    })
                    .collect(),
                autocommit,
                complete: false,
                rolled_back: false,
            },
            weights: vec![1.0; stmts.len()],
            gaps_s: vec![Some(0.002); stmts.len()],
            offsets_s: vec![None; stmts.len()],
        }
    }

    #[test]
    fn partial_views_assemble_one_ordered_shape_and_autocommit_reads_stay_apart() {
        let mut all = Vec::new();
        for k in 0..30 {
            all.push(tx(
                &[
                    &format!("select v from acct where id = {k} for update"),
                    &format!("update acct set v = v - 1 where id = {k}"),
                ],
                false,
            ));
            all.push(tx(
                &[
                    &format!("update acct set v = v - 1 where id = {k}"),
                    "insert into log values (1)",
                ],
                false,
            ));
            all.push(tx(&[&format!("select * from acct where id = {k}")], true));
        }
        let (shapes, notes) = build(&Input {
            transactions: &all,
            counts: None,
            period_s: None,
        });
        assert!(notes.is_empty());
        assert_eq!(shapes.len(), 2);
        let rcw = shapes
            .iter()
            .find(|s| !s.autocommit)
            .expect("explicit shape");
        let keys: Vec<&str> = rcw.statements.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "select v from acct where id = ? for update",
                "update acct set v = v - ? where id = ?",
                "insert into log values (?)"
            ]
        );
        // The FOR UPDATE's key and the UPDATE's are one value in every transaction.
        let a = rcw.agreements[&((0, 0), (1, 1))];
        assert_eq!((a.seen, a.equal), (30, 30));
        assert!(rcw.gaps_s[1].is_some_and(|g| (g - 0.002).abs() < 1e-9));
        assert!(shapes
            .iter()
            .any(|s| s.autocommit && s.statements.len() == 1));
    }

    #[test]
    fn pg_stat_statements_counts_give_runs_per_transaction() {
        let all = vec![
            tx(
                &[
                    "select 1 from a where id = 1",
                    "update b set x = 1 where id = 2",
                ],
                false,
            ),
            tx(
                &["update b set x = 1 where id = 3", "update c set y = 2"],
                false,
            ),
        ];
        let mut counts = BTreeMap::new();
        counts.insert(
            "select ? from a where id = ?".to_string(),
            Counts {
                calls: 100,
                total_ms: 10.0,
                rows: 100,
            },
        );
        counts.insert(
            "update b set x = ? where id = ?".to_string(),
            Counts {
                calls: 100,
                total_ms: 50.0,
                rows: 100,
            },
        );
        counts.insert(
            "update c set y = ?".to_string(),
            Counts {
                calls: 50,
                total_ms: 5.0,
                rows: 50,
            },
        );
        let (shapes, _) = build(&Input {
            transactions: &all,
            counts: Some(&counts),
            period_s: None,
        });
        assert_eq!(shapes.len(), 1);
        let s = &shapes[0];
        assert!((s.count - 100.0).abs() < 1e-9);
        let per: Vec<f64> = s.statements.iter().map(|x| x.per_tx).collect();
        assert_eq!(per, [1.0, 1.0, 0.5]);
        assert_eq!(s.statements[1].mean_ms, Some(0.5));
    }
}

#[cfg(test)]
#[path = "shapes_fragment_tests.rs"]
mod fragment_tests;

#[cfg(test)]
#[path = "shapes_order_tests.rs"]
mod order_tests;
