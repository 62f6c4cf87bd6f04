//! `hotbench capture --verify DIR [connection] [-T 30s]`: the captured directory's twin —
//! its `captured` variant, at the captured clients and rate — run as `scenario run` runs it
//! (on the embedded server unless a connection is given), measured as the capture measured
//! the original (`hotbench_capture::fidelity`; its keys also by its own draws), printed captured vs twin with one fidelity
//! line, and written to `DIR/verify.json`. Exit codes: 0 the twin ran (whatever its
//! fidelity: the line says), 1 bad input, 2 the twin could not run or a check failed.

use std::path::Path;

use hotbench_capture::fidelity::{self, Twin};
use hotbench_capture::scenario_dir::CAPTURED;
use hotbench_engine::duration::{parse_duration_us, Unit};
use hotbench_results::{terminal, Ladder};
use hotbench_settings::RunSettings;

use crate::capture_dir::{read_doc, scenario_name};
use crate::fail::{Fail, Result};
use crate::flags::capture::CaptureArgs;
use crate::ladder_request::LadderRequest;
use crate::target::TargetArgs;

/// `-T` of the twin when not given.
const DEFAULT_TIME: &str = "30s";
/// The score's file in the captured directory.
pub const VERIFY_JSON: &str = "verify.json";

pub fn main(a: &CaptureArgs, dir: &Path, argv: &[String]) -> Result<u8> {
    let doc = read_doc(dir)?;
    let time = a.time.as_deref().unwrap_or(DEFAULT_TIME);
    let seconds = parse_duration_us(time, Unit::Seconds)
        .ok()
        .filter(|us| *us >= 1_000_000)
        .and_then(|us| u32::try_from(us / 1_000_000).ok())
        .ok_or_else(|| {
            Fail::input(format!(
                "invalid -T \"{}\": expected a duration of at least 1s, such as 30s",
                terminal::escape(time)
            ))
        })?;
    let name = scenario_name(dir);
    // The twin is the captured variant of the directory's ladder, run as `scenario run`
    // runs it: a request built here, no command line parsed.
    let req = LadderRequest {
        clients: None,
        duration_s: Some(seconds),
        params: Vec::new(),
        keep_schema: false,
        quiet: false,
        demo: false,
        target: TargetArgs {
            conn: a.conn.clone(),
            embedded: a.embedded.clone(),
            dbname: a.dbname.clone(),
            settings: RunSettings::default(),
            embedded_only: false,
        },
        output: Default::default(),
    };
    let picked = crate::scenario_cmd::pick(
        &name,
        &[dir.to_path_buf()],
        Some(vec![CAPTURED.to_string()]),
        &[],
    )?;
    println!(
        "hotbench capture --verify: running {}'s twin ({} variant)…",
        terminal::escape(&name),
        CAPTURED
    );
    let ladders = crate::scenario_cmd::run_ladders(&[picked], &req, argv)?;
    let Some(twin) = ladders.first().and_then(twin_of) else {
        return Err(Fail::run(
            "the twin did not run: no result for its captured variant",
        ));
    };
    let f = fidelity::score(&doc, &twin);
    let text = fidelity::render(&terminal::escaped(&f));
    print!("\n{}", terminal::escape_lines(&text));
    crate::outputs::write_json(&dir.join(VERIFY_JSON), &f, "score")?;
    let checks_failed = ladders.iter().any(|l| !l.failed_checks().is_empty());
    Ok(if checks_failed { 2 } else { 0 })
}

/// The captured variant's run, measured as the capture measures.
fn twin_of(l: &Ladder) -> Option<Twin> {
    let v = l.variants.iter().find(|v| v.name == CAPTURED)?;
    let r = v.record.as_ref()?;
    let mut t = Twin {
        target: l.server_version.clone(),
        duration_s: r.duration_s,
        tps: r.totals.tps,
        ..Default::default()
    };
    match r.probe_record() {
        Some(p) => {
            t.waits = p
                .waits
                .iter()
                .map(|w| hotbench_results::capture_record::WaitShare {
                    event: w.event.clone(),
                    share: w.pct / 100.0,
                })
                .collect();
            t.hot_rows = p
                .hot_rows
                .iter()
                .map(|h| fidelity::hot_row(&h.relation, &h.key, h.pct))
                .collect();
        }
        None => t
            .notes
            .push("the twin ran without probes: no waits or hot rows to compare".into()),
    }
    // The twin's own draws of the scenario's key variables (`key`: those with hot values).
    t.draws = r
        .hot_keys
        .iter()
        .map(|k| (k.variable.clone(), k.value.clone(), k.attempts))
        .collect();
    for g in &r.groups {
        for s in &g.scripts {
            t.scripts.push((
                s.name.clone(),
                s.totals.tps,
                (s.totals.latency.count > 0).then_some(s.totals.latency.mean_ms),
            ));
            for c in &s.commands {
                let text = if c.full_text.is_empty() {
                    &c.text
                } else {
                    &c.full_text
                };
                if !text.starts_with('\\') && c.count > 0 {
                    t.calls.push((text.clone(), c.count));
                }
            }
        }
    }
    Some(t)
}
