//! `hotbench compare`: several runs side by side (tps, goodput, p50/p99/p99.9, failures,
//! retries, top waits), each with its ratio to the first run, and whether the difference is
//! more than run-to-run noise. Noise is judged per metric by Welch's t-test on the runs'
//! per-interval values (tps, goodput, p50, p99 of each interval): p > 0.05 is "within noise".
//! Each metric knows which direction is better.

use std::fmt::Write as _;

use hotbench_stats::RunRecord;

use crate::escape::html;
use crate::html::{num, table, Doc};
use crate::noise::welch_p;
use crate::run_html::{hdr_chart, run_section, throughput_overlay};

const ALPHA: f64 = 0.05;
/// Fewest full intervals per run for a noise verdict.
const MIN_INTERVALS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The first run, everything is compared with it.
    Reference,
    Noise,
    Better,
    Worse,
    /// Different, without a per-interval series to test (p99.9, counts).
    Untested,
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub value: f64,
    /// Value / the first run's value.
    pub ratio: Option<f64>,
    pub p: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// The metric has a per-interval series (so a noise test is possible).
    pub tested: bool,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub names: Vec<String>,
    pub rows: Vec<Row>,
    /// Top three waits per run, when probes ran.
    pub waits: Vec<Option<String>>,
}

/// Per-interval values of full intervals (a last, partial interval is left out).
fn series(r: &RunRecord, f: fn(&hotbench_stats::IntervalStats) -> f64) -> Vec<f64> {
    let tl = &r.timeline;
    let mut widths: Vec<f64> = tl
        .iter()
        .scan(0.0, |prev, i| {
            let w = i.t - *prev;
            *prev = i.t;
            Some(w)
        })
        .collect();
    let nominal = {
        let mut w = widths.clone();
        w.sort_by(f64::total_cmp);
        w.get(w.len() / 2).copied().unwrap_or(1.0)
    };
    widths.truncate(tl.len());
    tl.iter()
        .zip(widths)
        .filter(|(_, w)| *w >= nominal * 0.5)
        .map(|(i, _)| f(&i.totals))
        .collect()
}

type Metric = (
    &'static str,
    bool,
    fn(&RunRecord) -> f64,
    Option<fn(&hotbench_stats::IntervalStats) -> f64>,
);

const METRICS: [Metric; 7] = [
    ("tps", true, |r| r.totals.tps, Some(|s| s.tps)),
    (
        "goodput/s",
        true,
        |r| r.totals.goodput_per_s,
        Some(|s| s.goodput_per_s),
    ),
    (
        "p50 ms",
        false,
        |r| r.totals.latency.p50_ms,
        Some(|s| s.lat_p50_ms),
    ),
    (
        "p99 ms",
        false,
        |r| r.totals.latency.p99_ms,
        Some(|s| s.lat_p99_ms),
    ),
    ("p99.9 ms", false, |r| r.totals.latency.p999_ms, None),
    (
        "failed",
        false,
        |r| r.totals.counters.failures() as f64,
        None,
    ),
    ("retries", false, |r| r.totals.counters.retries as f64, None),
];

pub fn compare(runs: &[(String, RunRecord)]) -> Comparison {
    let mut rows = Vec::new();
    for (metric, higher, total, per_interval) in METRICS {
        let first = runs.first().map(|(_, r)| r);
        let cells = runs
            .iter()
            .enumerate()
            .map(|(i, (_, r))| {
                let value = total(r);
                let Some(first) = first.filter(|_| i > 0) else {
                    return Cell {
                        value,
                        ratio: None,
                        p: None,
                        verdict: Verdict::Reference,
                    };
                };
                let base = total(first);
                let ratio = (base != 0.0).then(|| value / base);
                let p = per_interval.and_then(|f| {
                    let (a, b) = (series(first, f), series(r, f));
                    // Two or three intervals say nothing about noise: no verdict.
                    (a.len() >= MIN_INTERVALS && b.len() >= MIN_INTERVALS)
                        .then(|| welch_p(&a, &b))
                        .flatten()
                });
                let verdict = if value == base {
                    Verdict::Noise
                } else {
                    match p {
                        Some(p) if p > ALPHA => Verdict::Noise,
                        None => Verdict::Untested,
                        Some(_) => {
                            if (value > base) == higher {
                                Verdict::Better
                            } else {
                                Verdict::Worse
                            }
                        }
                    }
                };
                Cell {
                    value,
                    ratio,
                    p,
                    verdict,
                }
            })
            .collect();
        rows.push(Row {
            metric,
            higher_is_better: higher,
            tested: per_interval.is_some(),
            cells,
        });
    }
    let waits = runs
        .iter()
        .map(|(_, r)| {
            let p = r.probe_record()?;
            (!p.waits.is_empty()).then(|| crate::probes::top_waits(&p, 3))
        })
        .collect();
    Comparison {
        names: runs.iter().map(|(n, _)| n.clone()).collect(),
        rows,
        waits,
    }
}

fn marker(v: Verdict) -> &'static str {
    match v {
        Verdict::Reference => "",
        Verdict::Noise => " ~",
        Verdict::Better => " +",
        Verdict::Worse => " -",
        Verdict::Untested => "",
    }
}

fn cell_text(c: &Cell) -> String {
    let mut s = num(c.value);
    if let Some(r) = c.ratio {
        let _ = write!(s, " ×{r:.2}");
    }
    s.push_str(marker(c.verdict));
    s
}

/// The terminal table and the notes under it.
pub fn render_text(c: &Comparison) -> String {
    let mut header = vec!["".to_string()];
    header.extend(c.names.iter().cloned());
    let mut lines: Vec<Vec<String>> = vec![header];
    for r in &c.rows {
        let mut line = vec![format!(
            "{} {}",
            r.metric,
            if r.higher_is_better { "↑" } else { "↓" }
        )];
        line.extend(r.cells.iter().map(cell_text));
        lines.push(line);
    }
    if c.waits.iter().any(Option::is_some) {
        let mut line = vec!["top waits".to_string()];
        line.extend(
            c.waits
                .iter()
                .map(|w| w.clone().unwrap_or_else(|| "–".into())),
        );
        lines.push(line);
    }
    let ncol = lines[0].len();
    let widths: Vec<usize> = (0..ncol)
        .map(|i| {
            lines
                .iter()
                .map(|l| l.get(i).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut o = String::new();
    for l in &lines {
        let mut row = String::new();
        for (i, cell) in l.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i == 0 {
                row.push_str(cell);
                row.push_str(&" ".repeat(pad));
            } else {
                row.push_str("   ");
                row.push_str(&" ".repeat(pad));
                row.push_str(cell);
            }
        }
        o.push_str(row.trim_end());
        o.push('\n');
    }
    o.push_str(
        "↑/↓: higher/lower is better; ×: ratio to the first run; ~ within run-to-run noise, \
         + better, - worse (Welch's t-test on per-interval values, p > 0.05 is noise)\n",
    );
    for (i, name) in c.names.iter().enumerate().skip(1) {
        let mut parts = Vec::new();
        let mut short = false;
        for r in &c.rows {
            let cell = &r.cells[i];
            let Some(p) = cell.p else {
                if r.tested && cell.verdict == Verdict::Untested {
                    short = true;
                }
                continue;
            };
            let word = match cell.verdict {
                Verdict::Noise => "within noise",
                Verdict::Better => "better",
                Verdict::Worse => "worse",
                _ => continue,
            };
            parts.push(format!(
                "{} {} ({word}, p={})",
                r.metric,
                cell.ratio
                    .map(|x| format!("×{x:.2}"))
                    .unwrap_or_else(|| "–".into()),
                fmt_p(p)
            ));
        }
        if short {
            parts.push(format!(
                "too few full intervals (< {MIN_INTERVALS}) to tell differences from noise"
            ));
        }
        if !parts.is_empty() {
            let _ = writeln!(o, "{name} vs {}: {}", c.names[0], parts.join("; "));
        }
    }
    o
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// The comparison as an HTML page: the table, overlays, then each run's section.
pub fn render_html(c: &Comparison, runs: &[(String, RunRecord)]) -> String {
    let mut doc = Doc::new(&format!("hotbench compare: {}", c.names.join(" vs ")));
    doc.heading(1, "hotbench: comparison");
    let mut header: Vec<&str> = vec!["metric"];
    header.extend(c.names.iter().map(String::as_str));
    let mut rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![format!(
                "{} {}",
                html(r.metric),
                if r.higher_is_better { "↑" } else { "↓" }
            )];
            row.extend(r.cells.iter().map(|cell| {
                let class = match cell.verdict {
                    Verdict::Better => "better",
                    Verdict::Worse => "worse",
                    Verdict::Noise => "noise",
                    _ => "",
                };
                let title = cell
                    .p
                    .map(|p| format!(" title=\"p={}\"", fmt_p(p)))
                    .unwrap_or_default();
                format!(
                    "<span class=\"{class}\"{title}>{}</span>",
                    html(&cell_text(cell))
                )
            }));
            row
        })
        .collect();
    if c.waits.iter().any(Option::is_some) {
        let mut row = vec!["top waits".to_string()];
        row.extend(c.waits.iter().map(|w| html(w.as_deref().unwrap_or("–"))));
        rows.push(row);
    }
    doc.raw(&table("compare", &header, &rows));
    doc.raw(
        "<p class=\"muted\">↑/↓ higher/lower is better; × ratio to the first run; ~ within \
         run-to-run noise, + better, − worse (Welch's t-test on per-interval values, p &gt; \
         0.05 is noise).</p>\n",
    );
    let list: Vec<(&str, &RunRecord)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    doc.chart(throughput_overlay(&list, false));
    doc.chart(throughput_overlay(&list, true));
    doc.chart(hdr_chart(&list));
    for (n, r) in runs {
        run_section(&mut doc, n, r);
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::record;

    #[test]
    fn ratios_and_noise() {
        let a = record("a", 1.0, 6, 6000, 2.0);
        let b = record("b", 1.0, 6, 6000, 2.0);
        let mut c = record("c", 1.0, 6, 12000, 1.0);
        for (i, iv) in c.timeline.iter_mut().enumerate() {
            iv.totals.tps += (i % 3) as f64 * 10.0;
        }
        let runs = vec![
            ("a".to_string(), a),
            ("b".to_string(), b),
            ("c".to_string(), c),
        ];
        let cmp = compare(&runs);
        let tps = &cmp.rows[0];
        assert_eq!(tps.cells[0].verdict, Verdict::Reference);
        assert_eq!(tps.cells[1].verdict, Verdict::Noise);
        assert_eq!(tps.cells[2].verdict, Verdict::Better);
        assert!((tps.cells[2].ratio.unwrap() - 2.0).abs() < 1e-9);
        let p50 = &cmp.rows[2];
        assert_eq!(p50.metric, "p50 ms");
        let text = render_text(&cmp);
        assert!(text.contains("tps ↑"), "{text}");
        assert!(text.contains("×2.00 +"), "{text}");
        assert!(text.contains("b vs a: tps ×1.00 (within noise"), "{text}");
        let page = render_html(&cmp, &runs);
        assert!(page.contains("class=\"better\""));
        let short = compare(&[
            ("x".to_string(), record("x", 1.0, 2, 200, 1.0)),
            ("y".to_string(), record("y", 1.0, 2, 400, 1.0)),
        ]);
        assert_eq!(short.rows[0].cells[1].verdict, Verdict::Untested);
        assert!(render_text(&short).contains("y vs x: too few full intervals"));
    }
}
