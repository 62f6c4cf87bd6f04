//! Fragments of a shape joined to it. Sampling every 10 ms sees one statement of a 0.1 ms
//! transaction, rarely two: kombu's publish (queue lookup, then INSERT) is seen at its INSERT
//! alone, never beside the lookup, and the INSERT would make a shape of its own while the
//! lookup's other shape (the get) took all the lookup's calls. Which statements were seen
//! together is luck; the calls `pg_stat_statements` counted are not: the lookup is called as
//! often as the INSERT and the get's claim together, and the statements of one shape are
//! called equally often. A fragment (statements seen together, or one seen alone, inside
//! transactions it did not start: seen idle in it, after BEGIN, or starting well after the
//! transaction did) is joined to the component of a statement `s` that began before it when
//! the union is cut at `s` by [`crate::shape_split`]'s rule: the fragments, each with the
//! fragments called as often that it is linked to (blocks), and `s`'s other statements are
//! groups whose calls add up to `s`'s. The fragments (up to four at once) that fit best are
//! joined; two different ways that fit about as well are ambiguous and stay apart, named; a
//! one-statement fragment that fits nowhere stays a shape of its own, named. Pure.

use std::collections::BTreeSet;

use crate::shape_split;

/// What sampling saw of a statement's place in its transactions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Place {
    /// Mean time from its transaction's start to its own start (s), when seen.
    pub offset_s: Option<f64>,
    /// Seen inside a transaction it did not start.
    pub inside: bool,
}

/// Components after joining, and the fragments left apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Joined {
    pub groups: Vec<Vec<usize>>,
    /// The pairs seen in one transaction, and the pairs of fragments linked as statements of
    /// one shape by their equal calls: what [`shape_split::split_shared`] cuts by.
    pub linked: BTreeSet<(usize, usize)>,
    /// The ways to try ran out before every fragment was tried (thousands of them).
    pub exhausted: bool,
    /// One-statement fragments no component's calls explain.
    pub unexplained: Vec<usize>,
    /// Fragments that fit more than one way, as (the statement they would join at, the
    /// fragments' members).
    pub ambiguous: Vec<(usize, Vec<usize>)>,
}

impl Joined {
    /// The notes on the fragments left apart, statements named by `key`.
    pub fn notes(&self, key: &dyn Fn(usize) -> String) -> Vec<String> {
        let mut notes: Vec<String> = self
            .unexplained
            .iter()
            .map(|id| {
                format!(
                    "`{}` was seen only alone, inside transactions it did not begin, and no shape's calls say which it belongs to: it is a shape of its own",
                    key(*id)
                )
            })
            .collect();
        if self.exhausted {
            notes.push(
                "too many statements were seen apart from their transactions' others to try every way of joining them: some may be shapes of their own that are parts of others"
                    .to_string(),
            );
        }
        for (at, members) in &self.ambiguous {
            let names: Vec<String> = members.iter().map(|m| format!("`{}`", key(*m))).collect();
            notes.push(format!(
                "{} were seen only apart from `{}`, and more than one way of joining them to it fits its calls: left as shapes of their own",
                names.join(", "),
                key(*at)
            ));
        }
        notes
    }
}

/// Fragments joined at once, at most.
const MAX_JOINED: usize = 4;
/// Fragments tried against one statement, the most called first.
const MAX_CANDIDATES: usize = 8;
/// Groups (the host's own and the fragments) parted into blocks at once, at most.
const MAX_UNITS: usize = 6;
/// Two fits closer than this share of the statement's calls are a tie.
const TIE: f64 = 0.03;
/// Ways tried in one capture, at most (each a few arithmetic operations).
const BUDGET: usize = 2_000_000;
/// Statements of one shape are called equally often, but for the transactions in flight
/// when `pg_stat_statements` was read: within this share.
const SAME_CALLS: f64 = 0.05;

/// Joins fragments among `groups` (components of statement ids) to the component whose
/// statement they complete; `together`: pairs seen in one transaction (lower id first).
pub fn join(
    groups: Vec<Vec<usize>>,
    together: &BTreeSet<(usize, usize)>,
    calls: &dyn Fn(usize) -> Option<f64>,
    place: &dyn Fn(usize) -> Place,
) -> Joined {
    let mut groups = groups;
    let mut linked = together.clone();
    let mut ambiguous = Vec::new();
    let mut joined_into: BTreeSet<usize> = BTreeSet::new();
    let parts: Vec<Vec<Vec<Vec<usize>>>> = (0..=MAX_UNITS)
        .map(|n| partitions(&(0..n).collect::<Vec<_>>()))
        .collect();
    let budget = std::cell::Cell::new(BUDGET);
    // Each join merges two groups or more: at most as many rounds as groups.
    for _ in 0..groups.len() {
        let mut by_calls: Vec<(usize, f64)> = groups
            .iter()
            .flatten()
            .filter_map(|s| calls(*s).filter(|c| *c > 0.0).map(|c| (*s, c)))
            .collect();
        by_calls.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let ctx = Ctx {
            partitions: &parts,
            budget: &budget,
            groups: &groups,
            linked: &linked,
            calls,
            place,
        };
        let found = by_calls.iter().find_map(|&(s, cs)| {
            // Finding the candidates reads every group.
            budget.set(budget.get().saturating_sub(groups.len()));
            let host = groups.iter().position(|g| g.contains(&s))?;
            match best_fit(s, cs, host, &ctx) {
                Fit::One(fit) => Some((host, fit)),
                Fit::Tie(members) => {
                    if !ambiguous.iter().any(|(x, _)| *x == s) {
                        ambiguous.push((s, members));
                    }
                    None
                }
                Fit::None => None,
            }
        });
        let Some((host, fit)) = found else { break };
        let mut merged = groups[host].clone();
        for &g in &fit.joined {
            merged.extend(groups[g].iter().copied());
        }
        merged.sort_unstable();
        linked.extend(block_pairs(&fit.blocks));
        joined_into.extend(merged.iter().copied());
        groups = groups
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i != host && !fit.joined.contains(i))
            .map(|(_, g)| g)
            .collect();
        groups.push(merged);
    }
    ambiguous.retain(|(_, m)| !m.iter().any(|x| joined_into.contains(x)));
    let unexplained = groups
        .iter()
        .filter(|g| g.len() == 1 && is_fragment(g, place))
        .map(|g| g[0])
        .filter(|s| !ambiguous.iter().any(|(_, m)| m.contains(s)))
        .collect();
    Joined {
        exhausted: budget.get() == 0,
        groups,
        linked,
        unexplained,
        ambiguous,
    }
}

/// What a fit is tried against.
struct Ctx<'a> {
    /// Every partition of `0..n` into blocks, by `n` (up to [`MAX_UNITS`]).
    partitions: &'a [Vec<Vec<Vec<usize>>>],
    /// Ways left to try: a capture of many fragments is judged in bounded time.
    budget: &'a std::cell::Cell<usize>,
    groups: &'a [Vec<usize>],
    linked: &'a BTreeSet<(usize, usize)>,
    calls: &'a dyn Fn(usize) -> Option<f64>,
    place: &'a dyn Fn(usize) -> Place,
}

/// Fragments (group indices) joined, and the blocks of statements (fragments, and the host's
/// own groups) linked as one shape's by their equal calls.
#[derive(Debug, Clone, PartialEq)]
struct Way {
    joined: Vec<usize>,
    blocks: Vec<Vec<usize>>,
}

enum Fit {
    None,
    One(Way),
    /// Several fit about as well: their members.
    Tie(Vec<usize>),
}

/// A group seen inside transactions it did not start: several statements seen together in
/// one, or one that began after its transaction did.
fn is_fragment(g: &[usize], place: &dyn Fn(usize) -> Place) -> bool {
    g.len() > 1 || g.iter().all(|m| place(*m).inside)
}

/// The pairs linking the statements of each block.
fn block_pairs(blocks: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for b in blocks {
        for x in b {
            for y in b {
                if x < y {
                    out.push((*x, *y));
                }
            }
        }
    }
    out
}

/// The way of joining fragments to the host group that the shared statement rule cuts at
/// `s` closest to `s`'s calls.
fn best_fit(s: usize, cs: f64, host: usize, c: &Ctx<'_>) -> Fit {
    let place_s = (c.place)(s).offset_s;
    let after_s = |m: usize| match (place_s, (c.place)(m).offset_s) {
        (Some(a), Some(b)) => b > a,
        _ => true,
    };
    let top = |g: &[usize]| g.iter().filter_map(|m| (c.calls)(*m)).reduce(f64::max);
    let mut cands: Vec<(usize, f64)> = c
        .groups
        .iter()
        .enumerate()
        .filter(|(i, g)| *i != host && is_fragment(g, c.place) && g.iter().all(|m| after_s(*m)))
        .filter_map(|(i, g)| top(g).filter(|x| *x < 0.9 * cs).map(|x| (i, x)))
        .collect();
    cands.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    cands.truncate(MAX_CANDIDATES);
    // The host's own groups without `s` (and the statements called as often): each joins
    // a block too, and without a join they are how far `s`'s calls are from what its own
    // component runs; a join must come closer.
    let (_, rest) = shape_split::shared_with(s, cs, &c.groups[host], c.calls);
    let own: Vec<(Vec<usize>, f64)> = shape_split::groups_without(&rest, c.linked)
        .into_iter()
        .filter_map(|g| top(&g).map(|t| (g, t)))
        .collect();
    if own.len() >= MAX_UNITS {
        return Fit::None;
    }
    let base = (own.iter().map(|g| g.1).sum::<f64>() - cs).abs() / cs;
    if base <= TIE {
        return Fit::None;
    }
    let mut fits: Vec<(f64, Way)> = Vec::new();
    let own_sum: f64 = own.iter().map(|g| g.1).sum();
    for t in subsets(cands.len(), MAX_JOINED.min(MAX_UNITS - own.len())) {
        // Blocks only lower the sum: under `s`'s calls with every group apart, no way fits.
        if own_sum + t.iter().map(|k| cands[*k].1).sum::<f64>() < 0.85 * cs {
            continue;
        }
        let tops: Vec<f64> = own
            .iter()
            .map(|g| g.1)
            .chain(t.iter().map(|k| cands[*k].1))
            .collect();
        for blocks in &c.partitions[tops.len()] {
            if c.budget.get() == 0 {
                return Fit::None;
            }
            c.budget.set(c.budget.get() - 1);
            // A block is one shape's statements: called equally often.
            let mut sum = 0.0;
            let mut same = true;
            for b in blocks {
                let hi = b.iter().map(|u| tops[*u]).fold(0.0, f64::max);
                let lo = b.iter().map(|u| tops[*u]).fold(f64::INFINITY, f64::min);
                same &= hi - lo <= SAME_CALLS * hi;
                sum += hi;
            }
            let err = (sum - cs).abs() / cs;
            if !same || err > 0.15 || err >= base - TIE {
                continue;
            }
            let unit = |u: usize| match u.checked_sub(own.len()) {
                None => own[u].0.clone(),
                Some(k) => c.groups[cands[t[k]].0].clone(),
            };
            let way = Way {
                joined: t.iter().map(|k| cands[*k].0).collect(),
                blocks: blocks
                    .iter()
                    .filter(|b| b.len() > 1)
                    .map(|b| b.iter().flat_map(|u| unit(*u)).collect())
                    .collect(),
            };
            // Cutting costs about the pairs it reads.
            let cost = c.linked.len() + 10 * c.groups[host].len() + 100;
            c.budget.set(c.budget.get().saturating_sub(cost));
            if cut_at(s, host, &way, c) {
                fits.push((err, way));
            }
        }
    }
    choose(fits, c.groups)
}

/// The union of the host and the way's fragments is cut at `s` by the shared statement
/// rule, the fragments among the groups, not the shared statements.
fn cut_at(s: usize, host: usize, way: &Way, c: &Ctx<'_>) -> bool {
    let mut union = c.groups[host].clone();
    for &i in &way.joined {
        union.extend(c.groups[i].iter().copied());
    }
    let mut linked = c.linked.clone();
    linked.extend(block_pairs(&way.blocks));
    let Some(split) = shape_split::split_at(s, &union, &linked, c.calls) else {
        return false;
    };
    !way.joined
        .iter()
        .any(|i| c.groups[*i].iter().any(|m| split.shared.contains(m)))
}

/// The fits about as good as the best: when each holds the smallest of them with its blocks
/// (a small fragment added fits only by the tolerance), the smallest is joined; ways that
/// differ otherwise are a tie.
fn choose(fits: Vec<(f64, Way)>, groups: &[Vec<usize>]) -> Fit {
    let Some(best) = fits.iter().map(|f| f.0).reduce(f64::min) else {
        return Fit::None;
    };
    let mut near: Vec<Way> = fits
        .into_iter()
        .filter(|(e, _)| *e - best <= TIE)
        .map(|(_, w)| w)
        .collect();
    near.sort_by_key(|w| w.joined.len());
    let Some(smallest) = near.first().cloned() else {
        return Fit::None;
    };
    if near.iter().all(|w| {
        smallest.joined.iter().all(|g| w.joined.contains(g))
            && smallest.blocks.iter().all(|b| w.blocks.contains(b))
    }) {
        return Fit::One(smallest);
    }
    let members: BTreeSet<usize> = near
        .iter()
        .flat_map(|w| w.joined.iter())
        .flat_map(|i| groups[*i].iter().copied())
        .collect();
    Fit::Tie(members.into_iter().collect())
}

/// Every non-empty subset of `0..n` of at most `k` elements, in increasing order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut frontier: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..k {
        let mut next = Vec::new();
        for t in &frontier {
            let from = t.last().map_or(0, |x| x + 1);
            for i in from..n {
                let mut u = t.clone();
                u.push(i);
                next.push(u);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// Every partition of `items` into blocks (each block in the items' order).
fn partitions(items: &[usize]) -> Vec<Vec<Vec<usize>>> {
    let Some((first, rest)) = items.split_first() else {
        return vec![Vec::new()];
    };
    let mut out = Vec::new();
    for p in partitions(rest) {
        for i in 0..p.len() {
            let mut q = p.clone();
            q[i].insert(0, *first);
            out.push(q);
        }
        let mut q = p;
        q.insert(0, vec![*first]);
        out.push(q);
    }
    out
}

#[cfg(test)]
#[path = "shape_join_tests.rs"]
mod tests;
