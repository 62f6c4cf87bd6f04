//! The scenario manifest (`scenario.toml`): its typed shape, field by field (unknown keys
//! rejected), documented in `docs/scenarios.md`. Reading one and checking it against its
//! bundle is `load.rs`; what the types mean at run time is where they are used (`params.rs`,
//! `param_type.rs`, `ceiling.rs`, the ladder).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::source::Bundle;

/// A TOML value written as a string, integer, float or boolean; kept as text because it
/// is substituted into SQL and scripts.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    pub fn text(&self) -> String {
        match self {
            Scalar::Text(s) => s.clone(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub title: String,
    /// What the ladder demonstrates (shown by `scenario show` and in reports).
    pub demonstrates: String,
    /// Default clients of groups that do not say (the `clients` parameter; `-c`).
    #[serde(default = "default_clients")]
    pub clients: usize,
    /// Default seconds per variant (the `duration` parameter; `-T`).
    #[serde(default = "default_duration")]
    pub duration: u64,
    /// `simple`, `extended` or `prepared` (default `prepared`).
    #[serde(default)]
    pub query_mode: Option<String>,
    /// The scenario's tables (for probes' table health).
    #[serde(default)]
    pub tables: Vec<String>,
    #[serde(default)]
    pub params: BTreeMap<String, ParamDef>,
    /// Named parameter presets, chosen with `--param mode=NAME`.
    #[serde(default)]
    pub modes: BTreeMap<String, BTreeMap<String, Scalar>>,
    /// pgbench's tables created by `hotbench-init` before `setup`.
    #[serde(default)]
    pub pgbench_init: Option<PgbenchInit>,
    #[serde(default)]
    pub setup: Vec<String>,
    /// SQL run after the measured run, before the checks (final drain, final rollup).
    #[serde(default)]
    pub finish: Vec<String>,
    #[serde(default)]
    pub checks: Vec<String>,
    /// `committed` (default), `rows` or `var:NAME`.
    #[serde(default)]
    pub goodput: Option<String>,
    /// Useful work measured in the database instead of by the client.
    #[serde(default)]
    pub work: Option<WorkDef>,
    /// The group that does the scenario's work (a queue's consumers): the ladder's latency
    /// and ranking come from it alone, other groups are listed apart. Default: the only
    /// group, else the only group without a rate, else all groups together.
    #[serde(default)]
    pub work_group: Option<String>,
    /// Session settings for the benchmark's connections (`-c name=value`).
    #[serde(default)]
    pub settings: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub background: Vec<Background>,
    #[serde(default)]
    pub monitors: Vec<Monitor>,
    /// `[[perturbation]]`: done to the server during every variant's run, as `--perturb`
    /// (`crate::perturbations`).
    #[serde(default)]
    pub perturbation: Vec<PerturbationDef>,
    pub variants: Vec<Variant>,
    /// How to remove the contention (run after the variants, not ranked).
    #[serde(default)]
    pub ceiling: Option<CeilingDef>,
    /// Hot keys (`--key`) of every variant: the script variable(s) naming the contended
    /// thing (`key = "customer"`), recorded per variant as `hot_keys`.
    #[serde(default)]
    pub key: KeyVars,
    /// The workload shapes this scenario reproduces (`[[reproduces]]`): how `diagnose` finds
    /// the ladder for what it saw on a server.
    #[serde(default)]
    pub reproduces: Vec<Reproduces>,
}

/// One workload shape a scenario reproduces: the name `diagnose` gives what it recognised in
/// a sample (`counter`, `read-check-write`, `claim`, …; listed in `docs/scenarios.md`), the
/// variants that answer it, in the order to run them, and the parameters to set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reproduces {
    pub shape: String,
    /// The variants to run (none: the whole ladder).
    #[serde(default)]
    pub variants: Vec<String>,
    /// Parameter values for this shape (`--param NAME=VALUE`).
    #[serde(default)]
    pub params: BTreeMap<String, Scalar>,
    /// What the sample measured → the parameter that takes it (one of [`OBSERVATIONS`]).
    #[serde(default)]
    pub observed: BTreeMap<String, String>,
}

/// What a diagnosis measures that a `[[reproduces]]` can hand to a parameter: the distinct
/// hot rows, the sessions involved, and `on` when a snapshot was held open (an xmin holder).
pub const OBSERVATIONS: [&str; 3] = ["hot_rows", "sessions", "old_snapshot"];

/// `key = "VAR"` or `key = ["A", "B"]`: script variables whose values are counted as hot keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(untagged)]
pub enum KeyVars {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl KeyVars {
    pub fn names(&self) -> Vec<String> {
        match self {
            KeyVars::None => Vec::new(),
            KeyVars::One(v) => vec![v.clone()],
            KeyVars::Many(v) => v.clone(),
        }
    }
}

fn default_clients() -> usize {
    8
}

fn default_duration() -> u64 {
    20
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamDef {
    pub default: Scalar,
    #[serde(default)]
    pub help: String,
    /// `integer`, `number`, `duration`, `enum`, `identifier` or `text`; implied by the
    /// default when absent (see `ParamType::of`).
    #[serde(default, rename = "type")]
    pub kind: Option<ParamType>,
    /// Bounds of a numeric parameter (a duration's in milliseconds).
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    /// Allowed values, each expanding to the text substituted for `{{name}}`.
    #[serde(default)]
    pub values: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgbenchInit {
    pub scale: Scalar,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkDef {
    /// One statement returning one number: units of work done by the run.
    pub sql: String,
    /// Unit name shown in the ladder (`items`).
    pub unit: String,
    /// A monitor whose value 0 means no work is left (a queue's backlog): when it reaches 0
    /// before the run ends, the rate is the work done until then divided by that time, not
    /// by the whole run (a drained backlog would cap it otherwise).
    #[serde(default)]
    pub until_empty: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Background {
    pub name: String,
    /// Runs only when this (after substitution) is `on`, `true`, `yes` or `1`.
    #[serde(default)]
    pub when: Option<String>,
    /// Run on the background connection when the variant starts (kept open).
    pub sql: String,
    /// Run when the variant ends (default `rollback`).
    #[serde(default)]
    pub end: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Monitor {
    pub name: String,
    /// One statement returning one number, sampled every interval over its own connection
    /// (it may act too: the queue's `consumers killed` terminates a consumer each time).
    pub sql: String,
    /// Sampled only when this (after substitution) is `on`, `true`, `yes` or `1`.
    #[serde(default)]
    pub when: Option<String>,
}

/// One `[[perturbation]]`: `--perturb AT:KIND=ARGS` spelled as a table, `{{param}}`s
/// substituted in each part.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerturbationDef {
    /// `10s`, or `every30s`.
    pub at: Scalar,
    /// `checkpoint`, `xmin-hold`, … (docs/perturbations.md).
    pub kind: String,
    /// What follows `=` in `--perturb` (`5s`, `accounts,5s`).
    #[serde(default)]
    pub args: Option<Scalar>,
    /// Done only when this (after substitution) is `on`, `true`, `yes` or `1`.
    #[serde(default)]
    pub when: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryDef {
    /// 0 = unlimited (until the end of the run).
    #[serde(default = "one")]
    pub max_tries: u32,
    #[serde(default)]
    pub backoff: Option<String>,
    #[serde(default)]
    pub retry_on: Vec<String>,
    #[serde(default)]
    pub continue_on_error: bool,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupDef {
    pub name: String,
    #[serde(default)]
    pub script: Option<String>,
    #[serde(default)]
    pub scripts: Vec<String>,
    /// Default `{{clients}}`; a group with 0 clients is left out.
    #[serde(default)]
    pub clients: Option<Scalar>,
    /// Transactions per second for the whole group.
    #[serde(default)]
    pub rate: Option<Scalar>,
    #[serde(default)]
    pub goodput: Option<String>,
    /// Hot keys counted over this group's transactions only.
    #[serde(default)]
    pub key: KeyVars,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub about: String,
    #[serde(default)]
    pub baseline: bool,
    #[serde(default)]
    pub script: Option<String>,
    #[serde(default)]
    pub scripts: Vec<String>,
    #[serde(default)]
    pub groups: Vec<GroupDef>,
    #[serde(default)]
    pub setup: Vec<String>,
    /// Extra checks for this variant, after the scenario's.
    #[serde(default)]
    pub checks: Vec<String>,
    /// `read committed`, `repeatable read` or `serializable`.
    #[serde(default)]
    pub isolation: Option<String>,
    #[serde(default)]
    pub retry: Option<RetryDef>,
    #[serde(default)]
    pub goodput: Option<String>,
    /// Engine name → why the variant does not apply there.
    #[serde(default)]
    pub skip: BTreeMap<String, String>,
    #[serde(default)]
    pub settings: BTreeMap<String, Scalar>,
    /// Parameter values this variant sets (a `--param` still wins).
    #[serde(default)]
    pub params: BTreeMap<String, Scalar>,
    /// Left out of `hotbench demo`.
    #[serde(default)]
    pub demo: Option<bool>,
    /// Hot keys of this variant (besides the scenario's `key`).
    #[serde(default)]
    pub key: KeyVars,
    /// What the variant's clients rely on beyond single transactions (`["session"]`: session
    /// advisory locks, prepared statements, `SET`, temporary tables): not run where a pooler
    /// cannot give it.
    #[serde(default)]
    pub needs: Vec<Need>,
    /// This variant's own perturbations, after the scenario's.
    #[serde(default)]
    pub perturbation: Vec<PerturbationDef>,
}

/// Something a variant's clients rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Need {
    /// One server session per client for its whole run: a transaction pool refuses it.
    Session,
}

impl Variant {
    /// The variant's groups, the `script`/`scripts` shorthand becoming one group `main`.
    pub fn group_defs(&self) -> Vec<GroupDef> {
        if !self.groups.is_empty() {
            return self.groups.clone();
        }
        vec![GroupDef {
            name: "main".into(),
            script: self.script.clone(),
            scripts: self.scripts.clone(),
            clients: None,
            rate: None,
            goodput: None,
            key: KeyVars::None,
        }]
    }
}

impl GroupDef {
    pub fn script_specs(&self) -> Vec<String> {
        self.script
            .iter()
            .cloned()
            .chain(self.scripts.iter().cloned())
            .collect()
    }
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub bundle: Bundle,
    pub manifest: Manifest,
}

impl Scenario {
    pub fn name(&self) -> &str {
        &self.bundle.name
    }

    pub fn baseline(&self) -> Option<&Variant> {
        self.manifest.variants.iter().find(|v| v.baseline)
    }
}

/// `[ceiling]` in a manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CeilingDef {
    /// The variant whose statements (scripts, setup, settings) the ceiling runs.
    pub variant: String,
    /// Parameter overrides that remove the contention; they win over `--param`.
    #[serde(default)]
    pub params: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub about: String,
}

/// A parameter's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    /// A whole number (`-?[0-9]+`, 64-bit).
    Integer,
    /// A finite decimal number (`1.1`, `2e3`).
    Number,
    /// `N[us|ms|s|m|h]` (bare: milliseconds); expands to the number of milliseconds.
    Duration,
    /// One of the keys of `values`; expands to that key's text in the manifest.
    Enum,
    /// An SQL identifier: a letter or `_`, then letters, digits or `_` (at most 63 bytes).
    Identifier,
    /// Any text without NUL; expands to a quoted SQL literal (`'it''s'`).
    Text,
}
