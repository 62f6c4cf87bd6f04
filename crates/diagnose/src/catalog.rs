//! Which lab scenario reproduces what a diagnosis saw: each `scenario.toml` declares the
//! workload shapes it reproduces (`[[reproduces]]`: the shape's name, the variants that
//! answer it, the parameters to set and which observation goes to which parameter), and
//! diagnose looks them up by the [`Shape`] it recognised. A scenario added as a directory
//! with such a manifest is found without touching this crate. Reading the manifests is the
//! scenario crate's (`hotbench_scenario::load`); the findings only look up this catalog.

use hotbench_results::diagnosis_record::Estimate;
use hotbench_scenario::Scenario;

use crate::suggest::Suggestion;

/// A workload shape diagnose recognises, named as `[[reproduces]]` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Increments of several aggregate rows beside a history insert (pgbench's TPC-B).
    AggregateIncrements,
    /// Increments of one table's rows (`SET n = n + …`).
    Counter,
    /// Counter increments in transactions that also read the row and wait on their client.
    CounterInTransaction,
    /// A locking read, then a write of the same rows (`SELECT … FOR UPDATE`, `UPDATE`).
    ReadCheckWrite,
    /// The same with share locks seen (`FOR SHARE`).
    ReadCheckWriteShared,
    /// Plain writes to the same rows.
    RowWrites,
    /// Queue consumers claiming jobs with `FOR UPDATE`.
    Claim,
    /// Queue consumers claiming jobs with `FOR UPDATE SKIP LOCKED`.
    ClaimSkipLocked,
    /// Commits that wait on NOTIFY's queue lock.
    Notify,
}

impl Shape {
    pub const ALL: [Shape; 9] = [
        Shape::AggregateIncrements,
        Shape::Counter,
        Shape::CounterInTransaction,
        Shape::ReadCheckWrite,
        Shape::ReadCheckWriteShared,
        Shape::RowWrites,
        Shape::Claim,
        Shape::ClaimSkipLocked,
        Shape::Notify,
    ];

    /// The name a manifest's `[[reproduces]] shape = …` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Shape::AggregateIncrements => "aggregate-increments",
            Shape::Counter => "counter",
            Shape::CounterInTransaction => "counter-in-transaction",
            Shape::ReadCheckWrite => "read-check-write",
            Shape::ReadCheckWriteShared => "read-check-write-shared",
            Shape::RowWrites => "row-writes",
            Shape::Claim => "claim",
            Shape::ClaimSkipLocked => "claim-skip-locked",
            Shape::Notify => "notify",
        }
    }
}

/// What a diagnosis measured that a scenario can take as a parameter (a manifest's
/// `observed = { NAME = "PARAM" }`, the names of `hotbench_scenario::manifest::OBSERVATIONS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Observation {
    /// The distinct hot rows (`hot_rows`).
    HotRows,
    /// The sessions involved (`sessions`).
    Sessions,
    /// `on` when a snapshot was held open (`old_snapshot`).
    OldSnapshot,
}

impl Observation {
    pub fn parse(name: &str) -> Option<Observation> {
        match name {
            "hot_rows" => Some(Observation::HotRows),
            "sessions" => Some(Observation::Sessions),
            "old_snapshot" => Some(Observation::OldSnapshot),
            _ => None,
        }
    }
}

/// What the sample saw, for the parameters a scenario takes from it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seen {
    pub hot_rows: Option<u32>,
    pub sessions: Option<u32>,
    pub old_snapshot: bool,
}

impl Seen {
    fn value(&self, o: Observation) -> Option<String> {
        match o {
            Observation::HotRows => self.hot_rows.map(|n| n.to_string()),
            Observation::Sessions => self.sessions.map(|n| n.to_string()),
            Observation::OldSnapshot => self.old_snapshot.then(|| "on".to_string()),
        }
    }
}

/// One scenario's answer to one shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Reproducer {
    pub scenario: String,
    pub shape: String,
    /// The variants to run, in order (none: the whole ladder).
    pub variants: Vec<String>,
    /// `--param NAME=VALUE`s set for the shape.
    pub params: Vec<(String, String)>,
    /// Observation → the parameter that takes it.
    pub observed: Vec<(Observation, String)>,
}

impl Reproducer {
    /// The parameter that takes observation `o`, if the scenario takes it.
    pub fn param_for(&self, o: Observation) -> Option<&str> {
        self.observed
            .iter()
            .find(|(x, _)| *x == o)
            .map(|(_, p)| p.as_str())
    }

    /// The ladder to run for what was `seen`, with clients and timings from `estimate`.
    pub fn suggest(&self, estimate: Estimate, seen: &Seen) -> Suggestion {
        let mut s = Suggestion::new(&self.scenario, estimate);
        s.variants = self.variants.clone();
        s.params = self.params.clone();
        for (o, p) in &self.observed {
            if let Some(v) = seen.value(*o) {
                s.params.push((p.clone(), v));
            }
        }
        s
    }
}

/// The shapes a set of scenarios reproduce.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    pub entries: Vec<Reproducer>,
}

impl Catalog {
    /// What `scenarios` declare; where two declare the same shape, the first wins (so a
    /// caller lists a user's scenario directories before the built-in ones).
    pub fn of(scenarios: &[Scenario]) -> Catalog {
        let mut entries: Vec<Reproducer> = Vec::new();
        for scn in scenarios {
            for r in &scn.manifest.reproduces {
                if entries.iter().any(|e| e.shape == r.shape) {
                    continue;
                }
                entries.push(Reproducer {
                    scenario: scn.name().to_string(),
                    shape: r.shape.clone(),
                    variants: r.variants.clone(),
                    params: r
                        .params
                        .iter()
                        .map(|(k, v)| (k.clone(), v.text()))
                        .collect(),
                    observed: r
                        .observed
                        .iter()
                        .filter_map(|(o, p)| Some((Observation::parse(o)?, p.clone())))
                        .collect(),
                });
            }
        }
        Catalog { entries }
    }

    /// The built-in scenarios' shapes (compiled in from `scenarios/`). A built-in manifest
    /// that does not load (the scenario crate's tests refuse one) is left out.
    pub fn builtin() -> Catalog {
        let scenarios: Vec<Scenario> = hotbench_scenario::source::builtin_bundles()
            .into_iter()
            .filter_map(|b| hotbench_scenario::load(b).ok())
            .collect();
        Catalog::of(&scenarios)
    }

    /// The scenario that reproduces `shape`.
    pub fn find(&self, shape: Shape) -> Option<&Reproducer> {
        self.entries.iter().find(|e| e.shape == shape.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape diagnose recognises has a built-in scenario, and every built-in
    /// `[[reproduces]]` names a shape diagnose recognises (a typo would never match).
    #[test]
    fn built_in_scenarios_reproduce_every_shape_and_only_known_ones() {
        let c = Catalog::builtin();
        for s in Shape::ALL {
            assert!(
                c.find(s).is_some(),
                "no built-in scenario reproduces {}",
                s.name()
            );
        }
        for e in &c.entries {
            assert!(
                Shape::ALL.iter().any(|s| s.name() == e.shape),
                "{}: unknown shape {}",
                e.scenario,
                e.shape
            );
        }
    }
}
