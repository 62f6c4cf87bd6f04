//! `hotbench sweep --pool-size --html`: goodput and p99 by connection-pool size (the run
//! without a pooler as a dashed line), the table with the best size called out, then every
//! run's own section.

use hotbench_results::{SweepDoc, SweepSeries};

use crate::html::chart::{Chart, Series};
use crate::html::doc::{table, Doc};
use crate::html::escape::html;
use crate::html::run::{header, run_section};
use crate::text::number::num;
use crate::text::pool_sweep::{best_line, mode_note};

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

/// A figure by pool size, one line per series and its no-pooler run dashed.
pub fn by_pool_size(
    doc: &SweepDoc,
    title: &str,
    unit: &str,
    f: fn(&hotbench_results::SweepPoint) -> f64,
) -> Chart {
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

fn rows(s: &SweepSeries<'_>, labels: bool) -> Vec<Vec<String>> {
    let best = s.best_pool_size().and_then(|b| b.pool_size);
    s.points()
        .iter()
        .zip(&s.runs)
        .map(|(p, r)| {
            let mut size = p
                .pool_size
                .map(|n| n.to_string())
                .unwrap_or_else(|| "no pooler".into());
            if p.pool_size.is_some() && p.pool_size == best {
                size.push_str(" (best)");
            }
            let mut row = Vec::new();
            if labels {
                row.push(html(&s.label));
            }
            row.extend([
                html(&size),
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                html(&r.top_wait().unwrap_or_else(|| "-".into())),
            ]);
            row
        })
        .collect()
}

/// The pool-size sweep's HTML page.
pub fn render_pool_html(doc: &SweepDoc) -> String {
    let mut page = Doc::new("hotbench pool-size sweep");
    page.heading(1, "hotbench: connection-pool size sweep");
    let clients = doc.runs.first().map_or(0, |r| r.bench.clients);
    page.raw(&format!(
        "<p>{clients} clients through pools of {} server connections; the header below is \
         the first run's.</p>\n",
        html(
            &sizes(doc)
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    ));
    if let Some(r) = doc.runs.first() {
        page.raw(&header(r));
    }
    page.chart(by_pool_size(
        doc,
        "Goodput by pool size",
        "goodput/s",
        |p| p.goodput_per_s,
    ));
    page.chart(by_pool_size(doc, "p99 latency by pool size", "ms", |p| {
        p.p99_ms
    }));
    let labels = !doc.labels.is_empty();
    let mut all = Vec::new();
    for s in doc.series() {
        page.raw(&format!(
            "<p><b>{}</b></p>\n",
            html(best_line(s.best_pool_size(), s.without_pooler()).trim_end())
        ));
        let note = mode_note(&s.runs);
        if !note.is_empty() {
            page.raw(&format!(
                "<p class=\"note\">{}</p>\n",
                html(note.trim_end())
            ));
        }
        all.extend(rows(&s, labels));
    }
    let mut head = vec!["pool size", "tps", "goodput/s", "p99 ms", "top wait"];
    if labels {
        head.insert(0, "variant");
    }
    page.raw(&table("sweep", &head, &all));
    for (i, r) in doc.runs.iter().enumerate() {
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
        run_section(&mut page, &title, r);
    }
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::pool_sweep::tests::pool_sweep;

    #[test]
    fn the_page_charts_goodput_and_p99_by_size_and_names_the_best() {
        let doc = pool_sweep();
        let c = by_pool_size(&doc, "g", "goodput/s", |p| p.goodput_per_s);
        assert_eq!(c.x, vec![4.0, 16.0, 64.0]);
        assert_eq!(c.series.len(), 2);
        assert_eq!(
            c.series[0].values,
            vec![Some(1500.0), Some(1200.0), Some(700.0)]
        );
        assert!(c.series[1].dashed && c.series[1].values == vec![Some(600.0); 3]);
        let page = render_pool_html(&doc);
        assert!(page.contains("connection-pool size sweep"), "page title");
        assert!(page.contains("<td>4 (best)</td>"));
        assert!(page.contains("best pool size: 4 (1500 goodput/s"));
    }
}
