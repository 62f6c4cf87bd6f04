//! `--perturb` in a run's HTML section: every timeline chart of the section shades each
//! perturbation's action (its start to its end) and marks its TTR90/TTR99 points; the
//! throughput chart also has a dashed line at each baseline from its start to its recovery
//! (TTR90, or the end of the run); a table says what each did, how the workload recovered,
//! and what the clients saw in its window against the rest of the run. Pure functions of the
//! record.

use hotbench_stats::{PerturbationRecord, RunRecord};

use crate::html::chart::{Band, Chart, Mark, Series};
use crate::html::doc::{table, Doc};
use crate::html::escape::html;

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

/// Shades the perturbations of `rec` on the time charts placed since chart `first` (the run
/// section's).
pub fn shade(doc: &mut Doc, first: usize, rec: &RunRecord) {
    let (bands, marks) = bands_and_marks(rec);
    if !bands.is_empty() {
        doc.shade_since(first, &bands, &marks);
    }
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
                "p50/p99 ms in window",
                "outside",
                "errors in window",
                "backlog drained s",
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
        latency(p.inside.as_ref()),
        latency(p.outside.as_ref()),
        p.inside.as_ref().map_or("–".into(), |w| {
            let mut e: Vec<(&String, &u64)> = w.errors_by_sqlstate.iter().collect();
            e.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let list: Vec<String> = e.iter().map(|(c, n)| format!("{} {n}", html(c))).collect();
            if list.is_empty() {
                "none".into()
            } else {
                list.join(", ")
            }
        }),
        p.backlog.as_ref().map_or("–".into(), |b| {
            b.drained_s.map_or("not drained".into(), |t| {
                format!("{t:.1} (peak {:.0})", b.peak)
            })
        }),
        note.join("; "),
    ]
}

/// `p50/p99` of a span, ms (`–` where the timeline kept no latency).
fn latency(s: Option<&hotbench_stats::perturbation_window::SpanStats>) -> String {
    let ms = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
    s.filter(|s| s.p50_ms.is_some()).map_or("–".into(), |s| {
        format!("{}/{}", ms(s.p50_ms), ms(s.p99_ms))
    })
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
        // On the section's time charts only, not on charts placed before it or on others.
        let mut doc = Doc::new("t");
        let timed = |title: &str| {
            let mut c = Chart::new(title, "time", "s", "tps");
            c.x = vec![1.0, 2.0];
            c.series
                .push(Series::line("tps", vec![Some(1.0), Some(2.0)]));
            c
        };
        doc.chart(timed("before"));
        let first = doc.chart_count();
        doc.chart(timed("throughput"));
        let mut hdr = timed("hdr");
        hdr.x_kind = "quantile";
        doc.chart(hdr);
        shade(&mut doc, first, &r);
        let page = doc.finish();
        let data = page
            .split("id=\"hotbench-data\"")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        assert_eq!(data.matches("\"bands\"").count(), 1, "{data}");
        assert_eq!(data.matches("TTR90/99").count(), 1, "{data}");
    }

    #[test]
    fn the_table_escapes_what_the_server_said_and_marks_what_was_not_judged() {
        let t = perturbations_table(&rec());
        assert!(t.contains("42501: &lt;denied&gt;"), "{t}");
        assert!(t.contains("<td>2.00</td>") || t.contains(">2.00<"), "{t}");
        assert!(t.contains("not recovered"), "TTR99 of the judged one: {t}");
        let mut r = rec();
        r.perturbations[1].inside = Some(hotbench_stats::perturbation_window::SpanStats {
            p50_ms: Some(12.0),
            p99_ms: Some(85.0),
            errors_by_sqlstate: [("<57P01>".to_string(), 3)].into_iter().collect(),
            ..Default::default()
        });
        let t = perturbations_table(&r);
        assert!(
            t.contains(">12.0/85.0<") && t.contains("&lt;57P01&gt; 3"),
            "{t}"
        );
        assert_eq!(perturbations_table(&RunRecord::default()), "");
    }
}
