//! The `hotbench` binary: command-line definition and glue over the library crates.
//! Exit codes follow pgbench: 0 success, 1 bad input, 2 the run failed; hotbench adds 3, a
//! `--threshold` crossed.

mod capture_cmd;
mod capture_dir;
mod capture_verify;
mod compat;
mod diagnose_cmd;
mod fail;
mod flags;
mod groups;
mod init_interrupt;
mod ladder_request;
mod mask;
mod metrics_server;
mod null_server_cmd;
mod observers;
mod option_ranges;
mod outputs;
mod pooler;
mod report_cmd;
mod retry_profile;
mod run_cmd;
mod run_options;
mod sampling;
mod scenario_cmd;
mod scripts;
mod seed;
mod server_cmd;
mod server_process;
mod shard;
mod sweep_cmd;
mod target;
mod thresholds;

use std::process::ExitCode;

use clap::FromArgMatches;

fn main() -> ExitCode {
    let argv = compat::rewrite_argv(std::env::args().collect());
    let (cli, matches) = match parse_command_line(&argv) {
        Ok(parsed) => parsed,
        Err(e) => return clap_exit(e, &argv),
    };
    let result = match &cli.command {
        flags::Command::Run(run) => {
            let sub = matches
                .subcommand_matches("run")
                .cloned()
                .unwrap_or_default();
            run_cmd::main(run, &sub, &argv)
        }
        flags::Command::Server(args) => server_cmd::main(args),
        flags::Command::Scenario(args) => scenario_cmd::main(args, &argv),
        flags::Command::Demo(args) => scenario_cmd::demo(args, &argv),
        flags::Command::Report(args) => report_cmd::report(args),
        flags::Command::Compare(args) => report_cmd::compare(args),
        flags::Command::Merge(args) => report_cmd::merge(args),
        flags::Command::Usl(args) => report_cmd::usl(args),
        flags::Command::NullServer(args) => null_server_cmd::main(args),
        flags::Command::Diagnose(args) => diagnose_cmd::main(args, &argv),
        flags::Command::Capture(args) => capture_cmd::main(args, &argv),
        flags::Command::Sweep(args) => {
            let sub = matches
                .subcommand_matches("sweep")
                .cloned()
                .unwrap_or_default();
            sweep_cmd::main(args, &sub, &argv)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            f.print();
            ExitCode::from(f.code)
        }
    }
}

/// The command line as typed values: the one place clap reads one. Flags are parsed and
/// checked once, here; commands hand each other typed requests, never argument strings (a
/// test fails on a clap parse anywhere else). Tests read printed commands through it too.
fn parse_command_line<I, T>(argv: I) -> Result<(flags::Cli, clap::ArgMatches), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = flags::command().try_get_matches_from(argv)?;
    let cli = flags::Cli::from_arg_matches(&matches)?;
    Ok((cli, matches))
}

/// Prints a clap error; usage errors exit 1 like pgbench, help and version exit 0. Usage
/// errors are worded as pgbench's getopt ones: one error line, then where to find help.
fn clap_exit(e: clap::Error, argv: &[String]) -> ExitCode {
    use clap::error::{ContextKind, ErrorKind};
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        // A setting's value parser speaks for itself, in pgbench's words where pgbench has
        // the option: one line, as pgbench's own range checks print.
        ErrorKind::ValueValidation if std::error::Error::source(&e).is_some() => {
            if let Some(why) = std::error::Error::source(&e) {
                if let Some(f) = why.downcast_ref::<fail::Fail>() {
                    f.print();
                    return ExitCode::from(f.code);
                }
                eprintln!("hotbench: error: {why}");
            }
            return ExitCode::from(1);
        }
        ErrorKind::UnknownArgument => {
            let arg = e
                .get(ContextKind::InvalidArg)
                .map(|a| a.to_string())
                .unwrap_or_default();
            eprintln!("hotbench: error: unrecognized option '{arg}'");
        }
        _ => {
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid command line");
            eprintln!(
                "hotbench: error: {}",
                first.strip_prefix("error: ").unwrap_or(first)
            );
        }
    }
    let command = match argv.get(1) {
        Some(sub) if !sub.starts_with('-') => format!("hotbench {sub}"),
        _ => "hotbench".to_string(),
    };
    eprintln!("hotbench: hint: Try \"{command} --help\" for more information.");
    ExitCode::from(1)
}

#[cfg(test)]
mod tests {
    use hotbench_settings::{PoolMode, PoolerSpec, RunSettings};

    use super::*;
    use crate::flags::scenario::ScenarioCommand;
    use crate::flags::Command;

    /// The run settings and `-c`/`-T` each command that runs parsed from `argv`.
    fn settings_of(argv: &[&str]) -> (RunSettings, Option<Vec<usize>>, Option<u32>) {
        let (cli, _) = parse_command_line(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let (settings, load) = match cli.command {
            Command::Run(a) => (a.settings, a.load),
            Command::Sweep(a) => (a.run.settings, a.run.load),
            Command::Demo(a) => (a.ladder.settings, a.ladder.load),
            Command::Scenario(s) => match s.command {
                ScenarioCommand::Run(a) => (a.ladder.settings, a.ladder.load),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        let clients = load.client.map(|c| c.counts().to_vec());
        (settings, clients, load.time)
    }

    const COMMANDS: [&[&str]; 4] = [
        &["hotbench", "run"],
        &["hotbench", "sweep"],
        &["hotbench", "demo"],
        &["hotbench", "scenario", "run", "queue"],
    ];

    /// `RunSettings::default()` (read from the flags' declaration, no command line parsed)
    /// is what every command parses when no flag is given: what an old record missing a
    /// field reads as.
    #[test]
    fn no_flags_are_the_settings_defaults_in_every_command() {
        for prefix in COMMANDS {
            assert_eq!(
                settings_of(prefix),
                (RunSettings::default(), None, None),
                "{prefix:?}"
            );
        }
    }

    #[test]
    fn flags_parse_once_into_typed_values_in_every_command() {
        let flags = [
            "-j",
            "4",
            "--rtt",
            "2",
            "--interval",
            "250ms",
            "--probe",
            "off",
            "--pooler",
            "pgbouncer:session",
            "-c",
            "8",
            "-T",
            "2m",
        ];
        for prefix in COMMANDS {
            let argv: Vec<&str> = prefix.iter().chain(&flags).copied().collect();
            let (s, clients, time) = settings_of(&argv);
            assert_eq!(
                (s.jobs, s.rtt_us, s.interval_us, s.probe),
                (Some(4), 2000, 250_000, false),
                "{prefix:?}"
            );
            assert_eq!(s.pooler, Some(PoolerSpec::PgBouncer(PoolMode::Session)));
            assert_eq!((clients, time), (Some(vec![8]), Some(120)), "{prefix:?}");
        }
        let (_, counts, _) = settings_of(&["hotbench", "sweep", "-c", "1,2, 4,2"]);
        assert_eq!(counts, Some(vec![1, 2, 4]));
    }

    /// A flag's value parser may answer with a `Fail`: its detail line survives clap.
    #[test]
    fn a_value_parsers_fail_keeps_its_detail() {
        let e = parse_command_line(["hotbench", "run", "-T", "1500ms"]).expect_err("refused");
        let f = std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<fail::Fail>())
            .expect("the value parser's Fail");
        assert_eq!(f.message, "invalid value \"1500ms\" for option -T/--time");
        assert!(
            f.detail
                .as_deref()
                .is_some_and(|d| d.contains("whole number of seconds")),
            "{f:?}"
        );
        let e = parse_command_line(["hotbench", "run", "-c", "1,2"]).expect_err("refused");
        let f = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<fail::Fail>());
        assert_eq!(
            f.map(|f| f.message.as_str()),
            Some("invalid value \"1,2\" for option -c/--clients")
        );
    }
}
