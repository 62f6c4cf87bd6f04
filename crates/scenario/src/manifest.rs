//! The scenario manifest (`scenario.toml`): its typed shape, parsing with `file:line`
//! errors (unknown keys rejected), and the checks that need the whole bundle (referenced
//! files exist, exactly one baseline, names unique). Documented in `docs/scenarios.md`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Result, ScenarioError};
use crate::source::{Bundle, MANIFEST};

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
    pub ceiling: Option<crate::ceiling::CeilingDef>,
    /// Hot keys (`--key`) of every variant: the script variable(s) naming the contended
    /// thing (`key = "customer"`), recorded per variant as `hot_keys`.
    #[serde(default)]
    pub key: KeyVars,
}

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
    /// default when absent (see [`crate::param_type::ParamType::of`]).
    #[serde(default, rename = "type")]
    pub kind: Option<crate::param_type::ParamType>,
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

/// Byte offset → 1-based line.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line where `needle` first appears (to point at a manifest entry).
fn find_line(text: &str, needle: &str) -> Option<usize> {
    text.find(needle).map(|o| line_of(text, o))
}

/// Parses and validates `bundle`'s manifest.
pub fn load(bundle: Bundle) -> Result<Scenario> {
    let file = bundle.display(MANIFEST);
    let text = bundle
        .file(MANIFEST)
        .ok_or_else(|| ScenarioError::manifest(&file, None, "missing manifest"))?;
    let manifest: Manifest = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        ScenarioError::manifest(&file, line, e.message().trim())
    })?;
    let at = At {
        file: &file,
        text,
        bundle: &bundle,
    };
    check_variant_set(&at, &manifest)?;
    check_keys(&at, &manifest)?;
    let mut seen = std::collections::BTreeSet::new();
    for v in &manifest.variants {
        if !seen.insert(v.name.clone()) {
            return Err(at.err(
                &format!("\"{}\"", v.name),
                format!("variant \"{}\" is defined twice", v.name),
            ));
        }
        check_variant(&at, v)?;
    }
    check_files(&at, &manifest)?;
    check_work(&at, &manifest)?;
    check_params(&at, &manifest)?;
    Ok(Scenario { bundle, manifest })
}

/// Where a manifest error points: the manifest's text (to find the entry's line) and the
/// bundle (to find the files it names).
struct At<'a> {
    file: &'a str,
    text: &'a str,
    bundle: &'a Bundle,
}

impl At<'_> {
    /// An error at the line where `needle` first appears.
    fn err(&self, needle: &str, msg: String) -> ScenarioError {
        ScenarioError::manifest(self.file, find_line(self.text, needle), msg)
    }

    /// `f` must be one of the bundle's files.
    fn file_exists(&self, needle: &str, f: &str) -> Result<()> {
        match self.bundle.file(f) {
            Some(_) => Ok(()),
            None => Err(self.err(
                needle,
                format!("file \"{f}\" not found in {}", self.bundle.location),
            )),
        }
    }
}

/// Variants exist, exactly one is the baseline, and the ceiling names one of them.
fn check_variant_set(at: &At<'_>, manifest: &Manifest) -> Result<()> {
    if manifest.variants.is_empty() {
        return Err(ScenarioError::manifest(at.file, None, "no [[variants]]"));
    }
    let baselines = manifest.variants.iter().filter(|v| v.baseline).count();
    if baselines != 1 {
        return Err(ScenarioError::manifest(
            at.file,
            find_line(at.text, "baseline"),
            format!("exactly one variant must have baseline = true (found {baselines})"),
        ));
    }
    if let Some(c) = &manifest.ceiling {
        if !manifest.variants.iter().any(|v| v.name == c.variant) {
            return Err(at.err(
                "[ceiling]",
                format!("[ceiling]: no variant named \"{}\"", c.variant),
            ));
        }
        if let Some(k) = c.params.keys().find(|k| !manifest.params.contains_key(*k)) {
            return Err(at.err("[ceiling]", format!("[ceiling]: unknown parameter \"{k}\"")));
        }
    }
    Ok(())
}

/// Every `key` (scenario, variant, group) is a script variable name.
fn check_keys(at: &At<'_>, manifest: &Manifest) -> Result<()> {
    let key_lists = std::iter::once(&manifest.key)
        .chain(manifest.variants.iter().map(|v| &v.key))
        .chain(
            manifest
                .variants
                .iter()
                .flat_map(|v| v.groups.iter().map(|g| &g.key)),
        );
    for k in key_lists.flat_map(KeyVars::names) {
        if !hotbench_script::valid_variable_name(&k) {
            return Err(at.err(
                &format!("\"{k}\""),
                format!("invalid key \"{k}\": expected a script variable name"),
            ));
        }
    }
    Ok(())
}

/// One variant: its name, its groups' scripts (which exist), its files, isolation and
/// goodput rules.
fn check_variant(at: &At<'_>, v: &Variant) -> Result<()> {
    let here = format!("\"{}\"", v.name);
    if !valid_name(&v.name) {
        return Err(at.err(
            &here,
            format!(
                "invalid variant name \"{}\": use letters, digits, - and _",
                v.name
            ),
        ));
    }
    if v.name == crate::ceiling::CEILING {
        return Err(at.err(
            &here,
            "the variant name \"ceiling\" is reserved (the [ceiling] row; --variants …,ceiling)"
                .into(),
        ));
    }
    let groups = v.group_defs();
    for g in &groups {
        if g.script_specs().is_empty() {
            return Err(at.err(
                &here,
                format!("variant \"{}\": group \"{}\" has no script", v.name, g.name),
            ));
        }
    }
    if !v.groups.is_empty() && (v.script.is_some() || !v.scripts.is_empty()) {
        return Err(at.err(
            &here,
            format!(
                "variant \"{}\": give either script(s) or [[variants.groups]], not both",
                v.name
            ),
        ));
    }
    for g in &groups {
        check_weights(g).map_err(|m| {
            at.err(
                &here,
                format!("variant \"{}\": group \"{}\": {m}", v.name, g.name),
            )
        })?;
        for s in g.script_specs() {
            let (file_name, _) = split_weight(&s);
            if !file_name.starts_with("builtin:") {
                at.file_exists(&s, file_name)?;
            }
        }
    }
    for f in v.setup.iter().chain(&v.checks) {
        at.file_exists(f, f)?;
    }
    if let Some(i) = &v.isolation {
        if !matches!(
            i.as_str(),
            "read committed" | "repeatable read" | "serializable"
        ) {
            return Err(at.err(
                i,
                format!("variant \"{}\": isolation must be read committed, repeatable read or serializable", v.name),
            ));
        }
    }
    for g in v
        .goodput
        .iter()
        .chain(groups.iter().filter_map(|g| g.goodput.as_ref()))
    {
        parse_goodput(g).map_err(|m| at.err(g, m))?;
    }
    Ok(())
}

/// The scenario's own files exist, and every SQL file (with its engine versions) closes
/// what it opens: an unterminated comment or quote would silently swallow the statements
/// after it.
fn check_files(at: &At<'_>, manifest: &Manifest) -> Result<()> {
    let scenario_files = manifest
        .setup
        .iter()
        .chain(&manifest.finish)
        .chain(&manifest.checks);
    for f in scenario_files.clone() {
        at.file_exists(f, f)?;
    }
    let sql_files: Vec<&String> = scenario_files
        .chain(
            manifest
                .variants
                .iter()
                .flat_map(|v| v.setup.iter().chain(&v.checks)),
        )
        .collect();
    let bundle = at.bundle;
    for (name, text) in &bundle.files {
        if name.ends_with(".sql") && sql_files.iter().any(|f| same_file_family(f, name)) {
            crate::sqlsplit::split(text).map_err(|e| {
                ScenarioError::manifest(&bundle.display(name), Some(e.line), e.what)
            })?;
        }
    }
    Ok(())
}

/// The goodput rule, `work.until_empty` (a monitor) and `work_group` (a group) name what
/// exists.
fn check_work(at: &At<'_>, manifest: &Manifest) -> Result<()> {
    if let Some(g) = &manifest.goodput {
        parse_goodput(g).map_err(|m| at.err(g, m))?;
    }
    if let Some(m) = manifest.work.as_ref().and_then(|w| w.until_empty.as_ref()) {
        if !manifest.monitors.iter().any(|mo| &mo.name == m) {
            return Err(at.err(m, format!("work.until_empty names no monitor: \"{m}\"")));
        }
    }
    if let Some(g) = &manifest.work_group {
        let known = manifest
            .variants
            .iter()
            .any(|v| v.group_defs().iter().any(|d| &d.name == g));
        if !known {
            return Err(at.err(g, format!("work_group \"{g}\" is no variant's group")));
        }
    }
    Ok(())
}

/// Parameters: none shadows a built-in one, enums list their values, and defaults, mode
/// presets and variant values all fit their parameter's type.
fn check_params(at: &At<'_>, manifest: &Manifest) -> Result<()> {
    for (name, def) in &manifest.params {
        if matches!(name.as_str(), "clients" | "duration" | "mode") {
            return Err(at.err(
                name,
                format!("parameter \"{name}\" is built in; set `{name}` at the top level instead"),
            ));
        }
        let here = format!("[params.{name}]");
        let kind = crate::param_type::ParamType::of(def);
        if (kind == crate::param_type::ParamType::Enum) != def.values.is_some() {
            return Err(at.err(
                &here,
                format!("parameter \"{name}\": an enum lists its `values`, and only an enum does"),
            ));
        }
    }
    crate::params::Params::resolve(manifest, None, &[])
        .map_err(|e| at.err("[params", e.to_string()))?;
    for v in &manifest.variants {
        crate::params::Params::resolve(manifest, Some(v), &[]).map_err(|e| {
            at.err(
                &format!("\"{}\"", v.name),
                format!("variant \"{}\": {e}", v.name),
            )
        })?;
    }
    // The ceiling's overrides too: a bad one is found now, not after the whole ladder ran.
    if let Some(cv) = crate::ceiling::ceiling_variant(manifest) {
        let own = crate::ceiling::ceiling_params(manifest, &[]);
        crate::params::Params::resolve(manifest, Some(&cv), &own)
            .map_err(|e| at.err("[ceiling]", format!("[ceiling]: {e}")))?;
    }
    for mode in manifest.modes.keys() {
        crate::params::Params::resolve(manifest, None, &[("mode".into(), mode.clone())])
            .map_err(|e| at.err(&format!("[modes.{mode}]"), format!("mode \"{mode}\": {e}")))?;
    }
    Ok(())
}

/// `schema.sql` and its engine versions (`schema.yugabytedb.sql`).
fn same_file_family(listed: &str, file: &str) -> bool {
    match (listed.strip_suffix(".sql"), file.strip_suffix(".sql")) {
        (Some(stem), Some(f)) => {
            f == stem || f.strip_prefix(stem).is_some_and(|r| r.starts_with('.'))
        }
        _ => false,
    }
}

pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A group's script weights as `-f FILE@W` takes them: each at most 2147483647, and not all
/// zero (pgbench refuses a total weight of zero; no script could be picked).
fn check_weights(g: &GroupDef) -> std::result::Result<(), String> {
    let mut total: u64 = 0;
    for spec in g.script_specs() {
        let w = match split_weight(&spec).1 {
            Some(w) => w
                .parse::<u64>()
                .ok()
                .filter(|w| *w <= i32::MAX as u64)
                .ok_or_else(|| format!("weight in \"{spec}\" out of range (0 .. {})", i32::MAX))?,
            None => 1,
        };
        total += w;
    }
    if total == 0 {
        return Err("total script weight must not be zero".into());
    }
    Ok(())
}

/// `file.sql@5` → (`file.sql`, 5).
pub fn split_weight(spec: &str) -> (&str, Option<&str>) {
    match spec.rsplit_once('@') {
        Some((f, w)) if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => (f, Some(w)),
        _ => (spec, None),
    }
}

pub fn parse_goodput(g: &str) -> std::result::Result<hotbench_engine::GoodputRule, String> {
    hotbench_engine::GoodputRule::parse(g)
}
