//! [`LadderRequest`]: a ladder to run, typed. `scenario run` and `demo` build one from their
//! flags (parsed and checked once, by clap's value parsers); `sweep --scenario` builds one
//! per point and `diagnose --run` one from its finding's typed suggestion, directly: no
//! command hands another an argument string to parse. `scenario_cmd::run_ladders` runs it.

use hotbench_settings::RunSettings;

use crate::flags::scenario::LadderArgs;
use crate::flags::shared::OutputArgs;
use crate::target::TargetArgs;

#[derive(Debug, Clone, PartialEq)]
pub struct LadderRequest {
    /// `-c`: the scenario's `clients` parameter.
    pub clients: Option<usize>,
    /// `-T`: each variant's seconds (the scenario's `duration` parameter).
    pub duration_s: Option<u32>,
    /// `--param NAME=VALUE`s, in the order given.
    pub params: Vec<(String, String)>,
    /// `--keep-schema`.
    pub keep_schema: bool,
    /// `--quiet`: no live progress lines.
    pub quiet: bool,
    /// `demo`: only the variants a demo runs, and each scenario given only its own
    /// parameters.
    pub demo: bool,
    /// Where the database is, with the settings every command shares (`target.settings`).
    pub target: TargetArgs,
    /// `--json`, `--html`, `--prometheus` (`--threshold` is checked by the command).
    pub output: OutputArgs,
}

impl LadderRequest {
    /// From `scenario run`'s or `demo`'s flags (`dbname`: the positional database).
    pub fn new(a: &LadderArgs, dbname: Option<String>, demo: bool) -> LadderRequest {
        LadderRequest {
            clients: a.load.client.as_ref().map(|c| c.count()),
            duration_s: a.load.time,
            params: a.param.clone(),
            keep_schema: a.keep_schema,
            quiet: a.quiet,
            demo,
            target: TargetArgs {
                conn: a.conn.clone(),
                embedded: a.embedded.clone(),
                dbname,
                settings: a.settings.clone(),
                embedded_only: false,
            },
            output: a.output.clone(),
        }
    }

    /// The settings every command shares.
    pub fn settings(&self) -> &RunSettings {
        &self.target.settings
    }

    /// `-c`, `-T` and the `--param`s as the scenario parameters they set, in that order (a
    /// scenario's parameters are its manifest's text, as `--param clients=8` gives them).
    pub fn scenario_params(&self) -> Vec<(String, String)> {
        let mut params = Vec::new();
        if let Some(n) = self.clients {
            params.push(("clients".to_string(), n.to_string()));
        }
        if let Some(s) = self.duration_s {
            params.push(("duration".to_string(), s.to_string()));
        }
        params.extend(self.params.iter().cloned());
        params
    }
}
