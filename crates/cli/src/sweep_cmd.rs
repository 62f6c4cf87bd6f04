//! `hotbench sweep`: runs `hotbench run`'s workload once per client count (the same code
//! path as `run`, so the same validation, report and result record), then fits the Universal
//! Scalability Law to the measured throughput and prints the fit and predicted peak. With
//! `--scenario`, each count runs the scenario's ladder and every variant gets its own fit
//! (σ shows which variant serialises on a hot spot). With `--pool-size 4,8,16` the clients
//! stay fixed and each point goes through hotbench's PgBouncer with that pool size, after a
//! first point without a pooler (the baseline the best size is held against).

use clap::ArgMatches;
use hotbench_report::{html, text};
use hotbench_settings::RunSettings;
use hotbench_stats::{SweepAxis, SweepDoc};

use crate::fail::{Fail, Result};
use crate::flags::sweep::SweepArgs;
use crate::ladder_request::LadderRequest;
use crate::run_options::RunRequest;
use crate::target::TargetArgs;

/// The client counts swept without `-c`.
const DEFAULT_COUNTS: [usize; 4] = [1, 2, 4, 8];

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
    let counts = match &run.load.client {
        Some(c) => c.counts().to_vec(),
        None => DEFAULT_COUNTS.to_vec(),
    };
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
        Some(name) => {
            let variants = args.pick.variant_names().map_err(Fail::input)?;
            let p = crate::scenario_cmd::pick(name, &args.pick.dir, variants, &thresholds)?;
            Some(p)
        }
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
    let requests = match picked {
        Some(picked) => {
            let reqs = points.iter().map(|p| ladder_request(args, p)).collect();
            Requests::Ladder(Box::new(picked), reqs)
        }
        None => {
            let base = RunRequest::new(&args.run, m, counts.first().copied())?;
            Requests::Run(
                points
                    .iter()
                    .map(|p| base.at(p.clients, &p.settings))
                    .collect(),
            )
        }
    };
    let inputs = preflight(&requests)?;
    let inputs: Vec<_> = inputs.iter().map(|p| crate::outputs::Input(p)).collect();
    crate::outputs::check(&[run.output.json.as_deref(), output.as_deref()], &inputs)?;
    if axis == SweepAxis::Clients && counts.len() < 3 {
        eprintln!("hotbench: warning: the USL fit needs at least 3 client counts");
    }
    let (doc, code) = match requests {
        Requests::Ladder(picked, reqs) => sweep_scenario(*picked, &points, &reqs, argv)?,
        Requests::Run(reqs) => sweep_run(&points, &reqs, argv)?,
    };
    let doc = doc.with_axis(axis);
    println!();
    let shown = hotbench_stats::terminal::escaped(&doc);
    print!(
        "{}",
        hotbench_stats::terminal::escape_lines(&text::sweep::render_text(&shown))
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

/// A scenario and its `--variants` (`None`: all).
type Picked = (hotbench_scenario::Scenario, Option<Vec<String>>);

/// Each point's request: `hotbench run`'s, or the scenario's ladder.
enum Requests {
    Run(Vec<RunRequest>),
    Ladder(Box<Picked>, Vec<LadderRequest>),
}

/// Every point checked as its run will check it (the open-files limit, the scenario's
/// parameters), before the first run; returns the files the sweep reads.
fn preflight(requests: &Requests) -> Result<Vec<std::path::PathBuf>> {
    match requests {
        Requests::Ladder(picked, reqs) => {
            let list = std::slice::from_ref(picked.as_ref());
            for r in reqs {
                crate::scenario_cmd::check_ladders(list, r)?;
            }
            Ok(crate::scenario_cmd::scenario_files(list))
        }
        Requests::Run(reqs) => {
            let mut files = Vec::new();
            for (i, r) in reqs.iter().enumerate() {
                let (groups, _) = r.this_process()?;
                if i == 0 {
                    files = crate::scripts::input_files(&groups);
                }
            }
            Ok(files)
        }
    }
}

/// A scenario sweep's ladder at point `p`: its clients and settings, `-T`, the `--param`s
/// and the connection flags; no outputs (the sweep writes its own).
fn ladder_request(args: &SweepArgs, p: &Point) -> LadderRequest {
    let run = &args.run;
    LadderRequest {
        clients: Some(p.clients),
        duration_s: run.load.time,
        params: args.param.clone(),
        keep_schema: false,
        // A sweep's ladders are many and short: one line per variant is enough.
        quiet: true,
        demo: false,
        target: TargetArgs {
            conn: run.conn.clone(),
            embedded: run.embedded.clone(),
            dbname: run.dbname.first().cloned(),
            settings: p.settings.clone(),
            embedded_only: false,
        },
        output: Default::default(),
    }
}

/// Each run of the sweep as a threshold subject (a scenario sweep's variant scopes match
/// the variant's runs at every client count).
fn subjects(doc: &SweepDoc) -> Vec<hotbench_stats::threshold::Subject<'_>> {
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
            let mut s = hotbench_stats::threshold::Subject::run(name, r);
            s.variant = label;
            s
        })
        .collect()
}

/// `hotbench run`'s workload at each point.
fn sweep_run(points: &[Point], requests: &[RunRequest], argv: &[String]) -> Result<(SweepDoc, u8)> {
    let mut records = Vec::new();
    let mut code = 0;
    for (p, req) in points.iter().zip(requests) {
        println!("\n=== sweep: {} ===", p.name);
        let (c, rec) = crate::run_cmd::benchmark_record(req, argv)?;
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
    (scn, variants): Picked,
    points: &[Point],
    requests: &[LadderRequest],
    argv: &[String],
) -> Result<(SweepDoc, u8)> {
    let name = scn.name().to_string();
    let mut runs: Vec<(String, hotbench_stats::RunRecord)> = Vec::new();
    let mut code = 0;
    for (p, req) in points.iter().zip(requests) {
        println!(
            "\n=== sweep: {}, {} ===",
            hotbench_stats::terminal::escape(&name),
            p.name
        );
        let ladders =
            crate::scenario_cmd::run_ladders(&[(scn.clone(), variants.clone())], req, argv)?;
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
