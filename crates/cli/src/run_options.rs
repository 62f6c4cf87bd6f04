//! `hotbench run`'s pgbench options checked before anything touches a database: pgbench's
//! flags with pgbench's messages (exit 1), resolved once into a typed [`RunRequest`], from
//! which `run_cmd` builds the engine's `RunConfig` (and `sweep` each point's request). The settings every command shares
//! (`hotbench_settings::RunSettings`) are validated by their own value parsers.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};
use hotbench_engine::{
    Backoff, DisplayConfig, GoodputRule, Limit, LogConfig, QueryMode, RetryPolicy,
};
use hotbench_settings::run::{BENCHMARKING, HOTBENCH};
use hotbench_settings::RunSettings;

use crate::fail::{Fail, Result};
use crate::flags::run::RunArgs;
use crate::flags::shared::OutputArgs;
use crate::groups::{parse_goodput, parse_groups, GroupSpec};
use crate::option_ranges::check_open_files;
use crate::scripts::{specs_in_order, ScriptSpec};
use crate::target::TargetArgs;

/// pgbench's limit on `-b`/`-f`/`-N`/`-S` scripts in one run.
pub(crate) const MAX_SCRIPTS: usize = 128;

/// Help headings of the options pgbench refuses with `-i` (`benchmarking_option_set`).
const BENCHMARKING_HEADINGS: [&str; 3] = ["Options to select what to run", BENCHMARKING, HOTBENCH];
/// … and of those it refuses without it, except the three valid in both modes.
const INITIALIZATION: &str = "Initialization options";
const BOTH_MODES: [&str; 3] = ["initialize", "no_vacuum", "scale"];

/// pgbench's `benchmarking_option_set`, derived from the flags' headings: any option of
/// the benchmarking sections given on the command line.
pub(crate) fn benchmarking_option_set(m: &ArgMatches) -> bool {
    given(m, |heading, _| BENCHMARKING_HEADINGS.contains(&heading))
}

/// pgbench's `initialization_option_set`: any initialization option but `-i`, `-n`, `-s`.
pub(crate) fn initialization_option_set(m: &ArgMatches) -> bool {
    given(m, |heading, id| {
        heading == INITIALIZATION && !BOTH_MODES.contains(&id)
    })
}

fn given(m: &ArgMatches, pick: impl Fn(&str, &str) -> bool) -> bool {
    let cmd = RunArgs::augment_args(clap::Command::new("run"));
    let found = cmd.get_arguments().any(|a| {
        let id = a.get_id().as_str();
        a.get_help_heading().is_some_and(|h| pick(h, id))
            && m.value_source(id) == Some(ValueSource::CommandLine)
    });
    found
}

/// `hotbench run`'s flags validated once, with pgbench's checks and messages, before anything
/// touches a database: what a run is asked to do, typed (ripgrep's "high" arguments: nothing
/// in it is a string still to parse). `run` builds one from its flags; `sweep` builds one from
/// its flags, then each point's with [`RunRequest::at`]; `run_cmd` makes the engine's
/// `RunConfig` from it.
#[derive(Debug, Clone)]
pub(crate) struct RunRequest {
    /// The client groups, all the run's clients (`--shard` takes this process's part as the
    /// run starts: [`RunRequest::this_process`]).
    pub(crate) groups: Vec<GroupSpec>,
    pub(crate) limit: Limit,
    pub(crate) query_mode: QueryMode,
    pub(crate) retry: RetryPolicy,
    pub(crate) retry_profile: crate::retry_profile::RetryProfile,
    /// `--max-tries` and `--retry-backoff` given: the retry profile fills only what is not.
    pub(crate) max_tries_given: bool,
    pub(crate) backoff_given: bool,
    pub(crate) latency_limit_us: Option<i64>,
    pub(crate) log: Option<LogConfig>,
    pub(crate) random_seed: u64,
    pub(crate) goodput: GoodputRule,
    pub(crate) defines: Vec<(String, String)>,
    /// `--key` variables.
    pub(crate) keys: Vec<String>,
    pub(crate) scale_given: Option<i64>,
    pub(crate) shard: Option<crate::shard::Shard>,
    /// `-D` as given, part of the shards' run key.
    define_flags: Vec<String>,
    pub(crate) start_at_us: Option<i64>,
    pub(crate) spread: hotbench_wire::Spread,
    /// pgbench's flags of the run itself: `-C`, `-n`, `-v`, `--exit-on-abort`, `-r`.
    pub(crate) connect_each_txn: bool,
    pub(crate) no_vacuum: bool,
    pub(crate) vacuum_all: bool,
    pub(crate) exit_on_abort: bool,
    pub(crate) report_per_command: bool,
    /// What only changes what people see (progress lines, error messages, `-d`, the result
    /// file's snapshots).
    pub(crate) display: DisplayConfig,
    /// Where the database is, with the settings every command shares (`target.settings`).
    pub(crate) target: TargetArgs,
    /// `--json`, `--html`, `--prometheus` (`--threshold` is checked by the command).
    pub(crate) output: OutputArgs,
}

impl RunRequest {
    /// `args` validated; `clients` is `-c` (a sweep gives its first count).
    pub(crate) fn new(
        args: &RunArgs,
        m: &ArgMatches,
        clients: Option<usize>,
    ) -> Result<RunRequest> {
        let query_mode = match &args.protocol {
            Some(p) => QueryMode::parse(p)
                .ok_or_else(|| Fail::input(format!("invalid query mode (-M): \"{p}\"")))?,
            None => QueryMode::Simple,
        };
        let progress_s = args.progress;
        if args.progress_timestamp && progress_s.is_none() {
            return Err(Fail::input(
                "--progress-timestamp is allowed only under --progress",
            ));
        }
        let (limit, duration) = limit(args)?;
        let log = log(args, duration)?;
        let latency_limit_us = args.latency_limit_us;
        let retry = retry(args, latency_limit_us.is_some() || duration.is_some())?;
        let retry_profile =
            crate::retry_profile::RetryProfile::parse(args.retry_profile.as_deref())?;
        let start_at_us = args
            .start_at
            .as_deref()
            .map(crate::shard::parse_start_at)
            .transpose()?;
        let shard = args
            .shard
            .as_deref()
            .map(crate::shard::Shard::parse)
            .transpose()?;
        let random_seed = seed(args, shard.is_some(), start_at_us)?;
        let goodput = match &args.goodput {
            Some(g) => parse_goodput(g)?,
            None => GoodputRule::Committed,
        };
        let defines = defines(args)?;
        let scale_given = args.scale.map(i64::from);
        let groups = groups(args, m, clients)?;
        let spread = match args.load_balance.as_deref() {
            None => hotbench_wire::Spread::First,
            Some(t) => hotbench_wire::Spread::parse(t).ok_or_else(|| {
                Fail::input(format!(
                    "invalid --load-balance \"{t}\": expected first, round-robin or random"
                ))
            })?,
        };
        // Checked with the other options, not when the endpoint starts after connecting.
        if let Some(spec) = &args.output.prometheus {
            crate::metrics_server::parse_addr(spec)?;
        }
        for k in &args.key {
            if !hotbench_script::valid_variable_name(k) {
                return Err(Fail::input(format!(
                    "invalid --key \"{k}\": expected a script variable name"
                )));
            }
        }
        let req = RunRequest {
            groups,
            limit,
            query_mode,
            retry,
            retry_profile,
            max_tries_given: args.max_tries.is_some(),
            backoff_given: args.retry_backoff.is_some(),
            latency_limit_us,
            log,
            random_seed,
            goodput,
            defines,
            keys: args.key.clone(),
            scale_given,
            shard,
            define_flags: args.define.clone(),
            start_at_us,
            spread,
            connect_each_txn: args.connect,
            no_vacuum: args.no_vacuum,
            vacuum_all: args.vacuum_all,
            exit_on_abort: args.exit_on_abort,
            report_per_command: args.report_per_command,
            display: display(args, progress_s)?,
            target: crate::run_cmd::target_args(args),
            output: args.output.clone(),
        };
        req.this_process()?;
        Ok(req)
    }

    /// One point of a sweep: `clients` in the run's one group (a sweep's `-c` and `--group`
    /// do not go together), the point's settings, and no outputs (the sweep writes its own).
    pub(crate) fn at(&self, clients: usize, settings: &RunSettings) -> RunRequest {
        let mut r = self.clone();
        for g in &mut r.groups {
            g.clients = clients;
        }
        r.target.settings = settings.clone();
        r.output = OutputArgs::default();
        r.display.json_path = None;
        r
    }

    /// This process's clients: the groups cut to its part when `--shard` spreads the run
    /// (with the engine's view of the shard); they must fit the open-files limit.
    pub(crate) fn this_process(
        &self,
    ) -> Result<(Vec<GroupSpec>, Option<hotbench_engine::ShardConfig>)> {
        let mut groups = self.groups.clone();
        let shard = match self.shard {
            Some(sh) => {
                let shared = format!(
                    "{}|{:?}|{:?}|{:?}|{:?}|{:?}",
                    self.random_seed,
                    self.limit,
                    self.query_mode,
                    self.start_at_us,
                    groups
                        .iter()
                        .map(|g| (&g.name, g.clients, g.rate.map(f64::to_bits), &g.scripts))
                        .collect::<Vec<_>>(),
                    self.define_flags
                );
                let key = crate::shard::run_key(sh.count, &shared);
                Some(crate::shard::split(&mut groups, sh, key)?)
            }
            None => None,
        };
        check_open_files(groups.iter().map(|g| g.clients).sum())?;
        Ok((groups, shard))
    }

    /// The settings every command shares.
    pub(crate) fn settings(&self) -> &RunSettings {
        &self.target.settings
    }
}

/// What only changes what people see, from the flags.
fn display(args: &RunArgs, progress_s: Option<u32>) -> Result<DisplayConfig> {
    Ok(DisplayConfig {
        progress_s,
        progress_timestamp: args.progress_timestamp,
        verbose_errors: args.verbose_errors,
        debug: args.debug,
        failures_detailed: args.failures_detailed,
        pgbench_compat: crate::compat::check(args.pgbench_compat.as_deref())?,
        json_path: args.output.json.clone(),
    })
}

/// `-t` or `-T` (not both; pgbench's ten transactions without either), and the duration in
/// seconds when given.
fn limit(args: &RunArgs) -> Result<(Limit, Option<i64>)> {
    let nxacts = args.transactions;
    let duration = args.load.time.map(i64::from);
    if nxacts.is_some() && duration.is_some() {
        return Err(Fail::input(
            "specify either a number of transactions (-t) or a duration (-T), not both",
        ));
    }
    let limit = match (nxacts, duration) {
        (_, Some(d)) => Limit::Duration(d * 1_000_000),
        (Some(n), None) => Limit::Transactions(n),
        (None, None) => Limit::Transactions(10),
    };
    Ok((limit, duration))
}

/// `-l` and its options, with pgbench's checks between them (`duration` in seconds).
fn log(args: &RunArgs, duration: Option<i64>) -> Result<Option<LogConfig>> {
    let (sampling_rate, aggregate_interval) = (args.sampling_rate, args.aggregate_interval);
    if sampling_rate.is_some() && !args.log {
        return Err(Fail::input(
            "log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
        ));
    }
    if sampling_rate.is_some() && aggregate_interval.is_some() {
        return Err(Fail::input("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time"));
    }
    if aggregate_interval.is_some() && !args.log {
        return Err(Fail::input(
            "log aggregation is allowed only when actually logging transactions",
        ));
    }
    if !args.log && args.log_prefix.is_some() {
        return Err(Fail::input(
            "log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
        ));
    }
    if let (Some(d), Some(a)) = (duration, aggregate_interval) {
        if i64::from(a) > d {
            return Err(Fail::input(format!("number of seconds for aggregation ({a}) must not be higher than test duration ({d})")));
        }
        if d % i64::from(a) != 0 {
            return Err(Fail::input(format!(
                "duration ({d}) must be a multiple of aggregation interval ({a})"
            )));
        }
    }
    Ok(args.log.then(|| LogConfig {
        prefix: args
            .log_prefix
            .clone()
            .unwrap_or_else(|| "pgbench_log".into()),
        aggregate_interval: aggregate_interval.unwrap_or(0),
        sampling_rate,
    }))
}

/// `--max-tries`, `--retry-backoff`, `--retry-on`, `--continue-on-error`; unlimited tries
/// need an end (`bounded`: -L or -T).
fn retry(args: &RunArgs, bounded: bool) -> Result<RetryPolicy> {
    let max_tries = args.max_tries.unwrap_or(1);
    if max_tries == 0 && !bounded {
        return Err(Fail::input("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)"));
    }
    let backoff = match &args.retry_backoff {
        Some(b) => Backoff::parse(b).map_err(Fail::input)?,
        None => Backoff::None,
    };
    let mut extra_codes = Vec::new();
    let codes = hotbench_settings::values::ListOption {
        what: "SQLSTATE",
        option: "--retry-on",
        example: "40001,55P03",
    };
    for list in &args.retry_on {
        for code in codes.entries(list).map_err(Fail::input)? {
            let code = hotbench_wire::SqlState::parse(code)
                .map_err(|_| {
                    Fail::input(format!(
                        "invalid SQLSTATE \"{code}\" in --retry-on: expected five characters such as 55P03"
                    ))
                })?;
            extra_codes.push(code);
        }
    }
    crate::retry_profile::check_retry_on(&extra_codes)?;
    Ok(RetryPolicy {
        max_tries,
        backoff,
        extra_codes,
        continue_on_error: args.continue_on_error,
    })
}

/// The seed: given, or from `PGBENCH_RANDOM_SEED`, or the time; shards must all draw from
/// one, so without a given seed their common start time is it.
fn seed(args: &RunArgs, sharded: bool, start_at_us: Option<i64>) -> Result<u64> {
    let option = args.settings.random_seed.as_deref();
    let seed_given = option.is_some() || std::env::var_os("PGBENCH_RANDOM_SEED").is_some();
    let random_seed = match (sharded, start_at_us, seed_given) {
        (true, Some(at), false) => at as u64,
        (true, None, false) => {
            return Err(Fail::input(
                "--shard needs --random-seed N or --start-at TIME, so that every shard derives the same random seeds",
            ))
        }
        _ => crate::seed::resolve(option)?,
    };
    if seed_given {
        // pgbench reports a seed chosen by the user (so a run can be repeated).
        eprintln!("hotbench: setting random seed to {random_seed}");
    }
    Ok(random_seed)
}

/// `-D NAME=VALUE`, checked as the script language would.
fn defines(args: &RunArgs) -> Result<Vec<(String, String)>> {
    let mut defines = Vec::new();
    let mut vars = hotbench_script::Variables::new();
    for d in &args.define {
        hotbench_script::define(&mut vars, d).map_err(Fail::input)?;
        if let Some((n, v)) = d.split_once('=') {
            defines.push((n.to_string(), v.to_string()));
        }
    }
    Ok(defines)
}

/// The client groups: `--group`s, or one `default` group of `-b`/`-f`/`-N`/`-S` (tpcb-like
/// without any), `-c` clients and `-R`.
fn groups(args: &RunArgs, m: &ArgMatches, clients: Option<usize>) -> Result<Vec<GroupSpec>> {
    let nclients = clients.unwrap_or(1);
    let rate = args.rate;
    let specs = specs_in_order(m);
    if specs.len() > MAX_SCRIPTS {
        return Err(Fail::input(format!(
            "at most {MAX_SCRIPTS} SQL scripts are allowed"
        )));
    }
    if !args.group.is_empty() {
        if !specs.is_empty() {
            return Err(Fail::input(
                "--group cannot be combined with -b, -f, -N or -S (give each group its scripts)",
            ));
        }
        if clients.is_some() || args.rate.is_some() {
            return Err(Fail::input(
                "--group cannot be combined with -c or -R (give each group its clients=N and rate=R)",
            ));
        }
        return parse_groups(&args.group);
    }
    let specs = if specs.is_empty() {
        vec![ScriptSpec::Builtin("tpcb-like".into())]
    } else {
        specs
    };
    Ok(vec![GroupSpec {
        name: "default".to_string(),
        scripts: specs,
        clients: nclients,
        rate,
        goodput: None,
        keys: Vec::new(),
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_matches(argv: &[&str]) -> ArgMatches {
        let full: Vec<&str> = ["hotbench", "run"].iter().chain(argv).copied().collect();
        crate::parse_command_line(full)
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
            .1
            .subcommand_matches("run")
            .cloned()
            .expect("run")
    }

    #[test]
    fn the_mode_checks_are_derived_from_the_flags_headings() {
        for argv in [
            &["-c", "2"][..],
            &["-b", "select-only"],
            &["--interval", "2s"],
            &["--rtt", "1ms"],
            &["-j", "2"],
            &["--json", "x.json"],
            &["--key-capacity", "10"],
        ] {
            assert!(benchmarking_option_set(&run_matches(argv)), "{argv:?}");
        }
        for argv in [
            &[][..],
            &["-s", "2", "-n"],
            &["-F", "50", "-q"],
            &["-h", "x"],
        ] {
            assert!(!benchmarking_option_set(&run_matches(argv)), "{argv:?}");
        }
        assert!(initialization_option_set(&run_matches(&["-F", "50"])));
        assert!(initialization_option_set(&run_matches(&[
            "--unlogged-tables"
        ])));
        assert!(!initialization_option_set(&run_matches(&[
            "-i", "-n", "-s", "3", "-c", "2"
        ])));
    }
}
