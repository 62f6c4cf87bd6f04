//! `hotbench sweep --pool-size`'s document: per series, goodput and p99 at each
//! connection-pool size (and without a pooler, the baseline), the best size called out
//! against the baseline (the terminal's lines); on the page, the first run's header, goodput
//! and p99 by pool size (the run without a pooler as a dashed line), the best sizes, a table
//! of every point, then each run under its own title.

use hotbench_stats::{RunRecord, SweepDoc, SweepPoint, SweepSeries};

use crate::analysis::chart::{Chart, Series};
use crate::analysis::number::num;
use crate::analysis::section::{Cell, Section, Span, Style, Table};
use crate::analysis::sections::header;

fn size(p: &SweepPoint) -> String {
    p.pool_size
        .map(|n| n.to_string())
        .unwrap_or_else(|| "no pooler".into())
}

fn sizes(doc: &SweepDoc) -> Vec<u32> {
    let mut v: Vec<u32> = doc
        .runs
        .iter()
        .filter_map(|r| r.pooler.as_ref().and_then(|p| p.pool_size))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

pub fn sections(doc: &SweepDoc) -> Vec<Section> {
    let mut intro = Section::new("pool-sweep-intro");
    let clients = doc.runs.first().map_or(0, |r| r.bench.clients);
    let list: Vec<String> = sizes(doc).iter().map(|n| n.to_string()).collect();
    intro.paragraph(
        None,
        vec![Span::plain(format!(
            "{clients} clients through pools of {} server connections; the header below is \
             the first run's.",
            list.join(", ")
        ))],
    );
    let mut out = vec![intro];
    out.extend(doc.runs.first().map(header::section));
    let mut s = Section::new("pool-sweep");
    s.chart(by_pool_size(
        doc,
        "Goodput by pool size",
        "goodput/s",
        |p| p.goodput_per_s,
    ));
    s.chart(by_pool_size(doc, "p99 latency by pool size", "ms", |p| {
        p.p99_ms
    }));
    let labels = !doc.labels.is_empty();
    let mut rows = Vec::new();
    for series in doc.series() {
        series_lines(&mut s, &series);
        rows.extend(table_rows(&series, labels));
    }
    let mut head = vec!["pool size", "tps", "goodput/s", "p99 ms", "top wait"];
    if labels {
        head.insert(0, "variant");
    }
    s.table(Table::new("sweep", &head, rows));
    out.push(s);
    out
}

/// One series: the terminal's table and best size, the page's best size and note.
fn series_lines(s: &mut Section, series: &SweepSeries<'_>) {
    let clients = series.runs.first().map_or(0, |r| r.bench.clients);
    let label = if series.label.is_empty() {
        String::new()
    } else {
        format!("{}, ", series.label)
    };
    s.line(format!("{label}{clients} clients:"));
    s.line("pool size        tps  goodput/s     p99 ms  top wait");
    for (p, r) in series.points().iter().zip(&series.runs) {
        s.line(format!(
            "{:>9} {:>10} {:>10} {:>10}  {}",
            size(p),
            num(p.tps),
            num(p.goodput_per_s),
            num(p.p99_ms),
            r.top_wait().unwrap_or_else(|| "-".into())
        ));
    }
    let best = best_line(series.best_pool_size(), series.without_pooler());
    s.line(best.as_str());
    s.paragraph(None, vec![Span::new(Style::Strong, best)]);
    if let Some(note) = mode_note(&series.runs) {
        s.line(note.as_str());
        s.paragraph(Some("note"), vec![Span::plain(note)]);
    }
    s.line("");
}

/// A note when the run without a pooler used another query mode than the pools (a
/// scenario's `prepared` becomes `extended` behind a PgBouncer that keeps no prepared
/// statements): the comparison then includes that difference.
pub fn mode_note(runs: &[&RunRecord]) -> Option<String> {
    let direct = runs.iter().find(|r| r.pooler.is_none());
    let pooled = runs.iter().find(|r| r.pooler.is_some());
    match (direct, pooled) {
        (Some(d), Some(p)) if d.bench.query_mode != p.bench.query_mode => Some(format!(
            "note: without a pooler the query mode was {}, through the pooler {}: the \
             comparison includes that difference",
            d.bench.query_mode, p.bench.query_mode
        )),
        _ => None,
    }
}

/// `best pool size: 16 (…)`, against the run without a pooler when there is one.
pub fn best_line(best: Option<SweepPoint>, direct: Option<SweepPoint>) -> String {
    let Some(b) = best else {
        return "best pool size: none (no run went through a pooler)".into();
    };
    let mut s = format!(
        "best pool size: {} ({} goodput/s, p99 {} ms)",
        size(&b),
        num(b.goodput_per_s),
        num(b.p99_ms)
    );
    if let Some(d) = direct {
        let ratio = if d.goodput_per_s > 0.0 {
            format!("{:.2}×", b.goodput_per_s / d.goodput_per_s)
        } else {
            "–".into()
        };
        s.push_str(&format!(
            "; without a pooler {} goodput/s, p99 {} ms: {ratio} the goodput",
            num(d.goodput_per_s),
            num(d.p99_ms)
        ));
    }
    s
}

/// A figure by pool size, one line per series and its no-pooler run dashed.
pub fn by_pool_size(doc: &SweepDoc, title: &str, unit: &str, f: fn(&SweepPoint) -> f64) -> Chart {
    let mut c = Chart::new(title, "linear", "pool size", unit);
    let xs = sizes(doc);
    c.x = xs.iter().map(|&n| f64::from(n)).collect();
    for s in doc.series() {
        let pts = s.points();
        let name = |what: &str| {
            if s.label.is_empty() {
                what.to_string()
            } else {
                format!("{} {what}", s.label)
            }
        };
        c.series.push(Series::line(
            name("through the pooler"),
            xs.iter()
                .map(|&n| pts.iter().find(|p| p.pool_size == Some(n)).map(f))
                .collect(),
        ));
        if let Some(d) = s.without_pooler() {
            let mut line = Series::line(name("no pooler"), vec![Some(f(&d)); xs.len()]);
            line.dashed = true;
            c.series.push(line);
        }
    }
    c
}

fn table_rows(s: &SweepSeries<'_>, labels: bool) -> Vec<Vec<Cell>> {
    let best = s.best_pool_size().and_then(|b| b.pool_size);
    s.points()
        .iter()
        .zip(&s.runs)
        .map(|(p, r)| {
            let mut size = size(p);
            if p.pool_size.is_some() && p.pool_size == best {
                size.push_str(" (best)");
            }
            let mut row = Vec::new();
            if labels {
                row.push(Cell::from(s.label.as_str()));
            }
            row.extend([
                Cell::from(size),
                Cell::num(p.tps),
                Cell::num(p.goodput_per_s),
                Cell::num(p.p99_ms),
                Cell::from(r.top_wait().unwrap_or_else(|| "-".into())),
            ]);
            row
        })
        .collect()
}

/// Each run of the sweep with its title (`pool of 16`, `hot, no pooler`).
pub fn runs(doc: &SweepDoc) -> Vec<(String, &RunRecord)> {
    doc.runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let size = r
                .pooler
                .as_ref()
                .and_then(|p| p.pool_size)
                .map(|n| format!("pool of {n}"))
                .unwrap_or_else(|| "no pooler".into());
            let title = match doc.labels.get(i) {
                Some(l) => format!("{l}, {size}"),
                None => size,
            };
            (title, r)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hotbench_stats::{PoolerSetup, SweepAxis};

    /// No pooler, then pools of 4, 16 and 64 at 100 clients.
    pub(crate) fn pool_sweep() -> SweepDoc {
        let run = |pool: Option<u32>, goodput: f64, p99: f64| {
            let mut r = RunRecord::default();
            r.bench.clients = 100;
            r.totals.tps = goodput;
            r.totals.goodput_per_s = goodput;
            r.totals.latency.p99_ms = p99;
            r.pooler = pool.map(|n| PoolerSetup {
                kind: "pgbouncer".into(),
                pool_size: Some(n),
                ..Default::default()
            });
            r
        };
        SweepDoc::labelled(vec![
            ("update-returning".into(), run(None, 600.0, 900.0)),
            ("update-returning".into(), run(Some(4), 1500.0, 120.0)),
            ("update-returning".into(), run(Some(16), 1200.0, 150.0)),
            ("update-returning".into(), run(Some(64), 700.0, 600.0)),
        ])
        .with_axis(SweepAxis::PoolSize)
    }

    #[test]
    fn goodput_and_p99_are_charted_by_size_the_no_pooler_run_dashed() {
        let doc = pool_sweep();
        let c = by_pool_size(&doc, "g", "goodput/s", |p| p.goodput_per_s);
        assert_eq!(c.x, vec![4.0, 16.0, 64.0]);
        assert_eq!(c.series.len(), 2);
        assert_eq!(
            c.series[0].values,
            vec![Some(1500.0), Some(1200.0), Some(700.0)]
        );
        assert!(c.series[1].dashed && c.series[1].values == vec![Some(600.0); 3]);
    }

    #[test]
    fn the_best_size_and_a_query_mode_difference_are_said() {
        assert_eq!(mode_note(&pool_sweep().series()[0].runs), None);
        let mut doc = pool_sweep();
        doc.runs[0].bench.query_mode = "prepared".into();
        doc.runs[1].bench.query_mode = "extended".into();
        assert!(
            mode_note(&doc.series()[0].runs).is_some_and(|n| n.starts_with(
                "note: without a pooler the query mode was prepared, through the pooler extended"
            ))
        );
        assert_eq!(
            best_line(None, None),
            "best pool size: none (no run went through a pooler)"
        );
    }
}
