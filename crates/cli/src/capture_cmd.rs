//! `hotbench capture`: glue between the command line, the server to capture (sampled
//! read-only as `diagnose` samples it: `hotbench-capture` reuses its session and probe), the
//! scenario directory it writes (checked before sampling by `crate::outputs`' rules: a new or
//! empty directory, or an earlier capture's), and `--verify` (`crate::capture_verify`).
//! Exit codes: 0 captured, 1 bad input or no connection, 2 the server went away mid-sample
//! or the sample was interrupted (the partial capture is still written) or a write failed.

use std::path::Path;

use hotbench_capture::fixes::Fixes;
use hotbench_capture::scenario_dir::{self, SchemaFiles};
use hotbench_capture::workload::Capture;
use hotbench_results::capture_record::CaptureDoc;
use hotbench_results::terminal;

use crate::capture_dir::{is_capture_dir, scenario_name};
use crate::fail::{Fail, Result};
use crate::flags::capture::CaptureArgs;
use crate::target;

/// `-T` when not given: how long a capture samples.
const DEFAULT_TIME: &str = "60s";

pub fn main(a: &CaptureArgs, argv: &[String]) -> Result<u8> {
    if let Some(dir) = &a.verify {
        if a.out.is_some() || a.log.is_some() || a.redact || a.scale.is_some() || a.no_keys {
            return Err(Fail::input(
                "--verify DIR runs a captured directory's twin: --out, --log, --redact, --scale and --no-keys belong to a capture",
            ));
        }
        return crate::capture_verify::main(a, dir, argv);
    }
    let Some(out) = a.out.as_deref() else {
        return Err(Fail::input(
            "hotbench capture needs --out DIR, the scenario directory to write",
        )
        .hint("hotbench capture [CONNECTION] -T 5m --out DIR"));
    };
    let opts = options(a)?;
    let scale = scale(a.scale.as_deref())?;
    let log_input = a.log.as_deref().map(crate::outputs::Input);
    crate::outputs::check_dir(out, &is_capture_dir, log_input.as_slice())?;
    if let Some(p) = &a.log {
        // Refused before a server is started or connected to.
        readable_log(p)?;
    }
    let (target, params) = target::sampled(&a.conn, &a.embedded, &a.dbname)?;
    // The log's messages of the captured database only (where the log names databases).
    let (log, log_notes) = match &a.log {
        Some(p) => {
            let (txs, notes) = read_log(p, &params.dbname)?;
            (Some(txs), notes)
        }
        None => (None, Vec::new()),
    };
    let mut opts = opts;
    opts.target = target.describe();
    opts.log = log;
    opts.log_notes = log_notes;
    crate::sampling::announce(
        "capture",
        &opts.target,
        opts.duration,
        &format!(
            "sessions every {} ms{}, waits every {} ms",
            opts.activity_interval.as_millis(),
            if opts.sample_budget_ms > 0.0 {
                format!(
                    " (at most {} ms of server time a second)",
                    opts.sample_budget_ms
                )
            } else {
                String::new()
            },
            opts.wait_interval.as_millis()
        ),
    );
    let sample =
        hotbench_capture::sample::sample(&params, &opts, &hotbench_engine::signals::stop_requested)
            .map_err(|e| target::with_named_hint(Fail::input(e.to_string()), &target))?;
    let capture = finish(&params, sample, &opts, out, scale, a.redact, true)?;
    drop(target);
    println!(
        "scenario written to {} (run it: hotbench scenario run {} --dir {}; score it: hotbench capture --verify {})",
        out.display(),
        terminal::escape(&scenario_name(out)),
        out.display(),
        out.display()
    );
    Ok(crate::sampling::exit_code(capture.doc.status, "capture"))
}

/// The sampling options from the flags.
pub fn options(a: &CaptureArgs) -> Result<hotbench_capture::sample::Options> {
    let time = a.time.as_deref().unwrap_or(DEFAULT_TIME);
    let (duration, interval) = crate::sampling::window(time, &a.interval, 1)?;
    let mut o = hotbench_capture::sample::Options::new(duration);
    o.activity_interval = interval;
    o.sample_budget_ms = sample_budget(&a.sample_budget)?;
    o.key_reads = !a.no_keys;
    Ok(o)
}

/// `--sample-budget MS`: milliseconds of server time per second, 0 (none) to 1000.
fn sample_budget(s: &str) -> Result<f64> {
    match s.trim().trim_end_matches("ms").parse::<f64>() {
        Ok(ms) if ms.is_finite() && (0.0..=1000.0).contains(&ms) => Ok(ms),
        _ => Err(Fail::input(format!(
            "invalid --sample-budget \"{s}\": milliseconds of server time per second, 0 (no \
             budget) to 1000"
        ))),
    }
}

/// `--scale F`: a positive, finite factor.
fn scale(s: Option<&str>) -> Result<f64> {
    let Some(s) = s else { return Ok(1.0) };
    match s.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 && f <= 1000.0 => Ok(f),
        _ => Err(Fail::input(format!(
            "invalid --scale \"{s}\": a factor above 0, at most 1000 (0.5 halves the captured rows)"
        ))),
    }
}

/// `--log FILE` is a file this process can open (read in full once the target is known).
fn readable_log(p: &Path) -> Result<()> {
    let refuse = |why: String| Fail::input(format!("--log: {}: {why}", p.display()));
    let file = std::fs::File::open(p).map_err(|e| refuse(format!("cannot read the log: {e}")))?;
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) if m.is_dir() => Err(refuse("a directory, not a log file".into())),
        Ok(_) => Err(refuse("not a regular file".into())),
        Err(e) => Err(refuse(format!("cannot read the log: {e}"))),
    }
}

/// `--log FILE`'s transactions, and what reading it noted.
fn read_log(
    p: &Path,
    database: &str,
) -> Result<(
    Vec<hotbench_capture::observed::ObservedTransaction>,
    Vec<String>,
)> {
    let mut out = Vec::new();
    let summary = hotbench_capture::log::read_log(
        p,
        &hotbench_capture::log::LogOptions {
            database: Some(database.to_string()),
            ..Default::default()
        },
        &mut |t| {
            if out.len() < hotbench_capture::tracker::MAX_TRANSACTIONS {
                out.push(t);
            }
        },
    )
    .map_err(|e| Fail::input(format!("--log: {e}")))?;
    eprintln!(
        "hotbench capture: --log {}: {} transactions from {} lines",
        p.display(),
        out.len(),
        summary.lines
    );
    Ok((out, summary.notes))
}

/// The schema and data files for the captured statements' tables (`schema.sql`, `data.sql`),
/// read as diagnose reads (`hotbench_capture::schema`), with the rows the hot keys name.
/// Nothing here fails the capture: what cannot be read is a note.
fn schema_files(
    params: &hotbench_wire::ConnectParams,
    capture: &mut Capture,
    scale: f64,
    redact: bool,
) -> (SchemaFiles, Option<hotbench_capture::schema::SchemaCapture>) {
    use hotbench_capture::schema::{capture_schema, DumpSource, SchemaOptions};
    // The shapes' statements first, then the rest of the mix: pg_stat_statements counts
    // the statements a function runs too (`track = all`), and a workload that only calls
    // functions (procrastinate's `procrastinate_fetch_job_v2(…)`) names its tables there,
    // qualified with the function's schema.
    let shaped = capture
        .doc
        .shapes
        .iter()
        .flat_map(|sh| sh.statements.iter());
    let mixed = capture.doc.statements.iter().map(|s| &s.query);
    let named = hotbench_capture::schema_names::named(shaped.chain(mixed).map(String::as_str));
    let tables = named.relations;
    let mut files = SchemaFiles::default();
    if tables.is_empty() {
        files
            .notes
            .push("no table was named by the captured statements: no schema.sql".into());
        return (files, None);
    }
    let names = named.tables;
    let opts = SchemaOptions {
        scale,
        redact,
        must_contain: hotbench_capture::keys::must_contain(capture, &tables),
        functions: named.functions,
        sequences: hotbench_capture::catalog_seq::named_sequences(&capture.shapes),
        // The scenario runs in its own schema, alone on the search_path: the objects the
        // statements named unqualified are written unqualified, so they land there.
        place: SchemaOptions::default()
            .search_path
            .iter()
            .map(|s| (s.clone(), None))
            .collect(),
        dump: DumpSource::PgDump {
            params: Box::new(params.clone()),
            bin_dir: None,
        },
        ..SchemaOptions::default()
    };
    let mut p = params.clone();
    p.application_name = Some(hotbench_capture::activity::APPLICATION_NAME.into());
    let conn = hotbench_wire::Connector::new(p).connect();
    let cap = match conn {
        Ok(mut c) => {
            let r = capture_schema(&mut c, &names, &opts);
            c.close();
            r
        }
        Err(e) => {
            files
                .notes
                .push(format!("schema not read: could not connect: {e}"));
            return (files, None);
        }
    };
    match cap {
        Ok(cap) => {
            {
                // The functions' argument names: evidence for the chains the scripts carry.
                capture.function_args = hotbench_capture::chain::function_args(&cap.schema_sql);
                let hot = if redact {
                    hotbench_capture::keys::redacted_hot_keys(
                        &capture.doc.hot_keys,
                        &cap.tables,
                        opts.seed,
                    )
                } else {
                    capture.doc.hot_keys.clone()
                };
                let defs = hotbench_capture::unseen::Defs::read(&cap.schema_sql);
                let fallback = hotbench_capture::keys::fallback(&hot, &cap.tables, &defs);
                if redact {
                    hotbench_capture::keys::redact(
                        capture,
                        &cap.tables,
                        opts.seed,
                        Some(&fallback),
                    );
                } else {
                    capture.write_scripts(None, Some(&fallback));
                }
            }
            files
                .files
                .push(("schema.sql".into(), cap.schema_sql.clone()));
            files.files.push(("data.sql".into(), cap.data_sql.clone()));
            files.setup = vec!["schema.sql".into(), "data.sql".into()];
            files.tables = cap.tables.iter().map(|t| t.name.clone()).collect();
            files.notes.extend(
                cap.unreproducible
                    .iter()
                    .map(|u| format!("not reproduced: {u}")),
            );
            (files, Some(cap))
        }
        Err(e) => {
            files.notes.push(format!("schema not read: {e}"));
            (files, None)
        }
    }
}

/// From the sample to the written directory: the workload profile and scripts, the schema
/// and data, the fix variants; the summary printed when `print`.
pub fn finish(
    params: &hotbench_wire::ConnectParams,
    sample: hotbench_capture::sample::Sample,
    opts: &hotbench_capture::sample::Options,
    out: &Path,
    scale: f64,
    redact: bool,
    print: bool,
) -> Result<Capture> {
    let mut capture = hotbench_capture::workload::profile(sample, opts);
    let (schema, captured) = schema_files(params, &mut capture, scale, redact);
    // What functions and triggers ran is no client's: the mix is the clients' (a log's
    // shapes hold every statement they sent).
    let log_span = opts
        .log
        .as_deref()
        .and_then(hotbench_capture::log_profile::span_s);
    // The trigger functions' bodies too: the twin runs without its triggers.
    let bodies = captured.as_ref().map_or(String::new(), |c| {
        format!("{}\n{}", c.schema_sql, c.trigger_sql)
    });
    hotbench_capture::nested::leave_out(&mut capture.doc, &bodies, log_span);
    let fixes = hotbench_capture::fix_plan::plan(&capture, captured.as_ref());
    if print {
        print_summary(&capture.doc);
    }
    write(out, &capture, &schema, &fixes)?;
    Ok(capture)
}

fn print_summary(doc: &CaptureDoc) {
    // Statements, keys, relations and notes are the server's: escaped for the terminal.
    let text = hotbench_capture::summary::render(&terminal::escaped(doc));
    print!("{}", terminal::escape_lines(&text));
}

/// Writes the scenario directory.
pub fn write(out: &Path, capture: &Capture, schema: &SchemaFiles, fixes: &Fixes) -> Result<()> {
    let files = scenario_dir::files(capture, schema, fixes)
        .map_err(|e| Fail::run(format!("could not write the capture: {e}")))?;
    crate::outputs::write_dir(out, &files)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sample_budget_is_milliseconds_from_0_to_1000() {
        assert_eq!(super::sample_budget("10").ok(), Some(10.0));
        assert_eq!(super::sample_budget("2.5ms").ok(), Some(2.5));
        assert_eq!(super::sample_budget("0").ok(), Some(0.0));
        for bad in ["-1", "1001", "NaN", "inf", "", "5s", "x"] {
            let e = super::sample_budget(bad).expect_err(bad);
            assert!(e.to_string().contains("--sample-budget"), "{bad}: {e}");
        }
    }
}
