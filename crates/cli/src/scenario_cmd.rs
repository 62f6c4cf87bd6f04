//! `hotbench scenario list|show|run` and `hotbench demo`: glue between the command line,
//! the target database (embedded server when none is named) and the scenario lab's ladder
//! runner. Exit codes: 1 bad input (unknown scenario, bad manifest, SQL setup error),
//! 2 a run failed or a check failed.

use std::io::Write;
use std::path::{Path, PathBuf};

use hotbench_scenario::{
    all_bundles, table, Ladder, LadderFile, LadderOptions, Scenario, ScenarioError,
};

use crate::fail::{Fail, Result};
use crate::flags::scenario::{DemoArgs, ScenarioArgs, ScenarioCommand};
use crate::ladder_request::LadderRequest;
use crate::target;

/// Seconds per variant in `hotbench demo`.
const DEMO_SECONDS: u32 = 8;
/// Where `hotbench demo` writes its result unless --json says otherwise.
const DEMO_JSON: &str = "hotbench-demo.json";
/// … and its HTML report unless --html says otherwise.
const DEMO_HTML: &str = "hotbench-demo.html";

fn fail(e: ScenarioError) -> Fail {
    if e.is_input() {
        Fail::input(e.to_string())
    } else {
        Fail::run(e.to_string())
    }
}

pub fn main(args: &ScenarioArgs, argv: &[String]) -> Result<u8> {
    match &args.command {
        ScenarioCommand::List { dir } => list(dir),
        ScenarioCommand::Show { name, dir } => show(name, dir),
        ScenarioCommand::Export { name, dir } => export(name, dir),
        ScenarioCommand::Run(r) => {
            let thresholds = crate::thresholds::parse(&r.ladder.output.threshold)?;
            let variants = r.pick.variant_names().map_err(Fail::input)?;
            let name = run_name(r.name.as_deref(), &r.pick.dir)?;
            let picked = pick(&name, &r.pick.dir, variants, &thresholds)?;
            let req = LadderRequest::new(&r.ladder, r.dbname.clone(), false);
            let ladders = run_ladders(&[picked], &req, argv)?;
            finish_checked(&ladders, &thresholds, req.output.json.as_deref())
        }
    }
}

/// `scenario run`'s usage line, for a run that names no scenario where one must be named.
const RUN_USAGE: &str = "usage: hotbench scenario run [NAME] [DBNAME] [--dir DIR]... (NAME may be left out when --dir holds exactly one scenario)";

/// The scenario `scenario run` runs: the one named, or with none named, the one scenario its
/// `--dir` directories hold (a capture writes one); none or several is bad input.
pub fn run_name(name: Option<&str>, dirs: &[PathBuf]) -> Result<String> {
    if let Some(n) = name {
        return Ok(n.to_string());
    }
    if dirs.is_empty() {
        return Err(Fail::input(
            "scenario run needs a scenario NAME (see `hotbench scenario list`)",
        )
        .hint(RUN_USAGE));
    }
    let mut names = Vec::new();
    for d in dirs {
        let found =
            hotbench_scenario::source::dir_bundles(d).map_err(|e| fail(e).hint(RUN_USAGE))?;
        names.extend(found.into_iter().map(|b| b.name));
    }
    names.sort();
    names.dedup();
    match names.as_slice() {
        [one] => Ok(one.clone()),
        many => Err(Fail::input(format!(
            "--dir holds {} scenarios ({}): name the one to run",
            many.len(),
            many.join(", ")
        ))
        .hint(RUN_USAGE)),
    }
}

/// Scenario `name` (the `dirs` first) and its `variants` (`None`: all); a `--threshold`
/// scoped to a variant the scenario lacks is bad input.
pub fn pick(
    name: &str,
    dirs: &[PathBuf],
    variants: Option<Vec<String>>,
    thresholds: &[hotbench_results::threshold::Threshold],
) -> Result<(Scenario, Option<Vec<String>>)> {
    let scn = hotbench_scenario::find(name, dirs).map_err(fail)?;
    let names: Vec<&str> = scn
        .manifest
        .variants
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    crate::thresholds::check_variants(thresholds, &names)?;
    Ok((scn, variants))
}

pub fn demo(args: &DemoArgs, argv: &[String]) -> Result<u8> {
    let mut req = LadderRequest::new(&args.ladder, args.dbname.clone(), true);
    req.duration_s.get_or_insert(DEMO_SECONDS);
    let out = &mut req.output;
    out.json.get_or_insert_with(|| PathBuf::from(DEMO_JSON));
    out.html.get_or_insert_with(|| PathBuf::from(DEMO_HTML));
    let mut list = Vec::new();
    for name in ["daily-limit", "queue"] {
        list.push((hotbench_scenario::find(name, &[]).map_err(fail)?, None));
    }
    let thresholds = crate::thresholds::parse(&args.ladder.output.threshold)?;
    let ladders = run_ladders(&list, &req, argv)?;
    finish_checked(&ladders, &thresholds, req.output.json.as_deref())
}

/// `scenario export NAME DIR`: the scenario's files, as shipped, in a new `DIR/NAME` (never
/// over an existing one), ready to edit and run with `--dir DIR`.
fn export(name: &str, dir: &Path) -> Result<u8> {
    let scn = hotbench_scenario::find(name, &[]).map_err(fail)?;
    let target = dir.join(scn.name());
    let io = |what: &str, p: &Path, e: std::io::Error| {
        Fail::run(format!("cannot {what} {}: {e}", p.display()))
    };
    // A destination that cannot hold the scenario is bad input (exit 1), like any other
    // refused output; only a write that fails midway is a failure of the command (exit 2).
    if dir.exists() && !dir.is_dir() {
        return Err(Fail::input(format!(
            "cannot export to \"{}\": it exists and is not a directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Fail::input(format!("cannot create \"{}\": {e}", dir.display())))?;
    std::fs::create_dir(&target).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Fail::input(format!(
                "{} already exists: remove it or export to another directory",
                target.display()
            ))
        } else {
            Fail::input(format!("cannot create \"{}\": {e}", target.display()))
        }
    })?;
    for (rel, text) in &scn.bundle.files {
        let path = target.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io("create", &path, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| io("write", &path, e))?;
    }
    println!(
        "exported {} ({} files) to {}; run it with: hotbench scenario run {} --dir {}",
        scn.name(),
        scn.bundle.files.len(),
        target.display(),
        scn.name(),
        dir.display()
    );
    Ok(0)
}

fn list(dirs: &[PathBuf]) -> Result<u8> {
    let bundles = all_bundles(dirs).map_err(fail)?;
    let mut out = String::new();
    for b in bundles {
        let name = b.name.clone();
        let origin = if b.builtin {
            String::new()
        } else {
            format!("  [{}]", b.location)
        };
        match hotbench_scenario::load(b) {
            Ok(s) => out.push_str(&format!(
                "{name:<14} {}  ({} variants){origin}\n",
                s.manifest.title,
                s.manifest.variants.len()
            )),
            Err(e) => out.push_str(&format!("{name:<14} (invalid: {e}){origin}\n")),
        }
    }
    // A --dir scenario's manifest is a file's: escaped for the terminal.
    print!("{}", hotbench_results::terminal::escape_lines(&out));
    Ok(0)
}

fn show(name: &str, dirs: &[PathBuf]) -> Result<u8> {
    let scn = hotbench_scenario::find(name, dirs).map_err(fail)?;
    print!(
        "{}",
        hotbench_results::terminal::escape_lines(&describe(&scn))
    );
    Ok(0)
}

/// `scenario show`'s text.
pub fn describe(scn: &Scenario) -> String {
    let m = &scn.manifest;
    let mut s = format!(
        "{} — {}\n\n{}\n\n",
        scn.name(),
        m.title,
        m.demonstrates.trim()
    );
    s.push_str(&format!(
        "defaults: {} clients, {} s per variant   ({})\n\nparameters (--param NAME=VALUE):\n",
        m.clients, m.duration, scn.bundle.location
    ));
    for (k, p) in &m.params {
        let values = p
            .values
            .as_ref()
            .map(|v| format!(" [{}]", v.keys().cloned().collect::<Vec<_>>().join("|")))
            .unwrap_or_default();
        s.push_str(&format!(
            "  {k:<18} {} default {}{values}  {}\n",
            hotbench_scenario::param_type::ParamType::of(p).name(),
            p.default.text(),
            p.help
        ));
    }
    if !m.modes.is_empty() {
        s.push_str(&format!(
            "  {:<18} one of: {}\n",
            "mode",
            m.modes.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    s.push_str("\nvariants:\n");
    for v in &m.variants {
        let mut extra = Vec::new();
        if v.baseline {
            extra.push("baseline".to_string());
        }
        if let Some(i) = &v.isolation {
            extra.push(i.clone());
        }
        if let Some(r) = &v.retry {
            extra.push(if r.max_tries == 0 {
                "retried".into()
            } else {
                format!("up to {} tries", r.max_tries)
            });
        }
        for (e, why) in &v.skip {
            extra.push(format!("skipped on {e}: {why}"));
        }
        if v.needs
            .contains(&hotbench_scenario::manifest::Need::Session)
        {
            extra.push("needs a session of its own: not run through a transaction pool".into());
        }
        let extra = if extra.is_empty() {
            String::new()
        } else {
            format!(" ({})", extra.join(", "))
        };
        // `about` with the defaults filled in (`claiming up to 10 jobs`, not `{{batch}}`).
        let about = hotbench_scenario::params::Params::resolve(m, Some(v), &[])
            .map(|p| p.describe(&v.about))
            .unwrap_or_else(|_| v.about.clone());
        s.push_str(&format!("  {:<18} {about}{extra}\n", v.name));
    }
    s
}

/// Checks the request against the scenarios, resolves the target, runs each scenario's
/// ladder and prints its table; the JSON file is rewritten after every variant.
pub(crate) fn run_ladders(
    list: &[(Scenario, Option<Vec<String>>)],
    a: &LadderRequest,
    argv: &[String],
) -> Result<Vec<Ladder>> {
    let params = check_ladders(list, a)?;
    let demo = a.demo;
    let random_seed = crate::seed::resolve(a.settings().random_seed.as_deref())?;
    let out = &a.output;
    let files = scenario_files(list);
    let inputs: Vec<_> = files.iter().map(|p| crate::outputs::Input(p)).collect();
    crate::outputs::check(&[out.json.as_deref(), out.html.as_deref()], &inputs)?;
    let _ = hotbench_pgserver::limits::raise_nofile_limit();
    let target = target::resolve(&a.target, false)?;
    if matches!(target.pooler, Some(crate::pooler::Pooler::Theirs(_))) {
        return Err(Fail::input(
            "a ladder cannot run through your own PgBouncer: each variant's clients need the \
             scenario's schema and settings on every server connection, which a PgBouncer \
             hotbench does not configure cannot give them",
        )
        .hint(
            "run the ladder with --pooler pgbouncer (hotbench's own, in front of the same \
             server), or use hotbench run with --pooler-admin",
        ));
    }
    // A restart or pause of a server hotbench did not start: refused before any setup.
    hotbench_engine::check_server_kinds(
        a.settings(),
        crate::server_process::handle(&target).is_some(),
    )
    .map_err(Fail::input)?;
    let server_probe = ServerProbe {
        embedded: target.is_embedded(),
        wait_us: a.settings().probe_interval_us,
        pooler: target.pooler.as_ref(),
    };
    let probe: Option<&dyn hotbench_scenario::ProbeStarter> =
        a.settings().probe.then_some(&server_probe as _);
    let metrics = match &out.prometheus {
        Some(spec) => {
            let m = crate::metrics_server::MetricsServer::start(spec, Default::default())?;
            eprintln!("prometheus metrics at http://{}/metrics", m.addr);
            Some(crate::observers::LadderMetrics(m))
        }
        None => None,
    };
    let mut done: Vec<Ladder> = Vec::new();
    let mut code_fail = None;
    for (scn, variants) in list {
        let opts = LadderOptions {
            conn: target.config.clone(),
            params: own_params(&params, scn, demo),
            variants: variants.clone(),
            demo,
            settings: a.settings().clone(),
            random_seed,
            target_description: target.describe(),
            embedded: target.is_embedded(),
            fast: target.is_fast(),
            command_line: crate::mask::mask_args(argv),
            probe,
            sharing: &target,
            keep_schema: a.keep_schema,
            progress: !a.quiet,
            route: target.pooler.as_ref().and_then(|p| p.route()),
            live: metrics.as_ref().map(|m| m as _),
            server: crate::server_process::handle(&target),
        };
        let l = run_one(scn, &opts, &done, out.json.as_deref(), &target)?;
        let interrupted = l.interrupted;
        done.push(l);
        if interrupted {
            code_fail = Some(Fail::run(
                "the run was interrupted; the results are incomplete",
            ));
            break;
        }
    }
    if target.joined_by_another() {
        eprintln!(
            "hotbench: warning: another hotbench command joined the embedded server during \
             this ladder: the two shared its CPU and disk"
        );
    }
    drop(target);
    crate::outputs::all(vec![
        out.json.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_json(p, &LadderFile::new(done.clone()), "result")
        }),
        out.html
            .as_deref()
            .map_or(Ok(()), |p| crate::report_cmd::write_ladder_html(p, &done)),
    ])?;
    if let Some(f) = code_fail {
        return Err(f);
    }
    Ok(done)
}

/// What a ladder command checks before it starts anything: every variant of every scenario
/// (and its ceiling) prepared as it will run with the request's parameters (returned), whose
/// clients must fit the open-files limit as `run`'s do (a manifest's `clients` or a group's
/// as much as `-c`).
pub(crate) fn check_ladders(
    list: &[(Scenario, Option<Vec<String>>)],
    a: &LadderRequest,
) -> Result<Vec<(String, String)>> {
    let demo = a.demo;
    let params = a.scenario_params();
    // Checked with the other options, not when the endpoint starts after connecting.
    if let Some(spec) = &a.output.prometheus {
        crate::metrics_server::parse_addr(spec)?;
    }
    for (scn, variants) in list {
        let own = own_params(&params, scn, demo);
        let clients = hotbench_scenario::ladder::check_ladder(scn, variants.as_deref(), demo, &own)
            .map_err(fail)?;
        crate::option_ranges::check_open_files(clients)?;
    }
    Ok(params)
}

/// The files of the `--dir` scenarios in `list` (built-in ones are in the binary): inputs
/// no output may replace.
pub(crate) fn scenario_files(list: &[(Scenario, Option<Vec<String>>)]) -> Vec<PathBuf> {
    list.iter()
        .filter(|(scn, _)| !scn.bundle.builtin)
        .flat_map(|(scn, _)| {
            let dir = Path::new(&scn.bundle.location);
            scn.bundle.files.keys().map(|rel| dir.join(rel))
        })
        .collect()
}

/// The parameters a scenario takes: a demo runs two scenarios and gives each only its own
/// (and the duration).
fn own_params(params: &[(String, String)], scn: &Scenario, demo: bool) -> Vec<(String, String)> {
    params
        .iter()
        .filter(|(k, _)| !demo || k == "duration" || scn.manifest.params.contains_key(k))
        .cloned()
        .collect()
}

/// One scenario's ladder, its table printed and the JSON (the ladders before it and this
/// one) rewritten after every variant.
fn run_one(
    scn: &Scenario,
    opts: &LadderOptions<'_>,
    previous: &[Ladder],
    json: Option<&Path>,
    target: &target::Target,
) -> Result<Ladder> {
    let mut stderr = hotbench_results::terminal::Guard(std::io::stderr());
    let mut write_err = None;
    let mut on_update = |l: &Ladder| {
        if let Some(p) = json {
            let mut all = previous.to_vec();
            all.push(l.clone());
            if let Err(e) = hotbench_results::json_file::write_snapshot(p, &LadderFile::new(all)) {
                write_err = Some(Fail::run(e.to_string()));
            }
        }
    };
    let l = hotbench_scenario::run_ladder(scn, opts, &mut stderr, &mut on_update).map_err(|e| {
        let connect = matches!(e, ScenarioError::Connect(_));
        let f = fail(e);
        if connect {
            crate::target::with_named_hint(f, target)
        } else {
            f
        }
    })?;
    println!();
    let shown = hotbench_results::terminal::escaped(&l);
    print!(
        "{}",
        hotbench_results::terminal::escape_lines(&table::render(&shown))
    );
    let _ = std::io::stdout().flush();
    match write_err {
        Some(e) => Err(e),
        None => Ok(l),
    }
}

/// Exit code from the ladders' checks and the `--threshold`s (stored in the ladder file).
fn finish_checked(
    ladders: &[Ladder],
    thresholds: &[hotbench_results::threshold::Threshold],
    json: Option<&std::path::Path>,
) -> Result<u8> {
    if thresholds.is_empty() {
        return finish(ladders);
    }
    let file = |o| LadderFile {
        thresholds: o,
        ..LadderFile::new(ladders.to_vec())
    };
    let subjects = hotbench_results::threshold::ladder_subjects(ladders);
    let ok = crate::thresholds::check(thresholds, &subjects, json, file)?;
    Ok(crate::thresholds::exit_code(finish(ladders)?, ok))
}

/// Exit code from the ladders' checks.
fn finish(ladders: &[Ladder]) -> Result<u8> {
    let failed: usize = ladders.iter().map(|l| l.failed_checks().len()).sum();
    if failed > 0 {
        eprintln!("hotbench: error: {failed} check(s) failed (see above)");
        return Ok(2);
    }
    if ladders
        .iter()
        .any(|l| l.variants.iter().any(|v| v.aborted_clients > 0))
    {
        eprintln!("hotbench: error: clients aborted during the run; the results are incomplete");
        return Ok(2);
    }
    Ok(0)
}

/// The server probes (`hotbench-probe`) started for each variant of a ladder.
struct ServerProbe<'a> {
    embedded: bool,
    /// Wait-event sampling period (`--probe-interval`).
    wait_us: i64,
    /// hotbench's pooler in front of the server: its console is read too.
    pooler: Option<&'a crate::pooler::Pooler>,
}

impl hotbench_scenario::ProbeStarter for ServerProbe<'_> {
    fn start(
        &self,
        conn: &hotbench_wire::Config,
        application_name: &str,
        tables: &[String],
    ) -> Box<dyn hotbench_engine::RunObserver> {
        let mut o = hotbench_probe::ProbeOptions::new(application_name);
        o.tables = tables.to_vec();
        o.create_extensions = self.embedded;
        o.wait_interval = std::time::Duration::from_micros(self.wait_us.max(1) as u64);
        o.pooler = self.pooler.and_then(|p| p.probe_source(conn));
        Box::new(crate::observers::ProbeObserver::new(
            hotbench_probe::Probe::start_config(conn, o),
            false,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `root/name` holding a manifest (all `run_name` reads is which directories have one).
    fn scenario_dir(root: &Path, name: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("scenario.toml"), "title = \"t\"\n").unwrap();
        dir
    }

    #[test]
    fn scenario_run_needs_no_name_when_its_dir_holds_one_scenario() {
        let root = std::env::temp_dir().join(format!("hb-run-name-{}", std::process::id()));
        let parent = root.join("captures");
        let own = scenario_dir(&parent, "app-capture");
        // The directory holding it, or the scenario's own directory.
        assert_eq!(
            run_name(None, std::slice::from_ref(&parent)).unwrap(),
            "app-capture"
        );
        assert_eq!(run_name(None, &[own]).unwrap(), "app-capture");
        assert_eq!(run_name(Some("queue"), &[]).unwrap(), "queue");
        // Several, none, or no --dir at all: exit 1 with the usage line.
        scenario_dir(&parent, "other");
        let empty = root.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        for (dirs, says) in [
            (vec![parent], "--dir holds 2 scenarios (app-capture, other)"),
            (vec![empty], "no scenario found in"),
            (vec![], "needs a scenario NAME"),
        ] {
            let e = run_name(None, &dirs).unwrap_err();
            assert_eq!(e.code, 1, "{dirs:?}");
            assert!(e.message.contains(says), "{dirs:?}: {}", e.message);
            assert_eq!(e.hint.as_deref(), Some(RUN_USAGE), "{dirs:?}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
