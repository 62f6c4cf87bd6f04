//! Which variants a ladder runs: `--variants` (in the manifest's order), or all of them (in a
//! demo, those not marked `demo = false`), and whether the ceiling runs after them (a whole
//! ladder, or `ceiling` named in `--variants`). An empty or unknown selection is an input
//! error, found before any server is started.

use crate::ceiling::CEILING;
use crate::error::{Result, ScenarioError};
use crate::manifest::{Scenario, Variant};

/// The variants a ladder runs: `wanted` (`--variants`) in the manifest's order, or all (those
/// not marked `demo = false` in a demo). An unknown name is an input error, so callers can
/// check before starting a server.
pub fn select_variants<'s>(
    scn: &'s Scenario,
    wanted: Option<&[String]>,
    demo: bool,
) -> Result<Vec<&'s Variant>> {
    let all = &scn.manifest.variants;
    let Some(wanted) = wanted else {
        return Ok(all
            .iter()
            .filter(|v| !demo || v.demo != Some(false))
            .collect());
    };
    if wanted.is_empty() {
        return Err(ScenarioError::Input(format!(
            "--variants selects no variant of \"{}\" (give names separated by commas: {})",
            scn.name(),
            all.iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    let has_ceiling = scn.manifest.ceiling.is_some();
    if wanted.iter().all(|w| has_ceiling && w == CEILING) {
        return Err(ScenarioError::Input(format!(
            "--variants names only the ceiling of \"{}\": add the variant(s) to measure against it",
            scn.name()
        )));
    }
    for w in wanted {
        let known = all.iter().any(|v| &v.name == w) || (has_ceiling && w == CEILING);
        if !known {
            return Err(ScenarioError::Input(format!(
                "scenario \"{}\" has no variant \"{w}\" (variants: {})",
                scn.name(),
                all.iter()
                    .map(|v| v.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(all.iter().filter(|v| wanted.contains(&v.name)).collect())
}

/// Whether the ceiling runs after the selected variants: the manifest has one and the ladder
/// is whole (no `--variants`) or `--variants` names `ceiling`; never in a demo.
pub fn runs_ceiling(scn: &Scenario, wanted: Option<&[String]>, demo: bool) -> bool {
    scn.manifest.ceiling.is_some() && !demo && wanted.is_none_or(|w| w.iter().any(|v| v == CEILING))
}
