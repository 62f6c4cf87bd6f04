//! Parameters: defaults from the manifest, a mode's preset, the variant's own values, then
//! the user's `--param k=v` (and `-c`/`-T`, which set `clients`/`duration`). Substituted as
//! `{{name}}` into SQL, scripts and group settings; also given to scripts as `-D` variables.
//! A parameter with `values` expands to the chosen value's text; expansions may themselves
//! use `{{…}}`.

use std::collections::BTreeMap;

use crate::error::{Result, ScenarioError};
use crate::manifest::{Manifest, Variant};
use crate::param_type::{sql_literal, ParamType, Rule};

/// Resolved parameters of one variant.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Params {
    /// Name → value as chosen (before expansion).
    pub values: BTreeMap<String, String>,
    /// Name → allowed values' expansions (for parameters with `values`).
    #[serde(skip)]
    pub expansions: BTreeMap<String, BTreeMap<String, String>>,
    /// Name → type and bounds (parameters without one, like `mode`, are checked elsewhere).
    #[serde(skip)]
    pub rules: BTreeMap<String, Rule>,
}

impl Params {
    /// Resolves the parameters of `variant` (`None`: scenario defaults only).
    pub fn resolve(
        m: &Manifest,
        variant: Option<&Variant>,
        user: &[(String, String)],
    ) -> Result<Params> {
        let mut p = Params::default();
        p.values.insert("clients".into(), m.clients.to_string());
        p.values.insert("duration".into(), m.duration.to_string());
        p.rules.insert("clients".into(), Rule::positive_int());
        p.rules.insert("duration".into(), Rule::positive_int());
        for (k, d) in &m.params {
            p.values.insert(k.clone(), d.default.text());
            p.rules.insert(k.clone(), Rule::of(d));
            if let Some(v) = &d.values {
                p.expansions.insert(k.clone(), v.clone());
            }
        }
        let known = |k: &str| p.values.contains_key(k) || (k == "mode" && !m.modes.is_empty());
        for (k, _) in user {
            if !known(k) {
                let mut names: Vec<&str> = p.values.keys().map(String::as_str).collect();
                if !m.modes.is_empty() {
                    names.push("mode");
                }
                return Err(ScenarioError::Input(format!(
                    "unknown parameter \"{k}\" (this scenario has: {})",
                    names.join(", ")
                )));
            }
        }
        if let Some((_, mode)) = user.iter().rev().find(|(k, _)| k == "mode") {
            let preset = m.modes.get(mode).ok_or_else(|| {
                ScenarioError::Input(format!(
                    "unknown mode \"{mode}\" (modes: {})",
                    m.modes.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            })?;
            for (k, v) in preset {
                p.values.insert(k.clone(), v.text());
            }
            p.values.insert("mode".into(), mode.clone());
        } else if !m.modes.is_empty() {
            p.values.insert("mode".into(), "default".into());
        }
        if let Some(v) = variant {
            for (k, val) in &v.params {
                p.values.insert(k.clone(), val.text());
            }
        }
        for (k, v) in user {
            if k != "mode" {
                p.values.insert(k.clone(), v.clone());
            }
        }
        for (k, rule) in &p.rules {
            if let Some(v) = p.values.get_mut(k) {
                *v = rule.check(v).map_err(|why| {
                    ScenarioError::Input(format!(
                        "invalid value \"{v}\" for parameter \"{k}\" ({}): {why}",
                        rule.kind.name()
                    ))
                })?;
            }
        }
        for (k, allowed) in &p.expansions {
            if let Some(v) = p.values.get(k) {
                if !allowed.contains_key(v) {
                    return Err(ScenarioError::Input(format!(
                        "invalid value \"{v}\" for parameter \"{k}\" (allowed: {})",
                        allowed.keys().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
            }
        }
        Ok(p)
    }

    /// The text `{{name}}` expands to: an enum's expansion, text as a quoted SQL literal,
    /// other values as validated.
    pub fn expansion(&self, name: &str) -> Option<String> {
        let v = self.values.get(name)?;
        if let Some(x) = self.expansions.get(name).and_then(|e| e.get(v)) {
            return Some(x.clone());
        }
        Some(match self.rules.get(name).map(|r| r.kind) {
            Some(ParamType::Text) => sql_literal(v),
            _ => v.clone(),
        })
    }

    /// `-D` definitions: every parameter whose name is a script variable name and whose
    /// expansion is one line. Text parameters are not: pgbench pastes `:name` into SQL
    /// unquoted, so free text reaches SQL only as `{{name}}`, a quoted literal.
    pub fn defines(&self) -> Vec<(String, String)> {
        self.values
            .keys()
            .filter(|k| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .filter(|k| self.rules.get(*k).map(|r| r.kind) != Some(ParamType::Text))
            .filter_map(|k| {
                let x = self.expansion(k)?;
                (!x.contains('\n') && !x.is_empty()).then(|| (k.clone(), x))
            })
            .collect()
    }

    /// A parameter as a number (for clients, rates, scale).
    pub fn number(&self, text: &str, what: &str, extra: &BTreeMap<String, String>) -> Result<f64> {
        let s = self.substitute(text, extra).map_err(ScenarioError::Input)?;
        s.trim().parse::<f64>().map_err(|_| {
            ScenarioError::Input(format!("{what}: \"{s}\" is not a number (from \"{text}\")"))
        })
    }

    /// A variant's `about` with its parameters filled in (`claiming up to 10 jobs`), for people
    /// to read: text that cannot be expanded (a run value) is left as written.
    pub fn describe(&self, about: &str) -> String {
        self.substitute(about, &BTreeMap::new())
            .unwrap_or_else(|_| about.to_string())
    }

    /// Replaces every `{{name}}` in `text`; `extra` adds run values (`committed`, …) for
    /// checks. The error names the unknown parameter.
    pub fn substitute(
        &self,
        text: &str,
        extra: &BTreeMap<String, String>,
    ) -> std::result::Result<String, String> {
        let mut budget = EXPANSION_LIMIT;
        self.subst_depth(text, extra, 0, &mut budget)
    }

    /// One level of expansion; `budget` is what is left of [`EXPANSION_LIMIT`] for every
    /// byte copied at any level, so nested expansions that repeat each other (a few
    /// kilobytes of manifest can name terabytes) stop with an error, in bounded time and
    /// memory.
    fn subst_depth(
        &self,
        text: &str,
        extra: &BTreeMap<String, String>,
        depth: usize,
        budget: &mut usize,
    ) -> std::result::Result<String, String> {
        if depth > 5 {
            return Err("parameter expansions nest too deeply".into());
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            push(&mut out, &rest[..start], budget)?;
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| "unterminated \"{{\" (expected {{name}})".to_string())?;
            let name = after[..end].trim();
            let value = match self.expansion(name) {
                Some(v) => self.subst_depth(&v, extra, depth + 1, budget)?,
                None => match extra.get(name) {
                    Some(v) => v.clone(),
                    None => {
                        return Err(if is_run_value(name) {
                            format!("{{{{{name}}}}} is only available in checks")
                        } else {
                            format!("unknown parameter {{{{{name}}}}}")
                        })
                    }
                },
            };
            push(&mut out, &value, budget)?;
            rest = &after[end + 2..];
        }
        push(&mut out, rest, budget)?;
        Ok(out)
    }
}

/// Appends `piece`, taking its length from `budget`.
fn push(out: &mut String, piece: &str, budget: &mut usize) -> std::result::Result<(), String> {
    *budget = budget.checked_sub(piece.len()).ok_or_else(|| {
        format!(
            "parameter expansion is larger than {} MiB (nested {{{{…}}}} values repeat each other too often)",
            EXPANSION_LIMIT >> 20
        )
    })?;
    out.push_str(piece);
    Ok(())
}

/// Bytes a substitution may copy, over all its nesting levels: the size limit of a script
/// or scenario file read from disk.
pub const EXPANSION_LIMIT: usize = hotbench_results::input_file::SCRIPT_LIMIT as usize;

fn is_run_value(name: &str) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    matches!(
        base,
        "committed" | "goodput" | "failed" | "work" | "unfinished"
    )
}

/// Parses `k=v`.
pub fn parse_assignment(s: &str) -> Result<(String, String)> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(ScenarioError::Input(format!(
            "invalid --param \"{s}\": expected NAME=VALUE"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::default();
        for (k, v) in pairs {
            p.values.insert(k.to_string(), v.to_string());
        }
        p
    }

    #[test]
    fn substitutes_and_reports_unknown() {
        let p = params(&[("n", "4")]);
        let none = BTreeMap::new();
        assert_eq!(p.substitute("a {{n}} b {{ n }}", &none).unwrap(), "a 4 b 4");
        assert_eq!(
            p.substitute("{{m}}", &none).unwrap_err(),
            "unknown parameter {{m}}"
        );
        assert!(p
            .substitute("{{committed}}", &none)
            .unwrap_err()
            .contains("only available in checks"));
        assert!(p.substitute("{{n", &none).is_err());
    }

    #[test]
    fn expansions_that_multiply_stop_at_the_size_limit() {
        // Five levels, each repeating the next 64 times: 64^5 copies of "x" (1 GiB).
        let mut p = params(&[]);
        for i in 0..5 {
            let next = if i == 4 {
                "x".to_string()
            } else {
                format!("{{{{e{}}}}}", i + 1)
            };
            p.values.insert(format!("e{i}"), "v".into());
            p.expansions
                .insert(format!("e{i}"), [("v".to_string(), next.repeat(64))].into());
        }
        let t = std::time::Instant::now();
        let e = p.substitute("{{e0}}", &BTreeMap::new()).unwrap_err();
        assert!(e.contains("larger than 16 MiB"), "{e}");
        assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
        // Within the limit, nesting still expands.
        assert_eq!(p.substitute("{{e4}}", &BTreeMap::new()).unwrap().len(), 64);
    }

    #[test]
    fn expansions_nest() {
        let mut p = params(&[("dist", "u"), ("records", "10")]);
        p.expansions.insert(
            "dist".into(),
            [("u".to_string(), "random(1, {{records}})".to_string())].into(),
        );
        assert_eq!(
            p.substitute("\\set k {{dist}}", &BTreeMap::new()).unwrap(),
            "\\set k random(1, 10)"
        );
    }

    #[test]
    fn describe_fills_parameters_and_leaves_run_values() {
        let p = params(&[("batch", "10")]);
        assert_eq!(
            p.describe("claiming up to {{batch}} jobs"),
            "claiming up to 10 jobs"
        );
        assert_eq!(p.describe("{{committed}} done"), "{{committed}} done");
    }
}
