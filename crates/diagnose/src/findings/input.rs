//! What every finding reads (`Input`) and the few helpers they word their checks and
//! statements with, shared by the findings' modules and the ranking in `findings/mod.rs`.

use hotbench_results::diagnosis_record::{Check, FindingStatement};
use hotbench_results::probe_record::ProbeRecord;

/// What the findings are judged from.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub probe: &'a ProbeRecord,
    /// Seconds sampled.
    pub duration_s: f64,
    /// Cores of the server's machine, when known.
    pub server_cores: Option<u32>,
    /// Bodies of the functions the statements call (read after the sample).
    pub functions: &'a crate::functions::Bodies,
    /// The scenarios that reproduce what the findings recognise.
    pub catalog: &'a crate::catalog::Catalog,
}

pub(crate) fn check(what: &str, value: impl Into<String>, found: bool) -> Check {
    Check {
        what: what.into(),
        value: value.into(),
        found,
    }
}

pub(crate) fn statement(
    role: &str,
    s: &hotbench_results::probe_record::ActiveStatement,
    samples: u64,
) -> FindingStatement {
    FindingStatement {
        role: role.into(),
        queryid: s.queryid.clone(),
        query: s.query.clone(),
        samples,
        state: String::new(),
    }
}

/// `62%`.
pub(crate) fn pct(share: f64) -> String {
    // Never "-0%".
    let v = share * 100.0;
    format!("{:.0}%", if v > 0.0 { v } else { 0.0 })
}
