//! The ladder result: what a scenario run produced, variant by variant (each variant's full
//! run record, its check results and monitor series), plus the scenario's metadata. Written
//! as JSON (`--json`, format `hotbench-ladder/1`) and read by the renderers.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use hotbench_stats::RunRecord;

/// Bumped on any incompatible change of the file's shape (defined beside the run record's).
pub use hotbench_stats::LADDER_FORMAT;

/// A ladder file: one or more ladders (`hotbench demo` writes two).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LadderFile {
    pub format: String,
    pub tool_version: String,
    pub ladders: Vec<Ladder>,
}

impl LadderFile {
    pub fn new(ladders: Vec<Ladder>) -> Self {
        LadderFile {
            format: LADDER_FORMAT.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            ladders,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<VariantResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    #[serde(default)]
    pub work_group: Option<String>,
    /// The work group's useful work per timeline interval, in the scenario's unit.
    #[serde(default)]
    pub work_per_interval: Vec<u64>,
    /// Seconds into the run when the work ran out (`work.until_empty`: a drained
    /// backlog); the rate is then the work until that moment.
    #[serde(default)]
    pub ran_out_at_s: Option<f64>,
    /// Work per second in the last minute over that in the second minute (runs of three
    /// minutes or more): 1 is flat, below 1 decays.
    #[serde(default)]
    pub steady_ratio: Option<f64>,
    /// Goodput as a percentage of the ceiling's (the manifest's `[ceiling]`), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_of_ceiling: Option<f64>,
}

impl VariantResult {
    /// Useful work per second (see [`RunRecord::useful_per_s`]).
    pub fn useful_per_s(&self) -> Option<f64> {
        let r = self.record.as_ref()?;
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

    pub fn checks_ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// A monitor's samples: `(seconds since the run started, value)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MonitorSeries {
    pub name: String,
    pub samples: Vec<(f64, f64)>,
}

impl Ladder {
    pub fn baseline(&self) -> Option<&VariantResult> {
        self.variants
            .iter()
            .find(|v| v.baseline && v.record.is_some())
    }

    /// Useful work per second relative to the baseline's.
    pub fn speedup(&self, v: &VariantResult) -> Option<f64> {
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

/// The top server wait of a run, when probes recorded one: `probes.top_wait` (a string),
/// else the first entry of `probes.waits` (`{"event": …, "pct": …}`).
pub fn top_wait(record: &RunRecord) -> Option<String> {
    let p = record.probes.as_ref()?;
    if let Some(s) = p.get("top_wait").and_then(|v| v.as_str()) {
        return Some(s.to_string());
    }
    let first = p.get("waits")?.as_array()?.first()?;
    let event = first.get("event")?.as_str()?;
    match first.get("pct").and_then(|v| v.as_f64()) {
        Some(pct) => Some(format!("{event} {pct:.0}%")),
        None => Some(event.to_string()),
    }
}
