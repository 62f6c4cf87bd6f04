//! `hotbench run`'s options checked before anything touches a database: pgbench's flags
//! with pgbench's messages (exit 1), resolved into [`RunOptions`], from which `run_cmd`
//! builds the engine's `RunConfig`.

use clap::ArgMatches;
use hotbench_engine::{
    duration::{parse_duration_us, Unit},
    Backoff, GoodputRule, Limit, LogConfig, OnDisconnect, QueryMode, RetryPolicy,
};

use crate::fail::{Fail, Result};
use crate::flags::run::RunArgs;
use crate::groups::{parse_goodput, parse_groups, GroupSpec};
use crate::option_ranges::{
    check_open_files, parse_int, parse_latency_limit, parse_max_tries, parse_rate,
    parse_sampling_rate, INT_MAX,
};
use crate::scripts::{specs_in_order, ScriptSpec};

/// pgbench's limit on `-b`/`-f`/`-N`/`-S` scripts in one run.
pub(crate) const MAX_SCRIPTS: usize = 128;

pub(crate) fn benchmarking_option_set(a: &RunArgs) -> bool {
    !a.builtin.is_empty()
        || !a.file.is_empty()
        || !a.skip_some_updates.is_empty()
        || !a.select_only.is_empty()
        || a.client.is_some()
        || a.connect
        || !a.define.is_empty()
        || a.jobs.is_some()
        || a.log
        || a.latency_limit.is_some()
        || a.protocol.is_some()
        || a.progress.is_some()
        || a.report_per_command
        || a.rate.is_some()
        || a.transactions.is_some()
        || a.time.is_some()
        || a.vacuum_all
        || a.aggregate_interval.is_some()
        || a.failures_detailed
        || a.log_prefix.is_some()
        || a.max_tries.is_some()
        || a.progress_timestamp
        || a.random_seed.is_some()
        || a.sampling_rate.is_some()
        || a.verbose_errors
        || a.exit_on_abort
        || !a.group.is_empty()
        || a.rtt.is_some()
        || a.retry_backoff.is_some()
        || a.retry_profile.is_some()
        || a.shard.is_some()
        || a.load_balance.is_some()
        || !a.key.is_empty()
        || a.key_capacity.is_some()
        || a.start_at.is_some()
        || !a.retry_on.is_empty()
        || a.continue_on_error
        || a.probe.is_some()
        || a.probe_interval.is_some()
        || a.prometheus.is_some()
        || !a.threshold.is_empty()
}

pub(crate) fn initialization_option_set(a: &RunArgs) -> bool {
    a.init_steps.is_some()
        || a.fillfactor.is_some()
        || a.quiet
        || a.foreign_keys
        || a.index_tablespace.is_some()
        || a.partition_method.is_some()
        || a.partitions.is_some()
        || a.tablespace.is_some()
        || a.unlogged_tables
}

/// Everything validated, before touching the database.
pub(crate) struct RunOptions {
    pub(crate) groups: Vec<GroupSpec>,
    pub(crate) nclients: usize,
    pub(crate) threads: usize,
    pub(crate) limit: Limit,
    pub(crate) query_mode: QueryMode,
    pub(crate) retry: RetryPolicy,
    pub(crate) retry_profile: crate::retry_profile::RetryProfile,
    pub(crate) latency_limit_us: Option<i64>,
    pub(crate) progress_s: Option<u32>,
    pub(crate) log: Option<LogConfig>,
    pub(crate) random_seed: u64,
    pub(crate) rtt_us: i64,
    pub(crate) interval_us: i64,
    pub(crate) goodput: GoodputRule,
    pub(crate) on_disconnect: OnDisconnect,
    pub(crate) defines: Vec<(String, String)>,
    pub(crate) scale_given: Option<i64>,
    /// Probe wait-sampling period (µs); `None` = probes off.
    pub(crate) probe_wait_us: Option<i64>,
    pub(crate) shard: Option<hotbench_engine::ShardConfig>,
    pub(crate) start_at_us: Option<i64>,
    pub(crate) spread: hotbench_wire::Spread,
    pub(crate) keys: Vec<String>,
    pub(crate) key_capacity: usize,
}

pub(crate) fn validate(args: &RunArgs, m: &ArgMatches) -> Result<RunOptions> {
    let nclients = match &args.client {
        Some(c) => parse_int(c, "-c/--clients", 1, INT_MAX)? as usize,
        None => 1,
    };
    let mut threads = match &args.jobs {
        Some(j) => parse_int(j, "-j/--jobs", 1, INT_MAX)? as usize,
        None => 1,
    };
    let query_mode = match &args.protocol {
        Some(p) => QueryMode::parse(p)
            .ok_or_else(|| Fail::input(format!("invalid query mode (-M): \"{p}\"")))?,
        None => QueryMode::Simple,
    };
    let rate = args.rate.as_deref().map(parse_rate).transpose()?;
    let latency_limit_us = args
        .latency_limit
        .as_deref()
        .map(parse_latency_limit)
        .transpose()?;
    let progress_s = match &args.progress {
        Some(p) => Some(parse_int(p, "-P/--progress", 1, INT_MAX)? as u32),
        None => None,
    };
    let nxacts = match &args.transactions {
        Some(t) => Some(parse_int(t, "-t/--transactions", 1, INT_MAX)? as u64),
        None => None,
    };
    let duration = match &args.time {
        Some(t) => Some(crate::option_ranges::parse_time(t)?),
        None => None,
    };
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
    let sampling_rate = args
        .sampling_rate
        .as_deref()
        .map(parse_sampling_rate)
        .transpose()?;
    let aggregate_interval = match &args.aggregate_interval {
        Some(a) => Some(parse_int(a, "--aggregate-interval", 1, INT_MAX)? as u32),
        None => None,
    };
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
    if args.progress_timestamp && progress_s.is_none() {
        return Err(Fail::input(
            "--progress-timestamp is allowed only under --progress",
        ));
    }
    let max_tries = args.max_tries.as_deref().map(parse_max_tries).transpose()?;
    let max_tries = max_tries.unwrap_or(1);
    if max_tries == 0 && latency_limit_us.is_none() && duration.is_none() {
        return Err(Fail::input("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)"));
    }
    let backoff = match &args.retry_backoff {
        Some(b) => Backoff::parse(b).map_err(Fail::input)?,
        None => Backoff::None,
    };
    let mut extra_codes = Vec::new();
    for list in &args.retry_on {
        for code in list.split(',').map(str::trim).filter(|c| !c.is_empty()) {
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
    let retry_profile = crate::retry_profile::RetryProfile::parse(args.retry_profile.as_deref())?;
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
    let seed_given =
        args.random_seed.is_some() || std::env::var_os("PGBENCH_RANDOM_SEED").is_some();
    let random_seed = match (shard, start_at_us, seed_given) {
        // Shards must draw from one seed: without one given, the common start time is it.
        (Some(_), Some(at), false) => at as u64,
        (Some(_), None, false) => {
            return Err(Fail::input(
                "--shard needs --random-seed N or --start-at TIME, so that every shard derives the same random seeds",
            ))
        }
        _ => crate::seed::resolve(args.random_seed.as_deref())?,
    };
    if seed_given {
        // pgbench reports a seed chosen by the user (so a run can be repeated).
        eprintln!("hotbench: setting random seed to {random_seed}");
    }
    let rtt_us = match &args.rtt {
        Some(r) => parse_duration_us(r, Unit::Millis).map_err(Fail::input)?,
        None => 0,
    };
    let interval_us = match &args.interval {
        Some(i) => {
            let us = parse_duration_us(i, Unit::Seconds).map_err(Fail::input)?;
            if us < 10_000 {
                return Err(Fail::input(format!(
                    "invalid --interval \"{i}\": must be at least 10ms"
                )));
            }
            us
        }
        None => 1_000_000,
    };
    let goodput = match &args.goodput {
        Some(g) => parse_goodput(g)?,
        None => GoodputRule::Committed,
    };
    let on_disconnect = match args.on_disconnect.as_deref() {
        None | Some("reconnect") => OnDisconnect::Reconnect,
        Some("abort") => OnDisconnect::Abort,
        Some(o) => {
            return Err(Fail::input(format!(
                "invalid --on-disconnect \"{o}\": expected reconnect or abort"
            )))
        }
    };
    let mut defines = Vec::new();
    {
        let mut vars = hotbench_script::Variables::new();
        for d in &args.define {
            hotbench_script::define(&mut vars, d).map_err(Fail::input)?;
            if let Some((n, v)) = d.split_once('=') {
                defines.push((n.to_string(), v.to_string()));
            }
        }
    }
    let scale_given = match &args.scale {
        Some(s) => Some(parse_int(s, "-s/--scale", 1, INT_MAX)?),
        None => None,
    };
    let specs = specs_in_order(m);
    if specs.len() > MAX_SCRIPTS {
        return Err(Fail::input(format!(
            "at most {MAX_SCRIPTS} SQL scripts are allowed"
        )));
    }
    let groups = if !args.group.is_empty() {
        if !specs.is_empty() {
            return Err(Fail::input(
                "--group cannot be combined with -b, -f, -N or -S (give each group its scripts)",
            ));
        }
        if args.client.is_some() || args.rate.is_some() {
            return Err(Fail::input(
                "--group cannot be combined with -c or -R (give each group its clients=N and rate=R)",
            ));
        }
        parse_groups(&args.group)?
    } else {
        let specs = if specs.is_empty() {
            vec![ScriptSpec::Builtin("tpcb-like".into())]
        } else {
            specs
        };
        vec![GroupSpec {
            name: "default".to_string(),
            scripts: specs,
            clients: nclients,
            rate,
            goodput: None,
            keys: Vec::new(),
        }]
    };
    let spread = match args.load_balance.as_deref() {
        None => hotbench_wire::Spread::First,
        Some(t) => hotbench_wire::Spread::parse(t).ok_or_else(|| {
            Fail::input(format!(
                "invalid --load-balance \"{t}\": expected first, round-robin or random"
            ))
        })?,
    };
    for k in &args.key {
        if !hotbench_script::valid_variable_name(k) {
            return Err(Fail::input(format!(
                "invalid --key \"{k}\": expected a script variable name"
            )));
        }
    }
    let key_capacity = match &args.key_capacity {
        Some(n) => parse_int(n, "--key-capacity", 1, 1_000_000)? as usize,
        None => 1000,
    };
    let mut groups = groups;
    let shard = match shard {
        Some(sh) => {
            let shared = format!(
                "{random_seed}|{limit:?}|{query_mode:?}|{start_at_us:?}|{:?}|{:?}",
                groups
                    .iter()
                    .map(|g| (&g.name, g.clients, g.rate.map(f64::to_bits), &g.scripts))
                    .collect::<Vec<_>>(),
                args.define
            );
            let key = crate::shard::run_key(sh.count, &shared);
            Some(crate::shard::split(&mut groups, sh, key)?)
        }
        None => None,
    };
    let total: usize = groups.iter().map(|g| g.clients).sum();
    check_open_files(total)?;
    if threads > total {
        threads = total;
    }
    let log = args.log.then(|| LogConfig {
        prefix: args
            .log_prefix
            .clone()
            .unwrap_or_else(|| "pgbench_log".into()),
        aggregate_interval: aggregate_interval.unwrap_or(0),
        sampling_rate,
    });
    let probe_wait_us = parse_probe(args)?;
    Ok(RunOptions {
        groups,
        nclients: total,
        threads,
        limit,
        query_mode,
        retry: RetryPolicy {
            max_tries,
            backoff,
            extra_codes,
            continue_on_error: args.continue_on_error,
        },
        retry_profile,
        shard,
        start_at_us,
        spread,
        keys: args.key.clone(),
        key_capacity,
        latency_limit_us,
        progress_s,
        log,
        random_seed,
        rtt_us,
        interval_us,
        goodput,
        on_disconnect,
        defines,
        scale_given,
        probe_wait_us,
    })
}

/// `--probe on|off` and `--probe-interval DUR` (wait sampling period, ≥ 10 ms).
fn parse_probe(args: &RunArgs) -> Result<Option<i64>> {
    match args.probe.as_deref() {
        None | Some("on") => {}
        Some("off") => return Ok(None),
        Some(o) => {
            return Err(Fail::input(format!(
                "invalid --probe \"{o}\": expected on or off"
            )))
        }
    }
    match &args.probe_interval {
        Some(i) => {
            let us = parse_duration_us(i, Unit::Millis).map_err(Fail::input)?;
            if us < 10_000 {
                return Err(Fail::input(format!(
                    "invalid --probe-interval \"{i}\": must be at least 10ms"
                )));
            }
            Ok(Some(us))
        }
        None => Ok(Some(100_000)),
    }
}
