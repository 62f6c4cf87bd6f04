//! `hotbench run`: validates pgbench's options with pgbench's messages, resolves the target
//! (embedded server when none is named), runs `-i` or the benchmark, and prints pgbench's
//! report followed by hotbench's extra lines.

use std::io::Write;

use clap::ArgMatches;
use hotbench_engine::{
    duration::{parse_duration_us, Unit},
    Backoff, GoodputRule, GroupConfig, Hooks, Limit, LogConfig, OnDisconnect, QueryMode,
    RetryPolicy, RunConfig,
};
use hotbench_stats::{BenchInfo, RunRecord, ServerInfo, RESULT_FORMAT};

use crate::fail::{Fail, Result};
use crate::flags::run::RunArgs;
use crate::groups::{parse_goodput, parse_groups, GroupSpec};
use crate::option_ranges::{
    check_open_files, parse_int, parse_latency_limit, parse_max_tries, parse_rate,
    parse_sampling_rate, INT_MAX,
};
use crate::scripts::{is_builtin, load, specs_in_order, ScriptSpec};
use crate::target::{self, Target, TargetArgs};

/// pgbench's limit on `-b`/`-f`/`-N`/`-S` scripts in one run.
const MAX_SCRIPTS: usize = 128;

fn benchmarking_option_set(a: &RunArgs) -> bool {
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

fn initialization_option_set(a: &RunArgs) -> bool {
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

pub fn main(args: &RunArgs, m: &ArgMatches, argv: &[String]) -> Result<u8> {
    if args.version {
        println!("hotbench {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    if args.builtin.iter().any(|b| b == "list") {
        eprint!("{}", hotbench_script::list_builtins());
        eprintln!();
        return Ok(0);
    }
    if let Some(name) = &args.show_script {
        let b = hotbench_script::find_builtin(name).map_err(|e| {
            Fail::input(e.to_string())
                .detail(hotbench_script::list_builtins().trim_end().to_string())
        })?;
        eprintln!("-- {}: {}\n{}", b.name, b.desc, b.script);
        return Ok(0);
    }
    crate::option_ranges::check_all(args)?;
    if args.dbname.len() > 1 {
        return Err(Fail::input(format!(
            "too many command-line arguments (first is \"{}\")",
            args.dbname[1]
        ))
        .hint("Try \"hotbench run --help\" for more information."));
    }
    let target_args = target_args(args);
    if args.initialize {
        if benchmarking_option_set(args) {
            return Err(Fail::input(
                "some of the specified options cannot be used in initialization (-i) mode",
            ));
        }
        return initialize(args, &target_args);
    }
    if initialization_option_set(args) {
        return Err(Fail::input(
            "some of the specified options cannot be used in benchmarking mode",
        ));
    }
    benchmark(args, m, argv, &target_args)
}

/// Where the database is, from `run`'s connection options.
pub(crate) fn target_args(args: &RunArgs) -> TargetArgs {
    TargetArgs {
        host: args.host.clone(),
        port: args.port.clone(),
        username: args.username.clone(),
        dbname: args.dbname.first().cloned(),
        pg_version: args.pg_version,
        pg_bin: args.pg_bin.clone(),
    }
}

fn initialize(args: &RunArgs, target_args: &TargetArgs) -> Result<u8> {
    use hotbench_init::{InitOptions, PartitionMethod};
    let mut opts = InitOptions::default();
    if let Some(s) = &args.init_steps {
        hotbench_init::check_init_steps(s).map_err(init_fail)?;
        opts.steps = s.clone();
    }
    if let Some(s) = &args.scale {
        opts.scale = parse_int(s, "-s/--scale", 1, INT_MAX)? as i32;
    }
    if let Some(f) = &args.fillfactor {
        opts.fillfactor = parse_int(f, "-F/--fillfactor", 10, 100)? as i32;
    }
    if let Some(p) = &args.partitions {
        opts.partitions = parse_int(p, "--partitions", 0, INT_MAX)? as i32;
    }
    if let Some(pm) = &args.partition_method {
        opts.partition_method = Some(pm.parse::<PartitionMethod>().map_err(init_fail)?);
    }
    opts.unlogged_tables = args.unlogged_tables;
    opts.foreign_keys = args.foreign_keys;
    opts.tablespace = args.tablespace.clone();
    opts.index_tablespace = args.index_tablespace.clone();
    opts.quiet = args.quiet;
    opts.no_vacuum = args.no_vacuum;
    // Checks between options (--partition-method needs --partitions) come before connecting.
    opts.validate().map_err(init_fail)?;
    let target = target::resolve(target_args, false)?;
    let mut conn = connect(&target)?;
    let mut err = std::io::stderr();
    hotbench_init::run_init(&mut conn, &opts, &mut err).map_err(init_fail)?;
    conn.close();
    drop(target);
    Ok(0)
}

fn init_fail(e: hotbench_init::InitError) -> Fail {
    let mut f = Fail::input(e.to_string());
    f.detail = e.detail().map(|s| s.to_string());
    f.hint = e.hint().map(|s| s.replace("pgbench -i", "hotbench run -i"));
    f
}

fn connect(target: &Target) -> Result<hotbench_wire::Connection> {
    let params = target
        .config
        .resolve()
        .map_err(|e| Fail::input(e.to_string()))?;
    hotbench_wire::Connector::new(params)
        .connect()
        .map_err(|e| target::with_named_hint(Fail::input(e.to_string()), target))
}

/// Everything validated, before touching the database.
struct Plan {
    groups: Vec<GroupSpec>,
    nclients: usize,
    threads: usize,
    limit: Limit,
    query_mode: QueryMode,
    retry: RetryPolicy,
    retry_profile: crate::retry_profile::RetryProfile,
    latency_limit_us: Option<i64>,
    progress_s: Option<u32>,
    log: Option<LogConfig>,
    random_seed: u64,
    rtt_us: i64,
    interval_us: i64,
    goodput: GoodputRule,
    on_disconnect: OnDisconnect,
    defines: Vec<(String, String)>,
    scale_given: Option<i64>,
    /// Probe wait-sampling period (µs); `None` = probes off.
    probe_wait_us: Option<i64>,
    shard: Option<hotbench_engine::ShardConfig>,
    start_at_us: Option<i64>,
    spread: hotbench_wire::Spread,
    keys: Vec<String>,
    key_capacity: usize,
}

fn validate(args: &RunArgs, m: &ArgMatches) -> Result<Plan> {
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
    Ok(Plan {
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

fn benchmark(args: &RunArgs, m: &ArgMatches, argv: &[String], ta: &TargetArgs) -> Result<u8> {
    let thresholds = crate::thresholds::parse(&args.threshold)?;
    let (code, rec) = benchmark_record(args, m, argv, ta)?;
    let subject = hotbench_report::threshold::Subject::run("", &rec);
    let ok = crate::thresholds::check(&thresholds, &[subject], args.json.as_deref(), || {
        serde_json::to_value(&rec)
    })?;
    Ok(crate::thresholds::exit_code(code, ok))
}

/// Runs the benchmark, prints its report and writes `--json`/`--html`; returns the exit code
/// and the result record (`hotbench sweep` calls it once per client count).
pub(crate) fn benchmark_record(
    args: &RunArgs,
    m: &ArgMatches,
    argv: &[String],
    ta: &TargetArgs,
) -> Result<(u8, RunRecord)> {
    let plan = validate(args, m)?;
    crate::outputs::check(&[args.json.as_deref(), args.html.as_deref()])?;
    // Scripts (parse errors are input errors, reported before connecting).
    let mut groups = Vec::new();
    let mut any_builtin = false;
    let mut total_weight: u64 = 0;
    for gs in &plan.groups {
        let mut scripts = Vec::new();
        for s in &gs.scripts {
            any_builtin |= is_builtin(s);
            let ws = load(s)?;
            if plan.query_mode != QueryMode::Simple {
                ws.script
                    .check_extended()
                    .map_err(|e| Fail::input(e.to_string()))?;
            }
            total_weight += u64::from(ws.weight);
            scripts.push(ws);
        }
        groups.push(GroupConfig {
            name: gs.name.clone(),
            scripts,
            clients: gs.clients,
            rate: gs.rate,
            goodput: gs.goodput.clone().unwrap_or_else(|| plan.goodput.clone()),
        });
    }
    if total_weight == 0 {
        return Err(Fail::input("total script weight must not be zero"));
    }
    // pgbench raises the open-files limit to the number of clients (+ a few).
    let _ = hotbench_pgserver::limits::raise_nofile_limit();
    let target = target::resolve(ta, false)?;
    let mut conn = connect(&target)?;
    let server_version = conn.server_version().to_string();
    println!(
        "hotbench ({}, server {})",
        env!("CARGO_PKG_VERSION"),
        server_version
    );
    let _ = std::io::stdout().flush();
    let mut scale = plan.scale_given.unwrap_or(1);
    let mut partition = (None, 0);
    if any_builtin {
        let info = hotbench_init::get_table_info(&mut conn, plan.scale_given.is_some())
            .map_err(init_fail)?;
        if let Some(w) = &info.warning {
            eprintln!("hotbench: warning: {w}");
        }
        scale = i64::from(info.scale);
        partition = (
            info.partition_method.map(|p| p.as_str().to_string()),
            info.partitions,
        );
    }
    if !args.no_vacuum {
        eprint!("starting vacuum...");
        for sql in [
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ] {
            try_execute(&mut conn, sql);
        }
        eprintln!("end.");
        if args.vacuum_all {
            eprint!("starting vacuum pgbench_accounts...");
            try_execute(&mut conn, "vacuum analyze pgbench_accounts");
            eprintln!("end.");
        }
    }
    let engine = hotbench_wire::Engine::of_version(&server_version);
    let engine_name = engine.name().to_string();
    conn.close();
    let retry = crate::retry_profile::apply(
        plan.retry_profile,
        engine,
        args.max_tries.is_some(),
        args.retry_backoff.is_some(),
        plan.retry.clone(),
    )?;

    let transaction_type = if groups.len() == 1 && groups[0].scripts.len() == 1 {
        groups[0].scripts[0].script.name().to_string()
    } else {
        "multiple scripts".to_string()
    };
    let max_tries = retry.max_tries;
    let cfg = RunConfig {
        groups,
        limit: plan.limit,
        threads: plan.threads,
        query_mode: plan.query_mode,
        retry,
        latency_limit_us: plan.latency_limit_us,
        progress_s: plan.progress_s,
        progress_timestamp: args.progress_timestamp,
        connect_each_txn: args.connect,
        random_seed: plan.random_seed,
        rtt_us: plan.rtt_us,
        log: plan.log.clone(),
        conn: target.config.clone(),
        exit_on_abort: args.exit_on_abort,
        verbose_errors: args.verbose_errors,
        debug: args.debug,
        failures_detailed: args.failures_detailed,
        report_per_command: args.report_per_command,
        interval_us: plan.interval_us,
        json_path: args.json.clone(),
        on_disconnect: plan.on_disconnect,
        defines: plan.defines.clone(),
        scale,
        application_name: hotbench_probe::unique_application_name(),
        shard: plan.shard.clone(),
        spread: plan.spread,
        keys: plan.keys.clone(),
        key_capacity: plan.key_capacity,
        start_at_us: plan.start_at_us,
    };
    let bench = BenchInfo {
        transaction_type,
        scale,
        query_mode: plan.query_mode.name().into(),
        clients: plan.nclients,
        threads: plan.threads,
        max_tries,
        duration_s: match plan.limit {
            Limit::Duration(us) => Some((us / 1_000_000) as u64),
            Limit::Transactions(_) => None,
        },
        transactions_per_client: match plan.limit {
            Limit::Transactions(n) => Some(n),
            Limit::Duration(_) => None,
        },
        rate: if cfg.is_throttled() {
            Some(cfg.groups.iter().filter_map(|g| g.rate).sum())
        } else {
            None
        },
        latency_limit_ms: plan.latency_limit_us.map(|us| us as f64 / 1000.0),
        progress: plan.progress_s.is_some(),
        connect_each_txn: args.connect,
        failures_detailed: args.failures_detailed,
        report_per_command: args.report_per_command,
        partition_method: partition.0,
        partitions: partition.1.max(0) as u32,
        rtt_us: plan.rtt_us,
        random_seed: plan.random_seed,
    };
    let record = RunRecord {
        format: RESULT_FORMAT.into(),
        tool: "hotbench".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: 0.0,
        status: "starting".into(),
        command_line: crate::mask::mask_args(argv),
        config: cfg.to_json(),
        bench,
        server: ServerInfo {
            version: server_version,
            engine: engine_name,
            target: target.describe(),
            embedded: target.is_embedded(),
            fast: target.is_fast(),
            settings: Default::default(),
        },
        duration_s: 0.0,
        conn_time_ms: 0.0,
        connect: Default::default(),
        totals: Default::default(),
        groups: Vec::new(),
        timeline: Vec::new(),
        errors: Vec::new(),
        probes: None,
        notes: {
            let mut n = Vec::new();
            if target.is_fast() {
                n.push("embedded server ran with fsync and synchronous_commit off (--fast)".into());
            }
            if target.is_shared() {
                n.push(
                    "another hotbench command was using the embedded server when this run \
                     started: the two shared its CPU and disk"
                        .into(),
                );
            }
            n
        },
        client: Default::default(),
        hosts: Vec::new(),
        per_client: Vec::new(),
        fairness: Vec::new(),
        hot_keys: Vec::new(),
    };
    let throttled = cfg.is_throttled();
    let latency_limit = cfg.latency_limit_us.is_some();
    let mut on_progress = |at: f64, s: &hotbench_stats::IntervalStats| {
        eprintln!(
            "{}",
            hotbench_report::progress_line(
                at,
                args.progress_timestamp,
                s,
                throttled,
                latency_limit,
                max_tries != 1
            )
        );
    };
    let probe = plan
        .probe_wait_us
        .map(|us| start_probe(&cfg, us, target.is_embedded()));
    // Intervals arrive a little after they end: the earliest of the first few tells the
    // probe when the benchmark started, so its intervals end on the run's (exact t later).
    let mut origin_est = f64::INFINITY;
    let metrics = match &args.prometheus {
        Some(spec) => {
            let m = crate::metrics_server::MetricsServer::start(
                spec,
                hotbench_report::prometheus::LiveMetrics {
                    clients: plan.nclients,
                    server_version: record.server.version.clone(),
                    ..Default::default()
                },
            )?;
            eprintln!("prometheus metrics at http://{}/metrics", m.addr);
            Some(m)
        }
        None => None,
    };
    let mut on_interval = |iv: &hotbench_stats::IntervalRecord| {
        if let Some(m) = &metrics {
            m.update(|l| l.add_interval(iv.t, &iv.totals));
        }
        let est = unix_now() - iv.t;
        if let (Some(p), true) = (&probe, iv.t <= 5.0 && est < origin_est - 0.002) {
            p.set_origin(est);
            origin_est = est;
        }
    };
    let outcome = hotbench_engine::run(
        cfg,
        record,
        Hooks {
            on_progress: Some(&mut on_progress),
            on_interval: Some(&mut on_interval),
        },
    )
    .map_err(|e| match e {
        hotbench_engine::EngineError::Connect(m) | hotbench_engine::EngineError::Config(m) => {
            Fail::input(m)
        }
        hotbench_engine::EngineError::Internal(m) => Fail::run(m),
    })?;
    let mut outcome = outcome;
    if let Some(p) = probe {
        finish_probe(p, &mut outcome.record);
    }
    if target.joined_by_another() {
        let note = "another hotbench command joined the embedded server during this run: the \
                    two shared its CPU and disk";
        eprintln!("hotbench: warning: {note}");
        outcome.record.notes.push(note.into());
    }
    drop(target);
    let rec = &outcome.record;
    print!("{}", hotbench_report::pgbench_report(rec));
    print!("{}", hotbench_report::extra_lines(rec));
    let written = crate::outputs::all(vec![
        args.json
            .as_deref()
            .map_or(Ok(()), |p| crate::outputs::write_json(p, rec, "result")),
        args.html.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_html(p, &hotbench_report::render_html(std::slice::from_ref(rec)))
        }),
    ]);
    let _ = std::io::stdout().flush();
    written?;
    let code = if outcome.interrupted {
        eprintln!("hotbench: error: Run was interrupted; the above results are incomplete.");
        2
    } else if outcome.aborted_clients > 0 {
        eprintln!("hotbench: error: Run was aborted; the above results are incomplete.");
        2
    } else if outcome.record.status == "disconnected" {
        eprintln!(
            "hotbench: error: the server went away: no client had a connection when the run ended"
        );
        2
    } else {
        0
    };
    Ok((code, outcome.record))
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

/// Starts the server probes over their own connection, filtering on the run's
/// `application_name`; statistics intervals follow the run's timeline interval.
fn start_probe(cfg: &RunConfig, wait_us: i64, embedded: bool) -> hotbench_probe::ProbeHandle {
    let mut o = hotbench_probe::ProbeOptions::new(&cfg.application_name);
    o.wait_interval = std::time::Duration::from_micros(wait_us.max(1) as u64);
    o.stats_interval = std::time::Duration::from_micros(cfg.interval_us.max(10_000) as u64);
    o.create_extensions = embedded;
    hotbench_probe::Probe::start_config(&cfg.conn, o)
}

/// Stores the probes' record in the result, on the run's time axis.
fn finish_probe(probe: hotbench_probe::ProbeHandle, rec: &mut RunRecord) {
    rec.probes = Some(probe.stop_json());
    hotbench_stats::align_probes(rec);
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// pgbench's `tryExecuteStatement`: errors are shown and ignored.
fn try_execute(conn: &mut hotbench_wire::Connection, sql: &str) {
    if let Err(e) = conn.execute(sql) {
        eprintln!("hotbench: error: {e}");
        eprintln!("hotbench: detail: (ignoring this error and continuing anyway)");
    }
}

#[cfg(test)]
mod fuzz {
    //! Random command lines built from pgbench's flags and hostile values: parsing and
    //! validation must answer with a message (exit 1) or succeed, never panic.

    use clap::{CommandFactory, FromArgMatches};
    use proptest::prelude::*;

    use crate::flags::{Cli, Command};

    const FLAGS: &[&str] = &[
        "-c",
        "-j",
        "-T",
        "-t",
        "-R",
        "-L",
        "-P",
        "-M",
        "-s",
        "-F",
        "-I",
        "-D",
        "-b",
        "-f",
        "--max-tries",
        "--rate",
        "--latency-limit",
        "--aggregate-interval",
        "--sampling-rate",
        "--random-seed",
        "--retry-backoff",
        "--retry-on",
        "--group",
        "--rtt",
        "--goodput",
        "--on-disconnect",
        "--interval",
        "--partitions",
        "--partition-method",
        "--log-prefix",
    ];
    const SWITCHES: &[&str] = &[
        "-i",
        "-n",
        "-N",
        "-S",
        "-r",
        "-C",
        "-l",
        "-q",
        "-v",
        "--failures-detailed",
        "--progress-timestamp",
        "--verbose-errors",
        "--exit-on-abort",
        "--continue-on-error",
        "--foreign-keys",
        "--unlogged-tables",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("0".to_string()),
            Just("-1".to_string()),
            Just("99999999999999999999".to_string()),
            Just("1e309".to_string()),
            Just("nan".to_string()),
            Just("exp:1ms:0s".to_string()),
            Just("g:clients=0".to_string()),
            Just("x=".to_string()),
            "[ -~]{0,12}",
            (0u32..100000).prop_map(|n| n.to_string()),
        ]
    }

    fn arg() -> impl Strategy<Value = Vec<String>> {
        prop_oneof![
            (prop::sample::select(FLAGS), value()).prop_map(|(f, v)| vec![f.to_string(), v]),
            (prop::sample::select(FLAGS), value()).prop_map(|(f, v)| vec![format!("{f}{v}")]),
            prop::sample::select(SWITCHES).prop_map(|s| vec![s.to_string()]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn random_command_lines_never_panic(args in prop::collection::vec(arg(), 0..8)) {
            let mut argv = vec!["hotbench".to_string(), "run".to_string()];
            argv.extend(args.into_iter().flatten());
            let Ok(m) = Cli::command().try_get_matches_from(&argv) else { return Ok(()) };
            let Ok(cli) = Cli::from_arg_matches(&m) else { return Ok(()) };
            let Command::Run(run) = cli.command else { return Ok(()) };
            let sub = m.subcommand_matches("run").cloned().unwrap_or_default();
            if let Err(f) = super::validate(&run, &sub) {
                prop_assert_eq!(f.code, 1);
                prop_assert!(!f.message.is_empty());
            }
        }
    }
}
