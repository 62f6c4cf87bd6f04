//! `[[perturbation]]` in a manifest: what `--perturb` does, declared by the scenario for every
//! variant (top level) or for one (`perturbation = [{ … }]` in its `[[variants]]` entry), with
//! `{{param}}`s substituted and a `when` switch like the background sessions'. The queue's
//! old snapshot (`xmin_holder=on`) and killed consumers (`kill_consumer=on`) are two of them.
//! Each becomes a `--perturb` of the variant's run (`AT:KIND=ARGS`), so the engine fires and
//! records them as it does the user's, after them in the record's `config.perturb`.

use std::collections::BTreeMap;

use hotbench_engine::Perturbation;

use crate::background::switched_on;
use crate::error::{Result, ScenarioError};
use crate::manifest::{PerturbationDef, Scenario, Variant};
use crate::params::Params;

/// The perturbations of variant `v` with its `params`: the scenario's, then its own, those
/// switched off left out.
pub fn resolve(scn: &Scenario, v: &Variant, params: &Params) -> Result<Vec<Perturbation>> {
    let file = scn.bundle.display("scenario.toml");
    let all = scn
        .manifest
        .perturbation
        .iter()
        .map(|d| (d, ""))
        .chain(v.perturbation.iter().map(|d| (d, " of variant")));
    let mut out = Vec::new();
    for (n, (def, whose)) in all.enumerate() {
        let what = format!("[[perturbation]] {}{whose} ({})", n + 1, def.kind);
        if !switched_on(params, def.when.as_deref(), &what)? {
            continue;
        }
        let spec = spelled(def, params)
            .map_err(|e| ScenarioError::manifest(&file, None, format!("{what}: {e}")))?;
        let p = Perturbation::parse(&spec).map_err(|e| {
            ScenarioError::manifest(&file, None, format!("variant \"{}\": {what}: {e}", v.name))
        })?;
        out.push(p);
    }
    Ok(out)
}

/// `AT:KIND[=ARGS]`, each part substituted.
fn spelled(def: &PerturbationDef, params: &Params) -> std::result::Result<String, String> {
    let none = BTreeMap::new();
    let at = params.substitute(&def.at.text(), &none)?;
    let kind = params.substitute(&def.kind, &none)?;
    let mut spec = format!("{}:{}", at.trim(), kind.trim());
    if let Some(a) = &def.args {
        spec.push('=');
        spec.push_str(&params.substitute(&a.text(), &none)?);
    }
    Ok(spec)
}
