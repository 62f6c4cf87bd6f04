//! `hotbench scenario …` and `hotbench demo`: the scenario lab's command line. Parsing
//! only; `crate::scenario_cmd` loads scenarios and runs ladders.

use std::path::PathBuf;

use clap::{ArgAction, Args, Subcommand};

use hotbench_settings::RunSettings;

use super::conn::{ConnArgs, EmbeddedArgs};
use super::shared::{LoadArgs, OutputArgs};

/// Which variants of a scenario to run and where else to look for scenarios: the same
/// flags for `scenario run` and `sweep --scenario`.
#[derive(Debug, Clone, Default, Args)]
pub struct ScenarioPick {
    /// Run only these variants (comma-separated)
    #[arg(long = "variants", value_name = "A,B")]
    pub variants: Option<String>,
    /// Load scenarios from this directory too (repeatable; they shadow built-in ones)
    #[arg(long = "dir", value_name = "D", action = ArgAction::Append)]
    pub dir: Vec<PathBuf>,
}

impl ScenarioPick {
    /// The `--variants` names; `None` runs every variant. An empty entry is a typo, refused
    /// as in every list option.
    pub fn variant_names(&self) -> Result<Option<Vec<String>>, String> {
        let list = hotbench_settings::values::ListOption {
            what: "variant name",
            option: "--variants",
            example: "a,b",
        };
        self.variants
            .as_deref()
            .map(|v| Ok(list.entries(v)?.into_iter().map(String::from).collect()))
            .transpose()
    }
}

/// `--param NAME=VALUE`, split (the scenario checks the name and value).
pub fn param(text: &str) -> crate::fail::Result<(String, String)> {
    hotbench_scenario::params::parse_assignment(text)
        .map_err(|e| crate::fail::Fail::input(e.to_string()))
}

/// Options of a ladder run shared by `scenario run` and `demo` (and built by `sweep
/// --scenario`): the load, settings and outputs as `hotbench run` declares them, plus the
/// ladder's own.
#[derive(Debug, Clone, Args)]
pub struct LadderArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    /// Set a scenario parameter (repeatable)
    #[arg(long = "param", value_name = "NAME=VALUE", action = ArgAction::Append, value_parser = param)]
    pub param: Vec<(String, String)>,
    /// Keep the scenario's hb_NAME schema (the last variant's data) after the ladder
    #[arg(long = "keep-schema")]
    pub keep_schema: bool,
    /// No live progress lines while variants run (only each variant's final line)
    #[arg(long = "quiet")]
    pub quiet: bool,
    #[command(flatten)]
    pub settings: RunSettings,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

#[derive(Debug, Clone, Args)]
pub struct ScenarioArgs {
    #[command(subcommand)]
    pub command: ScenarioCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ScenarioCommand {
    /// List the scenarios (built-in, and those in --dir)
    List {
        /// Also list scenarios in this directory (repeatable)
        #[arg(long = "dir", value_name = "D", action = ArgAction::Append)]
        dir: Vec<PathBuf>,
    },
    /// Show a scenario: what it demonstrates, parameters, variants
    Show {
        name: String,
        #[arg(long = "dir", value_name = "D", action = ArgAction::Append)]
        dir: Vec<PathBuf>,
    },
    /// Copy a scenario's files to DIR/NAME for editing (then: scenario run --dir DIR/NAME)
    Export {
        name: String,
        /// Directory to create NAME in (created if missing; NAME itself must not exist)
        dir: PathBuf,
    },
    /// Run a scenario's ladder of variants and check the data after each
    #[command(disable_help_flag = true)]
    Run(Box<ScenarioRunArgs>),
}

#[derive(Debug, Clone, Args)]
pub struct ScenarioRunArgs {
    /// Scenario name (see `hotbench scenario list`); may be left out when --dir holds
    /// exactly one scenario (a capture's directory)
    pub name: Option<String>,
    /// Database name or connection string (default: the embedded server)
    pub dbname: Option<String>,
    #[command(flatten)]
    pub pick: ScenarioPick,
    #[command(flatten)]
    pub ladder: LadderArgs,
}

#[derive(Debug, Clone, Args)]
#[command(disable_help_flag = true)]
pub struct DemoArgs {
    /// Database name or connection string (default: the embedded server)
    pub dbname: Option<String>,
    #[command(flatten)]
    pub ladder: LadderArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::Command;

    fn pick_of(argv: &[&str]) -> ScenarioPick {
        let (cli, _) = crate::parse_command_line(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        match cli.command {
            Command::Sweep(a) => a.pick,
            Command::Scenario(s) => match s.command {
                ScenarioCommand::Run(r) => r.pick,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scenario_run_and_sweep_pick_variants_alike() {
        let flags = ["--variants", "a, b", "--dir", "x", "--dir", "y"];
        for prefix in [
            &["hotbench", "scenario", "run", "queue"][..],
            &["hotbench", "sweep", "--scenario", "queue"][..],
        ] {
            let argv: Vec<&str> = prefix.iter().chain(&flags).copied().collect();
            let pick = pick_of(&argv);
            assert_eq!(pick.variant_names(), Ok(Some(vec!["a".into(), "b".into()])));
            assert_eq!(pick.dir, [PathBuf::from("x"), PathBuf::from("y")]);
        }
        assert_eq!(ScenarioPick::default().variant_names(), Ok(None));
        let typo = ScenarioPick {
            variants: Some("a,,b".into()),
            ..Default::default()
        };
        assert!(typo
            .variant_names()
            .unwrap_err()
            .contains("--variants \"a,,b\""));
    }
}
