//! `hotbench report`, `compare`, `merge` and `usl`: read result files (or, for `usl`, CSV
//! measurements), render, combine or fit them. Exit codes: 1 for unreadable or invalid
//! files, 2 when the output cannot be written.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use hotbench_report::analysis::compare;
use hotbench_report::{html, text, Document};
use hotbench_results::RunRecord;
use hotbench_results::{merge, terminal};

use crate::fail::{Fail, Result};
use crate::flags::report::{CompareArgs, MergeArgs, ReportArgs, UslArgs};
use crate::outputs::Input;

/// Rendered text for the terminal: what the files hold (names, labels, messages) is escaped
/// in the records before rendering, and no control character but a line break gets out.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    terminal::escape_lines(text)
}

/// The file's name as shown in tables (the path as given).
fn display_name(p: &Path) -> String {
    p.display().to_string()
}

/// The files a command reads, for the output check.
fn inputs(files: &[PathBuf]) -> Vec<Input<'_>> {
    files.iter().map(|p| Input(p)).collect()
}

/// A result file's text, read with the result-size limit.
fn read_text(path: &Path) -> Result<String> {
    hotbench_results::input_file::read_text(path, hotbench_results::input_file::RESULT_LIMIT)
        .map_err(|e| Fail::input(format!("could not read \"{}\": {e}", path.display())))
}

fn read_document(path: &Path) -> Result<Document> {
    let text = read_text(path)?;
    hotbench_report::parse_document(&display_name(path), &text)
        .map_err(|e| Fail::input(e.to_string()))
}

/// Reads every file once: a pipe or `<(…)` gives its text only once.
fn read_documents(files: &[PathBuf]) -> Result<Vec<Document>> {
    files.iter().map(|p| read_document(p)).collect()
}

/// The run results (not ladders or sweeps) among documents read for `command`, which says
/// what it takes instead when given something else.
fn runs_of(
    files: &[PathBuf],
    docs: Vec<Document>,
    command: &str,
) -> Result<Vec<(String, RunRecord)>> {
    let takes = match command {
        "compare" => "compare takes run results, or ladder files only",
        _ => "merge combines run results (hotbench run --json) only",
    };
    files
        .iter()
        .zip(docs)
        .map(|(p, d)| match d {
            Document::Run(name, r) => Ok((name, *r)),
            _ => Err(Fail::input(format!(
                "\"{}\" is not a run result (hotbench-result/1): {takes}",
                p.display()
            ))),
        })
        .collect()
}

pub fn report(args: &ReportArgs) -> Result<u8> {
    let output = match &args.output {
        Some(o) => o.clone(),
        None => default_report_path(&args.files[0])?,
    };
    crate::outputs::check(&[Some(&output)], &inputs(&args.files))?;
    let docs = read_documents(&args.files)?;
    crate::outputs::write_html(&output, &hotbench_report::render_documents(&docs))?;
    Ok(0)
}

/// `before.json` → `before.html` beside it (`before.json.html` if the input already ends in
/// `.html`, so the input is never overwritten). A pipe or device (`/dev/stdin`, `<(…)`) has
/// nothing beside it to name a report after: the report needs its name given.
fn default_report_path(first: &Path) -> Result<PathBuf> {
    // `/dev/stdin` redirected from a file is a regular file too, but what is beside it
    // (`/dev`) is no place for a report.
    let dir = match first.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let special_dir =
        std::fs::canonicalize(dir).is_ok_and(|d| d.starts_with("/dev") || d.starts_with("/proc"));
    if special_dir || std::fs::metadata(first).is_ok_and(|m| !m.is_file()) {
        return Err(Fail::input(format!(
            "\"{}\" is not a regular file (a pipe, device or descriptor), so there is no place beside it for the report: name the report with --html FILE",
            first.display()
        )));
    }
    let html = first.with_extension("html");
    if html == first {
        let mut name = first.as_os_str().to_owned();
        name.push(".html");
        return Ok(name.into());
    }
    Ok(html)
}

pub fn compare(args: &CompareArgs) -> Result<u8> {
    crate::outputs::check(
        &[args.output.as_deref(), args.json.as_deref()],
        &inputs(&args.files),
    )?;
    let repeats = args.repeats.max(1) as usize;
    if !args.files.len().is_multiple_of(repeats) {
        return Err(Fail::input(format!(
            "--repeats {repeats}: {} files are not sides of {repeats} runs each",
            args.files.len()
        )));
    }
    let docs = read_documents(&args.files)?;
    if docs.iter().all(|d| matches!(d, Document::Ladders(_))) {
        return compare_ladders(args, docs);
    }
    let runs = runs_of(&args.files, docs, "compare")?;
    let c = compare::compare(&runs).with_repeats(&runs, repeats);
    let text = match terminal::escaped(&runs) {
        Cow::Borrowed(_) => text::compare::render_text(&c),
        Cow::Owned(r) => {
            text::compare::render_text(&compare::compare(&r).with_repeats(&r, repeats))
        }
    };
    print!("{}", shown(&text));
    let json = hotbench_results::ComparisonDoc {
        format: hotbench_results::COMPARE_FORMAT.into(),
        ..compare::to_json(&c)
    };
    crate::outputs::all(vec![
        args.json.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_json(p, &json, "comparison")
        }),
        args.output.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_html(p, &html::compare::render_html(&c, &runs))
        }),
    ])?;
    Ok(0)
}

/// `compare` of ladder files: variants lined up by name.
fn compare_ladders(args: &CompareArgs, docs: Vec<Document>) -> Result<u8> {
    use hotbench_report::analysis::compare_ladder;
    let files: Vec<(String, Vec<hotbench_results::Ladder>)> = args
        .files
        .iter()
        .zip(docs)
        .filter_map(|(p, d)| match d {
            Document::Ladders(l) => Some((display_name(p), l)),
            _ => None,
        })
        .collect();
    let repeats = args.repeats.max(1) as usize;
    let c = compare_ladder::compare_ladders(&files).with_repeats(repeats);
    let text = match terminal::escaped(&files) {
        Cow::Borrowed(_) => text::compare_ladder::render_text(&c),
        Cow::Owned(f) => text::compare_ladder::render_text(
            &compare_ladder::compare_ladders(&f).with_repeats(repeats),
        ),
    };
    print!("{}", shown(&text));
    let json = compare_ladder::ladders_to_json(&c);
    crate::outputs::all(vec![
        args.json.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_json(p, &json, "comparison")
        }),
        args.output.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_html(p, &html::compare_ladder::render_html(&c))
        }),
    ])?;
    if c.variants.is_empty() {
        return Err(Fail::input(
            "the ladder files have no variant in common (compare lines variants up by name)",
        ));
    }
    Ok(0)
}

pub fn merge(args: &MergeArgs) -> Result<u8> {
    crate::outputs::check(&[Some(&args.output)], &inputs(&args.files))?;
    let runs = runs_of(&args.files, read_documents(&args.files)?, "merge")?;
    let merged = merge::merge(&runs).map_err(|e| Fail::input(e.to_string()))?;
    hotbench_results::json_file::write_atomic(&args.output, &merged)
        .map_err(|e| Fail::run(e.to_string()))?;
    let t = &merged.totals;
    println!(
        "merged {} results: {} transactions, {:.1} tps, p99 {:.3} ms; written to {}",
        runs.len(),
        t.counters.cnt,
        t.tps,
        t.latency.p99_ms,
        args.output.display()
    );
    for n in &merged.notes {
        if n.starts_with(hotbench_results::clock_skew::NOTE_PREFIX) {
            // The note names the input files: their control characters stay escaped.
            let shown: String = n
                .chars()
                .flat_map(|c| {
                    let escaped = c.is_control().then(|| c.escape_default());
                    escaped
                        .into_iter()
                        .flatten()
                        .chain((!c.is_control()).then_some(c))
                })
                .collect();
            eprintln!("hotbench: warning: {shown}");
        }
    }
    Ok(0)
}

/// Fits the USL to the files' points: one fit per series (sweep or ladder variant).
pub fn usl(args: &UslArgs) -> Result<u8> {
    use hotbench_report::analysis::{usl_input, usl_series};
    crate::outputs::check(
        &[args.json.as_deref(), args.html.as_deref()],
        &inputs(&args.files),
    )?;
    let mut points = Vec::new();
    for p in &args.files {
        let text = read_text(p)?;
        points.extend(
            usl_input::read_points(&display_name(p), &text)
                .map_err(|e| Fail::input(e.to_string()))?,
        );
    }
    let fits = usl_input::group(points)
        .into_iter()
        .map(usl_series::SeriesFit::new)
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(Fail::input)?;
    let Some(json) = usl_series::to_json(&fits) else {
        return Err(Fail::input("no measurements in the given files"));
    };
    print!("{}", shown(&text::usl::render_text(&fits)));
    crate::outputs::all(vec![
        args.json
            .as_deref()
            .map_or(Ok(()), |p| crate::outputs::write_json(p, &json, "result")),
        args.html.as_deref().map_or(Ok(()), |p| {
            crate::outputs::write_html(p, &html::usl::render_html(&fits))
        }),
    ])?;
    Ok(0)
}

/// The HTML report of scenario ladders (`scenario run --html`, `demo --html`).
pub fn write_ladder_html(path: &Path, ladders: &[hotbench_scenario::Ladder]) -> Result<()> {
    crate::outputs::write_html(path, &hotbench_report::render_ladders(ladders))
}
