//! `hotbench sweep`'s document: per series, the table of client counts with the fitted
//! throughput beside the measured one and the fit in words (the terminal's lines, on the
//! page as they are), the client counts and the first run's header, measured throughput
//! against the fitted curves, a table of every point, then each run under its own title.
//! A pool-size sweep is `pool_sweep`'s.

use hotbench_stats::{RunRecord, SweepDoc};

use crate::analysis::chart::Chart;
use crate::analysis::documents::usl::{fit_chart, fit_lines, Curve};
use crate::analysis::number::num;
use crate::analysis::section::{Cell, Section, Span, Table};
use crate::analysis::sections::header;
use crate::analysis::sweep::fit;
use crate::analysis::usl::UslFit;
use crate::analysis::usl_input::PointSeries;

pub fn sections(doc: &SweepDoc) -> Vec<Section> {
    let mut intro = Section::new("sweep-intro");
    let mut counts: Vec<usize> = doc.runs.iter().map(|r| r.bench.clients).collect();
    counts.sort_unstable();
    counts.dedup();
    let counts: Vec<String> = counts.iter().map(|n| n.to_string()).collect();
    intro.paragraph(
        None,
        vec![Span::plain(format!(
            "Client counts {}; the header below is the first run's.",
            counts.join(", ")
        ))],
    );
    let mut list = vec![intro];
    list.extend(doc.runs.first().map(header::section));
    let mut s = Section::new("sweep");
    s.chart(usl_chart(doc));
    for series in doc.series() {
        if !series.label.is_empty() {
            s.line(format!("{}:", series.label));
        }
        let fit = fit(&series);
        s.line("clients        tps  goodput/s     p99 ms   fitted tps");
        for p in series.points() {
            let fitted = fit
                .as_ref()
                .map(|f| num(f.throughput(p.clients as f64)))
                .unwrap_or_else(|_| "–".into());
            s.line(format!(
                "{:>7} {:>10} {:>10} {:>10} {:>12}",
                p.clients,
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                fitted
            ));
        }
        match fit {
            Ok(f) => {
                let max_n = series
                    .runs
                    .iter()
                    .map(|r| r.bench.clients)
                    .max()
                    .unwrap_or(1);
                for (i, l) in fit_lines(&f, max_n as f64).into_iter().enumerate() {
                    s.line(if i == 0 { format!("USL fit: {l}") } else { l });
                }
            }
            Err(e) => s.line(format!("no USL fit: {e}")),
        }
        s.line("");
    }
    s.lines_as_pre();
    s.table(points_table(doc));
    list.push(s);
    list
}

/// Each run of the sweep with its title (`16 clients`, `hot, 16 clients`).
pub fn runs(doc: &SweepDoc) -> Vec<(String, &RunRecord)> {
    doc.runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let title = match doc.labels.get(i) {
                Some(l) => format!("{l}, {} clients", r.bench.clients),
                None => format!("{} clients", r.bench.clients),
            };
            (title, r)
        })
        .collect()
}

/// Every point, with its series' fitted throughput.
fn points_table(doc: &SweepDoc) -> Table {
    let labels = !doc.labels.is_empty();
    let mut rows = Vec::new();
    for series in doc.series() {
        let fit = fit(&series).ok();
        for p in series.points() {
            let mut row = Vec::new();
            if labels {
                row.push(Cell::from(series.label.as_str()));
            }
            row.extend([
                Cell::from(p.clients.to_string()),
                Cell::num(p.tps),
                Cell::num(p.goodput_per_s),
                Cell::num(p.p99_ms),
                fit.map(|f| Cell::num(f.throughput(p.clients as f64)))
                    .unwrap_or_default(),
            ]);
            rows.push(row);
        }
    }
    let mut head = vec!["clients", "tps", "goodput/s", "p99 ms", "fitted tps"];
    if labels {
        head.insert(0, "variant");
    }
    Table::new("sweep", &head, rows)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sweep::tests::{labelled_sweep, sweep};

    #[test]
    fn the_chart_draws_each_series_and_its_fit() {
        assert!(usl_chart(&sweep()).has_data());
        assert_eq!(usl_chart(&labelled_sweep()).series.len(), 4);
    }
}
