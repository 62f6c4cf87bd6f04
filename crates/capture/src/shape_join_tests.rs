use super::*;

fn pairs(p: &[(usize, usize)]) -> BTreeSet<(usize, usize)> {
    p.iter().copied().collect()
}

/// Statement `i` began `offsets[i]` s into its transactions, and not first.
fn inside(offsets: &'static [f64]) -> impl Fn(usize) -> Place {
    move |i| Place {
        offset_s: Some(offsets[i]),
        inside: offsets[i] > 0.0,
    }
}

#[test]
fn a_lookup_seen_alone_takes_the_two_fragments_its_calls_add_up_to() {
    // 0: the lookup, never seen beside 1 (the publish's INSERT) nor 2, 3 (the get's claim
    // and update, seen together).
    let calls = |i: usize| Some([1000.0, 750.0, 250.0, 250.0][i]);
    let j = join(
        vec![vec![0], vec![1], vec![2, 3]],
        &pairs(&[(2, 3)]),
        &calls,
        &inside(&[0.000_1, 0.000_3, 0.000_3, 0.001]),
    );
    assert_eq!(j.groups, [vec![0, 1, 2, 3]]);
    assert!(j.unexplained.is_empty() && j.ambiguous.is_empty());
    // The split of the union gives the two shapes.
    let split = shape_split::split_shared(&j.groups[0], &pairs(&[(2, 3)]), &calls).expect("split");
    assert_eq!(split.shared, [0]);
    assert_eq!(split.groups.len(), 2);
}

#[test]
fn a_fragment_that_began_before_the_statement_or_its_transaction_is_not_joined() {
    let calls = |i: usize| Some([1000.0, 250.0, 250.0, 750.0][i]);
    let groups = vec![vec![0, 1, 2], vec![3]];
    let p = pairs(&[(0, 1), (0, 2), (1, 2)]);
    // 3 began before the lookup did.
    let j = join(
        groups.clone(),
        &p,
        &calls,
        &inside(&[0.000_3, 0.000_4, 0.001, 0.000_1]),
    );
    assert_eq!(j.groups, groups);
    // 3 began its own transaction: an autocommit statement, whatever its calls.
    let j = join(
        groups.clone(),
        &p,
        &calls,
        &inside(&[0.000_1, 0.000_4, 0.001, 0.0]),
    );
    assert_eq!(j.groups, groups);
    assert!(j.unexplained.is_empty());
}

#[test]
fn a_small_fragment_the_tolerance_admits_is_not_joined_with_the_one_that_fits() {
    // 4 (20 calls) fits beside 3 only by the 15% tolerance: 3 alone is joined, 4 is named.
    let calls = |i: usize| Some([1000.0, 250.0, 250.0, 750.0, 20.0][i]);
    let j = join(
        vec![vec![0, 1, 2], vec![3], vec![4]],
        &pairs(&[(0, 1), (0, 2), (1, 2)]),
        &calls,
        &inside(&[0.000_1, 0.000_4, 0.001, 0.000_3, 0.000_3]),
    );
    assert_eq!(j.groups, [vec![4], vec![0, 1, 2, 3]]);
    assert_eq!(j.unexplained, [4]);
}

#[test]
fn a_fragment_called_as_often_as_a_statement_of_the_host_is_linked_to_it() {
    // 0: update, 1: lookup, seen together once; 2: the claim (as often as the update), 3:
    // the INSERT, each seen alone.
    let calls = |i: usize| Some([1980.0, 8154.0, 1980.0, 6177.0][i]);
    let j = join(
        vec![vec![0, 1], vec![2], vec![3]],
        &pairs(&[(0, 1)]),
        &calls,
        &inside(&[0.009, 0.000_7, 0.001_2, 0.001_2]),
    );
    assert_eq!(j.groups, [vec![0, 1, 2, 3]]);
    assert!(j.linked.contains(&(0, 2)));
    let split = shape_split::split_shared(&j.groups[0], &j.linked, &calls).expect("split");
    assert_eq!(split.shared, [1]);
    assert_eq!(
        split.groups.iter().map(|g| g.0.clone()).collect::<Vec<_>>(),
        [vec![0, 2], vec![3]]
    );
}

#[test]
fn five_hundred_fragments_are_judged_quickly() {
    // The most statements a capture tells apart, each seen alone inside its transactions,
    // called 1..500 times: every one is tried against every other.
    let n = 500;
    let calls = |i: usize| Some((i + 1) as f64 * 7.0);
    let place = |i: usize| Place {
        offset_s: Some(0.000_1 * (i % 13) as f64 + 0.000_1),
        inside: true,
    };
    let started = std::time::Instant::now();
    let j = join(
        (0..n).map(|i| vec![i]).collect(),
        &BTreeSet::new(),
        &calls,
        &place,
    );
    assert!(j.groups.len() <= n);
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "{:?}",
        started.elapsed()
    );
}
