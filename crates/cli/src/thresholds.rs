//! `--threshold EXPR` on `run`, `scenario run`, `demo` and `sweep`: expressions are parsed
//! before anything runs (a bad one is exit 1 with its text), checked on the final results
//! (the logic is `hotbench_results::threshold`), printed ✔/✘ with the measured values, stored
//! in the JSON file as `thresholds[]`, and a crossed one makes the exit code 3 (unless the run
//! itself failed: 2 wins).

use std::path::Path;

use hotbench_results::threshold::{self, Subject, Threshold};
use hotbench_results::ThresholdOutcome;

use crate::fail::{Fail, Result};

/// Exit code when every run succeeded but a threshold was crossed.
pub const EXIT_THRESHOLD_FAILED: u8 = 3;

pub fn parse(texts: &[String]) -> Result<Vec<Threshold>> {
    threshold::parse_all(texts).map_err(|e| Fail::input(e.to_string()))
}

/// Refuses a `VARIANT:` scope naming none of the scenario's variants (before running).
pub fn check_variants(thresholds: &[Threshold], variants: &[&str]) -> Result<()> {
    for t in thresholds {
        if let threshold::Scope::Variant(v) = &t.scope {
            if !variants.contains(&v.as_str()) {
                return Err(Fail::input(format!(
                    "invalid --threshold \"{}\": the scenario has no variant \"{v}\" (variants: {})",
                    t.text,
                    variants.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Checks the thresholds, prints the outcome and, with `--json`, rewrites the file as the
/// document `with` makes of the outcomes (the command's result with its `thresholds`
/// filled). Returns true when all passed.
pub fn check<D: serde::Serialize>(
    thresholds: &[Threshold],
    subjects: &[Subject<'_>],
    json: Option<&Path>,
    with: impl FnOnce(Vec<ThresholdOutcome>) -> D,
) -> Result<bool> {
    if thresholds.is_empty() {
        return Ok(true);
    }
    let outcomes = threshold::evaluate(thresholds, subjects);
    let text = hotbench_report::text::threshold::render(&outcomes);
    print!("{}", hotbench_results::terminal::escape_lines(&text));
    let ok = threshold::all_ok(&outcomes);
    if let Some(p) = json {
        hotbench_results::json_file::write_atomic(p, &with(outcomes))
            .map_err(|e| Fail::run(e.to_string()))?;
    }
    Ok(ok)
}

/// The command's exit code: its own when not 0, else 3 when a threshold failed.
pub fn exit_code(code: u8, thresholds_ok: bool) -> u8 {
    if code == 0 && !thresholds_ok {
        eprintln!("hotbench: error: thresholds crossed (see above)");
        EXIT_THRESHOLD_FAILED
    } else {
        code
    }
}
