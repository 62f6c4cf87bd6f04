//! A statement two transaction shapes share, told apart from a statement of one shape.
//! Shapes are the connected components of "seen in one transaction"; a statement every
//! transaction of two shapes runs (kombu's `SELECT … FROM kombu_queue WHERE name = ?`,
//! which both its publish and its get begin with) joins them into one. It is recognised
//! by its calls (`pg_stat_statements`, exact): without it the component falls apart into
//! groups never seen together, its calls are the sum of the groups' (each group's most
//! called statement; within 15%), and each group runs less than it does (at most 90%).
//! In one true shape the statements run about equally often, so the rule does not cut
//! one apart because sampling happened to see its statements in separate views, nor
//! alternatives (groups of one statement each, drawn as `\if … \elif`). The
//! shared statement then belongs to each group, its calls split by the groups' calls;
//! statements called as often as it (within 10%: two shapes beginning with the same two
//! statements) are shared with it. Groups are cut by the pairs seen together and by the
//! fragments `shape_join` linked. Pure.

use std::collections::{BTreeMap, BTreeSet};

/// A component cut at a shared statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The shared statements: the one the rule recognised, and the statements called about
    /// as often (within 10%) when both shapes begin with several (a shared prefix).
    pub shared: Vec<usize>,
    /// Each group (without `shared`) with its share of `shared`'s calls.
    pub groups: Vec<(Vec<usize>, f64)>,
}

/// The split of `members` (statement ids, seen-together pairs lower id first in
/// `together`) at the first statement the rule recognises, if any; `calls` per id.
pub fn split_shared(
    members: &[usize],
    together: &BTreeSet<(usize, usize)>,
    calls: &dyn Fn(usize) -> Option<f64>,
) -> Option<Split> {
    if members.len() < 3 {
        return None;
    }
    members
        .iter()
        .find_map(|&s| split_at(s, members, together, calls))
}

/// The split of `members` at `s` (with the statements called about as often), if the rule
/// holds there.
pub fn split_at(
    s: usize,
    members: &[usize],
    together: &BTreeSet<(usize, usize)>,
    calls: &dyn Fn(usize) -> Option<f64>,
) -> Option<Split> {
    let cs = calls(s).filter(|c| *c > 0.0)?;
    // Statements called as often as `s` are shared with it: a group's top must stay under
    // 90% of `cs`, so they could be in no group anyway.
    let (shared, rest) = shared_with(s, cs, members, calls);
    let groups = groups_without(&rest, together);
    // Single statements never seen together are alternatives of one shape (Django's
    // `F("views") + 1` or `- 1`, written `\if … \elif`): a shape of its own has more.
    if groups.len() < 2 || groups.iter().all(|g| g.len() < 2) {
        return None;
    }
    // Each group's most called statement of those counted (a statement whose sampled
    // text differs from pg_stat_statements' normalization, `visible=false`, is not).
    let tops: Vec<f64> = groups
        .iter()
        .map(|g| g.iter().filter_map(|m| calls(*m)).reduce(f64::max))
        .collect::<Option<_>>()?;
    let sum: f64 = tops.iter().sum();
    if sum <= 0.0 || tops.iter().any(|c| *c > 0.9 * cs) || (sum - cs).abs() > 0.15 * cs {
        return None;
    }
    Some(Split {
        shared,
        groups: groups
            .into_iter()
            .zip(tops)
            .map(|(g, c)| (g, c / sum))
            .collect(),
    })
}

/// Per part (its statements, and its share of the calls of the statements it shares), the
/// sampled transactions (the statements seen in each) it explains: a transaction whose
/// statements are all in one part is that part's; one whose statements are all shared by
/// several (a lookup two shapes begin with, seen alone) is split between them by their
/// shares of the calls, not counted once in each.
pub fn observed(parts: &[(Vec<usize>, f64)], seen: &[Vec<usize>]) -> Vec<u64> {
    let mut out = vec![0.0f64; parts.len()];
    for v in seen {
        let fits: Vec<usize> = (0..parts.len())
            .filter(|p| v.iter().all(|x| parts[*p].0.contains(x)))
            .collect();
        let total: f64 = fits.iter().map(|p| parts[*p].1).sum();
        for p in &fits {
            if total > 0.0 {
                out[*p] += parts[*p].1 / total;
            }
        }
    }
    out.iter().map(|o| o.round() as u64).collect()
}

/// `members` parted into the statements shared with `s` (called `cs` times) and the rest.
pub fn shared_with(
    s: usize,
    cs: f64,
    members: &[usize],
    calls: &dyn Fn(usize) -> Option<f64>,
) -> (Vec<usize>, Vec<usize>) {
    members
        .iter()
        .partition(|m| **m == s || calls(**m).is_some_and(|c| (c - cs).abs() <= 0.1 * cs))
}

/// The connected components of `rest` over `together`.
pub fn groups_without(rest: &[usize], together: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut group: BTreeMap<usize, usize> = rest.iter().map(|m| (*m, *m)).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &(a, b) in together {
            let (Some(&ga), Some(&gb)) = (group.get(&a), group.get(&b)) else {
                continue;
            };
            if ga != gb {
                let (lo, hi) = (ga.min(gb), ga.max(gb));
                for g in group.values_mut() {
                    if *g == hi {
                        *g = lo;
                    }
                }
                changed = true;
            }
        }
    }
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (m, g) in group {
        out.entry(g).or_default().push(m);
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(usize, usize)]) -> BTreeSet<(usize, usize)> {
        p.iter().copied().collect()
    }

    #[test]
    fn a_lookup_both_shapes_begin_with_is_shared_by_them() {
        // 0: the queue lookup (publish + get), 1: publish's insert, 2: get's claim, 3: its update.
        let calls = |i: usize| Some([1000.0, 600.0, 400.0, 390.0][i]);
        let s = split_shared(
            &[0, 1, 2, 3],
            &pairs(&[(0, 1), (0, 2), (0, 3), (2, 3)]),
            &calls,
        )
        .expect("split");
        assert_eq!(s.shared, [0]);
        assert_eq!(s.groups.len(), 2);
        assert_eq!(s.groups[0].0, [1]);
        assert!((s.groups[0].1 - 0.6).abs() < 1e-9);
        assert_eq!(s.groups[1].0, [2, 3]);
        // the update's text not counted (its `visible=false` normalized apart): still split
        let calls = |i: usize| [Some(1000.0), Some(600.0), Some(400.0), None][i];
        let s = split_shared(
            &[0, 1, 2, 3],
            &pairs(&[(0, 1), (0, 2), (0, 3), (2, 3)]),
            &calls,
        );
        assert_eq!(s.map(|s| s.shared), Some(vec![0]));
    }

    #[test]
    fn one_shape_seen_in_separate_views_stays_whole() {
        // tpcb-like: every statement runs once per transaction; 1 and 2 never seen together.
        let calls = |_: usize| Some(1000.0);
        let p = pairs(&[(0, 1), (0, 2)]);
        assert_eq!(split_shared(&[0, 1, 2], &p, &calls), None);
        // without pg_stat_statements: no evidence, no split
        assert_eq!(split_shared(&[0, 1, 2], &p, &|_| None), None);
        // a conditional statement (calls not adding up) stays too
        let calls = |i: usize| Some([1000.0, 300.0, 200.0][i]);
        assert_eq!(split_shared(&[0, 1, 2], &p, &calls), None);
        // alternatives: a read, then `+ 1` or `- 1`, half each
        let calls = |i: usize| Some([1000.0, 500.0, 500.0][i]);
        assert_eq!(split_shared(&[0, 1, 2], &p, &calls), None);
    }

    #[test]
    fn two_shapes_beginning_with_the_same_two_statements_share_both() {
        // 0, 1: lookup and check (both shapes); 2: insert; 3, 4: claim and update.
        let calls = |i: usize| Some([1000.0, 1000.0, 600.0, 400.0, 400.0][i]);
        let p = pairs(&[
            (0, 1),
            (0, 2),
            (1, 2),
            (0, 3),
            (1, 3),
            (0, 4),
            (1, 4),
            (3, 4),
        ]);
        let s = split_shared(&[0, 1, 2, 3, 4], &p, &calls).expect("split");
        assert_eq!(s.shared, [0, 1]);
        assert_eq!(s.groups[0].0, [2]);
        assert!((s.groups[0].1 - 0.6).abs() < 1e-9);
        assert_eq!(s.groups[1].0, [3, 4]);
    }
}
