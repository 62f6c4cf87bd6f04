//! `--perturb` firings: what was done and when, then the baseline, the dip, the work lost
//! and the times to recover (or why there are none), and what the clients saw in its window
//! against the rest of the run (p50/p99, errors by SQLSTATE) and a queue's backlog drain.
//! The terminal gets one line per firing; the page a table, on the throughput chart
//! ([`mark`]) a dashed line at each perturbation's baseline from its start to its recovery
//! (TTR90, or the end of the run), and on every time chart of the run ([`shade`]) each
//! action shaded and its TTR90/TTR99 points marked. Text a server or a file controls is
//! escaped for the terminal here (the page escapes its own).

use std::fmt::Write;

use hotbench_results::{PerturbationRecord, RecoveryRule, RunRecord};

use hotbench_results::perturbation_record::{BacklogDrain, ServerWindow, SpanStats};

use crate::analysis::chart::{Band, Chart, Mark, Series};
use crate::analysis::section::{Block, Cell, Section, Table};

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("perturbations");
    for p in &rec.perturbations {
        s.line(line(p));
    }
    if !rec.perturbations.is_empty() {
        s.table(
            Table::new(
                "perturbations",
                &[
                    "perturbation",
                    "at s",
                    "until s",
                    "baseline/s",
                    "dip/s",
                    "lost",
                    "TTR90 s",
                    "TTR99 s",
                    "failed",
                    "reconnects",
                    "top wait",
                    "lock queue",
                    "server in window",
                    "p50/p99 ms in window",
                    "outside",
                    "errors in window",
                    "backlog drained s",
                    "note",
                ],
                rec.perturbations.iter().map(row).collect(),
            )
            .titled("Perturbations"),
        );
    }
    s
}

/// Adds one dashed series per judged perturbation to `chart` (whose x are the timeline's
/// interval ends): its baseline over `[at, window end]`.
pub fn mark(chart: &mut Chart, rec: &RunRecord) {
    for p in &rec.perturbations {
        let (Some(b), Some(end)) = (p.baseline_per_s, p.window_end_s) else {
            continue;
        };
        let values: Vec<Option<f64>> = chart
            .x
            .iter()
            .map(|&x| (x >= p.at_s && x <= end + 1e-9).then_some(b))
            .collect();
        if values.iter().any(Option::is_some) {
            let mut s = Series::line(format!("{} baseline until recovery", p.spec), values);
            s.dashed = true;
            chart.series.push(s);
        }
    }
}

/// The shaded actions and TTR marks of `rec`'s perturbations that ran (the chart's JSON
/// carries the labels; `report.js` draws them as text, never as markup).
pub fn bands_and_marks(rec: &RunRecord) -> (Vec<Band>, Vec<Mark>) {
    let (mut bands, mut marks) = (Vec::new(), Vec::new());
    for p in rec.perturbations.iter().filter(|p| p.ran()) {
        bands.push(Band {
            from: p.at_s,
            to: p.end_s.unwrap_or(p.at_s).max(p.at_s),
            label: p.spec.clone(),
        });
        match (p.ttr90_s, p.ttr99_s) {
            (Some(a), Some(b)) if (a - b).abs() < 1e-9 => marks.push(Mark {
                x: p.at_s + a,
                label: format!("{} TTR90/99", p.kind),
            }),
            (a, b) => {
                for (t, name) in [(a, "TTR90"), (b, "TTR99")] {
                    if let Some(t) = t {
                        marks.push(Mark {
                            x: p.at_s + t,
                            label: format!("{} {name}", p.kind),
                        });
                    }
                }
            }
        }
    }
    (bands, marks)
}

/// Shades the perturbations of `rec` on every `time` chart of `sections` (a run's).
pub fn shade(sections: &mut [Section], rec: &RunRecord) {
    let (bands, marks) = bands_and_marks(rec);
    if bands.is_empty() {
        return;
    }
    let charts = sections.iter_mut().flat_map(|s| s.blocks.iter_mut());
    for b in charts {
        if let Block::Chart(c) = b {
            if c.x_kind == "time" {
                c.bands.extend_from_slice(&bands);
                c.marks.extend_from_slice(&marks);
            }
        }
    }
}

fn line(p: &PerturbationRecord) -> String {
    let mut o = format!("perturbation {} at {:.3} s", safe(&p.spec), p.at_s);
    if let Some(end) = p.end_s.filter(|e| *e - p.at_s >= 0.0005) {
        let _ = write!(o, " (until {end:.3} s)");
    }
    if let Some(d) = &p.detail {
        let _ = write!(o, " ({})", safe(d));
    }
    if let Some(e) = &p.error {
        let _ = write!(o, ": {}", safe(e));
        return o;
    }
    let Some(b) = p.baseline_per_s else {
        return o + ": no baseline (nothing committed before it), recovery not judged";
    };
    let inherited = if p.baseline_inherited {
        " (the previous perturbation's)"
    } else {
        ""
    };
    let _ = write!(o, ": baseline {b:.1}/s{inherited}");
    if let Some(d) = p.dip_per_s {
        let _ = write!(o, ", dip {d:.1}/s ({:.0}%)", 100.0 * d / b);
    }
    if let Some(l) = p.lost {
        let _ = write!(o, ", lost {l:.0}");
    }
    let ttr = |t: Option<f64>| {
        t.map_or("not recovered by the end of the run".into(), |t| {
            format!("{t:.2} s")
        })
    };
    let _ = write!(o, ", TTR90 {}, TTR99 {}", ttr(p.ttr90_s), ttr(p.ttr99_s));
    if (p.rule.hold_s - RecoveryRule::default().hold_s).abs() > 1e-9 {
        let _ = write!(o, " (hold {} s)", p.rule.hold_s);
    }
    if p.failed > 0 || p.reconnects > 0 {
        let _ = write!(o, ", failed {}, reconnects {}", p.failed, p.reconnects);
    }
    if let Some(w) = window_text(p) {
        let _ = write!(o, "; {w}");
    }
    if let Some(b) = &p.backlog {
        let _ = write!(o, "; {}", backlog_text(b));
    }
    if let Some(w) = &p.server {
        let mut parts = Vec::new();
        if let Some(top) = w.top_waits.first() {
            parts.push(format!("top wait {} {:.0}%", safe(&top.event), top.pct));
            if w.lock_waiting_max > 0 {
                parts.push(format!("lock queue up to {}", w.lock_waiting_max));
            }
        }
        parts.extend(counters_text(w));
        if !parts.is_empty() {
            let _ = write!(o, "; server: {}", parts.join(", "));
        }
    }
    o
}

/// The server's counters in a window: `WAL 1.2 MiB`, `1 checkpoint`, `dead tuples up to 300`,
/// and when the server restarted inside it, that they count from its restart.
fn counters_text(w: &ServerWindow) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(b) = w.wal_bytes {
        parts.push(format!("WAL {}", bytes(b)));
    }
    match w.checkpoints {
        Some(1) => parts.push("1 checkpoint".into()),
        Some(n) if n > 1 => parts.push(format!("{n} checkpoints")),
        _ => {}
    }
    if let Some(d) = w.dead_tuples_max {
        parts.push(format!("dead tuples up to {d}"));
    }
    if w.server_restarted {
        parts.push("counted anew from the server's restart".into());
    }
    parts
}

/// `512 B`, `12.5 KiB`, `3.2 MiB`, `1.1 GiB`.
fn bytes(b: u64) -> String {
    let mut v = b as f64;
    for unit in ["B", "KiB", "MiB"] {
        if v < 1024.0 {
            return if unit == "B" {
                format!("{b} B")
            } else {
                format!("{v:.1} {unit}")
            };
        }
        v /= 1024.0;
    }
    format!("{v:.1} GiB")
}

/// `in the window p50/p99 12.0/85.0 ms (outside 1.1/3.2 ms), errors 57P01 4, 08006 1`:
/// what the clients saw inside the window against the rest of the run.
pub fn window_text(p: &PerturbationRecord) -> Option<String> {
    let inside = p.inside.as_ref()?;
    let ms = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
    let mut parts = Vec::new();
    if inside.p50_ms.is_some() || inside.p99_ms.is_some() {
        let mut lat = format!("p50/p99 {}/{} ms", ms(inside.p50_ms), ms(inside.p99_ms));
        if let Some(out) = p.outside.as_ref().filter(|o| o.p50_ms.is_some()) {
            let _ = write!(lat, " (outside {}/{} ms)", ms(out.p50_ms), ms(out.p99_ms));
        }
        parts.push(lat);
    }
    let errors = sqlstates(inside);
    parts.push(if errors.is_empty() {
        "no errors".to_string()
    } else {
        format!("errors {}", safe(&errors))
    });
    Some(format!("in the window {}", parts.join(", ")))
}

/// `57P01 4, 08006 1`: a span's errors by SQLSTATE, most first (empty without errors).
fn sqlstates(s: &SpanStats) -> String {
    let mut e: Vec<(&String, &u64)> = s.errors_by_sqlstate.iter().collect();
    e.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let list: Vec<String> = e.iter().map(|(c, n)| format!("{c} {n}")).collect();
    list.join(", ")
}

/// `backlog drained in 8.0 s (500 at its peak, 100 before)`, or not drained.
pub fn backlog_text(b: &BacklogDrain) -> String {
    let what = match b.drained_s {
        Some(t) if t <= 0.0 => {
            return format!(
                "{} never rose past its level before ({:.0})",
                safe(&b.monitor),
                b.before
            )
        }
        Some(t) => format!("drained in {t:.1} s"),
        None => "not drained by the next perturbation or the end".to_string(),
    };
    format!(
        "{} {what} ({:.0} at its peak, {:.0} before)",
        safe(&b.monitor),
        b.peak,
        b.before
    )
}

/// `p50/p99` of a span, ms (`–` where the timeline kept no latency).
fn latency(s: Option<&SpanStats>) -> String {
    let ms = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
    s.filter(|s| s.p50_ms.is_some()).map_or("–".into(), |s| {
        format!("{}/{}", ms(s.p50_ms), ms(s.p99_ms))
    })
}

/// Control characters as escapes, so a server's message cannot drive the terminal.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn row(p: &PerturbationRecord) -> Vec<Cell> {
    let f = |v: Option<f64>, digits: usize| v.map_or("–".into(), |v| format!("{v:.digits$}"));
    let judged = p.error.is_none() && p.baseline_per_s.is_some();
    let ttr = |t: Option<f64>| {
        if judged {
            t.map_or("not recovered".into(), |t| format!("{t:.2}"))
        } else {
            "–".into()
        }
    };
    let server = p.server.as_ref();
    let mut note: Vec<String> = p.detail.iter().chain(p.error.iter()).cloned().collect();
    if p.baseline_inherited {
        note.push("baseline of the previous perturbation".into());
    }
    vec![
        Cell::code(p.spec.as_str()),
        Cell::from(format!("{:.3}", p.at_s)),
        Cell::from(f(p.end_s, 3)),
        Cell::from(f(p.baseline_per_s, 1)),
        Cell::from(f(p.dip_per_s, 1)),
        Cell::from(f(p.lost, 0)),
        Cell::from(ttr(p.ttr90_s)),
        Cell::from(ttr(p.ttr99_s)),
        Cell::from(p.failed.to_string()),
        Cell::from(p.reconnects.to_string()),
        Cell::from(
            server
                .and_then(|w| w.top_waits.first())
                .map_or("–".into(), |w| format!("{} {:.0}%", w.event, w.pct)),
        ),
        Cell::from(server.map_or("–".into(), |w| w.lock_waiting_max.to_string())),
        Cell::from(server.map_or("–".into(), |w| {
            let parts = counters_text(w);
            if parts.is_empty() {
                "–".into()
            } else {
                parts.join(", ")
            }
        })),
        Cell::from(latency(p.inside.as_ref())),
        Cell::from(latency(p.outside.as_ref())),
        Cell::from(p.inside.as_ref().map_or("–".into(), |w| {
            let list = sqlstates(w);
            if list.is_empty() {
                "none".into()
            } else {
                list
            }
        })),
        Cell::from(p.backlog.as_ref().map_or("–".into(), |b| {
            b.drained_s.map_or("not drained".into(), |t| {
                format!("{t:.1} (peak {:.0})", b.peak)
            })
        })),
        Cell::from(note.join("; ")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> PerturbationRecord {
        PerturbationRecord::new("2s:ddl-lock=t,1s".into(), "ddl-lock", "t,1s".into(), 2.0)
    }

    fn rec() -> RunRecord {
        let mut p = entry();
        p.baseline_per_s = Some(100.0);
        p.window_end_s = Some(4.0);
        p.ttr90_s = Some(2.0);
        let mut failed =
            PerturbationRecord::new("1s:checkpoint".into(), "checkpoint", "".into(), 1.0);
        failed.error = Some("42501: <denied>".into());
        RunRecord {
            perturbations: vec![failed, p],
            ..Default::default()
        }
    }

    #[test]
    fn a_judged_perturbation_is_one_line_with_its_recovery() {
        let mut p = entry();
        p.end_s = Some(3.01);
        p.baseline_per_s = Some(1000.0);
        p.dip_per_s = Some(0.0);
        p.lost = Some(1500.4);
        p.ttr90_s = Some(2.1);
        p.failed = 3;
        let rec = RunRecord {
            perturbations: vec![p],
            ..Default::default()
        };
        assert_eq!(
            section(&rec).lines(),
            [
                "perturbation 2s:ddl-lock=t,1s at 2.000 s (until 3.010 s): baseline 1000.0/s, \
             dip 0.0/s (0%), lost 1500, TTR90 2.10 s, TTR99 not recovered by the end of the run, \
             failed 3, reconnects 0"
            ]
        );
        assert!(section(&RunRecord::default()).blocks.is_empty());
    }

    /// `--recovery-hold` other than the default 2 s is said with the times it judged.
    #[test]
    fn a_hold_other_than_the_default_is_said() {
        let mut p = entry();
        p.baseline_per_s = Some(100.0);
        p.ttr90_s = Some(1.5);
        p.ttr99_s = Some(2.25);
        assert!(!line(&p).contains("hold"), "{}", line(&p));
        p.rule.hold_s = 5.0;
        assert!(
            line(&p).ends_with("TTR90 1.50 s, TTR99 2.25 s (hold 5 s)"),
            "{}",
            line(&p)
        );
    }

    #[test]
    fn failures_and_missing_baselines_say_why_and_server_text_is_escaped() {
        let mut p = entry();
        p.error = Some("42P01: relation \"t\u{1b}[2J\" does not exist".into());
        assert_eq!(
            line(&p),
            "perturbation 2s:ddl-lock=t,1s at 2.000 s: 42P01: relation \"t\\u{1b}[2J\" does not exist"
        );
        let mut p = entry();
        p.detail = Some("terminated 4 backends".into());
        assert!(line(&p).ends_with("(terminated 4 backends): no baseline (nothing committed before it), recovery not judged"), "{}", line(&p));
        p.baseline_per_s = Some(10.0);
        p.baseline_inherited = true;
        assert!(line(&p).contains("baseline 10.0/s (the previous perturbation's)"));
        p.server = Some(hotbench_results::perturbation_record::ServerWindow {
            top_waits: vec![hotbench_results::probe_record::WaitShare {
                event: "Lock:relation".into(),
                count: 40,
                pct: 80.0,
            }],
            lock_waiting_max: 4,
            ..Default::default()
        });
        assert!(
            line(&p).ends_with("; server: top wait Lock:relation 80%, lock queue up to 4"),
            "{}",
            line(&p)
        );
    }

    /// The server's counters in the window follow its waits, and a window the server
    /// restarted in says its counters count from the restart (even with no wait sampled).
    #[test]
    fn the_servers_counters_and_its_restart_are_on_the_line_and_in_the_table() {
        let mut p = entry();
        p.baseline_per_s = Some(10.0);
        p.server = Some(ServerWindow {
            wal_bytes: Some(3 * 1024 * 1024 + 300_000),
            checkpoints: Some(1),
            dead_tuples_max: Some(300),
            server_restarted: true,
            ..Default::default()
        });
        assert!(
            line(&p).ends_with(
                "; server: WAL 3.3 MiB, 1 checkpoint, dead tuples up to 300, counted anew \
                 from the server's restart"
            ),
            "{}",
            line(&p)
        );
        let rec = RunRecord {
            perturbations: vec![p],
            ..Default::default()
        };
        let s = section(&rec);
        let t = s.tables().next().expect("a table");
        let cells: Vec<String> = t.rows[0].iter().map(Cell::text).collect();
        assert!(
            cells
                .iter()
                .any(|c| c.starts_with("WAL 3.3 MiB, 1 checkpoint")),
            "{cells:?}"
        );
        assert_eq!(
            (bytes(512), bytes(2048)),
            ("512 B".into(), "2.0 KiB".into())
        );
    }

    #[test]
    fn the_recovery_is_a_dashed_line_at_the_baseline_from_start_to_recovery() {
        let mut c = Chart::new("t", "time", "s", "tps");
        c.x = vec![1.0, 2.0, 3.0, 4.0, 5.0];
        mark(&mut c, &rec());
        assert_eq!(c.series.len(), 1, "the failed one is not drawn");
        assert!(c.series[0].dashed);
        assert_eq!(
            c.series[0].values,
            vec![None, Some(100.0), Some(100.0), Some(100.0), None]
        );
    }

    #[test]
    fn the_window_against_the_rest_of_the_run_and_the_backlog_drain_follow() {
        let mut p = entry();
        p.baseline_per_s = Some(100.0);
        p.ttr90_s = Some(1.0);
        p.ttr99_s = Some(1.0);
        p.inside = Some(SpanStats {
            p50_ms: Some(12.0),
            p99_ms: Some(85.04),
            errors_by_sqlstate: [("57P01".to_string(), 4), ("08006".to_string(), 1)]
                .into_iter()
                .collect(),
            ..Default::default()
        });
        p.outside = Some(SpanStats {
            p50_ms: Some(1.1),
            p99_ms: Some(3.2),
            ..Default::default()
        });
        p.backlog = Some(BacklogDrain {
            monitor: "backlog".into(),
            before: 100.0,
            peak: 500.0,
            peak_at_s: 3.0,
            drained_s: Some(8.0),
        });
        assert!(
            line(&p).ends_with(
                "TTR90 1.00 s, TTR99 1.00 s; in the window p50/p99 12.0/85.0 ms (outside \
                 1.1/3.2 ms), errors 57P01 4, 08006 1; backlog drained in 8.0 s (500 at its \
                 peak, 100 before)"
            ),
            "{}",
            line(&p)
        );
        // No latency kept (an older file), no errors; a backlog that never drained.
        p.inside = Some(SpanStats::default());
        if let Some(b) = p.backlog.as_mut() {
            b.drained_s = None;
        }
        assert!(
            line(&p).ends_with(
                "; in the window no errors; backlog not drained by the next perturbation or \
                 the end (500 at its peak, 100 before)"
            ),
            "{}",
            line(&p)
        );
    }

    #[test]
    fn each_action_is_shaded_and_its_ttr_points_marked_on_every_time_chart() {
        let mut r = rec();
        r.perturbations[1].end_s = Some(3.0);
        r.perturbations[1].ttr99_s = Some(2.5);
        let (bands, marks) = bands_and_marks(&r);
        assert_eq!(
            bands,
            vec![Band {
                from: 2.0,
                to: 3.0,
                label: "2s:ddl-lock=t,1s".into()
            }],
            "the failed one is not shaded"
        );
        let xs: Vec<(f64, &str)> = marks.iter().map(|m| (m.x, m.label.as_str())).collect();
        assert_eq!(xs, vec![(4.0, "ddl-lock TTR90"), (4.5, "ddl-lock TTR99")]);
        r.perturbations[1].ttr99_s = Some(2.0);
        assert_eq!(bands_and_marks(&r).1[0].label, "ddl-lock TTR90/99");
        // On the time charts of every section, not on the others (a latency distribution).
        let timed = |title: &str, x_kind: &'static str| {
            let mut c = Chart::new(title, "time", "s", "tps");
            c.x_kind = x_kind;
            Block::Chart(c)
        };
        let mut a = Section::new("timeline");
        a.push(timed("throughput", "time"));
        a.push(timed("hdr", "quantile"));
        let mut b = Section::new("probes");
        b.push(timed("waits", "time"));
        let mut sections = vec![a, b];
        shade(&mut sections, &r);
        let shaded: Vec<(String, usize, usize)> = sections
            .iter()
            .flat_map(|s| s.blocks.iter())
            .filter_map(|b| match b {
                Block::Chart(c) => Some((c.title.clone(), c.bands.len(), c.marks.len())),
                _ => None,
            })
            .collect();
        assert_eq!(
            shaded,
            [
                ("throughput".to_string(), 1, 1),
                ("hdr".to_string(), 0, 0),
                ("waits".to_string(), 1, 1)
            ]
        );
    }

    #[test]
    fn the_table_marks_what_was_not_judged() {
        let s = section(&rec());
        let t = s.tables().next().expect("a table");
        let cells: Vec<String> = t.rows.iter().flatten().map(Cell::text).collect();
        assert!(cells.contains(&"42501: <denied>".to_string()), "{cells:?}");
        assert!(cells.contains(&"2.00".to_string()), "{cells:?}");
        assert!(
            cells.contains(&"not recovered".to_string()),
            "TTR99 of the judged one: {cells:?}"
        );
        let mut r = rec();
        r.perturbations[1].inside = Some(SpanStats {
            p50_ms: Some(12.0),
            p99_ms: Some(85.0),
            errors_by_sqlstate: [("<57P01>".to_string(), 3)].into_iter().collect(),
            ..Default::default()
        });
        let s = section(&r);
        let t = s.tables().next().expect("a table");
        let cells: Vec<String> = t.rows[1].iter().map(Cell::text).collect();
        assert!(
            cells.contains(&"12.0/85.0".to_string()) && cells.contains(&"<57P01> 3".to_string()),
            "{cells:?}"
        );
    }
}
