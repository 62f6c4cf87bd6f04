//! `hotbench sweep --html`: measured throughput against the fitted curves, the table, then
//! every run's own section.

use hotbench_results::SweepDoc;

use crate::analysis::sweep::fit;
use crate::analysis::usl::UslFit;
use crate::analysis::usl_input::PointSeries;
use crate::html::chart::Chart;
use crate::html::doc::{table, Doc};
use crate::html::escape::html;
use crate::html::run::{header, run_section};
use crate::html::usl::{fit_chart, Curve};
use crate::text::number::num;
use crate::text::sweep::render_text;

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

/// The sweep's HTML page (a pool-size sweep's own page instead).
pub fn render_html(doc: &SweepDoc) -> String {
    if doc.axis == hotbench_results::SweepAxis::PoolSize {
        return crate::html::pool_sweep::render_pool_html(doc);
    }
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
    use crate::analysis::sweep::tests::{labelled_sweep, sweep};

    #[test]
    fn sweep_page_has_the_chart() {
        let doc = sweep();
        assert!(usl_chart(&doc).has_data());
        assert!(render_html(&doc).contains("concurrency sweep"));
        assert_eq!(usl_chart(&labelled_sweep()).series.len(), 4);
    }
}
