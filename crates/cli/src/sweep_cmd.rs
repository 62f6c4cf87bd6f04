//! `hotbench sweep`: runs `hotbench run`'s workload once per client count (the same code
//! path as `run`, so the same validation, report and result record), then fits the Universal
//! Scalability Law to the measured throughput and prints the fit and predicted peak. With
//! `--scenario`, each count runs the scenario's ladder and every variant gets its own fit
//! (σ shows which variant serialises on a hot spot). With `--pool-size 4,8,16` the clients
//! stay fixed and each point goes through hotbench's PgBouncer with that pool size, after a
//! first point without a pooler (the baseline the best size is held against).

use clap::ArgMatches;
use hotbench_report::{html, text};
use hotbench_results::{SweepAxis, SweepDoc};
use hotbench_settings::RunSettings;

use crate::fail::{Fail, Result};
use crate::flags::scenario::LadderArgs;
use crate::flags::shared::LoadArgs;
use crate::flags::sweep::SweepArgs;

/// `1,2,4,8` (also `1 2 4`), each ≥ 1, in the order given, duplicates dropped; an empty
/// entry (`1,,2`, a trailing comma) is a typo, not a count to skip.
fn parse_clients(text: &str) -> Result<Vec<usize>> {
    let list = hotbench_settings::values::ListOption {
        what: "client count",
        option: "-c/--clients",
        example: "1,2,4,8",
    };
    if text.trim().is_empty() {
        return Err(Fail::input(
            "-c/--clients: give the client counts to sweep, e.g. 1,2,4,8",
        ));
    }
    let mut out: Vec<usize> = Vec::new();
    for part in list.entries(text).map_err(Fail::input)? {
        let n: usize = part
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| Fail::input(list.bad(part, text)))?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

pub fn main(args: &SweepArgs, m: &ArgMatches, argv: &[String]) -> Result<u8> {
    let run = &args.run;
    if run.initialize {
        return Err(Fail::input(
            "sweep does not initialize: run `hotbench run -i` first",
        ));
    }
    if run.dbname.len() > 1 {
        return Err(Fail::input(format!(
            "too many command-line arguments (first is \"{}\")",
            run.dbname[1]
        )));
    }
    let counts = parse_clients(run.load.client.as_deref().unwrap_or("1,2,4,8"))?;
    let pool_sizes = crate::target::pool_sizes(&run.settings);
    let (points, axis) = if pool_sizes.is_empty() {
        (client_points(&counts, &run.settings), SweepAxis::Clients)
    } else {
        let [n] = counts[..] else {
            return Err(Fail::input(
                "a pool-size sweep keeps the clients fixed: give one client count (-c 100)",
            ));
        };
        (
            pool_points(n, &pool_sizes, &run.settings),
            SweepAxis::PoolSize,
        )
    };
    let thresholds = crate::thresholds::parse(&run.output.threshold)?;
    let picked = match &args.scenario {
        Some(name) => Some(crate::scenario_cmd::pick(name, &args.pick, &thresholds)?),
        None => None,
    };
    // `-o` and `--html` name the one sweep report: given both, one would be dropped unwritten.
    let output = match (&args.output, &run.output.html) {
        (Some(o), Some(h)) => {
            return Err(Fail::input(format!(
                "-o \"{}\" and --html \"{}\" both name the sweep's HTML report: give one",
                o.display(),
                h.display()
            )))
        }
        (o, h) => o.clone().or_else(|| h.clone()),
    };
    if run.output.prometheus.is_some() {
        eprintln!("hotbench: warning: --prometheus is ignored by sweep (one endpoint per run)");
    }
    let inputs = preflight(args, picked.as_ref(), &points, m)?;
    let inputs: Vec<_> = inputs.iter().map(|p| crate::outputs::Input(p)).collect();
    crate::outputs::check(&[run.output.json.as_deref(), output.as_deref()], &inputs)?;
    if axis == SweepAxis::Clients && counts.len() < 3 {
        eprintln!("hotbench: warning: the USL fit needs at least 3 client counts");
    }
    let (doc, code) = match picked {
        Some(picked) => sweep_scenario(args, picked, &points, argv)?,
        None => sweep_run(args, &points, m, argv)?,
    };
    let doc = doc.with_axis(axis);
    println!();
    let shown = hotbench_results::terminal::escaped(&doc);
    print!(
        "{}",
        hotbench_results::terminal::escape_lines(&text::sweep::render_text(&shown))
    );
    crate::outputs::all(vec![
        run.output
            .json
            .as_deref()
            .map_or(Ok(()), |p| crate::outputs::write_json(p, &doc, "result")),
        output.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_html(p, &html::sweep::render_html(&doc))
        }),
    ])?;
    let ok = crate::thresholds::check(
        &thresholds,
        &subjects(&doc),
        run.output.json.as_deref(),
        |o| SweepDoc {
            thresholds: o,
            ..doc.clone()
        },
    )?;
    Ok(crate::thresholds::exit_code(code, ok))
}

/// One point of a sweep: what it is called, its clients and its run settings.
struct Point {
    name: String,
    clients: usize,
    settings: RunSettings,
}

/// A point per client count.
fn client_points(counts: &[usize], settings: &RunSettings) -> Vec<Point> {
    counts
        .iter()
        .map(|&n| Point {
            name: format!("{n} clients"),
            clients: n,
            settings: settings.clone(),
        })
        .collect()
}

/// `n` clients without a pooler, then through a pool of each size.
fn pool_points(n: usize, sizes: &[u32], settings: &RunSettings) -> Vec<Point> {
    std::iter::once(None)
        .chain(sizes.iter().map(|&s| Some(s)))
        .map(|size| Point {
            name: match size {
                Some(s) => format!("{n} clients, pool of {s}"),
                None => format!("{n} clients, no pooler"),
            },
            clients: n,
            settings: crate::target::with_pool_size(settings, size),
        })
        .collect()
}

/// Every point checked as its run will check it (the open-files limit, the scenario's
/// parameters), before the first run; returns the files the sweep reads.
fn preflight(
    args: &SweepArgs,
    picked: Option<&(hotbench_scenario::Scenario, Option<Vec<String>>)>,
    points: &[Point],
    m: &ArgMatches,
) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for (i, p) in points.iter().enumerate() {
        match picked {
            Some(picked) => {
                let list = std::slice::from_ref(picked);
                crate::scenario_cmd::check_ladders(list, &ladder_args(args, p), false)?;
                if i == 0 {
                    files = crate::scenario_cmd::scenario_files(list);
                }
            }
            None => {
                let plan = crate::run_options::validate(&with_point(&args.run, p), m)?;
                if i == 0 {
                    files = crate::groups::input_files(&plan.groups);
                }
            }
        }
    }
    Ok(files)
}

/// `hotbench run`'s arguments for one count of the sweep: its own `-c`, no outputs (the
/// sweep writes its own) and no `--prometheus`.
fn with_point(run: &crate::flags::run::RunArgs, p: &Point) -> crate::flags::run::RunArgs {
    let mut one = run.clone();
    one.load.client = Some(p.clients.to_string());
    one.settings = p.settings.clone();
    one.output = Default::default();
    one
}

/// A scenario sweep's ladder options at point `p`.
fn ladder_args(args: &SweepArgs, p: &Point) -> LadderArgs {
    let run = &args.run;
    LadderArgs {
        load: LoadArgs {
            client: Some(p.clients.to_string()),
            time: run.load.time.clone(),
        },
        param: args.param.clone(),
        keep_schema: false,
        // A sweep's ladders are many and short: one line per variant is enough.
        quiet: true,
        settings: p.settings.clone(),
        output: Default::default(),
        conn: run.conn.clone(),
        embedded: run.embedded.clone(),
        help: None,
        embedded_only: false,
    }
}

/// Each run of the sweep as a threshold subject (a scenario sweep's variant scopes match
/// the variant's runs at every client count).
fn subjects(doc: &SweepDoc) -> Vec<hotbench_results::threshold::Subject<'_>> {
    doc.runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let label = doc.labels.get(i).cloned();
            let n = r.bench.clients;
            let mut clients = format!("{n} client{}", if n == 1 { "" } else { "s" });
            if doc.axis == SweepAxis::PoolSize {
                let pool = r.pooler.as_ref().and_then(|p| p.pool_size);
                clients = match pool {
                    Some(size) => format!("pool of {size}, {clients}"),
                    None => format!("no pooler, {clients}"),
                };
            }
            let name = match &label {
                Some(l) => format!("{l} @ {clients}"),
                None => clients,
            };
            let mut s = hotbench_results::threshold::Subject::run(name, r);
            s.variant = label;
            s
        })
        .collect()
}

/// `hotbench run`'s workload at each point.
fn sweep_run(
    args: &SweepArgs,
    points: &[Point],
    m: &ArgMatches,
    argv: &[String],
) -> Result<(SweepDoc, u8)> {
    let mut records = Vec::new();
    let mut code = 0;
    for p in points {
        println!("\n=== sweep: {} ===", p.name);
        let one = with_point(&args.run, p);
        let ta = crate::run_cmd::target_args(&one);
        let (c, rec) = crate::run_cmd::benchmark_record(&one, m, argv, &ta)?;
        records.push(rec);
        if c != 0 {
            code = c;
            eprintln!("hotbench: error: the sweep stopped at {}", p.name);
            break;
        }
    }
    Ok((SweepDoc::new(records), code))
}

/// A scenario's ladder at each point: one series per variant.
fn sweep_scenario(
    args: &SweepArgs,
    (scn, variants): (hotbench_scenario::Scenario, Option<Vec<String>>),
    points: &[Point],
    argv: &[String],
) -> Result<(SweepDoc, u8)> {
    let run = &args.run;
    let name = scn.name().to_string();
    let mut runs: Vec<(String, hotbench_results::RunRecord)> = Vec::new();
    let mut code = 0;
    for p in points {
        println!(
            "\n=== sweep: {}, {} ===",
            hotbench_results::terminal::escape(&name),
            p.name
        );
        let ladders = crate::scenario_cmd::run_ladders(
            &[(scn.clone(), variants.clone())],
            &ladder_args(args, p),
            run.dbname.first().cloned(),
            false,
            argv,
        )?;
        for l in &ladders {
            if !l.all_checks_ok() {
                code = 2;
                eprintln!("hotbench: error: checks failed at {} (see above)", p.name);
            }
            for v in &l.variants {
                if let Some(r) = &v.record {
                    runs.push((v.name.clone(), r.clone()));
                }
            }
        }
    }
    Ok((SweepDoc::labelled(runs), code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_lists() {
        assert_eq!(parse_clients("1,2,4,8").unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(parse_clients("4, 2 ,2").unwrap(), vec![4, 2]);
        let e = parse_clients("1,x").unwrap_err();
        assert!(
            e.message.contains("invalid client count \"x\""),
            "{}",
            e.message
        );
        assert!(parse_clients("0").is_err());
        assert!(parse_clients(",").is_err());
        assert_eq!(parse_clients("1 2, 4").unwrap(), vec![1, 2, 4]);
        for typo in ["1,,2", "1,2,", ",1", "1, ,2"] {
            let e = parse_clients(typo).unwrap_err();
            assert!(
                e.message.contains("invalid client count"),
                "{typo}: {}",
                e.message
            );
        }
    }
}
