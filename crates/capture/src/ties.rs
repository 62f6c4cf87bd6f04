//! Ties within sampling error: whether the original's first wait event (or hottest key) can
//! be told from the next at the samples taken. Shares are estimated from counts, and counts
//! of one sampling round are not independent (sessions queued behind one row at one instant,
//! a lock storm lasting a second), so each test stands on the unit that is: wait events on
//! per-interval batches (batch means: the spread of the batches' differences, whatever the
//! dependence inside a batch), hot rows on the `pg_locks` reads (each read one observation, an
//! upper bound on the variance whatever the waiters' dependence), drawn keys on the values
//! seen. A test gives the difference of the two shares with its 95% interval (Student's t);
//! the two are tied when the interval holds 0. Pure.

use hotbench_results::capture_record::{EventCounts, Sampling, TieTest};
use hotbench_results::probe_record::ProbeRecord;

/// Wait events whose per-interval counts the capture keeps (the first of `waits`).
pub const KEPT_EVENTS: usize = 5;
/// Batches the intervals are grouped into (consecutive intervals, so a burst stays in one).
pub const TARGET_BATCHES: usize = 20;
/// Fewer batches than this: no variance to speak of, no test.
pub const MIN_BATCHES: usize = 5;
/// Tests made against the first: the next ones while tied, then the first told apart (the
/// capture keeps ten hot rows and five wait events' counts).
pub const MAX_TESTS: usize = 10;

/// The upper 97.5% point of Student's t with `df` degrees of freedom (two-sided 95%):
/// exact for 1 and 2, the Cornish–Fisher expansion beyond (within 0.03 from 3 on).
pub fn t975(df: f64) -> f64 {
    if df.is_nan() || df < 1.0 {
        return f64::INFINITY;
    }
    if df < 2.0 {
        return 12.706;
    }
    if df < 3.0 {
        return 4.303;
    }
    let z: f64 = 1.959_964;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * df)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * df.powi(3))
}

/// The counts a capture keeps beside its shares, from the probe's record of its sample.
pub fn sampling_of(p: &ProbeRecord) -> Sampling {
    let busy_by_interval = p
        .timeline
        .iter()
        .map(|i| i.waits.values().fold(0u64, |a, n| a.saturating_add(*n)))
        .collect();
    let waits_by_interval = p
        .waits
        .iter()
        .take(KEPT_EVENTS)
        .map(|w| EventCounts {
            event: w.event.clone(),
            counts: p
                .timeline
                .iter()
                .map(|i| i.waits.get(&w.event).copied().unwrap_or(0))
                .collect(),
        })
        .collect();
    // A row's count over its share is the lock-waiting samples at the reads.
    let lock_samples = p
        .hot_rows
        .first()
        .filter(|r| r.pct > 0.0)
        .map_or(0, |r| (r.count as f64 * 100.0 / r.pct).round() as u64);
    Sampling {
        wait_rounds: p.samples,
        busy_samples: p.busy_samples,
        interval_s: p.stats_interval_ms / 1000.0,
        busy_by_interval,
        waits_by_interval,
        lock_reads: p.lock_reads,
        lock_reads_effective: p.lock_reads_effective,
        lock_samples,
    }
}

/// The first wait event against `other` by batch means over the kept intervals; `None` when
/// either event's counts were not kept or there are fewer than [`MIN_BATCHES`] batches.
pub fn wait_tie(s: &Sampling, first: &str, other: &str) -> Option<TieTest> {
    let counts = |e: &str| {
        s.waits_by_interval
            .iter()
            .find(|c| c.event == e)
            .map(|c| &c.counts)
    };
    let (a, b, n) = (counts(first)?, counts(other)?, &s.busy_by_interval);
    let k = n.len().min(a.len()).min(b.len());
    let per = (k / TARGET_BATCHES).max(1);
    let batches: Vec<(f64, f64, f64)> = (0..k)
        .step_by(per)
        .map(|start| {
            let end = (start + per).min(k);
            let sum = |v: &Vec<u64>| v[start..end].iter().map(|x| *x as f64).sum::<f64>();
            (sum(a), sum(b), sum(n))
        })
        .collect();
    let m = batches.len();
    let total: f64 = batches.iter().map(|x| x.2).sum();
    if m < MIN_BATCHES || total <= 0.0 {
        return None;
    }
    let (sa, sb) = batches
        .iter()
        .fold((0.0, 0.0), |acc, x| (acc.0 + x.0, acc.1 + x.1));
    let diff = (sa - sb) / total;
    let ss: f64 = batches
        .iter()
        .map(|(x, y, nn)| (x - y - diff * nn).powi(2))
        .sum();
    let se = (m as f64 / (m as f64 - 1.0) * ss).sqrt() / total;
    let half = t975(m as f64 - 1.0) * se;
    let secs = per as f64 * s.interval_s;
    Some(test(
        (first, sa / total),
        (other, sb / total),
        diff,
        half,
        format!(
            "{m} batches of {} s, {} backend samples",
            trim_num(secs),
            total as u64
        ),
    ))
}

/// Two shares of one sample of `n` independent observations (each observation falls on the
/// first, the other or neither): `Var(p1 - p2) = (p1 + p2 - (p1 - p2)²) / n`.
pub fn share_tie(first: (&str, f64), other: (&str, f64), n: f64, over: String) -> TieTest {
    let diff = first.1 - other.1;
    let var = ((first.1 + other.1 - diff * diff).max(0.0)) / n.max(f64::MIN_POSITIVE);
    let half = if n >= 2.0 {
        t975(n - 1.0) * var.sqrt()
    } else {
        f64::INFINITY
    };
    test(first, other, diff, half, over)
}

fn test(first: (&str, f64), other: (&str, f64), diff: f64, half: f64, over: String) -> TieTest {
    let (lo, hi) = (diff - half, diff + half);
    TieTest {
        first: first.0.to_string(),
        other: other.0.to_string(),
        first_share: first.1,
        other_share: other.1,
        diff,
        lo,
        hi,
        over,
        tied: lo <= 0.0,
    }
}

/// Tests of the first against the next items in order while they tie, and the first told
/// apart (at most [`MAX_TESTS`]); an item without a test ends the list.
pub fn ties_in_order<T>(rest: &[T], mut test: impl FnMut(&T) -> Option<TieTest>) -> Vec<TieTest> {
    let mut out = Vec::new();
    for item in rest.iter().take(MAX_TESTS) {
        let Some(t) = test(item) else { break };
        let tied = t.tied;
        out.push(t);
        if !tied {
            break;
        }
    }
    out
}

/// A test as one line: `Lock:tuple − Client:ClientRead = 0.02, 95% −0.03..0.07 (20 batches
/// of 3 s, 5,912 backend samples): tied`.
pub fn describe(t: &TieTest) -> String {
    format!(
        "{} {:.1}% − {} {:.1}% = {:.3}, 95% {:.3}..{} ({}): {}",
        t.first,
        t.first_share * 100.0,
        t.other,
        t.other_share * 100.0,
        t.diff,
        t.lo.max(-1.0),
        if t.hi.is_finite() {
            format!("{:.3}", t.hi)
        } else {
            "∞".into()
        },
        t.over,
        if t.tied { "tied" } else { "told apart" }
    )
}

fn trim_num(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling(first: &[u64], second: &[u64], busy: &[u64]) -> Sampling {
        Sampling {
            interval_s: 1.0,
            busy_by_interval: busy.to_vec(),
            waits_by_interval: vec![
                EventCounts {
                    event: "Lock:tuple".into(),
                    counts: first.to_vec(),
                },
                EventCounts {
                    event: "Client:ClientRead".into(),
                    counts: second.to_vec(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn student_t_matches_its_table() {
        for (df, t) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (5.0, 2.571),
            (10.0, 2.228),
            (19.0, 2.093),
            (59.0, 2.001),
            (1e6, 1.960),
        ] {
            assert!((t975(df) - t).abs() < 0.03, "t({df}) = {} vs {t}", t975(df));
        }
        assert!(t975(0.0).is_infinite());
    }

    /// The Zipf row of the table: Lock:tuple 38% vs Client:ClientRead 36% over 60 one-second
    /// intervals whose split swings from second to second (a convoy on the hot row, then
    /// none): the batches' spread makes the 2-point gap indistinguishable.
    #[test]
    fn a_near_tie_that_swings_between_intervals_is_tied() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..60 {
            let (x, y) = if i % 2 == 0 { (50, 26) } else { (26, 46) };
            a.push(x);
            b.push(y);
        }
        let busy = vec![100; 60];
        let t =
            wait_tie(&sampling(&a, &b, &busy), "Lock:tuple", "Client:ClientRead").expect("tested");
        assert!((t.first_share - 0.38).abs() < 1e-9 && (t.other_share - 0.36).abs() < 1e-9);
        assert!(t.tied && t.lo < 0.0 && t.hi > 0.02, "{}", describe(&t));
        assert!(t.over.starts_with("20 batches of 3 s, 6000"), "{}", t.over);
    }

    /// The same shares with steady intervals are told apart: 6,000 samples and little
    /// spread measure a 2-point gap.
    #[test]
    fn a_steady_gap_is_told_apart() {
        let t = wait_tie(
            &sampling(&[38; 60], &[36; 60], &[100; 60]),
            "Lock:tuple",
            "Client:ClientRead",
        )
        .expect("tested");
        assert!(!t.tied && t.lo > 0.0, "{}", describe(&t));
        // Too few intervals: no test.
        assert!(wait_tie(
            &sampling(&[38; 4], &[36; 4], &[100; 4]),
            "Lock:tuple",
            "Client:ClientRead"
        )
        .is_none());
    }

    /// Rows by the reads: 34% vs 13% over 58 reads is a difference; 11.9% vs 9.8% (Django's
    /// four equal pages) is not; one read proves nothing.
    #[test]
    fn shares_over_reads_tie_or_not() {
        let big = share_tie(("id=1", 0.34), ("id=2", 0.13), 58.0, "58 reads".into());
        assert!(!big.tied, "{}", describe(&big));
        let near = share_tie(("id=1", 0.119), ("id=2", 0.098), 58.0, "58 reads".into());
        assert!(near.tied, "{}", describe(&near));
        assert!(share_tie(("a", 0.9), ("b", 0.1), 1.0, String::new()).tied);
    }

    #[test]
    fn ties_stop_at_the_first_told_apart() {
        let shares = [0.30, 0.29, 0.05, 0.04];
        let t = ties_in_order(&shares, |s| {
            Some(share_tie(("first", 0.31), ("x", *s), 200.0, String::new()))
        });
        assert_eq!(
            t.iter().map(|t| t.tied).collect::<Vec<_>>(),
            [true, true, false]
        );
    }
}
