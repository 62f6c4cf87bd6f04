//! What a ladder is run with (`LadderOptions`, the `ProbeStarter` the binary plugs in) and
//! a variant made ready to run (`Prepared`: everything user-controlled validated), shared
//! by the ladder (`ladder.rs`) and the variant's steps (`ladder/variant.rs`); and the record
//! of a variant that did not run, and a scenario's SQL files as a variant runs them.

use hotbench_engine::{
    GroupConfig, QueryMode, RetryPolicy, RunObserver, RunSettings, SharedServer,
};
use std::collections::BTreeMap;

use hotbench_results::VariantResult;
use hotbench_wire::Config;

use crate::error::{Result, ScenarioError};
use crate::manifest::{Scenario, Variant};
use crate::params::Params;

/// Starts server-side sampling for each variant (the probes of `hotbench-probe`, plugged in
/// by the binary). The sampling runs as an observer of the variant's run and stores what it
/// sampled in the record when the run ends (`record.probes`); the ladder's "top wait" column
/// is `RunRecord::top_wait`.
pub trait ProbeStarter {
    /// Starts sampling the backends whose `application_name` is `application_name`.
    fn start(
        &self,
        conn: &Config,
        application_name: &str,
        tables: &[String],
    ) -> Box<dyn RunObserver>;
}

/// How to run a ladder.
#[derive(Clone)]
pub struct LadderOptions<'a> {
    /// The target database (the scenario adds its schema and session settings).
    pub conn: Config,
    /// `--param k=v` (and `clients`/`duration` from `-c`/`-T`), in order.
    pub params: Vec<(String, String)>,
    /// `--variants a,b`: these only, in the manifest's order.
    pub variants: Option<Vec<String>>,
    /// Only variants not marked `demo = false`.
    pub demo: bool,
    /// The settings every command shares (`-j`, `--rtt`, `--interval`, …), as given.
    pub settings: RunSettings,
    /// The seed actually used (`--random-seed` resolved).
    pub random_seed: u64,
    pub target_description: String,
    pub embedded: bool,
    pub fast: bool,
    pub command_line: Vec<String>,
    pub probe: Option<&'a dyn ProbeStarter>,
    /// Whether another hotbench command shares the server (noted in each variant's record).
    pub sharing: &'a dyn SharedServer,
    /// `--keep-schema`: leave the `hb_NAME` schema (the last variant's data) in place.
    pub keep_schema: bool,
    /// Live progress lines while each variant runs (off with `--quiet`).
    pub progress: bool,
    /// The benchmark clients go through a pooler hotbench runs (`--pooler`); the scenario's
    /// own sessions and the probes still use `conn`.
    pub route: Option<&'a dyn crate::pooling::ClientRoute>,
    /// Live figures of each variant as it runs (`--prometheus`).
    pub live: Option<&'a dyn crate::live::LiveSink>,
    /// The server's processes, when hotbench started it (the `restart` and `pause`
    /// perturbations).
    pub server: Option<hotbench_engine::ServerHandle>,
}

/// A variant ready to run: everything user-controlled already validated.
pub(super) struct Prepared<'s> {
    pub(super) variant: &'s Variant,
    pub(super) params: Params,
    pub(super) groups: Vec<GroupConfig>,
    pub(super) retry: RetryPolicy,
    pub(super) settings: Vec<(String, String)>,
    pub(super) duration_s: u64,
    pub(super) scale: i64,
    pub(super) work_group: Option<String>,
    /// Seconds the variants after this one will take (for the progress lines' time left).
    pub(super) left_after_s: u64,
    /// The manifest's `[[perturbation]]`s for this variant (after the user's `--perturb`).
    pub(super) perturbations: Vec<hotbench_engine::Perturbation>,
}

/// The note of a variant a Ctrl-C kept from running.
pub(super) const NOT_RUN: &str = "not run: interrupted";

/// A variant that did not run (skipped on this engine, or interrupted before its run): no
/// record and no checks, so it can never show as passed.
pub(super) fn not_run(p: &Prepared<'_>, note: &str) -> VariantResult {
    let v = p.variant;
    VariantResult {
        name: v.name.clone(),
        about: p.params.describe(&v.about),
        baseline: v.baseline,
        skipped: Some(note.to_string()),
        params: p.params.values.clone(),
        record: None,
        checks: Vec::new(),
        monitors: Vec::new(),
        work: None,
        aborted_clients: 0,
        notes: Vec::new(),
        work_group: None,
        work_per_interval: Vec::new(),
        ran_out_at_s: None,
        steady_ratio: None,
        pct_of_ceiling: None,
        phases_s: None,
        client_bound: None,
    }
}

pub(super) fn query_mode(m: Option<&str>) -> Result<QueryMode> {
    match m {
        None => Ok(QueryMode::Prepared),
        Some(s) => QueryMode::parse(s).ok_or_else(|| {
            ScenarioError::Input(format!(
                "invalid query_mode \"{s}\": expected simple, extended or prepared"
            ))
        }),
    }
}

/// `file.sql` → `file.ENGINE.sql` when the scenario has one.
pub(super) fn engine_file(scn: &Scenario, rel: &str, engine: &str) -> String {
    if let Some(stem) = rel.strip_suffix(".sql") {
        let candidate = format!("{stem}.{engine}.sql");
        if scn.bundle.file(&candidate).is_some() {
            return candidate;
        }
    }
    rel.to_string()
}

pub(super) fn substituted(
    scn: &Scenario,
    params: &Params,
    rel: &str,
    extra: &BTreeMap<String, String>,
) -> Result<String> {
    let file = scn.bundle.display(rel);
    let text = scn
        .bundle
        .file(rel)
        .ok_or_else(|| ScenarioError::manifest(&file, None, "file not found"))?;
    params
        .substitute(text, extra)
        .map_err(|e| ScenarioError::manifest(&file, None, e))
}
