//! Reading a scenario: its `scenario.toml` parsed into the typed manifest (`manifest.rs`)
//! with `file:line` errors, then the checks that need the whole bundle (referenced files
//! exist, exactly one baseline, names unique, script weights as `-f FILE@W` takes them,
//! parameters fit their types, the shapes it reproduces name its variants and parameters).

use hotbench_script::parse_weight;

use crate::error::{Result, ScenarioError};
use crate::manifest::{GroupDef, KeyVars, Manifest, Scenario, Variant, OBSERVATIONS};
use crate::source::{Bundle, MANIFEST};

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
    check_reproduces(&at, &manifest)?;
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
            // check_weights parsed every spec already.
            let Ok((file_name, _)) = parse_weight(&s) else {
                continue;
            };
            if !file_name.starts_with("builtin:") {
                at.file_exists(&s, &file_name)?;
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

/// A group's scripts as `-f FILE@W` takes them (`hotbench_script::parse_weight`, pgbench's
/// rules and words: each weight 0 .. 2147483647), and not all zero (pgbench refuses a total
/// weight of zero; no script could be picked).
fn check_weights(g: &GroupDef) -> std::result::Result<(), String> {
    let mut total: u64 = 0;
    for spec in g.script_specs() {
        let (_, w) = parse_weight(&spec).map_err(|e| format!("\"{spec}\": {e}"))?;
        total += w as u64;
    }
    if total == 0 {
        return Err("total script weight must not be zero".into());
    }
    Ok(())
}

/// Each `[[reproduces]]` names a shape once, this scenario's variants and parameters, and
/// observations a diagnosis makes.
fn check_reproduces(at: &At<'_>, manifest: &Manifest) -> Result<()> {
    let mut shapes = std::collections::BTreeSet::new();
    for r in &manifest.reproduces {
        let here = format!("\"{}\"", r.shape);
        if !valid_name(&r.shape) {
            return Err(at.err(
                &here,
                format!("[[reproduces]]: invalid shape name \"{}\"", r.shape),
            ));
        }
        if !shapes.insert(r.shape.as_str()) {
            return Err(at.err(
                &here,
                format!("[[reproduces]]: shape \"{}\" is listed twice", r.shape),
            ));
        }
        let what = |m: String| at.err(&here, format!("[[reproduces]] \"{}\": {m}", r.shape));
        if let Some(v) = r
            .variants
            .iter()
            .find(|v| !manifest.variants.iter().any(|x| &x.name == *v))
        {
            return Err(what(format!("no variant named \"{v}\"")));
        }
        let params = r.params.keys().chain(r.observed.values());
        if let Some(p) = params
            .into_iter()
            .find(|p| !manifest.params.contains_key(*p))
        {
            return Err(what(format!("unknown parameter \"{p}\"")));
        }
        if let Some(o) = r
            .observed
            .keys()
            .find(|o| !OBSERVATIONS.contains(&o.as_str()))
        {
            return Err(what(format!(
                "unknown observation \"{o}\" (expected one of {})",
                OBSERVATIONS.join(", ")
            )));
        }
    }
    Ok(())
}

pub fn parse_goodput(g: &str) -> std::result::Result<hotbench_engine::GoodputRule, String> {
    hotbench_engine::GoodputRule::parse(g)
}
