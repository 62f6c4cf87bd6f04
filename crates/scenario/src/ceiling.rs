//! The ceiling: how fast the scenario's statements run with the contention removed (the
//! manifest's `[ceiling]`: one variant's statements with parameter overrides such as
//! `customers = 4000`). `scenario run` runs it after the variants as an extra row, not
//! ranked, and every variant gets its goodput as a percentage of the ceiling's — the distance
//! to what the server can do, which says whether to keep working on the schema or on the
//! hardware.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::manifest::{Manifest, Scalar, Variant};
use hotbench_stats::Ladder;

/// Name of the ceiling's row.
pub const CEILING: &str = "ceiling";

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

/// The ceiling as a variant (not the baseline, named [`CEILING`]); `None` without
/// `[ceiling]`. The manifest's validation guarantees the named variant exists.
pub fn ceiling_variant(m: &Manifest) -> Option<Variant> {
    let def = m.ceiling.as_ref()?;
    let mut v = m.variants.iter().find(|v| v.name == def.variant)?.clone();
    v.name = CEILING.into();
    v.baseline = false;
    let overrides: Vec<String> = def
        .params
        .iter()
        .map(|(k, x)| format!("{k}={}", x.text()))
        .collect();
    v.about = if def.about.is_empty() && overrides.is_empty() {
        format!("{}'s statements (not ranked)", def.variant)
    } else if def.about.is_empty() {
        format!(
            "{}'s statements with {} (not ranked)",
            def.variant,
            overrides.join(", ")
        )
    } else {
        def.about.clone()
    };
    for (k, x) in &def.params {
        v.params.insert(k.clone(), x.clone());
    }
    Some(v)
}

/// The user's `--param`s with the ceiling's overrides appended (the last value wins).
pub fn ceiling_params(m: &Manifest, user: &[(String, String)]) -> Vec<(String, String)> {
    let mut p = user.to_vec();
    if let Some(def) = &m.ceiling {
        p.extend(def.params.iter().map(|(k, x)| (k.clone(), x.text())));
    }
    p
}

/// Sets every variant's `pct_of_ceiling` (goodput ÷ the ceiling's goodput × 100) when the
/// ceiling ran and did useful work.
pub fn apply_pct(l: &mut Ladder) {
    let Some(top) = l
        .ceiling
        .as_ref()
        .and_then(|c| c.useful_per_s())
        .filter(|x| *x > 0.0)
    else {
        return;
    };
    for v in &mut l.variants {
        v.pct_of_ceiling = v.useful_per_s().map(|u| u * 100.0 / top);
    }
}

/// Text lines under the ladder table: the ceiling's goodput and each variant's share of it.
pub fn lines(l: &Ladder) -> String {
    let Some(c) = &l.ceiling else {
        return String::new();
    };
    let unit = l.work_unit.as_deref().unwrap_or("goodput");
    let mut out = match c.useful_per_s() {
        Some(u) => format!("ceiling: {u:.0} {unit}/s — {}\n", c.about),
        None => format!(
            "ceiling: did not run ({})\n",
            c.skipped.as_deref().unwrap_or("no record")
        ),
    };
    let pcts: Vec<String> = l
        .variants
        .iter()
        .filter_map(|v| v.pct_of_ceiling.map(|p| format!("{} {p:.0}%", v.name)))
        .collect();
    if !pcts.is_empty() {
        out.push_str(&format!("% of ceiling: {}\n", pcts.join(", ")));
    }
    out
}
