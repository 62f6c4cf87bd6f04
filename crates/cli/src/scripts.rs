//! The scripts of a run, in command-line order (`-b`, `-f`, `-N`, `-S` interleave as given,
//! as pgbench processes them), with pgbench's weights and messages.

use clap::ArgMatches;
use hotbench_engine::WeightedScript;
use hotbench_script::{find_builtin, list_builtins, parse_builtin, parse_script, parse_weight};

use crate::fail::{Fail, Result};

/// One script option as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptSpec {
    Builtin(String),
    File(String),
}

/// Collects `-b/-f/-N/-S` from `m` in the order they appeared.
pub fn specs_in_order(m: &ArgMatches) -> Vec<ScriptSpec> {
    let mut items: Vec<(usize, ScriptSpec)> = Vec::new();
    let mut take = |id: &str, make: &dyn Fn(String) -> ScriptSpec| {
        if let (Some(idx), Some(vals)) = (m.indices_of(id), m.get_many::<String>(id)) {
            for (i, v) in idx.zip(vals) {
                items.push((i, make(v.clone())));
            }
        }
    };
    take("builtin", &ScriptSpec::Builtin);
    take("file", &ScriptSpec::File);
    for (id, name) in [
        ("skip_some_updates", "simple-update"),
        ("select_only", "select-only"),
    ] {
        if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        if let Some(idx) = m.indices_of(id) {
            for i in idx {
                items.push((i, ScriptSpec::Builtin(name.into())));
            }
        }
    }
    items.sort_by_key(|(i, _)| *i);
    items.into_iter().map(|(_, s)| s).collect()
}

/// Loads one `NAME[@W]` builtin or `FILE[@W]` script.
pub fn load(spec: &ScriptSpec) -> Result<WeightedScript> {
    match spec {
        ScriptSpec::Builtin(option) => {
            let (name, weight) = parse_weight(option).map_err(|e| Fail::input(e.to_string()))?;
            let b = find_builtin(&name).map_err(|e| {
                Fail::input(e.to_string()).detail(list_builtins().trim_end().to_string())
            })?;
            let script = parse_builtin(b).map_err(|e| Fail::input(e.to_string()))?;
            Ok(WeightedScript {
                script,
                weight: weight.max(0) as u32,
            })
        }
        ScriptSpec::File(option) => {
            let (path, weight) = parse_weight(option).map_err(|e| Fail::input(e.to_string()))?;
            let limit = hotbench_results::input_file::SCRIPT_LIMIT;
            let text = if path == "-" {
                hotbench_results::input_file::read_stdin(limit)
                    .map_err(|e| Fail::input(format!("could not read file \"-\": {e}")))?
            } else {
                hotbench_results::input_file::read_text(std::path::Path::new(&path), limit)
                    .map_err(|e| Fail::input(format!("could not open file \"{path}\": {e}")))?
            };
            let script = parse_script(&path, &text).map_err(|e| Fail::input(e.to_string()))?;
            if script.is_empty() {
                return Err(Fail::input(format!(
                    "empty command list for script \"{path}\""
                )));
            }
            Ok(WeightedScript {
                script,
                weight: weight.max(0) as u32,
            })
        }
    }
}

/// True when the spec names a builtin (pgbench then reads the scale from the tables).
pub fn is_builtin(spec: &ScriptSpec) -> bool {
    matches!(spec, ScriptSpec::Builtin(_))
}
