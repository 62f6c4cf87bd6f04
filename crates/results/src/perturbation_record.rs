//! What each `--perturb` did and how the workload recovered (`RunRecord::perturbations`): the
//! engine's driver fills in what it executed and when, then [`judge`] adds the recovery read
//! from the timeline ([`crate::recovery`]), so a record read back can be judged again alike;
//! [`server_side`] adds what the probes saw in each window once they joined the record;
//! [`crate::perturbation_window`] what the clients saw in it against the rest of the run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::probe_record::WaitShare;

/// The windows the recovery is judged with; stored with each result so it says how it was
/// measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecoveryRule {
    /// Longest window before the perturbation the baseline is taken from, s.
    pub baseline_s: f64,
    /// Window of the rolling goodput, s.
    pub rolling_s: f64,
    /// How long the rolling goodput must stay back for the recovery to count, s.
    pub hold_s: f64,
}

impl Default for RecoveryRule {
    fn default() -> RecoveryRule {
        RecoveryRule {
            baseline_s: 10.0,
            rolling_s: 1.0,
            hold_s: 2.0,
        }
    }
}

/// One perturbation as it happened (one entry per firing of an `every…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerturbationRecord {
    /// The `--perturb` it came from, as spelled in `config.perturb` (`10s:ddl-lock=t,5s`).
    pub spec: String,
    /// `checkpoint`, `ddl-lock`, …
    pub kind: String,
    /// The kind's arguments as given (`t,5s`), empty for none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub args: String,
    /// When its statement was sent, s into the run (the scheduled time when it never ran).
    pub at_s: f64,
    /// When it was over (the lock released, the statement returned), s into the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_s: Option<f64>,
    /// What it did, when there is something to say (`terminated 4 backends`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Why it failed or did not run (`42501: permission denied …`); no recovery is judged then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Goodput per second before it; absent when nothing was committed before it.
    #[serde(default)]
    pub baseline_per_s: Option<f64>,
    /// It started before the previous perturbation recovered, whose baseline it keeps.
    #[serde(default)]
    pub baseline_inherited: bool,
    /// Lowest rolling goodput per second from its start until TTR90 (or the run's end).
    #[serde(default)]
    pub dip_per_s: Option<f64>,
    /// Goodput units short of the baseline over that window.
    #[serde(default)]
    pub lost: Option<f64>,
    /// Time to recover to 90 % / 99 % of the baseline, s; absent: not recovered by the end.
    #[serde(default)]
    pub ttr90_s: Option<f64>,
    #[serde(default)]
    pub ttr99_s: Option<f64>,
    /// Failed transactions and reconnects in that window.
    #[serde(default)]
    pub failed: u64,
    #[serde(default)]
    pub reconnects: u64,
    /// Where that window ends, s into the run.
    #[serde(default)]
    pub window_end_s: Option<f64>,
    /// The windows the recovery was judged with.
    #[serde(default)]
    pub rule: RecoveryRule,
    /// The server's side of that window, from the probes (when they ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerWindow>,
    /// The clients' side of its window and of the rest of the run: committed, failed,
    /// p50/p99, errors by SQLSTATE ([`crate::perturbation_window`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside: Option<SpanStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<SpanStats>,
    /// A queue's backlog around it (a ladder whose manifest names its backlog monitor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<BacklogDrain>,
}

/// What the probes saw in a perturbation's window: the probe intervals from its start until
/// its recovery (TTR90), or the end of the run when it did not recover.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerWindow {
    /// The span of the probe intervals counted, s into the run.
    pub from_s: f64,
    pub to_s: f64,
    /// The run's backends' wait events in the window, most frequent first (three at most).
    pub top_waits: Vec<WaitShare>,
    /// Most run backends waiting on locks at one sample: the lock queue's depth.
    pub lock_waiting_max: u32,
    /// WAL written and checkpoints begun in the window (server-wide).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<u64>,
    /// Largest `age(backend_xmin)` seen in the window (transactions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xmin_age_max: Option<i64>,
    /// Most dead tuples in the run's tables together at the end of an interval of the window
    /// (what an xmin held keeps from being vacuumed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_tuples_max: Option<i64>,
    /// The server restarted inside the window (the probe reconnected): the counters above
    /// count from the reconnection, a new baseline (`probes.reconnects`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub server_restarted: bool,
}

impl PerturbationRecord {
    /// An entry for `spec` of `kind` (`args`) at `at_s`, nothing judged yet.
    pub fn new(spec: String, kind: &str, args: String, at_s: f64) -> PerturbationRecord {
        PerturbationRecord {
            spec,
            kind: kind.to_string(),
            args,
            at_s,
            end_s: None,
            detail: None,
            error: None,
            baseline_per_s: None,
            baseline_inherited: false,
            dip_per_s: None,
            lost: None,
            ttr90_s: None,
            ttr99_s: None,
            failed: 0,
            reconnects: 0,
            window_end_s: None,
            rule: RecoveryRule::default(),
            server: None,
            inside: None,
            outside: None,
            backlog: None,
        }
    }

    /// It ran (no error): its recovery is judged.
    pub fn ran(&self) -> bool {
        self.error.is_none()
    }
}

/// A run's recovery in one cell (a ladder's row per variant): `TTR90 0.49 s, TTR99 0.74 s,
/// lost 218`; `not recovered` where the goodput was not back by the end of the run; several
/// firings (`slowest of 3: …`) give the slowest of each TTR (`not recovered 1/3`: one of
/// them never was) and the work lost added up. `not judged` when none was (each failed, or
/// had no baseline); `None` without perturbations.
pub fn outcome(entries: &[PerturbationRecord]) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let judged: Vec<&PerturbationRecord> = entries
        .iter()
        .filter(|e| e.ran() && e.baseline_per_s.is_some())
        .collect();
    if judged.is_empty() {
        return Some("not judged".into());
    }
    let n = judged.len();
    let slowest = |ttr: &dyn Fn(&PerturbationRecord) -> Option<f64>| {
        let missed = judged.iter().filter(|e| ttr(e).is_none()).count();
        match missed {
            0 => format!(
                "{:.2} s",
                judged.iter().filter_map(|e| ttr(e)).fold(0.0, f64::max)
            ),
            _ if n == 1 => "not recovered".to_string(),
            k => format!("not recovered {k}/{n}"),
        }
    };
    let lost: f64 = judged.iter().filter_map(|e| e.lost).sum();
    let all = if n > 1 { " in all" } else { "" };
    let text = format!(
        "TTR90 {}, TTR99 {}, lost {lost:.0}{all}",
        slowest(&|e| e.ttr90_s),
        slowest(&|e| e.ttr99_s)
    );
    Some(if n > 1 {
        format!("slowest of {n}: {text}")
    } else {
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe_record::ProbeRecord;
    use crate::record::IntervalStats;
    use crate::record::{IntervalRecord, RunRecord};
    use crate::recovery::{judge, server_side};

    fn timeline(rates: &[f64]) -> Vec<IntervalRecord> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &r)| IntervalRecord {
                t: (i + 1) as f64,
                totals: IntervalStats {
                    goodput_per_s: r,
                    ..Default::default()
                },
                groups: vec![],
            })
            .collect()
    }

    #[test]
    fn entries_that_ran_are_judged_in_time_order_and_failed_ones_are_not() {
        let tl = timeline(&[[100.0; 5].as_slice(), &[0.0; 2], &[100.0; 5]].concat());
        let mut failed =
            PerturbationRecord::new("1s:checkpoint".into(), "checkpoint", "".into(), 1.0);
        failed.error = Some("42501: permission denied".into());
        let lock =
            PerturbationRecord::new("5s:ddl-lock=t,2s".into(), "ddl-lock", "t,2s".into(), 5.0);
        let mut entries = vec![lock, failed];
        judge(&mut entries, &tl, RecoveryRule::default());
        assert_eq!(entries[0].kind, "checkpoint");
        assert_eq!(
            (entries[0].ttr90_s, entries[0].baseline_per_s),
            (None, None)
        );
        let l = &entries[1];
        assert_eq!(
            (l.baseline_per_s, l.ttr90_s, l.lost),
            (Some(100.0), Some(3.0), Some(200.0))
        );
        let json = serde_json::to_string(&entries).unwrap();
        let back: Vec<PerturbationRecord> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, entries);
        assert!(!json.contains("\"args\":\"\""), "{json}");
        // A reader of an entry with only its description gets defaults.
        let old: PerturbationRecord =
            serde_json::from_str(r#"{"spec":"1s:checkpoint","kind":"checkpoint","at_s":1.0}"#)
                .unwrap();
        assert_eq!((old.ttr90_s, old.rule), (None, RecoveryRule::default()));
    }

    #[test]
    fn a_runs_recovery_in_one_cell() {
        let judged = |ttr90: Option<f64>, ttr99: Option<f64>, lost: f64| {
            let mut e =
                PerturbationRecord::new("10s:checkpoint".into(), "checkpoint", "".into(), 10.0);
            (e.baseline_per_s, e.ttr90_s, e.ttr99_s, e.lost) =
                (Some(100.0), ttr90, ttr99, Some(lost));
            e
        };
        assert_eq!(outcome(&[]), None);
        assert_eq!(
            outcome(&[judged(Some(0.49), Some(0.74), 218.4)]).as_deref(),
            Some("TTR90 0.49 s, TTR99 0.74 s, lost 218")
        );
        assert_eq!(
            outcome(&[judged(None, None, 6202.0)]).as_deref(),
            Some("TTR90 not recovered, TTR99 not recovered, lost 6202")
        );
        let mut failed = judged(None, None, 0.0);
        failed.error = Some("42501: permission denied".into());
        assert_eq!(
            outcome(std::slice::from_ref(&failed)).as_deref(),
            Some("not judged")
        );
        assert_eq!(
            outcome(&[
                judged(Some(1.0), Some(2.0), 10.0),
                judged(Some(3.0), None, 20.0),
                failed
            ])
            .as_deref(),
            Some("slowest of 2: TTR90 3.00 s, TTR99 not recovered 1/2, lost 30 in all")
        );
    }

    #[test]
    fn the_server_side_is_what_the_probes_saw_inside_the_window() {
        use crate::probe_record::ProbeInterval;
        let iv = |t: f64, lock: u64, cpu: u64, waiting: u32, wal: u64| ProbeInterval {
            t,
            dt: 1.0,
            waits: [
                ("Lock:relation".to_string(), lock),
                ("CPU".to_string(), cpu),
            ]
            .into_iter()
            .collect(),
            lock_waiting_max: waiting,
            server: crate::probe_record::ServerDelta {
                wal_bytes: Some(wal),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut lock =
            PerturbationRecord::new("5s:ddl-lock=t,2s".into(), "ddl-lock", "t,2s".into(), 5.0);
        lock.window_end_s = Some(7.0);
        let mut failed =
            PerturbationRecord::new("1s:checkpoint".into(), "checkpoint", "".into(), 1.0);
        failed.error = Some("42501: no".into());
        let mut rec = RunRecord {
            perturbations: vec![failed, lock],
            probes: Some(ProbeRecord {
                timeline: (1..=10)
                    .map(|t| match t {
                        6 | 7 => iv(t as f64, 40, 2, 4, 100),
                        _ => iv(t as f64, 0, 10, 0, 1000),
                    })
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        if let Some(p) = rec.probes.as_mut() {
            let table = |dead| crate::probe_record::TableInterval {
                name: "t".into(),
                dead_tuples: dead,
                ..Default::default()
            };
            p.timeline[5].tables = vec![table(7), table(5)];
            p.timeline[9].tables = vec![table(100)];
        }
        server_side(&mut rec);
        assert_eq!(rec.perturbations[0].server, None, "it did not run");
        let w = rec.perturbations[1].server.clone().expect("a window");
        assert_eq!(
            (w.from_s, w.to_s),
            (5.0, 7.0),
            "the intervals (5,6] and (6,7]"
        );
        assert_eq!(w.top_waits[0].event, "Lock:relation");
        assert_eq!(w.top_waits[0].count, 80);
        assert_eq!(
            (w.lock_waiting_max, w.wal_bytes, w.checkpoints),
            (4, Some(200), None)
        );
        assert_eq!(w.dead_tuples_max, Some(12), "the window's, not the run's");
        let mut none = RunRecord::default();
        server_side(&mut none);
        // The server restarted inside the window (the probes reconnected): said, since its
        // counters count from the reconnection.
        assert!(!w.server_restarted);
        if let Some(p) = rec.probes.as_mut() {
            p.timeline[6].restarted = true;
        }
        server_side(&mut rec);
        let w = rec.perturbations[1].server.clone().expect("a window");
        assert!(w.server_restarted, "{w:?}");
    }
}

/// The clients' side of a span of the run (a perturbation's window, or the rest of the run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpanStats {
    /// Seconds of timeline the span's intervals add up to.
    pub seconds: f64,
    pub committed: u64,
    pub failed: u64,
    /// Latency of the transactions committed in the span, ms: absent when none committed
    /// or the timeline keeps no latency sketches (a run without `--perturb`, an older file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// Failed tries and transactions by SQLSTATE (retried errors included).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_sqlstate: BTreeMap<String, u64>,
}

/// A queue's backlog around a perturbation, from the ladder's backlog monitor (the
/// manifest's `[work] until_empty`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BacklogDrain {
    /// The monitor read (`backlog`).
    pub monitor: String,
    /// Its mean over the baseline window before the perturbation.
    pub before: f64,
    /// Its highest sample from the start until it drained (or the next perturbation, or the
    /// end), and when, s into the run.
    pub peak: f64,
    pub peak_at_s: f64,
    /// From the perturbation's start until the backlog was back to its level before (within
    /// the tolerance: the larger of 10 %, twice its spread before, and 1); 0 when it never
    /// rose past that; absent when it had not drained by the next perturbation or the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drained_s: Option<f64>,
}
