//! `--perturb` firings: what was done and when, then the baseline, the dip, the work lost
//! and the times to recover (or why there are none). The terminal gets one line per firing;
//! the page a table, and on the throughput chart ([`mark`]) a dashed line at each
//! perturbation's baseline from its start to its recovery (TTR90, or the end of the run).
//! Text a server or a file controls is escaped for the terminal here (the page escapes its
//! own).

use std::fmt::Write;

use hotbench_stats::{PerturbationRecord, RecoveryRule, RunRecord};

use crate::analysis::chart::{Chart, Series};
use crate::analysis::section::{Cell, Section, Table};

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
    if let Some(w) = &p.server {
        if let Some(top) = w.top_waits.first() {
            let _ = write!(o, "; server: top wait {} {:.0}%", safe(&top.event), top.pct);
            if w.lock_waiting_max > 0 {
                let _ = write!(o, ", lock queue up to {}", w.lock_waiting_max);
            }
        }
    }
    o
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
        p.server = Some(hotbench_stats::perturbation_record::ServerWindow {
            top_waits: vec![hotbench_stats::probe_record::WaitShare {
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
    }
}
