//! The ladder document (`hotbench scenario run --json`, format [`LADDER_FORMAT`]): what a
//! scenario run produced, variant by variant (each variant's full run record, its check
//! results and monitor series), plus the scenario's metadata. Declared once, here: the
//! scenario crate writes it, the report crate reads it. Every field has a default so an older
//! or partial file still reads.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::{RunRecord, LADDER_FORMAT};

/// A ladder file: one or more ladders (`hotbench demo` writes two).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LadderFile {
    pub format: String,
    pub tool_version: String,
    pub ladders: Vec<Ladder>,
    /// `--threshold` outcomes, when any were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::ThresholdOutcome>,
}

impl LadderFile {
    pub fn new(ladders: Vec<Ladder>) -> Self {
        LadderFile {
            format: LADDER_FORMAT.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            ladders,
            thresholds: Vec::new(),
        }
    }
}

/// One scenario's ladder: its variants run on the same data, clients and duration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Ladder {
    pub scenario: String,
    pub title: String,
    pub demonstrates: String,
    /// `postgresql`, `yugabytedb` or `cockroachdb`.
    pub engine: String,
    pub server_version: String,
    /// Parameters as resolved for the scenario (variants may override some; each
    /// variant's own are in [`VariantResult::params`]).
    pub params: BTreeMap<String, String>,
    /// Unit of `work` when the scenario measures work in the database (`items`).
    pub work_unit: Option<String>,
    pub variants: Vec<VariantResult>,
    /// Stopped by Ctrl-C/SIGTERM before every variant ran.
    pub interrupted: bool,
    /// The contention-free ceiling (`[ceiling]`), run after the variants; not ranked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<VariantResult>,
    /// Wall-clock seconds of the whole ladder (claim to release), set when it ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}

/// One variant of a ladder: its run (absent when it did not run), checks and monitors.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VariantResult {
    pub name: String,
    pub about: String,
    pub baseline: bool,
    /// Why the variant did not run on this engine.
    pub skipped: Option<String>,
    pub params: BTreeMap<String, String>,
    pub record: Option<RunRecord>,
    pub checks: Vec<CheckResult>,
    pub monitors: Vec<MonitorSeries>,
    /// Units of work measured in the database (see the manifest's `work`).
    pub work: Option<f64>,
    /// Clients aborted by errors during the run.
    pub aborted_clients: usize,
    /// Notes (background perturbations, empty polls, …).
    pub notes: Vec<String>,
    /// The group that did the scenario's work (its latency and goodput are the ladder's);
    /// `None`: all groups together.
    pub work_group: Option<String>,
    /// The work group's useful work per timeline interval, in the scenario's unit.
    pub work_per_interval: Vec<u64>,
    /// Seconds into the run when the work ran out (`work.until_empty`: a drained
    /// backlog); the rate is then the work until that moment.
    pub ran_out_at_s: Option<f64>,
    /// Work per second in the last minute over that in the second minute (runs of three
    /// minutes or more): 1 is flat, below 1 decays.
    pub steady_ratio: Option<f64>,
    /// Goodput as a percentage of the ceiling's (the manifest's `[ceiling]`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pct_of_ceiling: Option<f64>,
    /// Where the variant's wall-clock time went; absent when it did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases_s: Option<PhaseTimes>,
    /// Set when the run reached 90% of what its clients could do whatever the server
    /// (`ClientBound`): it measured the clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_bound: Option<crate::ClientBound>,
}

/// Wall-clock seconds of a variant's phases, in the order they happen: `setup` (fresh
/// schema, setup files, background sessions), `connect` (the clients' connections), `run`
/// (the measured run), `finish` (cancelling what was in flight, the monitors and probes
/// ending, the finish files and the work count), `checks`, `teardown` (dropping the
/// variant's schema).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseTimes {
    pub setup: f64,
    pub connect: f64,
    pub run: f64,
    pub finish: f64,
    pub checks: f64,
    pub teardown: f64,
}

impl PhaseTimes {
    /// `(name, seconds)` in order.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("setup", self.setup),
            ("connect", self.connect),
            ("run", self.run),
            ("finish", self.finish),
            ("checks", self.checks),
            ("teardown", self.teardown),
        ]
    }

    /// Seconds outside the measured run.
    pub fn outside_run(&self) -> f64 {
        self.named()
            .iter()
            .filter(|(n, _)| *n != "run")
            .map(|(_, s)| s)
            .sum()
    }
}

/// A correctness check's outcome after a variant.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckResult {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// A monitor's samples: `(seconds since the run started, value)`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MonitorSeries {
    pub name: String,
    pub samples: Vec<(f64, f64)>,
}

/// The check a variant fails when the manifest's `[work]` query measured nothing (NULL, no
/// row, not a number, negative): its work rate is then unknown, not the committed rate.
pub const WORK_CHECK: &str = "[work] measured the work done";

impl VariantResult {
    /// Useful work per second (see [`RunRecord::useful_per_s`]); `None` when it did not
    /// run, or its `[work]` query measured nothing ([`WORK_CHECK`] failed).
    pub fn useful_per_s(&self) -> Option<f64> {
        let r = self.record.as_ref()?;
        if self.checks.iter().any(|c| c.name == WORK_CHECK && !c.ok) {
            return None;
        }
        Some(r.useful_per_s(self.work_group.as_deref(), self.work, self.ran_out_at_s))
    }

    /// The run as the work group saw it: its totals and timeline are the work group's.
    pub fn work_record(&self) -> Option<Cow<'_, RunRecord>> {
        let r = self.record.as_ref()?;
        match self.work_group.as_deref().and_then(|g| r.focused_on(g)) {
            Some(f) => Some(Cow::Owned(f)),
            None => Some(Cow::Borrowed(r)),
        }
    }

    /// `Some(why)` when the variant ran but committed nothing: no latency or speed-up to
    /// show, and passing checks prove nothing.
    pub fn no_commit_reason(&self) -> Option<String> {
        self.record.as_ref()?.totals.counters.no_commit_reason()
    }

    pub fn checks_ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

impl Ladder {
    pub fn baseline(&self) -> Option<&VariantResult> {
        self.variants
            .iter()
            .find(|v| v.baseline && v.record.is_some())
    }

    /// Useful work per second relative to the baseline's; `None` for a variant that
    /// committed nothing.
    pub fn speedup(&self, v: &VariantResult) -> Option<f64> {
        if v.no_commit_reason().is_some() {
            return None;
        }
        let base = self.baseline()?.useful_per_s()?;
        let mine = v.useful_per_s()?;
        (base > 0.0).then(|| mine / base)
    }

    pub fn failed_checks(&self) -> Vec<(&str, &CheckResult)> {
        self.variants
            .iter()
            .flat_map(|v| {
                v.checks
                    .iter()
                    .filter(|c| !c.ok)
                    .map(move |c| (v.name.as_str(), c))
            })
            .collect()
    }

    pub fn all_checks_ok(&self) -> bool {
        self.failed_checks().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_file_reads_with_defaults() {
        let f: LadderFile = serde_json::from_str(
            r#"{"format":"hotbench-ladder/1","ladders":[{"scenario":"q","variants":[{"name":"a"}]}]}"#,
        )
        .expect("partial ladder file");
        let v = &f.ladders[0].variants[0];
        assert_eq!((v.name.as_str(), v.record.is_none()), ("a", true));
        assert!(f.ladders[0].ceiling.is_none() && v.checks_ok());
    }

    #[test]
    fn failed_checks_name_their_variant() {
        let l = Ladder {
            variants: vec![VariantResult {
                name: "naive".into(),
                checks: vec![CheckResult {
                    name: "conserved".into(),
                    ok: false,
                    detail: "sum 99".into(),
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let failed = l.failed_checks();
        assert_eq!(failed.len(), 1);
        assert_eq!(
            (failed[0].0, failed[0].1.name.as_str()),
            ("naive", "conserved")
        );
        assert!(!l.all_checks_ok());
    }
}
