//! `--perturb` in a run's HTML section: on the throughput chart, a dashed line at each
//! perturbation's baseline from its start to its recovery (TTR90, or the end of the run), and
//! a table with what each did and how the workload recovered. Pure functions of the record.

use hotbench_results::{PerturbationRecord, RunRecord};

use crate::html::chart::{Chart, Series};
use crate::html::doc::table;
use crate::html::escape::html;

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

/// The perturbations' table (empty without `--perturb`).
pub fn perturbations_table(rec: &RunRecord) -> String {
    if rec.perturbations.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = rec.perturbations.iter().map(row).collect();
    format!(
        "<h4>Perturbations</h4>\n{}",
        table(
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
            &rows
        )
    )
}

fn row(p: &PerturbationRecord) -> Vec<String> {
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
    let mut note: Vec<String> = p
        .detail
        .iter()
        .chain(p.error.iter())
        .map(|s| html(s))
        .collect();
    if p.baseline_inherited {
        note.push("baseline of the previous perturbation".into());
    }
    vec![
        format!("<code>{}</code>", html(&p.spec)),
        format!("{:.3}", p.at_s),
        f(p.end_s, 3),
        f(p.baseline_per_s, 1),
        f(p.dip_per_s, 1),
        f(p.lost, 0),
        ttr(p.ttr90_s),
        ttr(p.ttr99_s),
        p.failed.to_string(),
        p.reconnects.to_string(),
        server
            .and_then(|w| w.top_waits.first())
            .map_or("–".into(), |w| {
                format!("{} {:.0}%", html(&w.event), w.pct)
            }),
        server.map_or("–".into(), |w| w.lock_waiting_max.to_string()),
        note.join("; "),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec() -> RunRecord {
        let mut p =
            PerturbationRecord::new("2s:ddl-lock=t,1s".into(), "ddl-lock", "t,1s".into(), 2.0);
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
    fn the_table_escapes_what_the_server_said_and_marks_what_was_not_judged() {
        let t = perturbations_table(&rec());
        assert!(t.contains("42501: &lt;denied&gt;"), "{t}");
        assert!(t.contains("<td>2.00</td>") || t.contains(">2.00<"), "{t}");
        assert!(t.contains("not recovered"), "TTR99 of the judged one: {t}");
        assert_eq!(perturbations_table(&RunRecord::default()), "");
    }
}
