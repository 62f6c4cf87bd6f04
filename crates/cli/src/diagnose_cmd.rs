//! `hotbench diagnose`: glue between the command line, the server to diagnose, the diagnosis
//! (`hotbench-diagnose`) and its reports; `--run` then runs the first finding's suggested
//! ladder on the embedded server: the typed suggestion the printed command is rendered from,
//! built into a `LadderRequest` directly (a test checks the printed command parses to the
//! same request). `--capture DIR` samples as `hotbench capture` does and also writes the
//! captured scenario directory; with `--run` that directory's ladder (the captured baseline
//! and its fix variants) runs instead of a textbook one. Exit codes: 0 diagnosed (with or without findings), 1 bad input or no
//! connection, 2 the server went away mid-sample or the sample was interrupted (the partial
//! diagnosis is still printed and written), or `--run`'s ladder could not run; 4 `--run`'s
//! ladder ran but one of its checks failed (said on stderr, variant and check).

use hotbench_results::diagnosis_record::{
    Diagnosis, DiagnosisStatus, LabRun, LabVariant, SuggestedLadder,
};
use hotbench_results::{terminal, Ladder};
use hotbench_settings::RunSettings;

use crate::fail::{Fail, Result};
use crate::flags::conn::EmbeddedArgs;
use crate::flags::diagnose::DiagnoseArgs;
use crate::ladder_request::LadderRequest;
use crate::option_ranges::parse_int;
use crate::target::{self, TargetArgs};

pub fn main(a: &DiagnoseArgs, argv: &[String]) -> Result<u8> {
    let opts = options(a)?;
    crate::outputs::check(&[a.json.as_deref(), a.html.as_deref()], &[])?;
    if let Some(dir) = &a.capture {
        crate::outputs::check_dir(dir, &crate::capture_dir::is_capture_dir, &[])?;
    }
    let (target, params) = target::sampled(&a.conn, &a.embedded, &a.dbname)?;
    let mut opts = opts;
    opts.target = target.describe();
    let connected = hotbench_diagnose::connect(&params)
        .map_err(|e| target::with_named_hint(Fail::input(e.to_string()), &target))?;
    crate::sampling::announce(
        "diagnose",
        &opts.target,
        opts.duration,
        &format!("waits every {} ms", opts.interval.as_millis()),
    );
    let mut d = match &a.capture {
        None => connected.sample(&opts, &hotbench_engine::signals::stop_requested),
        Some(dir) => {
            drop(connected);
            captured(a, &params, &opts, dir)?
        }
    };
    drop(target);
    // Relation names, keys, query texts and notes are the server's: escaped for the terminal.
    let report = hotbench_report::text::diagnosis::render_text(&terminal::escaped(&d));
    print!("{}", terminal::escape_lines(&report));
    // With --run the files are written again, with the lab's ranking: said once, then.
    let lab_follows = a.run && d.status == DiagnosisStatus::Complete;
    write(a, &d, !lab_follows)?;
    let mut code = crate::sampling::exit_code(d.status, "diagnosis");
    if lab_follows {
        hotbench_engine::signals::reset();
        let ran = lab(a, &mut d, argv);
        write(a, &d, true)?;
        code = ran?;
    }
    Ok(code)
}

/// `--capture DIR`: the sample taken as `hotbench capture` takes it (diagnose's own sampling
/// with the per-session sampler beside it), the directory written, the diagnosis returned.
fn captured(
    a: &DiagnoseArgs,
    params: &hotbench_wire::ConnectParams,
    opts: &hotbench_diagnose::Options,
    dir: &std::path::Path,
) -> Result<Diagnosis> {
    let mut c = hotbench_capture::sample::Options::new(opts.duration);
    c.wait_interval = opts.interval;
    c.key_reads = !a.no_keys;
    c.target = opts.target.clone();
    let sample =
        hotbench_capture::sample::sample(params, &c, &hotbench_engine::signals::stop_requested)
            .map_err(|e| Fail::input(e.to_string()))?;
    let d = sample.diagnosis.clone();
    crate::capture_cmd::finish(params, sample, &c, dir, 1.0, false, false)?;
    println!("capture written to {}", dir.display());
    Ok(d)
}

/// The sampling options from the flags.
fn options(a: &DiagnoseArgs) -> Result<hotbench_diagnose::Options> {
    let (duration, interval) = crate::sampling::window(&a.time, &a.interval, 10)?;
    let mut o = hotbench_diagnose::Options::new(duration);
    o.interval = interval;
    o.key_reads = !a.no_keys;
    if let Some(c) = &a.server_cores {
        o.server_cores = Some(parse_int(c, "--server-cores", 1, 1_000_000)? as u32);
    }
    Ok(o)
}

/// Writes the JSON and HTML files; `announce`: says where (the final write).
fn write(a: &DiagnoseArgs, d: &Diagnosis, announce: bool) -> Result<()> {
    use crate::outputs::{save_html, save_json, write_html, write_json};
    let html = |p| {
        let page = hotbench_report::html::diagnosis::render_html(d);
        if announce {
            write_html(p, &page)
        } else {
            save_html(p, &page)
        }
    };
    crate::outputs::all(vec![
        a.json.as_deref().map_or(Ok(()), |p| {
            if announce {
                write_json(p, d, "diagnosis")
            } else {
                save_json(p, d)
            }
        }),
        a.html.as_deref().map_or(Ok(()), html),
    ])
}

/// The ladder `--run` runs: the suggestion as it is printed, on the embedded server
/// (`embedded`: its `--pg-version`/`--pg-bin`) whatever the environment names, each variant
/// `run_time` seconds when given.
pub(crate) fn lab_request(
    s: &SuggestedLadder,
    embedded: &EmbeddedArgs,
    run_time: Option<u32>,
) -> LadderRequest {
    let mut settings = RunSettings::default();
    if let Some(us) = s.rtt_us {
        settings.rtt_us = us;
    }
    if let Some(us) = s.think_us {
        settings.think_us = us;
    }
    embedded_ladder(
        embedded,
        run_time,
        Some(s.clients as usize),
        s.params.clone(),
        settings,
    )
}

/// A ladder on the embedded server (`--run`'s): never where flags or `PG*` name the
/// diagnosed server, since the ladder writes (schema, tables, clients).
fn embedded_ladder(
    embedded: &EmbeddedArgs,
    run_time: Option<u32>,
    clients: Option<usize>,
    params: Vec<(String, String)>,
    settings: RunSettings,
) -> LadderRequest {
    LadderRequest {
        clients,
        duration_s: run_time,
        params,
        keep_schema: false,
        quiet: false,
        demo: false,
        target: TargetArgs {
            conn: Default::default(),
            embedded: embedded.clone(),
            dbname: None,
            settings,
            embedded_only: true,
        },
        output: Default::default(),
    }
}

/// `--run`: the first finding with a suggested ladder, run on the embedded server (with
/// `--capture`, the captured workload's own ladder: its baseline and the fixes made for it);
/// its ranking joins the diagnosis.
fn lab(a: &DiagnoseArgs, d: &mut Diagnosis, argv: &[String]) -> Result<u8> {
    let (command, req, scenario, dirs, variants) = match &a.capture {
        Some(dir) => {
            let name = crate::capture_dir::scenario_name(dir);
            let args = [
                "scenario".to_string(),
                "run".into(),
                name.clone(),
                "--dir".into(),
                dir.display().to_string(),
            ];
            let req = embedded_ladder(
                &a.embedded,
                a.run_time,
                None,
                Vec::new(),
                RunSettings::default(),
            );
            let command = hotbench_diagnose::suggest::command_line(&args);
            (command, req, name, vec![dir.clone()], None)
        }
        None => {
            let first = d
                .findings
                .iter()
                .find_map(|f| Some((f.command.clone()?, f.suggestion.clone()?)));
            let Some((command, s)) = first else {
                println!("\n--run: no finding suggests a ladder; nothing to run");
                return Ok(0);
            };
            let variants = (!s.variants.is_empty()).then(|| s.variants.clone());
            let req = lab_request(&s, &a.embedded, a.run_time);
            (command, req, s.scenario.clone(), Vec::new(), variants)
        }
    };
    println!(
        "\n--run: {} (on the embedded server)",
        terminal::escape(&command)
    );
    let picked = crate::scenario_cmd::pick(&scenario, &dirs, variants, &[])?;
    let mut lab = LabRun {
        command,
        scenario,
        ..Default::default()
    };
    let code = match crate::scenario_cmd::run_ladders(&[picked], &req, argv) {
        Ok(ladders) => {
            if let Some(l) = ladders.first() {
                lab.ranking = ranking(l);
            }
            match failed_checks(&ladders) {
                Some(what) => {
                    eprintln!("hotbench: error: --run: {what}");
                    LAB_CHECK_FAILED
                }
                None => 0,
            }
        }
        Err(f) => {
            lab.error = Some(f.message.clone());
            f.print();
            f.code
        }
    };
    d.lab = Some(lab);
    Ok(code)
}

/// Exit code of a `--run` whose ladder ran but a check of it failed: the diagnosis is
/// complete and the server never went away (that is 2), the lab disagrees with itself.
pub const LAB_CHECK_FAILED: u8 = 4;

/// What failed in the ladders' checks, as one line (`None`: every check passed).
fn failed_checks(ladders: &[Ladder]) -> Option<String> {
    let failed: Vec<String> = ladders
        .iter()
        .flat_map(|l| l.failed_checks())
        .map(|(variant, c)| {
            // Check names and details come from the server: control characters escaped.
            let (name, detail) = (c.name.escape_debug(), c.detail.escape_debug());
            if c.detail.is_empty() {
                format!("{variant}: check \"{name}\"")
            } else {
                format!("{variant}: check \"{name}\" ({detail})")
            }
        })
        .collect();
    (!failed.is_empty()).then(|| {
        format!(
            "the lab ladder ran but {} check{} failed: {}",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            failed.join("; ")
        )
    })
}

fn ranking(l: &Ladder) -> Vec<LabVariant> {
    l.variants
        .iter()
        .map(|v| {
            let r = v.record.as_ref();
            let committed = v.no_commit_reason().is_none();
            LabVariant {
                name: v.name.clone(),
                baseline: v.baseline,
                per_s: v.useful_per_s().unwrap_or(0.0),
                p99_ms: r.filter(|_| committed).map(|r| r.totals.latency.p99_ms),
                vs_baseline: l.speedup(v),
                checks_ok: v.checks_ok(),
                top_wait: r.and_then(|r| r.top_wait()),
                skipped: v.skipped.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ladder a diagnosis can suggest names a shipped scenario, its variants and its
    /// parameters; its printed command, parsed by the real command line, is the request
    /// `--run` builds from the typed suggestion.
    #[test]
    fn suggested_ladders_are_real_and_their_printed_commands_mean_the_same_request() {
        use crate::flags::scenario::ScenarioCommand;
        use crate::flags::Command;
        let samples =
            hotbench_diagnose::findings::examples(&hotbench_diagnose::catalog::Catalog::builtin());
        assert!(samples.len() >= 4);
        for s in samples {
            let typed = s.ladder();
            let scn = hotbench_scenario::find(&typed.scenario, &[]).expect("shipped scenario");
            let variants = (!typed.variants.is_empty()).then(|| typed.variants.clone());
            hotbench_scenario::select_variants(&scn, variants.as_deref(), false)
                .unwrap_or_else(|e| panic!("{typed:?}: {e}"));
            hotbench_scenario::params::Params::resolve(&scn.manifest, None, &typed.params)
                .unwrap_or_else(|e| panic!("{typed:?}: {e}"));
            let args = hotbench_diagnose::suggest::ladder_args(&typed);
            let argv = std::iter::once("hotbench".to_string()).chain(args.iter().cloned());
            let (cli, _) = crate::parse_command_line(argv)
                .unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
            let Command::Scenario(sc) = cli.command else {
                panic!("{args:?} is not scenario run")
            };
            let ScenarioCommand::Run(r) = sc.command else {
                panic!("{args:?} is not scenario run")
            };
            assert_eq!(r.name.as_deref(), Some(typed.scenario.as_str()), "{args:?}");
            assert_eq!(r.pick.variant_names(), Ok(variants), "{args:?}");
            let mut printed = LadderRequest::new(&r.ladder, r.dbname.clone(), false);
            printed.target.embedded_only = true;
            let built = lab_request(&typed, &EmbeddedArgs::default(), None);
            assert_eq!(printed, built, "{args:?}");
            assert!(built.clients.is_some(), "{args:?}");
            if args.iter().any(|a| a == "--rtt") {
                assert!(built.settings().rtt_us > 0, "{args:?}");
            }
            if args.iter().any(|a| a == "--think") {
                assert!(built.settings().think_us > 0, "{args:?}");
            }
        }
    }

    /// A lab ladder whose check failed is its own outcome (exit 4, not the 2 of a server gone
    /// away), and the line says which variant's which check.
    #[test]
    fn a_failed_lab_check_is_exit_4_naming_the_variant_and_check() {
        use hotbench_results::{CheckResult, VariantResult};
        let mut l = Ladder::default();
        let mut v = VariantResult {
            name: "tpcb".into(),
            ..Default::default()
        };
        v.checks = vec![
            CheckResult {
                name: "tellers = branches = history".into(),
                ok: true,
                detail: String::new(),
            },
            CheckResult {
                name: "each branch = its history".into(),
                ok: false,
                detail: "branch 2: 5 vs history 7\u{1b}[2J".into(),
            },
        ];
        l.variants.push(v);
        let what = failed_checks(std::slice::from_ref(&l)).expect("a failed check");
        assert_eq!(
            what,
            "the lab ladder ran but 1 check failed: tpcb: check \"each branch = its history\" \
             (branch 2: 5 vs history 7\\u{1b}[2J)"
        );
        assert_eq!(LAB_CHECK_FAILED, 4);
        l.variants[0].checks.pop();
        assert_eq!(failed_checks(&[l]), None);
    }
}
