//! Inside vs outside on synthetic timelines, files without sketches, and backlog drains.

use super::*;
use crate::record::IntervalStats;
use crate::recovery::judge;
use crate::RecoveryRule;
use hotbench_stats::histogram::LatencyHistogram;

/// 1 s intervals committing 100 at 1 ms, except `slow` (indexes) at 50 ms with a 57P01 each.
fn timeline(n: usize, slow: &[usize]) -> Vec<IntervalRecord> {
    (0..n)
        .map(|i| {
            let slow = slow.contains(&i);
            let mut h = LatencyHistogram::new();
            for _ in 0..100 {
                h.record_us(if slow { 50_000 } else { 1_000 });
            }
            let mut totals = IntervalStats {
                cnt: 100,
                goodput: 100,
                goodput_per_s: 100.0,
                failed: u64::from(slow),
                lat_sketch: LatencySketch::from_histogram(&h),
                ..Default::default()
            };
            if slow {
                totals.errors_by_sqlstate.insert("57P01".into(), 1);
            }
            IntervalRecord {
                t: (i + 1) as f64,
                totals,
                groups: vec![],
            }
        })
        .collect()
}

fn entry(at: f64, end: f64) -> PerturbationRecord {
    let mut e = PerturbationRecord::new(format!("{at}s:restart"), "restart", "".into(), at);
    e.end_s = Some(end);
    e
}

fn near(v: Option<f64>, want: f64) -> bool {
    v.is_some_and(|v| (v / want - 1.0).abs() < 0.07)
}

#[test]
fn the_window_has_its_own_latency_and_errors_and_the_rest_of_the_run_its_own() {
    let tl = timeline(20, &[10, 11, 12]);
    let mut entries = vec![entry(10.0, 10.5)];
    judge(&mut entries, &tl, RecoveryRule::default());
    let e = &entries[0];
    let inside = e.inside.as_ref().expect("inside");
    let outside = e.outside.as_ref().expect("outside");
    // Goodput never dipped: recovered after its first interval, so the window is the
    // action's and that interval's; the slow intervals after it are outside it.
    assert_eq!(e.window_end_s, Some(11.0));
    assert_eq!(
        (inside.seconds, inside.committed, inside.failed),
        (1.0, 100, 1)
    );
    assert!(
        near(inside.p99_ms, 50.0) && near(inside.p50_ms, 50.0),
        "{inside:?}"
    );
    assert_eq!(inside.errors_by_sqlstate.get("57P01"), Some(&1));
    assert_eq!(
        (outside.seconds, outside.committed, outside.failed),
        (19.0, 1900, 2)
    );
    assert!(near(outside.p50_ms, 1.0), "{outside:?}");
    // A window that reaches the recovery: the action lasted until 13 s.
    let mut entries = vec![entry(10.0, 13.0)];
    judge(&mut entries, &tl, RecoveryRule::default());
    let inside = entries[0].inside.clone().unwrap_or_default();
    assert_eq!((inside.seconds, inside.failed), (3.0, 3));
    assert!(near(inside.p50_ms, 50.0), "{inside:?}");
    let outside = entries[0].outside.clone().unwrap_or_default();
    assert_eq!((outside.failed, outside.errors_by_sqlstate.len()), (0, 0));
    assert!(near(outside.p99_ms, 1.0), "{outside:?}");
}

#[test]
fn outside_leaves_out_every_window_and_failed_perturbations_get_none() {
    let tl = timeline(30, &[5, 20]);
    let mut failed = entry(15.0, 15.0);
    failed.error = Some("42501: no".into());
    let mut entries = vec![entry(5.0, 6.0), entry(20.0, 21.0), failed];
    judge(&mut entries, &tl, RecoveryRule::default());
    let ran: Vec<_> = entries.iter().filter(|e| e.ran()).collect();
    assert_eq!(ran.len(), 2);
    for e in &ran {
        assert_eq!(e.inside.as_ref().map(|s| s.failed), Some(1), "{e:?}");
        assert_eq!(
            e.outside.as_ref().map(|s| (s.seconds, s.failed)),
            Some((28.0, 0))
        );
    }
    let f = entries.iter().find(|e| !e.ran()).expect("the failed one");
    assert_eq!((&f.inside, &f.outside), (&None, &None));
}

#[test]
fn a_file_of_the_current_format_without_sketches_still_reads_and_counts() {
    // An interval as files wrote it before the sketch and the per-interval SQLSTATEs.
    let iv = |t: u32| {
        format!(
            r#"{{"t":{t},"totals":{{"cnt":100,"goodput":100,"failed":0,"retried":0,"retries":0,"skipped":0,"reconnects":0,"tps":100,"goodput_per_s":100,"lat_mean_ms":1,"lat_stddev_ms":0,"lat_p50_ms":1,"lat_p90_ms":1,"lat_p99_ms":1,"lat_max_ms":1,"lag_mean_ms":0,"lag_max_ms":0}}}}"#
        )
    };
    let json = format!("[{}]", (1..=20).map(iv).collect::<Vec<_>>().join(","));
    let tl: Vec<IntervalRecord> = serde_json::from_str(&json).expect("old intervals read");
    assert!(tl
        .iter()
        .all(|i| i.totals.lat_sketch.is_empty() && i.totals.errors_by_sqlstate.is_empty()));
    let mut entries = vec![entry(10.0, 12.0)];
    judge(&mut entries, &tl, RecoveryRule::default());
    let inside = entries[0].inside.clone().unwrap_or_default();
    assert_eq!(
        (inside.committed, inside.p50_ms, inside.p99_ms),
        (200, None, None)
    );
    // And an entry written before `inside`/`outside`/`backlog` existed reads as none.
    let old: PerturbationRecord =
        serde_json::from_str(r#"{"spec":"1s:checkpoint","kind":"checkpoint","at_s":1.0}"#)
            .expect("old entry");
    assert_eq!((old.inside, old.outside, old.backlog), (None, None, None));
    // What is written reads back the same.
    let text = serde_json::to_string(&entries).unwrap_or_default();
    let back: Vec<PerturbationRecord> = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(back, entries);
}

fn series(values: &[f64]) -> MonitorSeries {
    MonitorSeries {
        name: "backlog".into(),
        // Sampled every second, starting 0.5 s before the run's clock (the offset).
        samples: values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64 + 0.5, v))
            .collect(),
    }
}

fn judged(at: f64) -> PerturbationRecord {
    entry(at, at + 1.0)
}

#[test]
fn the_backlog_drains_when_it_is_back_to_its_level_before() {
    // ~100 before 10 s (±2), 500 from 11 s, falling back to 101 at 18 s.
    let mut v: Vec<f64> = (0..10)
        .map(|i| if i % 2 == 0 { 98.0 } else { 102.0 })
        .collect();
    v.extend([
        150.0, 500.0, 480.0, 400.0, 300.0, 200.0, 120.0, 115.0, 101.0, 99.0, 100.0,
    ]);
    let mut entries = vec![judged(10.0)];
    backlog(&mut entries, &series(&v), 0.5);
    let b = entries[0].backlog.clone().expect("a drain");
    assert_eq!(b.monitor, "backlog");
    assert!((b.before - 100.0).abs() < 1e-9, "{b:?}");
    assert_eq!((b.peak, b.peak_at_s), (500.0, 11.0));
    // Level: 100 + max(10, 2·2, 1) = 110; 115 at 17 s is above it, 101 at 18 s is not.
    assert_eq!(b.drained_s, Some(8.0), "{b:?}");
}

#[test]
fn a_backlog_that_never_rose_drained_at_once_and_one_that_never_drained_has_none() {
    let flat = series(&[100.0; 20]);
    let mut entries = vec![judged(10.0)];
    backlog(&mut entries, &flat, 0.0);
    assert_eq!(
        entries[0].backlog.as_ref().and_then(|b| b.drained_s),
        Some(0.0)
    );
    let mut v = vec![100.0; 10];
    v.extend([900.0; 10]);
    let mut entries = vec![judged(10.0)];
    backlog(&mut entries, &series(&v), 0.0);
    let b = entries[0].backlog.clone().expect("a backlog");
    assert_eq!((b.drained_s, b.peak), (None, 900.0));
    // Draining only after the next perturbation started does not count for the first.
    let mut v = vec![100.0; 10];
    v.extend([900.0, 900.0, 900.0, 100.0, 100.0, 100.0]);
    let mut entries = vec![judged(10.0), judged(12.0)];
    backlog(&mut entries, &series(&v), 0.0);
    assert_eq!(entries[0].backlog.as_ref().and_then(|b| b.drained_s), None);
    // Nothing sampled before it: no level to drain to.
    let mut entries = vec![judged(0.0)];
    backlog(&mut entries, &flat, 0.0);
    assert_eq!(entries[0].backlog, None);
}
