//! Synthetic timelines with known answers: a step, a slow ramp, no recovery, a noisy
//! baseline, a second perturbation before the first recovered, and the edges.

use super::*;

/// Intervals of `dt` seconds from 0, with these goodput rates (per s).
fn timeline(rates: &[f64], dt: f64) -> Vec<Sample> {
    rates
        .iter()
        .enumerate()
        .map(|(i, &r)| Sample {
            start_s: i as f64 * dt,
            end_s: (i + 1) as f64 * dt,
            goodput: r * dt,
            failed: 0,
            reconnects: 0,
        })
        .collect()
}

/// `n` seconds at `rate` (1 s intervals).
fn flat(n: usize, rate: f64) -> Vec<f64> {
    vec![rate; n]
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-6)
}

/// 1 s intervals and a 1 s rolling window: the rolling rate is each interval's own.
fn rule() -> RecoveryRule {
    RecoveryRule::default()
}

#[test]
fn a_step_down_and_back_up() {
    // 100/s for 10 s, nothing for 3 s from 10 s, 100/s again until 20 s.
    let rates = [flat(10, 100.0), flat(3, 0.0), flat(7, 100.0)].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    assert!(close(r.baseline_per_s, 100.0), "{r:?}");
    assert!(!r.baseline_inherited);
    assert!(close(r.dip_per_s, 0.0));
    // The first interval back ([13, 14)) ends 4 s after the start, and stays back 2 s.
    assert!(close(r.ttr90_s, 4.0), "{r:?}");
    assert!(close(r.ttr99_s, 4.0), "{r:?}");
    assert!(close(r.lost, 300.0), "{r:?}");
    assert!(close(r.window_end_s, 14.0));
}

#[test]
fn a_slow_ramp_reaches_90_before_99() {
    // After the start: 0, then 10, 20, … 100 per s, one step a second, then flat.
    let ramp: Vec<f64> = (0..=10).map(|k| 10.0 * k as f64).collect();
    let rates = [flat(10, 100.0), ramp, flat(5, 100.0)].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    // 90 is [19, 20): 10 s after the start; 100 is [20, 21): 11 s.
    assert!(close(r.ttr90_s, 10.0), "{r:?}");
    assert!(close(r.ttr99_s, 11.0), "{r:?}");
    // Short of 100 by 100, 90, … 10 over [10, 20).
    assert!(close(r.lost, 550.0), "{r:?}");
    assert!(close(r.dip_per_s, 0.0));
}

#[test]
fn never_recovering_is_none_and_loses_until_the_end() {
    let rates = [flat(10, 100.0), flat(10, 50.0)].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    assert_eq!((r.ttr90_s, r.ttr99_s), (None, None), "{r:?}");
    assert!(close(r.dip_per_s, 50.0));
    assert!(close(r.lost, 500.0), "{r:?}");
    assert!(close(r.window_end_s, 20.0));
}

#[test]
fn a_recovery_the_run_ended_too_soon_to_confirm_is_none() {
    // Back for 1 s only before the end: the 2 s hold is not seen.
    let rates = [flat(10, 100.0), flat(3, 0.0), flat(1, 100.0)].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    assert_eq!(r.ttr90_s, None, "{r:?}");
    // A hold whose goodput falls short of the level does not count.
    let rates = [flat(10, 100.0), vec![0.0, 100.0, 0.0], flat(5, 100.0)].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    assert!(close(r.ttr90_s, 4.0), "{r:?}");
}

#[test]
fn a_noisy_baseline_is_its_mean_and_the_rolling_window_smooths_the_noise() {
    // 100 ms intervals alternating 900 and 1100 per s (mean 1000); 1 s with nothing from 5 s.
    let noisy = |n: usize| -> Vec<f64> {
        (0..n)
            .map(|i| if i % 2 == 0 { 900.0 } else { 1100.0 })
            .collect()
    };
    let rates = [noisy(50), flat(10, 0.0), noisy(60)].concat();
    let r = &recover(&timeline(&rates, 0.1), &[5.0], &rule())[0];
    assert!(close(r.baseline_per_s, 1000.0), "{r:?}");
    // A single 900 interval is below 99 % but above 90 %: the 1 s rolling window (which reaches
    // into the outage until 7 s) decides, and the noise never breaks the 90 % hold.
    let ttr90 = r.ttr90_s.unwrap_or(f64::NAN);
    assert!((1.9..=2.0).contains(&ttr90), "{r:?}");
    let ttr99 = r.ttr99_s.unwrap_or(f64::NAN);
    assert!((ttr90..=2.0 + 1e-6).contains(&ttr99), "{r:?}");
    assert!(
        (1000.0 - 1e-6..1100.0).contains(&r.lost.unwrap_or(0.0)),
        "{r:?}"
    );
}

#[test]
fn a_second_perturbation_before_recovery_keeps_the_first_baseline() {
    // 100/s; the first stops everything at 10 s until 13 s, the second at 12 s until 16 s.
    let rates = [flat(10, 100.0), flat(6, 0.0), flat(6, 100.0)].concat();
    let s = timeline(&rates, 1.0);
    let r = recover(&s, &[10.0, 12.0], &rule());
    assert!(close(r[0].ttr90_s, 7.0), "{:?}", r[0]);
    assert!(
        r[1].baseline_inherited && close(r[1].baseline_per_s, 100.0),
        "not the dipped window before it: {:?}",
        r[1]
    );
    assert!(close(r[1].ttr90_s, 5.0), "{:?}", r[1]);
    // Given in another order, the answers follow their perturbation.
    let swapped = recover(&s, &[12.0, 10.0], &rule());
    assert_eq!(swapped[0], r[1]);
    assert_eq!(swapped[1], r[0]);
    // A second one after a complete recovery takes its baseline from after that recovery.
    let rates = [
        flat(10, 100.0),
        flat(2, 0.0),
        flat(10, 200.0),
        flat(5, 0.0),
        flat(5, 200.0),
    ]
    .concat();
    let r = recover(&timeline(&rates, 1.0), &[10.0, 22.0], &rule());
    assert!(close(r[0].ttr90_s, 3.0), "{:?}", r[0]);
    assert!(!r[1].baseline_inherited);
    assert!(close(r[1].baseline_per_s, 200.0), "{:?}", r[1]);
    assert!(close(r[1].ttr90_s, 6.0), "{:?}", r[1]);
}

#[test]
fn a_perturbation_without_effect_recovers_after_its_first_interval() {
    let s = timeline(&flat(20, 100.0), 1.0);
    let r = &recover(&s, &[10.5], &rule())[0];
    assert!(close(r.ttr90_s, 0.5), "{r:?}");
    assert!(close(r.lost, 0.0), "{r:?}");
    assert!(close(r.dip_per_s, 100.0), "{r:?}");
}

#[test]
fn edges_give_none_rather_than_a_number() {
    let s = timeline(&flat(10, 100.0), 1.0);
    // At the very start: no baseline, so no TTR.
    let r = &recover(&s, &[0.0], &rule())[0];
    assert_eq!((r.baseline_per_s, r.ttr90_s, r.lost), (None, None, None));
    assert!(close(r.dip_per_s, 100.0));
    // After the end of the timeline: nothing measured.
    let r = &recover(&s, &[30.0], &rule())[0];
    assert_eq!((r.ttr90_s, r.dip_per_s, r.lost), (None, None, None));
    // An empty timeline.
    assert_eq!(recover(&[], &[1.0], &rule())[0], Recovery::default());
    // Nothing committed before: no baseline.
    let s = timeline(&[flat(5, 0.0), flat(5, 100.0)].concat(), 1.0);
    assert_eq!(recover(&s, &[5.0], &rule())[0].baseline_per_s, None);
}

#[test]
fn errors_and_reconnects_are_counted_inside_the_window() {
    let mut s = timeline(
        &[flat(10, 100.0), flat(2, 0.0), flat(8, 100.0)].concat(),
        1.0,
    );
    s[3].failed = 7; // before: not counted
    s[10].failed = 4;
    s[10].reconnects = 4;
    s[18].reconnects = 1; // after the recovery: not counted
    let r = &recover(&s, &[10.0], &rule())[0];
    assert_eq!((r.failed, r.reconnects), (4, 4), "{r:?}");
}

#[test]
fn samples_follow_the_timeline_and_its_short_last_interval() {
    use crate::record::{IntervalRecord, IntervalStats};
    let iv = |t: f64, per_s: f64| IntervalRecord {
        t,
        totals: IntervalStats {
            goodput_per_s: per_s,
            failed: 1,
            ..Default::default()
        },
        groups: vec![],
    };
    let s = samples(&[iv(1.0, 10.0), iv(2.0, 20.0), iv(2.5, 40.0)]);
    assert_eq!(s.len(), 3);
    assert_eq!((s[0].start_s, s[0].end_s, s[0].goodput), (0.0, 1.0, 10.0));
    assert_eq!((s[2].start_s, s[2].end_s, s[2].goodput), (2.0, 2.5, 20.0));
    assert_eq!(s[1].failed, 1);
}

#[test]
fn noise_inside_the_hold_does_not_break_it_when_its_mean_is_back() {
    // Back at 10 s + 2 s, then alternating 80 and 120 per s (mean 100): a single interval at
    // 80 is below 90 %, the hold's mean is not.
    let after: Vec<f64> = (0..8)
        .map(|i| if i % 2 == 0 { 120.0 } else { 80.0 })
        .collect();
    let rates = [flat(10, 100.0), flat(2, 0.0), after].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    assert!(close(r.ttr90_s, 3.0), "{r:?}");
    // At 60 % of the baseline on average, it is not back, however long the run.
    let rates = [flat(10, 100.0), flat(2, 0.0), [95.0, 30.0].repeat(6)].concat();
    let r = &recover(&timeline(&rates, 1.0), &[10.0], &rule())[0];
    assert_eq!(r.ttr90_s, None, "{r:?}");
}
