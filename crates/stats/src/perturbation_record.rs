//! What each `--perturb` did and how the workload recovered (`RunRecord::perturbations`): the
//! engine's driver fills in what it executed and when, then [`judge`] adds the recovery read
//! from the timeline ([`crate::recovery`]), so a record read back can be judged again alike.

use serde::{Deserialize, Serialize};

use crate::record::IntervalRecord;
use crate::recovery::{self, RecoveryRule};

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
        }
    }

    /// It ran (no error): its recovery is judged.
    pub fn ran(&self) -> bool {
        self.error.is_none()
    }
}

/// Fills the recovery of every entry that ran from `timeline`, with `rule`; entries that
/// failed keep none. Sorted by start.
pub fn judge(entries: &mut [PerturbationRecord], timeline: &[IntervalRecord], rule: RecoveryRule) {
    entries.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let samples = recovery::samples(timeline);
    let ran: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].ran()).collect();
    let starts: Vec<f64> = ran.iter().map(|&i| entries[i].at_s).collect();
    for (i, r) in ran
        .into_iter()
        .zip(recovery::recover(&samples, &starts, &rule))
    {
        let e = &mut entries[i];
        e.rule = rule;
        e.baseline_per_s = r.baseline_per_s;
        e.baseline_inherited = r.baseline_inherited;
        e.dip_per_s = r.dip_per_s;
        e.lost = r.lost;
        e.ttr90_s = r.ttr90_s;
        e.ttr99_s = r.ttr99_s;
        e.failed = r.failed;
        e.reconnects = r.reconnects;
        e.window_end_s = r.window_end_s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::IntervalStats;

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
}
