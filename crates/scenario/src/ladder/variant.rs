//! One variant of a ladder, as named lifecycle steps: [`set_up`] a fresh schema, start the
//! [`background`] perturbations, build the run ([`run_config`]), [`run`] it with the monitors
//! and probes watching, [`finish`] (the finish SQL and the work count), [`check`], and
//! [`record_result`] of the variant. The ladder claims the schema before the first variant
//! and releases it after the last (`ladder.rs`).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use hotbench_engine::{
    signals, EngineError, GoodputRule, Limit, RunConfig, RunObserver, RunOutcome, ThreadsDefault,
    Workload, JOINED_NOTE,
};
use hotbench_stats::{RunRecord, ServerInfo};
use hotbench_wire::{Config, Connection};

use super::{not_run, query_mode, LadderOptions, Prepared, NOT_RUN};
use crate::background::{switched_on, Holder, Monitors};
use crate::checks::{check_rows, run_values};
use crate::db;
use crate::error::{Result, ScenarioError};
use crate::manifest::{split_weight, Scenario};
use crate::phases::{self, Live};
use crate::progress;
use crate::work;
use hotbench_stats::{CheckResult, Ladder, MonitorSeries, PhaseTimes, VariantResult};

/// Where a variant runs: the scenario, its prepared variant, the ladder's options and the
/// admin connection that sets up and checks.
pub(super) struct Stage<'a, 's> {
    pub scn: &'s Scenario,
    pub p: &'a Prepared<'s>,
    pub opts: &'a LadderOptions<'a>,
    pub admin_cfg: &'a Config,
    pub schema: &'a str,
    pub engine: &'a str,
}

/// Runs one variant; the bool is whether the run was interrupted (Ctrl-C). Each step is
/// timed into the variant's `phases_s` (`crate::phases`).
pub(super) fn run_variant(
    st: &Stage<'_, '_>,
    admin: &mut Connection,
    ladder: &Ladder,
    log: &mut (dyn Write + Send),
) -> Result<(VariantResult, bool)> {
    let clients: usize = st.p.groups.iter().map(|g| g.clients).sum();
    let name = &st.p.variant.name;
    let _ = write!(log, "{} / {name}: setting up…", st.scn.name());
    let _ = log.flush();
    let mut ph = PhaseTimes::default();
    let on = st.opts.progress;
    let (ready, secs) = phases::timed(log, Live::when(on, " ", false), || -> Result<_> {
        set_up(st, admin)?;
        if signals::stop_requested() {
            return Ok(None);
        }
        let (holders, mut notes) = background(st)?;
        let (cfg, run_conn, mode_note) = run_config(st)?;
        notes.extend(mode_note);
        Ok(Some((holders, notes, cfg, run_conn)))
    });
    ph.setup = secs;
    let Some((holders, mut notes, cfg, run_conn)) = ready? else {
        let _ = writeln!(log, " interrupted before its run");
        return Ok((not_run(st.p, NOT_RUN), true));
    };
    let record = record_template(st, &cfg, ladder);
    let _ = write!(
        log,
        " running {} s with {clients} clients…",
        st.p.duration_s
    );
    if st.opts.progress {
        let _ = writeln!(log);
    }
    let _ = log.flush();
    let started = std::time::Instant::now();
    let (outcome, series, monitor_notes) = run(st, cfg, &run_conn, record, holders, log)?;
    notes.extend(monitor_notes);
    if reconnect_if_lost(st, admin)? {
        notes.push(
            "the server restarted during the run: the ladder's own session was opened again".into(),
        );
    }
    // The engine's wall time is the clients' connections, the measured run, then the
    // cancelling of what was in flight and the observers' ending: the last is `finish`.
    let r = &outcome.record;
    (ph.connect, ph.run) = (r.connect.duration_ms / 1000.0, r.duration_s);
    let ended = (started.elapsed().as_secs_f64() - ph.connect - ph.run).max(0.0);
    let label = format!("  {name}: finishing… ");
    let (done, secs) = phases::timed(log, Live::when(on, &label, true), || finish(st, admin, r));
    let (extra, work) = done?;
    ph.finish = ended + secs;
    let label = format!("  {name}: checking… ");
    let (checks, secs) = phases::timed(log, Live::when(on, &label, true), || {
        check(st, admin, &extra)
    });
    ph.checks = secs;
    let mut checks = checks?;
    // A [work] that measured nothing is a failed check: its rate is not shown, and never
    // the committed rate in its place.
    let work = match work {
        Ok(w) => w,
        Err(why) => {
            checks.push(CheckResult {
                name: hotbench_stats::WORK_CHECK.into(),
                ok: false,
                detail: why,
            });
            None
        }
    };
    let (mut result, interrupted) = record_result(st, outcome, checks, series, work, notes, log);
    let label = format!("  {name}: dropping its schema… ");
    ph.teardown = phases::timed(log, Live::when(on, &label, true), || teardown(st, admin)).1;
    result.notes.extend(phases::notes(&ph));
    result.phases_s = Some(ph);
    Ok((result, interrupted))
}

/// A server that restarted during the run (a `restart` perturbation) took the ladder's own
/// session with it: a new one, the schema claimed again. True when it had to.
fn reconnect_if_lost(st: &Stage<'_, '_>, admin: &mut Connection) -> Result<bool> {
    if admin.simple_query("select 1").is_ok() {
        return Ok(false);
    }
    let mut fresh = db::connect(st.admin_cfg)?;
    crate::claim::claim_schema(&mut fresh, st.schema, st.scn.name())?;
    *admin = fresh;
    Ok(true)
}

/// Drops the variant's schema at once (its tables would otherwise weigh on the next
/// variant's setup), unless `--keep-schema`: the next setup drops it, the last one stays.
fn teardown(st: &Stage<'_, '_>, admin: &mut Connection) {
    if !st.opts.keep_schema {
        let _ = admin.simple_query(&format!("drop schema if exists {} cascade", st.schema));
    }
}

/// A fresh schema, pgbench's tables if asked, then the setup files.
fn set_up(st: &Stage<'_, '_>, admin: &mut Connection) -> Result<()> {
    let (scn, p, schema) = (st.scn, st.p, st.schema);
    let m = &scn.manifest;
    db::run_file(
        admin,
        "(schema reset)",
        &format!("drop schema if exists {schema} cascade; create schema {schema}"),
    )?;
    let _ = admin.take_notices();
    if m.pgbench_init.is_some() {
        let init = hotbench_init::InitOptions {
            scale: p.scale.clamp(1, i32::MAX as i64) as i32,
            quiet: true,
            terminal: Some(false),
            ..Default::default()
        };
        hotbench_init::run_init(admin, &init, &mut std::io::sink()).map_err(|e| {
            ScenarioError::Connect(format!(
                "{}: pgbench_init (creating pgbench's tables) failed: {e}",
                scn.bundle.display("scenario.toml")
            ))
        })?;
        let _ = admin.take_notices();
    }
    let setup: Vec<String> = m.setup.iter().chain(&p.variant.setup).cloned().collect();
    run_files(st, admin, &setup, &BTreeMap::new())?;
    // The setup's rows must reach the statistics before the probes' first snapshot: an idle
    // backend flushes them only every 10 s, and the tables panel read `live 0` for a table
    // full of rows.
    if st.engine == "postgresql" && admin.server_version_num() >= 150_000 {
        let _ = admin.simple_query("select pg_stat_force_next_flush()");
    }
    Ok(())
}

/// Starts the scenario's background sessions that are on for this variant.
fn background(st: &Stage<'_, '_>) -> Result<(Vec<Holder>, Vec<String>)> {
    let (scn, p) = (st.scn, st.p);
    let none = BTreeMap::new();
    let mut notes = Vec::new();
    let mut holders = Vec::new();
    for b in &scn.manifest.background {
        if !switched_on(
            &p.params,
            b.when.as_deref(),
            &format!("background \"{}\"", b.name),
        )? {
            continue;
        }
        let sql = p
            .params
            .substitute(&b.sql, &none)
            .map_err(|e| ScenarioError::Input(format!("background \"{}\": {e}", b.name)))?;
        let file = format!(
            "{} [background {}]",
            scn.bundle.display("scenario.toml"),
            b.name
        );
        let end = b.end.clone().unwrap_or_else(|| "rollback".into());
        holders.push(Holder::start(st.admin_cfg, &b.name, &file, &sql, &end)?);
        notes.push(format!("background \"{}\" ran during the run", b.name));
    }
    Ok((holders, notes))
}

/// The variant's run: its groups in the scenario's schema with the variant's settings
/// (straight to the server, or through the ladder's pooler), the connection options the
/// probes use (straight to the server), and a note when the query mode had to change.
fn run_config(st: &Stage<'_, '_>) -> Result<(RunConfig, Config, Option<String>)> {
    let (scn, p, opts) = (st.scn, st.p, st.opts);
    let mut settings = vec![("search_path".to_string(), st.schema.to_string())];
    settings.extend(p.settings.iter().cloned());
    let run_conn = db::with_settings(&opts.conn, &settings)?;
    let client_conn = match opts.route {
        Some(r) => r
            .clients(&opts.conn, &settings)
            .map_err(ScenarioError::Connect)?,
        None => run_conn.clone(),
    };
    let (mode, note) =
        crate::pooling::query_mode(query_mode(scn.manifest.query_mode.as_deref())?, opts.route);
    // Unique per variant and process, so probes see only this variant's backends.
    let application_name = format!(
        "hotbench-{}-{}-{}",
        std::process::id(),
        scn.name(),
        p.variant.name
    );
    let mut keys = scn.manifest.key.names();
    for k in p.variant.key.names() {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let workload = Workload {
        groups: p.groups.clone(),
        limit: Limit::Duration(p.duration_s as i64 * 1_000_000),
        query_mode: mode,
        retry: p.retry.clone(),
        defines: p.params.defines(),
        scale: p.scale,
        keys,
        random_seed: opts.random_seed,
        threads_default: ThreadsDefault::PerCore,
    };
    let mut run_settings = opts.settings.clone();
    run_settings.perturb.extend(p.perturbations.iter().cloned());
    let mut cfg = RunConfig::build(workload, run_settings, client_conn, application_name);
    // Perturbations go straight to the server, as the scenario's own sessions do.
    cfg.perturb_conn = Some(run_conn.clone());
    cfg.server = opts.server.clone();
    Ok((cfg, run_conn, note))
}

/// Runs the benchmark with the monitors sampling and the probes observing; the background
/// sessions end with it.
fn run(
    st: &Stage<'_, '_>,
    cfg: RunConfig,
    run_conn: &Config,
    record: RunRecord,
    holders: Vec<Holder>,
    log: &mut dyn Write,
) -> Result<(RunOutcome, Vec<MonitorSeries>, Vec<String>)> {
    let (p, opts) = (st.p, st.opts);
    let m = &st.scn.manifest;
    let none = BTreeMap::new();
    let mut monitors_on = Vec::new();
    for mo in &m.monitors {
        if switched_on(
            &p.params,
            mo.when.as_deref(),
            &format!("monitor \"{}\"", mo.name),
        )? {
            monitors_on.push(mo);
        }
    }
    let monitors: Vec<(String, String)> = monitors_on
        .into_iter()
        .map(|mo| {
            p.params
                .substitute(&mo.sql, &none)
                .map(|s| (mo.name.clone(), s))
                .map_err(|e| ScenarioError::Input(format!("monitor \"{}\": {e}", mo.name)))
        })
        .collect::<Result<_>>()?;
    let interval = Duration::from_micros(opts.settings.interval_us.max(10_000) as u64);
    let sampler = Monitors::start(st.admin_cfg, monitors, interval);
    let mut probe = opts
        .probe
        .map(|pr| pr.start(run_conn, &cfg.application_name, &m.tables));
    let mut observers: Vec<&mut dyn RunObserver> = Vec::new();
    if let Some(p) = probe.as_mut() {
        observers.push(p.as_mut());
    }
    let work_group = p.work_group.as_ref().and_then(|w| {
        let i = p.groups.iter().position(|g| &g.name == w)?;
        (p.groups.len() > 1).then_some(i)
    });
    let mut live = opts.live.map(|sink| {
        let clients = p.groups.iter().map(|g| g.clients).sum();
        sink.variant_started(
            st.scn.name(),
            &p.variant.name,
            clients,
            &record.server.version,
        );
        crate::live::LiveObserver {
            sink,
            monitors: &sampler,
            work_group,
        }
    });
    if let Some(l) = live.as_mut() {
        observers.push(l);
    }
    let line_cx = progress::LineContext {
        variant: &p.variant.name,
        unit: m.work.as_ref().map_or("goodput", |w| w.unit.as_str()),
        work_group,
        duration_s: p.duration_s,
        left_after_s: p.left_after_s,
    };
    let mut printer = opts
        .progress
        .then(|| progress::Printer::new(line_cx, log, &sampler));
    if let Some(pr) = printer.as_mut() {
        observers.push(pr);
    }
    let since = std::time::SystemTime::now();
    let outcome = hotbench_engine::run(cfg, record, &mut observers);
    let (series, monitor_notes) = sampler.finish();
    for h in holders {
        h.stop();
    }
    // As for `hotbench run`: a configuration the engine refuses, or clients that cannot
    // connect at start-up, is bad input (exit 1); anything else is a failed run.
    let mut outcome = outcome.map_err(|e| match e {
        EngineError::Config(m) | EngineError::Connect(m) => {
            ScenarioError::Input(format!("variant \"{}\": {m}", p.variant.name))
        }
        EngineError::Internal(m) => ScenarioError::Engine {
            variant: p.variant.name.clone(),
            message: m,
        },
    })?;
    if opts.sharing.joined_since(since) {
        outcome.record.notes.push(JOINED_NOTE.into());
    }
    Ok((outcome, series, monitor_notes))
}

/// The `[work]` count: none without `[work]`, else the number, or why there is none (NULL,
/// no row, not a number ≥ 0).
type WorkCount = std::result::Result<Option<f64>, String>;

/// The finish files and the work count, with the values checks may use.
fn finish(
    st: &Stage<'_, '_>,
    admin: &mut Connection,
    record: &RunRecord,
) -> Result<(BTreeMap<String, String>, WorkCount)> {
    let (scn, p) = (st.scn, st.p);
    let m = &scn.manifest;
    let mut extra = run_values(record);
    // Groups and scripts of every variant count as 0 where this variant has none, so
    // scenario-wide checks can name them.
    for g in m.variants.iter().flat_map(|v| v.group_defs()) {
        let specs = g.script_specs();
        let names = std::iter::once(g.name.as_str()).chain(specs.iter().map(|s| split_weight(s).0));
        for name in names {
            for k in ["committed", "goodput", "unfinished", "in_doubt"] {
                extra
                    .entry(format!("{k}:{name}"))
                    .or_insert_with(|| "0".into());
            }
        }
    }
    let work = match &m.work {
        Some(w) => {
            let sql = p
                .params
                .substitute(&w.sql, &BTreeMap::new())
                .map_err(|e| ScenarioError::Input(format!("work: {e}")))?;
            let r = db::run_file(
                admin,
                &format!("{} [work]", scn.bundle.display("scenario.toml")),
                &sql,
            )?;
            match db::scalar(&r).filter(|n| n.is_finite() && *n >= 0.0) {
                Some(n) => {
                    extra.insert("work".into(), format!("{n}"));
                    Ok(Some(n))
                }
                None => Err(format!(
                    "the [work] query returned {}, not a number ≥ 0",
                    db::first_text(&r)
                )),
            }
        }
        None => Ok(None),
    };
    run_files(st, admin, &m.finish, &extra)?;
    Ok((extra, work))
}

/// The scenario's and the variant's check files.
fn check(
    st: &Stage<'_, '_>,
    admin: &mut Connection,
    extra: &BTreeMap<String, String>,
) -> Result<Vec<CheckResult>> {
    let m = &st.scn.manifest;
    let files: Vec<String> = m
        .checks
        .iter()
        .chain(&st.p.variant.checks)
        .cloned()
        .collect();
    let mut checks = Vec::new();
    for (rel, rs) in run_files(st, admin, &files, extra)? {
        checks.extend(check_rows(&st.scn.bundle.display(&rel), &rs)?);
    }
    if !files.is_empty() && checks.is_empty() {
        return Err(ScenarioError::manifest(
            &files.join(", "),
            None,
            "the checks checked nothing (no statement returned a check row)",
        ));
    }
    Ok(checks)
}

/// The variant's result, with notes on the work, useless transactions, the monitors and
/// aborted clients.
fn record_result(
    st: &Stage<'_, '_>,
    outcome: RunOutcome,
    checks: Vec<CheckResult>,
    series: Vec<MonitorSeries>,
    work: Option<f64>,
    mut notes: Vec<String>,
    log: &mut dyn Write,
) -> (VariantResult, bool) {
    let (p, v, m) = (st.p, st.p.variant, &st.scn.manifest);
    let record = outcome.record;
    let until_empty = m.work.as_ref().and_then(|w| w.until_empty.as_deref());
    let ran_out_at_s =
        until_empty.and_then(|mon| work::ran_out_at(&series, mon, record.duration_s));
    notes.extend(work::notes(&record, p.work_group.as_deref(), ran_out_at_s));
    // Under a `sum:` rule goodput counts units, not transactions: no such note.
    let counts_units = |name: &str| {
        p.groups
            .iter()
            .any(|g| g.name == name && matches!(g.goodput, GoodputRule::Sum(_)))
    };
    for g in record.groups.iter().filter(|g| !counts_units(&g.name)) {
        let useless = g
            .totals
            .counters
            .cnt
            .saturating_sub(g.totals.counters.goodput);
        if useless > 0 && g.totals.counters.cnt > 0 {
            notes.push(format!(
                "group {}: {useless} of {} committed transactions did no useful work ({:.0}%)",
                g.name,
                g.totals.counters.cnt,
                100.0 * useless as f64 / g.totals.counters.cnt as f64
            ));
        }
    }
    for s in &series {
        if let (Some(first), Some(last)) = (s.samples.first(), s.samples.last()) {
            let max = s.samples.iter().map(|x| x.1).fold(f64::MIN, f64::max);
            notes.push(format!(
                "{}: {:.0} at start, {:.0} at end, max {:.0}",
                s.name, first.1, last.1, max
            ));
        }
    }
    notes.extend(crate::checkpoints::note(&record));
    if outcome.aborted_clients > 0 {
        notes.push(format!("{} clients aborted", outcome.aborted_clients));
    }
    let result = VariantResult {
        name: v.name.clone(),
        about: p.params.describe(&v.about),
        baseline: v.baseline,
        skipped: None,
        params: p.params.values.clone(),
        checks,
        monitors: series,
        work,
        aborted_clients: outcome.aborted_clients,
        notes,
        work_per_interval: record.work_per_interval(p.work_group.as_deref()),
        steady_ratio: record.steady_ratio(p.work_group.as_deref()),
        work_group: p.work_group.clone(),
        ran_out_at_s,
        record: Some(record),
        pct_of_ceiling: None,
        phases_s: None,
        client_bound: None,
    };
    if st.opts.progress {
        let _ = write!(log, "{} / {}:", st.scn.name(), v.name);
    }
    let _ = writeln!(log, " {}", progress::done_line(&result, m));
    (result, outcome.interrupted)
}

/// Runs SQL files of the scenario (the engine's own version where one exists), with the
/// parameters and `extra` values substituted.
fn run_files(
    st: &Stage<'_, '_>,
    conn: &mut Connection,
    files: &[String],
    extra: &BTreeMap<String, String>,
) -> Result<Vec<(String, Vec<hotbench_wire::QueryResult>)>> {
    let scn = st.scn;
    let mut out = Vec::new();
    for f in files {
        let rel = super::engine_file(scn, f, st.engine);
        let sql = super::substituted(scn, &st.p.params, &rel, extra)?;
        let r = db::run_file(conn, &scn.bundle.display(&rel), &sql)?;
        let _ = conn.take_notices();
        out.push((rel, r));
    }
    Ok(out)
}

/// The record the variant's run starts from, with the scenario, variant, parameters and
/// settings in its configuration.
fn record_template(st: &Stage<'_, '_>, cfg: &RunConfig, ladder: &Ladder) -> RunRecord {
    let (scn, p, opts) = (st.scn, st.p, st.opts);
    let server = ServerInfo {
        version: ladder.server_version.clone(),
        engine: ladder.engine.clone(),
        target: opts.target_description.clone(),
        embedded: opts.embedded,
        fast: opts.fast,
        settings: p.settings.iter().cloned().collect(),
        clock_offset_ms: None,
    };
    let transaction_type = format!("scenario {} / {}", scn.name(), p.variant.name);
    let mut record = cfg.starting_record(
        transaction_type,
        server,
        opts.command_line.clone(),
        opts.sharing,
    );
    record.config.scenario = Some(scn.name().to_string());
    record.config.variant = Some(p.variant.name.clone());
    record.config.params = Some(p.params.values.clone());
    record.config.session_settings = Some(p.settings.clone());
    record.pooler = opts.route.map(|r| r.setup());
    record
}
