//! `hotbench run`: validates pgbench's options with pgbench's messages, resolves the target
//! (embedded server when none is named), runs `-i` or the benchmark, and prints pgbench's
//! report followed by hotbench's extra lines.

use std::io::Write;

use clap::ArgMatches;
use hotbench_engine::{GroupConfig, QueryMode, RunConfig, RunObserver, ThreadsDefault, Workload};
use hotbench_stats::{RunRecord, ServerInfo};

use crate::fail::{Fail, Result};
use crate::flags::run::RunArgs;
use crate::flags::shared::OutputArgs;
use crate::groups::GroupSpec;
use crate::outputs::Input;
use crate::run_options::RunRequest;
use crate::scripts::{is_builtin, load};
use crate::target::{self, Target, TargetArgs};

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
    crate::compat::check(args.pgbench_compat.as_deref())?;
    if args.dbname.len() > 1 {
        return Err(Fail::input(format!(
            "too many command-line arguments (first is \"{}\")",
            args.dbname[1]
        ))
        .hint("Try \"hotbench run --help\" for more information."));
    }
    let target_args = target_args(args);
    if args.initialize {
        if crate::run_options::benchmarking_option_set(m) {
            return Err(Fail::input(
                "some of the specified options cannot be used in initialization (-i) mode",
            ));
        }
        return initialize(args, &target_args);
    }
    if crate::run_options::initialization_option_set(m) {
        return Err(Fail::input(
            "some of the specified options cannot be used in benchmarking mode",
        ));
    }
    benchmark(args, m, argv)
}

/// Where the database is, from `run`'s connection options.
pub(crate) fn target_args(args: &RunArgs) -> TargetArgs {
    TargetArgs {
        conn: args.conn.clone(),
        embedded: args.embedded.clone(),
        dbname: args
            .dbname_option
            .clone()
            .or_else(|| args.dbname.first().cloned()),
        settings: args.settings.clone(),
        embedded_only: false,
    }
}

fn initialize(args: &RunArgs, target_args: &TargetArgs) -> Result<u8> {
    use hotbench_init::{InitOptions, PartitionMethod};
    let mut opts = InitOptions::default();
    if let Some(s) = &args.init_steps {
        hotbench_init::check_init_steps(s).map_err(init_fail)?;
        opts.steps = s.clone();
    }
    if let Some(s) = args.scale {
        opts.scale = s;
    }
    if let Some(f) = args.fillfactor {
        opts.fillfactor = f;
    }
    if let Some(p) = args.partitions {
        opts.partitions = p;
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
    // Server notices and messages are written here: escaped for the terminal.
    let mut err = hotbench_stats::terminal::Guard(std::io::stderr());
    crate::init_interrupt::run(&mut conn, &opts, &mut err, init_fail)?;
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

fn benchmark(args: &RunArgs, m: &ArgMatches, argv: &[String]) -> Result<u8> {
    let thresholds = crate::thresholds::parse(&args.output.threshold)?;
    let clients = args.load.client.as_ref().map(|c| c.count());
    let req = RunRequest::new(args, m, clients)?;
    let (code, rec) = benchmark_record(&req, argv)?;
    let subject = hotbench_stats::threshold::Subject::run("", &rec);
    let ok = crate::thresholds::check(&thresholds, &[subject], req.output.json.as_deref(), |o| {
        RunRecord {
            thresholds: o,
            ..rec.clone()
        }
    })?;
    Ok(crate::thresholds::exit_code(code, ok))
}

/// Runs the benchmark `req` asks for, prints its report and writes `--json`/`--html`;
/// returns the exit code and the result record (`hotbench sweep` calls it once per point).
pub(crate) fn benchmark_record(req: &RunRequest, argv: &[String]) -> Result<(u8, RunRecord)> {
    let (groups, shard) = req.this_process()?;
    let groups_here = groups.clone();
    let out = &req.output;
    let scripts = crate::scripts::input_files(&groups);
    let inputs: Vec<_> = scripts.iter().map(|p| Input(p)).collect();
    crate::outputs::check(&[out.json.as_deref(), out.html.as_deref()], &inputs)?;
    let nclients = groups.iter().map(|g| g.clients).sum();
    let (groups, any_builtin) = load_groups(req, &groups)?;
    // pgbench raises the open-files limit to the number of clients (+ a few).
    let _ = hotbench_pgserver::limits::raise_nofile_limit();
    let target = target::resolve(&req.target, false)?;
    if let Some(p) = &target.pooler {
        p.check_query_mode(req.query_mode)?;
    }
    let db = prepare_database(req, &target, any_builtin)?;
    let retry = crate::retry_profile::apply(
        req.retry_profile,
        db.engine,
        req.max_tries_given,
        req.backoff_given,
        req.retry.clone(),
    )?;
    let transaction_type = if groups.len() == 1 && groups[0].scripts.len() == 1 {
        groups[0].scripts[0].script.name().to_string()
    } else {
        "multiple scripts".to_string()
    };
    let max_tries = retry.max_tries;
    let mut cfg = run_config(req, groups, retry, db.scale, &target)?;
    if shard.is_some() {
        // A shard bursts to its part of a `rate=` perturbation, as it runs its part of `-R`.
        let rate = |gs: &[GroupSpec]| gs.iter().filter_map(|g| g.rate).sum::<f64>();
        let run_rate = rate(&req.groups);
        if run_rate > 0.0 {
            shard_rates(&mut cfg.settings.perturb, rate(&groups_here) / run_rate);
        }
    }
    cfg.shard = shard;
    let server = ServerInfo {
        version: db.server_version,
        engine: db.engine.name().to_string(),
        target: target.describe(),
        embedded: target.is_embedded(),
        fast: target.is_fast(),
        settings: Default::default(),
        clock_offset_ms: db.clock_offset_ms,
    };
    let mut record = cfg.starting_record(
        transaction_type,
        server,
        crate::mask::mask_args(argv),
        &target,
    );
    record.pooler = target.pooler.as_ref().map(|p| p.setup());
    record.bench.partition_method = db.partition.0;
    record.bench.partitions = db.partition.1.max(0) as u32;
    let since = std::time::SystemTime::now();
    let mut outcome = run_observed(req, nclients, cfg, record, max_tries, &target)?;
    if hotbench_engine::SharedServer::joined_since(&target, since) {
        eprintln!("hotbench: warning: {}", hotbench_engine::JOINED_NOTE);
        outcome
            .record
            .notes
            .push(hotbench_engine::JOINED_NOTE.into());
    }
    // A killed PgBouncer is what "every client lost its connection" means then.
    let pooler_gone = target.pooler.as_ref().and_then(|p| p.gone());
    if let Some(g) = &pooler_gone {
        outcome
            .record
            .notes
            .push(format!("{g} (it went away during the run)"));
    }
    drop(target);
    report(out, outcome, pooler_gone)
}

/// The groups' scripts, loaded and checked (parse errors are input errors, reported before
/// connecting); whether any is a built-in (they need pgbench's tables).
fn load_groups(plan: &RunRequest, specs: &[GroupSpec]) -> Result<(Vec<GroupConfig>, bool)> {
    let mut groups = Vec::new();
    let mut any_builtin = false;
    let mut total_weight: u64 = 0;
    for gs in specs {
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
            keys: gs.keys.clone(),
        });
    }
    if total_weight == 0 {
        return Err(Fail::input("total script weight must not be zero"));
    }
    Ok((groups, any_builtin))
}

/// What the benchmark learnt from the database before it ran.
struct Database {
    server_version: String,
    engine: hotbench_wire::Engine,
    scale: i64,
    /// pgbench_accounts' partitioning (method, count).
    partition: (Option<String>, i32),
    /// This machine's clock minus the server's (`--shard`, `--start-at` runs).
    clock_offset_ms: Option<f64>,
}

/// Connects, prints the banner, reads pgbench's tables' scale when built-in scripts need
/// them, and vacuums as pgbench does (unless `-n`).
fn prepare_database(plan: &RunRequest, target: &Target, any_builtin: bool) -> Result<Database> {
    let mut conn = connect(target)?;
    let server_version = conn.server_version().to_string();
    println!(
        "hotbench ({}, server {})",
        env!("CARGO_PKG_VERSION"),
        hotbench_stats::terminal::escape(&server_version)
    );
    let _ = std::io::stdout().flush();
    let mut scale = plan.scale_given.unwrap_or(1);
    let mut partition = (None, 0);
    if any_builtin {
        let info = hotbench_init::get_table_info(&mut conn, plan.scale_given.is_some())
            .map_err(init_fail)?;
        if let Some(w) = &info.warning {
            eprintln!(
                "hotbench: warning: {}",
                hotbench_stats::terminal::escape_lines(w)
            );
        }
        scale = i64::from(info.scale);
        partition = (
            info.partition_method.map(|p| p.as_str().to_string()),
            info.partitions,
        );
    }
    if !plan.no_vacuum {
        eprint!("starting vacuum...");
        for sql in [
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ] {
            try_execute(&mut conn, sql);
        }
        eprintln!("end.");
        if plan.vacuum_all {
            eprint!("starting vacuum pgbench_accounts...");
            try_execute(&mut conn, "vacuum analyze pgbench_accounts");
            eprintln!("end.");
        }
    }
    let engine = hotbench_wire::Engine::of_version(&server_version);
    let clock_offset_ms = (plan.shard.is_some() || plan.start_at_us.is_some())
        .then(|| crate::shard::clock_offset_ms(&mut conn))
        .flatten();
    conn.close();
    Ok(Database {
        server_version,
        engine,
        scale,
        partition,
        clock_offset_ms,
    })
}

/// The run: built as every command builds one, plus what only pgbench's flags set.
fn run_config(
    plan: &RunRequest,
    groups: Vec<GroupConfig>,
    retry: hotbench_engine::RetryPolicy,
    scale: i64,
    target: &Target,
) -> Result<RunConfig> {
    let workload = Workload {
        groups,
        limit: plan.limit,
        query_mode: plan.query_mode,
        retry,
        defines: plan.defines.clone(),
        scale,
        keys: plan.keys.clone(),
        random_seed: plan.random_seed,
        threads_default: ThreadsDefault::One,
    };
    let mut cfg = RunConfig::build(
        workload,
        plan.settings().clone(),
        target.clients_config()?,
        hotbench_probe::unique_application_name(),
    );
    cfg.latency_limit_us = plan.latency_limit_us;
    cfg.connect_each_txn = plan.connect_each_txn;
    cfg.log = plan.log.clone();
    cfg.exit_on_abort = plan.exit_on_abort;
    cfg.report_per_command = plan.report_per_command;
    cfg.server = crate::server_process::handle(target);
    if target.pooler.is_some() {
        // Perturbations go straight to the server, as the probes do.
        cfg.perturb_conn = Some(target.config.clone());
    }
    cfg.spread = plan.spread;
    cfg.start_at_us = plan.start_at_us;
    cfg.display = plan.display.clone();
    Ok(cfg)
}

/// A shard bursts to its part of a `rate=` perturbation's rate, as it runs its part of `-R`.
fn shard_rates(perturb: &mut [hotbench_settings::Perturbation], share: f64) {
    for p in perturb.iter_mut() {
        if let hotbench_settings::perturb::Kind::Rate { per_s, .. } = &mut p.kind {
            *per_s *= share;
        }
    }
}

/// Runs the engine with pgbench's progress lines, `--prometheus` and the probes watching.
fn run_observed(
    plan: &RunRequest,
    nclients: usize,
    cfg: RunConfig,
    record: RunRecord,
    max_tries: u32,
    target: &Target,
) -> Result<hotbench_engine::RunOutcome> {
    let mut progress = crate::observers::ProgressLines {
        timestamp: plan.display.progress_timestamp,
        throttled: cfg.is_throttled(),
        latency_limit: cfg.latency_limit_us.is_some(),
        retries: max_tries != 1,
    };
    let mut probe = cfg
        .settings
        .probe
        .then(|| crate::observers::ProbeObserver::new(start_probe(&cfg, target), true));
    let mut metrics = match &plan.output.prometheus {
        Some(spec) => {
            let m = crate::metrics_server::MetricsServer::start(
                spec,
                hotbench_report::text::prometheus::LiveMetrics {
                    clients: nclients,
                    server_version: record.server.version.clone(),
                    ..Default::default()
                },
            )?;
            eprintln!("prometheus metrics at http://{}/metrics", m.addr);
            Some(crate::observers::LiveMetrics(m))
        }
        None => None,
    };
    let mut observers: Vec<&mut dyn RunObserver> = vec![&mut progress];
    if let Some(m) = metrics.as_mut() {
        observers.push(m);
    }
    if let Some(p) = probe.as_mut() {
        observers.push(p);
    }
    if let Some(at) = cfg.start_at_us {
        eprintln!(
            "{}",
            crate::shard::waiting_line(at, hotbench_engine::unix_now_us())
        );
    }
    hotbench_engine::run(cfg, record, &mut observers).map_err(|e| match e {
        hotbench_engine::EngineError::Connect(m) | hotbench_engine::EngineError::Config(m) => {
            Fail::input(m)
        }
        hotbench_engine::EngineError::Internal(m) => Fail::run(m),
    })
}

/// Prints pgbench's report and hotbench's lines, writes `--json`/`--html`; the exit code
/// says how the run ended.
fn report(
    out: &OutputArgs,
    outcome: hotbench_engine::RunOutcome,
    pooler_gone: Option<String>,
) -> Result<(u8, RunRecord)> {
    let rec = &outcome.record;
    // Script names, error samples and server text are the record's: escaped for the terminal.
    let shown = hotbench_stats::terminal::escaped(rec);
    let lines = hotbench_report::pgbench_report(&shown) + &hotbench_report::extra_lines(&shown);
    print!("{}", hotbench_stats::terminal::escape_lines(&lines));
    let written = crate::outputs::all(vec![
        out.json
            .as_deref()
            .map_or(Ok(()), |p| crate::outputs::write_json(p, rec, "result")),
        out.html.as_deref().map_or(Ok(()), |p| {
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
    } else if outcome.record.status == hotbench_stats::RunStatus::Disconnected {
        match pooler_gone {
            Some(g) => {
                eprintln!("hotbench: error: {g}: no client had a connection when the run ended")
            }
            None => eprintln!(
                "hotbench: error: the server went away: no client had a connection when the \
                 run ended"
            ),
        }
        2
    } else {
        0
    };
    Ok((code, outcome.record))
}

/// Starts the server probes over their own connection (straight to the server named, not
/// through hotbench's pooler), filtering on the run's `application_name`; statistics
/// intervals follow the run's timeline interval; the pooler's console is read too.
fn start_probe(cfg: &RunConfig, target: &Target) -> hotbench_probe::ProbeHandle {
    let mut o = hotbench_probe::ProbeOptions::new(&cfg.application_name);
    o.wait_interval =
        std::time::Duration::from_micros(cfg.settings.probe_interval_us.max(1) as u64);
    o.stats_interval =
        std::time::Duration::from_micros(cfg.settings.interval_us.max(10_000) as u64);
    o.create_extensions = target.is_embedded();
    if let Some(p) = &target.pooler {
        o.pooler = p.probe_source(&cfg.conn);
        o.no_session_state = p.probe_through_transaction_pool();
    }
    hotbench_probe::Probe::start_config(&target.config, o)
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

    use proptest::prelude::*;

    use crate::flags::Command;

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
            let Ok((cli, m)) = crate::parse_command_line(&argv) else { return Ok(()) };
            let Command::Run(run) = cli.command else { return Ok(()) };
            let sub = m.subcommand_matches("run").cloned().unwrap_or_default();
            let clients = run.load.client.as_ref().map(|c| c.count());
            if let Err(f) = crate::run_options::RunRequest::new(&run, &sub, clients) {
                prop_assert_eq!(f.code, 1);
                prop_assert!(!f.message.is_empty());
            }
        }
    }
}
