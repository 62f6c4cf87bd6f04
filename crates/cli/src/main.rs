//! The `hotbench` binary: command-line definition and glue over the library crates.
//! Exit codes follow pgbench: 0 success, 1 bad input, 2 the run failed; hotbench adds 3, a
//! `--threshold` crossed.

mod capture_cmd;
mod capture_verify;
mod compat;
mod diagnose_cmd;
mod fail;
mod flags;
mod groups;
mod init_interrupt;
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
mod scenario_cmd;
mod scripts;
mod seed;
mod server_cmd;
mod shard;
mod sweep_cmd;
mod target;
mod thresholds;

use std::process::ExitCode;

use clap::FromArgMatches;

fn main() -> ExitCode {
    let argv = compat::rewrite_argv(std::env::args().collect());
    let matches = match flags::command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return clap_exit(e, &argv),
    };
    let cli = match flags::Cli::from_arg_matches(&matches) {
        Ok(c) => c,
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
