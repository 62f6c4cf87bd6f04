//! The ladder runner: for each selected variant, a freshly set-up schema (the scenario's
//! own `hb_NAME` schema, dropped and recreated), background perturbations, a measured run
//! on `hotbench-engine`, then the finish SQL and the checks. Returns the [`Ladder`] and
//! reports it after every variant so callers can write it progressively.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use hotbench_engine::{
    signals, Backoff, GoodputRule, GroupConfig, Limit, QueryMode, RetryPolicy, RunConfig,
    RunObserver, WeightedScript,
};
use hotbench_stats::{RunRecord, ServerInfo};
use hotbench_wire::{Config, Connection};

use crate::background::{Holder, Monitors};
use crate::checks::{check_rows, run_values};
use crate::claim::{claim_schema, release_schema};
use crate::db;
use crate::error::{Result, ScenarioError};
use crate::manifest::{parse_goodput, split_weight, Scenario, Variant};
use crate::params::Params;
use crate::result::{Ladder, VariantResult};
pub use crate::selection::select_variants;

/// Starts server-side sampling for each variant (the probes of `hotbench-probe`, plugged in
/// by the binary). The sampling runs as an observer of the variant's run and stores what it
/// sampled in the record when the run ends (`record.probes`); the ladder's "top wait" column
/// reads `probes.top_wait` or `probes.waits[0]`.
pub trait ProbeStarter {
    /// Starts sampling the backends whose `application_name` is `application_name`.
    fn start(
        &self,
        conn: &Config,
        application_name: &str,
        tables: &[String],
    ) -> Box<dyn RunObserver>;
}

/// How to run a ladder.
pub struct LadderOptions<'a> {
    /// The target database (the scenario adds its schema and session settings).
    pub conn: Config,
    /// `--param k=v` (and `clients`/`duration` from `-c`/`-T`), in order.
    pub params: Vec<(String, String)>,
    /// `--variants a,b`: these only, in the manifest's order.
    pub variants: Option<Vec<String>>,
    /// Only variants not marked `demo = false`.
    pub demo: bool,
    pub rtt_us: i64,
    pub threads: Option<usize>,
    pub random_seed: u64,
    /// Timeline granularity (µs).
    pub interval_us: i64,
    pub target_description: String,
    pub embedded: bool,
    pub fast: bool,
    pub command_line: Vec<String>,
    pub probe: Option<&'a dyn ProbeStarter>,
    /// `--keep-schema`: leave the `hb_NAME` schema (the last variant's data) in place.
    pub keep_schema: bool,
}

/// A variant ready to run: everything user-controlled already validated.
struct Prepared<'s> {
    variant: &'s Variant,
    params: Params,
    groups: Vec<GroupConfig>,
    retry: RetryPolicy,
    settings: Vec<(String, String)>,
    duration_s: u64,
    scale: i64,
    work_group: Option<String>,
}

/// Runs the ladder. Progress lines go to `log`; `on_update` sees the ladder after each
/// variant.
pub fn run_ladder(
    scn: &Scenario,
    opts: &LadderOptions<'_>,
    log: &mut dyn Write,
    on_update: &mut dyn FnMut(&Ladder),
) -> Result<Ladder> {
    let m = &scn.manifest;
    let selected = select_variants(scn, opts.variants.as_deref(), opts.demo)?;
    let base = Params::resolve(m, None, &opts.params)?;
    let prepared = selected
        .iter()
        .map(|v| prepare(scn, v, opts))
        .collect::<Result<Vec<_>>>()?;

    // Ctrl-C from here on stops gracefully (also during the first setup): what ran is
    // reported and written, what did not is marked as not run.
    signals::install();
    let schema = db::schema_name(scn.name());
    let admin_cfg = db::with_settings(&opts.conn, &[("search_path".into(), schema.clone())])?;
    let mut admin = db::connect(&admin_cfg)?;
    let version = first_value(&mut admin, "select version()")?.unwrap_or_default();
    let engine = db::detect_engine(&version).to_string();
    claim_schema(&mut admin, &schema, scn.name())?;

    let mut ladder = Ladder {
        scenario: scn.name().to_string(),
        title: m.title.clone(),
        demonstrates: m.demonstrates.trim().to_string(),
        engine: engine.clone(),
        server_version: admin.server_version().to_string(),
        params: base.values.clone(),
        work_unit: m.work.as_ref().map(|w| w.unit.clone()),
        variants: Vec::new(),
        interrupted: false,
    };
    for p in prepared {
        let v = p.variant;
        // Ctrl-C between variants (during the previous one's checks, say): the rest did not
        // run, and the ladder says so instead of running them for 0 s.
        if ladder.interrupted || signals::stop_requested() {
            ladder.interrupted = true;
            ladder.variants.push(not_run(&p, NOT_RUN));
            on_update(&ladder);
            continue;
        }
        if let Some(note) = v.skip.get(&engine) {
            let _ = writeln!(
                log,
                "{} / {}: skipped on {engine}: {note}",
                scn.name(),
                v.name
            );
            ladder.variants.push(not_run(&p, note));
            on_update(&ladder);
            continue;
        }
        let outcome = run_variant(scn, &p, opts, &mut admin, &admin_cfg, &schema, &ladder, log);
        let (result, interrupted) = match outcome {
            Ok(r) => r,
            Err(e) => {
                end_ladder(admin, &schema, opts.keep_schema);
                return Err(e);
            }
        };
        ladder.variants.push(result);
        ladder.interrupted |= interrupted;
        on_update(&ladder);
    }
    end_ladder(admin, &schema, opts.keep_schema);
    Ok(ladder)
}

/// The note of a variant a Ctrl-C kept from running.
const NOT_RUN: &str = "not run: interrupted";

/// A variant that did not run (skipped on this engine, or interrupted before its run): no
/// record and no checks, so it can never show as passed.
fn not_run(p: &Prepared<'_>, note: &str) -> VariantResult {
    let v = p.variant;
    VariantResult {
        name: v.name.clone(),
        about: p.params.describe(&v.about),
        baseline: v.baseline,
        skipped: Some(note.to_string()),
        params: p.params.values.clone(),
        record: None,
        checks: Vec::new(),
        monitors: Vec::new(),
        work: None,
        aborted_clients: 0,
        notes: Vec::new(),
        work_group: None,
        work_per_interval: Vec::new(),
        ran_out_at_s: None,
        steady_ratio: None,
    }
}

/// Drops the scenario's schema (unless kept: later runs' probes would otherwise report its
/// tables), then releases the claim and closes the admin connection.
fn end_ladder(mut admin: Connection, schema: &str, keep_schema: bool) {
    if !keep_schema {
        let _ = admin.simple_query("rollback");
        let _ = admin.simple_query(&format!("drop schema if exists {schema} cascade"));
    }
    release_schema(&mut admin, schema);
    admin.close();
}

/// `file.sql` → `file.ENGINE.sql` when the scenario has one.
pub fn engine_file(scn: &Scenario, rel: &str, engine: &str) -> String {
    if let Some(stem) = rel.strip_suffix(".sql") {
        let candidate = format!("{stem}.{engine}.sql");
        if scn.bundle.file(&candidate).is_some() {
            return candidate;
        }
    }
    rel.to_string()
}

fn substituted(
    scn: &Scenario,
    params: &Params,
    rel: &str,
    extra: &BTreeMap<String, String>,
) -> Result<String> {
    let file = scn.bundle.display(rel);
    let text = scn
        .bundle
        .file(rel)
        .ok_or_else(|| ScenarioError::manifest(&file, None, "file not found"))?;
    params
        .substitute(text, extra)
        .map_err(|e| ScenarioError::manifest(&file, None, e))
}

fn prepare<'s>(
    scn: &'s Scenario,
    v: &'s Variant,
    opts: &LadderOptions<'_>,
) -> Result<Prepared<'s>> {
    let m = &scn.manifest;
    let params = Params::resolve(m, Some(v), &opts.params)?;
    let none = BTreeMap::new();
    let ctx = |what: &str| format!("variant \"{}\": {what}", v.name);
    let default_goodput = match v.goodput.as_ref().or(m.goodput.as_ref()) {
        Some(g) => parse_goodput(g).map_err(ScenarioError::Input)?,
        None => GoodputRule::Committed,
    };
    let query_mode = query_mode(m.query_mode.as_deref())?;
    let mut groups = Vec::new();
    for g in v.group_defs() {
        let clients_text = g
            .clients
            .as_ref()
            .map(|c| c.text())
            .unwrap_or_else(|| "{{clients}}".into());
        let clients = params.number(
            &clients_text,
            &ctx(&format!("clients of group \"{}\"", g.name)),
            &none,
        )?;
        if clients < 0.0 || clients.fract() != 0.0 {
            return Err(ScenarioError::Input(ctx(&format!(
                "clients of group \"{}\" must be a whole number ≥ 0, not {clients}",
                g.name
            ))));
        }
        if clients == 0.0 {
            continue;
        }
        let rate = match &g.rate {
            Some(r) => {
                let r = params.number(
                    &r.text(),
                    &ctx(&format!("rate of group \"{}\"", g.name)),
                    &none,
                )?;
                (r > 0.0).then_some(r)
            }
            None => None,
        };
        let mut scripts = Vec::new();
        for spec in g.script_specs() {
            scripts.push(load_script(scn, &params, &spec, query_mode)?);
        }
        let goodput = match &g.goodput {
            Some(gp) => parse_goodput(gp).map_err(ScenarioError::Input)?,
            None => default_goodput.clone(),
        };
        groups.push(GroupConfig {
            name: g.name.clone(),
            scripts,
            clients: clients as usize,
            rate,
            goodput,
        });
    }
    if groups.is_empty() {
        return Err(ScenarioError::Input(ctx("no clients to run")));
    }
    let retry = match &v.retry {
        Some(r) => RetryPolicy {
            max_tries: r.max_tries,
            backoff: match &r.backoff {
                Some(b) => Backoff::parse(b).map_err(|e| ScenarioError::Input(ctx(&e)))?,
                None => Backoff::None,
            },
            extra_codes: r
                .retry_on
                .iter()
                .map(|c| hotbench_wire::SqlState::parse(c))
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| ScenarioError::Input(ctx(&e)))?,
            continue_on_error: r.continue_on_error,
        },
        None => RetryPolicy::default(),
    };
    let mut settings = Vec::new();
    for (k, val) in m.settings.iter().chain(&v.settings) {
        let val = params
            .substitute(&val.text(), &none)
            .map_err(|e| ScenarioError::Input(ctx(&e)))?;
        settings.retain(|(n, _): &(String, String)| n != k);
        settings.push((k.clone(), val));
    }
    if let Some(i) = &v.isolation {
        settings.push(("default_transaction_isolation".into(), i.clone()));
    }
    let duration = params.number("{{duration}}", &ctx("duration"), &none)?;
    if duration < 1.0 {
        return Err(ScenarioError::Input(ctx(
            "duration must be at least 1 second",
        )));
    }
    let work_group = crate::work::work_group(m, &groups);
    let scale = match &m.pgbench_init {
        Some(pi) => params.number(&pi.scale.text(), &ctx("pgbench_init.scale"), &none)? as i64,
        None => 1,
    };
    Ok(Prepared {
        variant: v,
        params,
        groups,
        retry,
        settings,
        duration_s: duration as u64,
        scale,
        work_group,
    })
}

fn query_mode(m: Option<&str>) -> Result<QueryMode> {
    match m {
        None => Ok(QueryMode::Prepared),
        Some(s) => QueryMode::parse(s).ok_or_else(|| {
            ScenarioError::Input(format!(
                "invalid query_mode \"{s}\": expected simple, extended or prepared"
            ))
        }),
    }
}

fn load_script(
    scn: &Scenario,
    params: &Params,
    spec: &str,
    mode: QueryMode,
) -> Result<WeightedScript> {
    let (name, weight) = split_weight(spec);
    let weight: u32 = match weight {
        Some(w) => w
            .parse()
            .map_err(|_| ScenarioError::Input(format!("invalid weight in \"{spec}\"")))?,
        None => 1,
    };
    let script = if let Some(b) = name.strip_prefix("builtin:") {
        let builtin = hotbench_script::find_builtin(b)
            .map_err(|e| ScenarioError::Input(format!("{spec}: {e}")))?;
        hotbench_script::parse_builtin(builtin)
            .map_err(|e| ScenarioError::Input(format!("{spec}: {e}")))?
    } else {
        let text = substituted(scn, params, name, &BTreeMap::new())?;
        let display = scn.bundle.display(name);
        hotbench_script::parse_script(name, &text)
            .map_err(|e| ScenarioError::manifest(&display, None, format!("\n{e}")))?
    };
    if mode != QueryMode::Simple {
        script
            .check_extended()
            .map_err(|e| ScenarioError::Input(format!("{spec}: {e}")))?;
    }
    Ok(WeightedScript { script, weight })
}

fn first_value(conn: &mut Connection, sql: &str) -> Result<Option<String>> {
    let r = conn
        .simple_query(sql)
        .map_err(|e| ScenarioError::Connect(e.to_string()))?;
    Ok(r.first()
        .and_then(|q| q.rows.first())
        .and_then(|row| row.first().cloned().flatten()))
}

fn run_files(
    scn: &Scenario,
    conn: &mut Connection,
    params: &Params,
    files: &[String],
    engine: &str,
    extra: &BTreeMap<String, String>,
) -> Result<Vec<(String, Vec<hotbench_wire::QueryResult>)>> {
    let mut out = Vec::new();
    for f in files {
        let rel = engine_file(scn, f, engine);
        let sql = substituted(scn, params, &rel, extra)?;
        let r = db::run_file(conn, &scn.bundle.display(&rel), &sql)?;
        let _ = conn.take_notices();
        out.push((rel, r));
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn run_variant(
    scn: &Scenario,
    p: &Prepared<'_>,
    opts: &LadderOptions<'_>,
    admin: &mut Connection,
    admin_cfg: &Config,
    schema: &str,
    ladder: &Ladder,
    log: &mut dyn Write,
) -> Result<(VariantResult, bool)> {
    let m = &scn.manifest;
    let v = p.variant;
    let engine = ladder.engine.as_str();
    let none = BTreeMap::new();
    let clients: usize = p.groups.iter().map(|g| g.clients).sum();
    let _ = write!(log, "{} / {}: setting up…", scn.name(), v.name);
    let _ = log.flush();
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
    let setup: Vec<String> = m.setup.iter().chain(&v.setup).cloned().collect();
    run_files(scn, admin, &p.params, &setup, engine, &none)?;
    // The setup's rows must reach the statistics before the probes' first snapshot: an idle
    // backend flushes them only every 10 s, and the tables panel read `live 0` for a table
    // full of rows.
    if engine == "postgresql" && admin.server_version_num() >= 150_000 {
        let _ = admin.simple_query("select pg_stat_force_next_flush()");
    }
    if signals::stop_requested() {
        let _ = writeln!(log, " interrupted before its run");
        return Ok((not_run(p, NOT_RUN), true));
    }

    let mut notes = Vec::new();
    let mut holders = Vec::new();
    for b in &m.background {
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
        holders.push(Holder::start(admin_cfg, &b.name, &file, &sql, &end)?);
        notes.push(format!("background \"{}\" ran during the run", b.name));
    }

    let mut settings = vec![("search_path".to_string(), schema.to_string())];
    settings.extend(p.settings.iter().cloned());
    let run_conn = db::with_settings(&opts.conn, &settings)?;
    let threads = opts
        .threads
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, clients.max(1));
    // Unique per variant and process, so probes see only this variant's backends.
    let application_name = format!("hotbench-{}-{}-{}", std::process::id(), scn.name(), v.name);
    let mut cfg = RunConfig::new(p.groups.clone(), run_conn.clone(), application_name);
    cfg.limit = Limit::Duration(p.duration_s as i64 * 1_000_000);
    cfg.threads = threads;
    cfg.query_mode = query_mode(m.query_mode.as_deref())?;
    cfg.retry = p.retry.clone();
    cfg.random_seed = opts.random_seed;
    cfg.rtt_us = opts.rtt_us;
    cfg.interval_us = opts.interval_us;
    cfg.defines = p.params.defines();
    cfg.scale = p.scale;
    let record = record_template(scn, p, &cfg, opts, ladder);
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
    let _ = write!(log, " running {} s with {clients} clients…", p.duration_s);
    let _ = log.flush();
    let interval = Duration::from_micros(opts.interval_us.max(10_000) as u64);
    let sampler = Monitors::start(admin_cfg, monitors, interval);
    let mut probe = opts
        .probe
        .map(|pr| pr.start(&run_conn, &cfg.application_name, &m.tables));
    let mut observers: Vec<&mut dyn RunObserver> = Vec::new();
    if let Some(p) = probe.as_mut() {
        observers.push(p.as_mut());
    }
    let outcome = hotbench_engine::run(cfg, record, &mut observers);
    let series = sampler.finish();
    for h in holders {
        h.stop();
    }
    let outcome = outcome.map_err(|e| ScenarioError::Engine {
        variant: v.name.clone(),
        message: e.to_string(),
    })?;
    let record = outcome.record;

    let mut extra = run_values(&record);
    // Groups and scripts of every variant count as 0 where this variant has none, so
    // scenario-wide checks can name them.
    for g in m.variants.iter().flat_map(|v| v.group_defs()) {
        let specs = g.script_specs();
        let names = std::iter::once(g.name.as_str()).chain(specs.iter().map(|s| split_weight(s).0));
        for name in names {
            for k in ["committed", "goodput"] {
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
                .substitute(&w.sql, &none)
                .map_err(|e| ScenarioError::Input(format!("work: {e}")))?;
            let r = db::run_file(
                admin,
                &format!("{} [work]", scn.bundle.display("scenario.toml")),
                &sql,
            )?;
            let n = db::scalar(&r);
            if let Some(n) = n {
                extra.insert("work".into(), format!("{n}"));
            }
            n
        }
        None => None,
    };
    run_files(scn, admin, &p.params, &m.finish, engine, &extra)?;
    let check_files: Vec<String> = m.checks.iter().chain(&v.checks).cloned().collect();
    let results = run_files(scn, admin, &p.params, &check_files, engine, &extra)?;
    let mut checks = Vec::new();
    for (rel, rs) in results {
        checks.extend(check_rows(&scn.bundle.display(&rel), &rs)?);
    }
    if !check_files.is_empty() && checks.is_empty() {
        return Err(ScenarioError::manifest(
            &check_files.join(", "),
            None,
            "the checks checked nothing (no statement returned a check row)",
        ));
    }
    let ran_out_at_s = m
        .work
        .as_ref()
        .and_then(|w| w.until_empty.as_deref())
        .and_then(|mon| crate::work::ran_out_at(&series, mon, record.duration_s));
    if let Some(t) = ran_out_at_s {
        notes.push(format!(
            "the backlog ran out at {t:.1} s: the rate is the work done until then"
        ));
    }
    notes.extend(crate::work::other_group_notes(
        &record,
        p.work_group.as_deref(),
    ));
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
    };
    let _ = writeln!(log, " {}", done_line(&result, m));
    Ok((result, outcome.interrupted))
}

/// `6739 jobs/s (consumer), p99 12.40 ms, checks 5/5`: the work group's figures in the
/// scenario's unit.
fn done_line(v: &VariantResult, m: &crate::manifest::Manifest) -> String {
    let unit = m.work.as_ref().map_or("goodput", |w| w.unit.as_str());
    let group = v
        .work_group
        .as_deref()
        .filter(|_| v.record.as_ref().is_some_and(|r| r.groups.len() > 1))
        .map(|g| format!(" ({g})"))
        .unwrap_or_default();
    let p99 = v.work_record().map_or(0.0, |r| r.totals.latency.p99_ms);
    let ok = v.checks.iter().filter(|c| c.ok).count();
    format!(
        "{:.0} {unit}/s{group}, p99 {p99:.2} ms, checks {ok}/{}",
        v.useful_per_s().unwrap_or(0.0),
        v.checks.len()
    )
}

/// A perturbation's or monitor's `when`: on unless it expands to something other than
/// `on`, `true`, `yes` or `1`.
fn switched_on(params: &Params, when: Option<&str>, what: &str) -> Result<bool> {
    let Some(w) = when else { return Ok(true) };
    let w = params
        .substitute(w, &BTreeMap::new())
        .map_err(|e| ScenarioError::Input(format!("{what}: {e}")))?;
    Ok(matches!(
        w.trim().to_ascii_lowercase().as_str(),
        "on" | "true" | "yes" | "1"
    ))
}

fn record_template(
    scn: &Scenario,
    p: &Prepared<'_>,
    cfg: &RunConfig,
    opts: &LadderOptions<'_>,
    ladder: &Ladder,
) -> RunRecord {
    let server = ServerInfo {
        version: ladder.server_version.clone(),
        engine: ladder.engine.clone(),
        target: opts.target_description.clone(),
        embedded: opts.embedded,
        fast: opts.fast,
        settings: p.settings.iter().cloned().collect(),
    };
    let transaction_type = format!("scenario {} / {}", scn.name(), p.variant.name);
    let mut record = cfg.starting_record(transaction_type, server, opts.command_line.clone());
    if let Some(o) = record.config.as_object_mut() {
        o.insert("scenario".into(), scn.name().into());
        o.insert("variant".into(), p.variant.name.clone().into());
        o.insert(
            "params".into(),
            serde_json::to_value(&p.params.values).unwrap_or_default(),
        );
        o.insert(
            "settings".into(),
            serde_json::to_value(&p.settings).unwrap_or_default(),
        );
    }
    record
}
