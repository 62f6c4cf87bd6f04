//! The ladder runner: for each selected variant, a freshly set-up schema (the scenario's
//! own `hb_NAME` schema, dropped and recreated), background perturbations, a measured run
//! on `hotbench-engine`, then the finish SQL and the checks. Returns the [`Ladder`] and
//! reports it after every variant so callers can write it progressively.

use std::collections::BTreeMap;
use std::io::Write;

use hotbench_engine::{
    signals, Backoff, GoodputRule, GroupConfig, QueryMode, RetryPolicy, RunObserver, RunSettings,
    SharedServer, WeightedScript,
};
use hotbench_wire::{Config, Connection};

use crate::claim::{claim_schema, release_schema};
use crate::db;
use crate::error::{Result, ScenarioError};
use crate::manifest::{parse_goodput, split_weight, Scenario, Variant};
use crate::params::Params;
use hotbench_stats::{Ladder, VariantResult};

mod variant;
pub use crate::selection::select_variants;
use variant::run_variant;

/// Starts server-side sampling for each variant (the probes of `hotbench-probe`, plugged in
/// by the binary). The sampling runs as an observer of the variant's run and stores what it
/// sampled in the record when the run ends (`record.probes`); the ladder's "top wait" column
/// is `RunRecord::top_wait`.
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
#[derive(Clone)]
pub struct LadderOptions<'a> {
    /// The target database (the scenario adds its schema and session settings).
    pub conn: Config,
    /// `--param k=v` (and `clients`/`duration` from `-c`/`-T`), in order.
    pub params: Vec<(String, String)>,
    /// `--variants a,b`: these only, in the manifest's order.
    pub variants: Option<Vec<String>>,
    /// Only variants not marked `demo = false`.
    pub demo: bool,
    /// The settings every command shares (`-j`, `--rtt`, `--interval`, …), as given.
    pub settings: RunSettings,
    /// The seed actually used (`--random-seed` resolved).
    pub random_seed: u64,
    pub target_description: String,
    pub embedded: bool,
    pub fast: bool,
    pub command_line: Vec<String>,
    pub probe: Option<&'a dyn ProbeStarter>,
    /// Whether another hotbench command shares the server (noted in each variant's record).
    pub sharing: &'a dyn SharedServer,
    /// `--keep-schema`: leave the `hb_NAME` schema (the last variant's data) in place.
    pub keep_schema: bool,
    /// Live progress lines while each variant runs (off with `--quiet`).
    pub progress: bool,
    /// The benchmark clients go through a pooler hotbench runs (`--pooler`); the scenario's
    /// own sessions and the probes still use `conn`.
    pub route: Option<&'a dyn crate::pooling::ClientRoute>,
    /// Live figures of each variant as it runs (`--prometheus`).
    pub live: Option<&'a dyn crate::live::LiveSink>,
    /// The server's processes, when hotbench started it (the `restart` and `pause`
    /// perturbations).
    pub server: Option<hotbench_engine::ServerHandle>,
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
    /// Seconds the variants after this one will take (for the progress lines' time left).
    left_after_s: u64,
    /// The manifest's `[[perturbation]]`s for this variant (after the user's `--perturb`).
    perturbations: Vec<hotbench_engine::Perturbation>,
}

/// Runs the ladder. Progress lines go to `log`; `on_update` sees the ladder after each
/// variant.
pub fn run_ladder(
    scn: &Scenario,
    opts: &LadderOptions<'_>,
    log: &mut (dyn Write + Send),
    on_update: &mut dyn FnMut(&Ladder),
) -> Result<Ladder> {
    let started = std::time::Instant::now();
    let m = &scn.manifest;
    let selected = select_variants(scn, opts.variants.as_deref(), opts.demo)?;
    let base = Params::resolve(m, None, &opts.params)?;
    let ceiling = crate::ceiling::ceiling_variant(m)
        .filter(|_| crate::selection::runs_ceiling(scn, opts.variants.as_deref(), opts.demo));
    let (mut prepared, ceiling) = prepare_all(scn, &selected, ceiling.as_ref(), &opts.params)?;
    // About 3 s of setup and checks per variant besides its run.
    let mut after = 0;
    for p in prepared.iter_mut().rev() {
        p.left_after_s = after;
        after += p.duration_s + 3;
    }

    // Ctrl-C from here on stops gracefully (also during the first setup): what ran is
    // reported and written, what did not is marked as not run.
    signals::install();
    let schema = db::schema_name(scn.name());
    let admin_cfg = db::with_settings(&opts.conn, &[("search_path".into(), schema.clone())])?;
    let mut admin = db::connect(&admin_cfg)?;
    let version = first_value(&mut admin, "select version()")?.unwrap_or_default();
    let engine = db::detect_engine(&version).to_string();
    check_settings(&mut admin, prepared.iter().chain(&ceiling))?;
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
        ceiling: None,
        wall_s: None,
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
        if let Some(why) = crate::pooling::refusal(v, opts.route) {
            let _ = writeln!(log, "{} / {}: not run: {why}", scn.name(), v.name);
            ladder
                .variants
                .push(not_run(&p, &format!("not run: {why}")));
            on_update(&ladder);
            continue;
        }
        let stage = variant::Stage {
            scn,
            p: &p,
            opts,
            admin_cfg: &admin_cfg,
            schema: &schema,
            engine: &engine,
        };
        let outcome = run_variant(&stage, &mut admin, &ladder, log);
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
    // The ceiling: a whole ladder or named in --variants, not a demo, not interrupted.
    if let Some(p) = ceiling.filter(|_| !ladder.interrupted) {
        let mut copts = opts.clone();
        copts.params = crate::ceiling::ceiling_params(m, &opts.params);
        let stage = variant::Stage {
            scn,
            p: &p,
            opts: &copts,
            admin_cfg: &admin_cfg,
            schema: &schema,
            engine: &engine,
        };
        match run_variant(&stage, &mut admin, &ladder, log) {
            Ok((result, interrupted)) => {
                ladder.ceiling = Some(result);
                ladder.interrupted |= interrupted;
                crate::ceiling::apply_pct(&mut ladder);
                on_update(&ladder);
            }
            Err(e) => {
                end_ladder(admin, &schema, opts.keep_schema);
                return Err(e);
            }
        }
    }
    end_ladder(admin, &schema, opts.keep_schema);
    crate::ceiling::mark_client_bound(&mut ladder, opts.settings.rtt_us);
    ladder.wall_s = Some(started.elapsed().as_secs_f64());
    let ran: Vec<_> = ladder
        .variants
        .iter()
        .chain(&ladder.ceiling)
        .filter_map(|v| v.phases_s.as_ref())
        .collect();
    let _ = writeln!(
        log,
        "{}",
        crate::phases::total_line(started.elapsed().as_secs_f64(), &ran)
    );
    on_update(&ladder);
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
        pct_of_ceiling: None,
        phases_s: None,
        client_bound: None,
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

/// What a ladder checks before it connects, without a server: the `selected` variants and
/// the `ceiling` (when it will run, with its own parameters) prepared from the manifest and
/// the user's parameters, as they will run. Returns the most connections one of them opens
/// (its clients), for the caller's open-files check.
pub fn check_ladder(
    scn: &Scenario,
    variants: Option<&[String]>,
    demo: bool,
    params: &[(String, String)],
) -> Result<usize> {
    let selected = select_variants(scn, variants, demo)?;
    let ceiling = crate::ceiling::ceiling_variant(&scn.manifest)
        .filter(|_| crate::selection::runs_ceiling(scn, variants, demo));
    let (prepared, ceiling) = prepare_all(scn, &selected, ceiling.as_ref(), params)?;
    Ok(prepared
        .iter()
        .chain(&ceiling)
        .map(|p| p.groups.iter().map(|g| g.clients).sum::<usize>())
        .max()
        .unwrap_or(0))
}

/// The variants and the ceiling prepared, the ceiling with its overrides (so its
/// parameters are checked before the first variant runs, not after the last).
fn prepare_all<'s>(
    scn: &'s Scenario,
    selected: &[&'s Variant],
    ceiling: Option<&'s Variant>,
    params: &[(String, String)],
) -> Result<(Vec<Prepared<'s>>, Option<Prepared<'s>>)> {
    let prepared = selected
        .iter()
        .map(|v| prepare(scn, v, params))
        .collect::<Result<Vec<_>>>()?;
    let ceiling = ceiling
        .map(|cv| {
            let own = crate::ceiling::ceiling_params(&scn.manifest, params);
            prepare(scn, cv, &own)
        })
        .transpose()?;
    Ok((prepared, ceiling))
}

/// The variants' session settings tried on the admin connection (set and rolled back)
/// before anything runs: a name the server does not know or a value it refuses is bad
/// input, found here rather than when a later variant's clients connect.
fn check_settings<'a>(
    admin: &mut Connection,
    prepared: impl Iterator<Item = &'a Prepared<'a>>,
) -> Result<()> {
    use crate::param_type::sql_literal;
    for p in prepared {
        for (k, v) in &p.settings {
            let sql = format!(
                "begin; select set_config({}, {}, true); rollback",
                sql_literal(k),
                sql_literal(v)
            );
            if let Err(e) = admin.simple_query(&sql) {
                let _ = admin.simple_query("rollback");
                // Class 42 (unknown name, no privilege) or 22 (a value it refuses).
                let refused = e
                    .db_error()
                    .is_some_and(|d| matches!(d.code().class(), "42" | "22"));
                if refused {
                    return Err(ScenarioError::Input(format!(
                        "variant \"{}\": setting {k} = {v}: {e}",
                        p.variant.name
                    )));
                }
            }
        }
    }
    Ok(())
}

fn prepare<'s>(
    scn: &'s Scenario,
    v: &'s Variant,
    user: &[(String, String)],
) -> Result<Prepared<'s>> {
    let m = &scn.manifest;
    let params = Params::resolve(m, Some(v), user)?;
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
            keys: g.key.names(),
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
    let perturbations = crate::perturbations::resolve(scn, v, &params)?;
    Ok(Prepared {
        perturbations,
        variant: v,
        params,
        groups,
        retry,
        settings,
        duration_s: duration as u64,
        scale,
        work_group,
        left_after_s: 0,
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
