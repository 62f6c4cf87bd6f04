//! Which variants a ladder runs: `--variants` (in the manifest's order), or all of them (in a
//! demo, those not marked `demo = false`). An empty or unknown selection is an input error,
//! found before any server is started.

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
    for w in wanted {
        if !all.iter().any(|v| &v.name == w) {
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
