//! `hotbench sweep`: the same workload at several client counts, and the Universal
//! Scalability Law fitted to the measured throughput. The sweep document
//! (`hotbench_stats::SweepDoc`) keeps every run's full record; text and HTML render from it.

use std::fmt::Write as _;

use hotbench_stats::{SweepDoc, SweepSeries};

use crate::escape::html;
use crate::html::{num, table, Chart, Doc};
use crate::run_html::{header, run_section};
use crate::usl::{self, UslFit};
use crate::usl_input::PointSeries;
use crate::usl_report::{fit_chart, fit_lines, Curve};

/// The USL fitted to a series' tps by client count.
pub fn fit(series: &SweepSeries<'_>) -> Result<UslFit, usl::UslError> {
    let pts: Vec<(f64, f64)> = series
        .points()
        .iter()
        .map(|p| (p.clients as f64, p.tps))
        .collect();
    usl::fit(&pts)
}

/// The first series' fit (the only one for a plain workload).
pub fn first_fit(doc: &SweepDoc) -> Result<UslFit, usl::UslError> {
    match doc.series().first() {
        Some(s) => fit(s),
        None => Err(usl::UslError::TooFewPoints(0)),
    }
}

/// The sweep table and fit, for the terminal.
pub fn render_text(doc: &SweepDoc) -> String {
    let mut o = String::new();
    for series in doc.series() {
        if !series.label.is_empty() {
            let _ = writeln!(o, "{}:", series.label);
        }
        let fit = fit(&series);
        o.push_str("clients        tps  goodput/s     p99 ms   fitted tps\n");
        for p in series.points() {
            let fitted = fit
                .as_ref()
                .map(|f| num(f.throughput(p.clients as f64)))
                .unwrap_or_else(|_| "–".into());
            let _ = writeln!(
                o,
                "{:>7} {:>10} {:>10} {:>10} {:>12}",
                p.clients,
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                fitted
            );
        }
        match fit {
            Ok(f) => {
                let max_n = series
                    .runs
                    .iter()
                    .map(|r| r.bench.clients)
                    .max()
                    .unwrap_or(1);
                o.push_str("USL fit: ");
                o.push_str(&fit_lines(&f, max_n as f64));
            }
            Err(e) => {
                let _ = writeln!(o, "no USL fit: {e}");
            }
        }
        o.push('\n');
    }
    o
}

/// Measured throughput (points) against the fitted curves.
pub fn usl_chart(doc: &SweepDoc) -> Chart {
    let all = doc.series();
    let data: Vec<PointSeries> = all
        .iter()
        .map(|s| PointSeries {
            label: s.label.clone(),
            points: s
                .points()
                .iter()
                .map(|p| (p.clients as f64, p.tps))
                .collect(),
        })
        .collect();
    let fits: Vec<Option<UslFit>> = all.iter().map(|s| fit(s).ok()).collect();
    let list: Vec<Curve<'_>> = data
        .iter()
        .zip(&fits)
        .map(|(s, f)| Curve {
            label: &s.label,
            points: &s.points,
            fit: f.as_ref(),
        })
        .collect();
    fit_chart("Throughput by clients: measured vs USL fit", "tps", &list)
}

/// The sweep's HTML page.
pub fn render_html(doc: &SweepDoc) -> String {
    let mut page = Doc::new("hotbench sweep");
    page.heading(1, "hotbench: concurrency sweep");
    let mut counts: Vec<usize> = doc.runs.iter().map(|r| r.bench.clients).collect();
    counts.sort_unstable();
    counts.dedup();
    let counts: Vec<String> = counts.iter().map(|n| n.to_string()).collect();
    page.raw(&format!(
        "<p>Client counts {}; the header below is the first run's.</p>\n",
        html(&counts.join(", "))
    ));
    if let Some(r) = doc.runs.first() {
        page.raw(&header(r));
    }
    page.chart(usl_chart(doc));
    page.raw(&format!("<pre>{}</pre>\n", html(&render_text(doc))));
    let labels = !doc.labels.is_empty();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for series in doc.series() {
        let fit = fit(&series).ok();
        for p in series.points() {
            let mut row = Vec::new();
            if labels {
                row.push(html(&series.label));
            }
            row.extend([
                p.clients.to_string(),
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                fit.map(|f| num(f.throughput(p.clients as f64)))
                    .unwrap_or_default(),
            ]);
            rows.push(row);
        }
    }
    let mut head = vec!["clients", "tps", "goodput/s", "p99 ms", "fitted tps"];
    if labels {
        head.insert(0, "variant");
    }
    page.raw(&table("sweep", &head, &rows));
    for (i, r) in doc.runs.iter().enumerate() {
        let title = match doc.labels.get(i) {
            Some(l) => format!("{l}, {} clients", r.bench.clients),
            None => format!("{} clients", r.bench.clients),
        };
        run_section(&mut page, &title, r);
    }
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::record;
    use hotbench_stats::RunRecord;

    #[test]
    fn sweep_renders_fit_and_chart() {
        let runs: Vec<RunRecord> = [1usize, 2, 4, 8]
            .iter()
            .map(|&n| {
                let x = 100.0 * n as f64 / (1.0 + 0.1 * (n as f64 - 1.0));
                let mut r = record("s", 1.0, 2, (x * 2.0) as u64, 1.0);
                r.bench.clients = n;
                r
            })
            .collect();
        let doc = SweepDoc::new(runs);
        let f = first_fit(&doc).unwrap();
        assert!((f.sigma - 0.1).abs() < 0.02, "{f:?}");
        let text = render_text(&doc);
        assert!(text.contains("USL fit: σ (contention) = "), "{text}");
        assert!(text.contains("peak: "), "{text}");
        let c = usl_chart(&doc);
        assert!(c.has_data());
        let page = render_html(&doc);
        assert!(page.contains("concurrency sweep"));
    }

    #[test]
    fn labelled_series_are_fitted_separately() {
        let mut runs = Vec::new();
        for (label, sigma) in [("hot", 0.3), ("spread", 0.01)] {
            for n in [1usize, 2, 4, 8, 16] {
                let x = 100.0 * n as f64 / (1.0 + sigma * (n as f64 - 1.0));
                let mut r = record("s", 1.0, 2, (x * 2.0) as u64, 1.0);
                r.bench.clients = n;
                runs.push((label.to_string(), r));
            }
        }
        let doc = SweepDoc::labelled(runs);
        let fits: Vec<(String, f64)> = doc
            .series()
            .iter()
            .map(|s| (s.label.clone(), fit(s).unwrap().sigma))
            .collect();
        assert_eq!(fits[0].0, "hot");
        assert!(fits[0].1 > 0.25 && fits[1].1 < 0.05, "{fits:?}");
        let text = render_text(&doc);
        assert!(text.starts_with("hot:\n"), "{text}");
        assert!(text.contains("\nspread:\n"), "{text}");
        let json = serde_json::to_string(&doc).unwrap();
        let back: SweepDoc = serde_json::from_str(&json).unwrap();
        assert_eq!(back.series().len(), 2);
        assert!(usl_chart(&doc).series.len() == 4);
    }
}
