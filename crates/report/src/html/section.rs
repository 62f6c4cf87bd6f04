//! The section model (`analysis::section`) as HTML: facts as a definition list, tables,
//! bars as inline SVG, charts placed on the page, paragraphs and headings, every text
//! escaped here. The terminal's lines are not shown (a section's tables and charts say the
//! same). A run's sections draw their charts together (see [`run_sections`]).

use crate::analysis::section::{Block, Cell, Paragraph, Section, Span, Style, Table};
use crate::html::bars;
use crate::html::doc::{facts, table, Doc};
use crate::html::escape::html;

/// One span as markup.
pub fn span(s: &Span) -> String {
    let text = html(&s.text);
    let title = s
        .title
        .as_ref()
        .map(|t| format!(" title=\"{}\"", html(t)))
        .unwrap_or_default();
    match s.style {
        Style::Plain if title.is_empty() => text,
        Style::Plain => format!("<span{title}>{text}</span>"),
        Style::Class(c) => format!("<span class=\"{}\"{title}>{text}</span>", html(c)),
        Style::Code => format!("<code>{text}</code>"),
        Style::Sql => format!("<code class=\"sql\">{text}</code>"),
        Style::Strong => format!("<b>{text}</b>"),
    }
}

pub fn cell(c: &Cell) -> String {
    c.0.iter().map(span).collect()
}

/// A table, with its title as an `<h4>` above it.
pub fn table_html(t: &Table) -> String {
    let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(cell).collect())
        .collect();
    let mut o = t
        .title
        .as_ref()
        .map(|h| format!("<h4>{}</h4>\n", html(h)))
        .unwrap_or_default();
    o.push_str(&table(t.class, &header, &rows));
    o
}

fn paragraph(p: &Paragraph) -> String {
    let class = p
        .class
        .map(|c| format!(" class=\"{}\"", html(c)))
        .unwrap_or_default();
    format!(
        "<p{class}>{}</p>\n",
        p.spans.iter().map(span).collect::<String>()
    )
}

fn kpis(list: &[(String, String)]) -> String {
    let mut o = String::from("<div class=\"kpis\">");
    for (value, label) in list {
        o.push_str(&format!(
            "<div class=\"kpi\"><b>{}</b><span>{}</span></div>",
            html(value),
            html(label)
        ));
    }
    o.push_str("</div>\n");
    o
}

/// Places one block on the page.
pub fn block(doc: &mut Doc, b: &Block) {
    match b {
        Block::Line(_) => {}
        Block::Facts(pairs) => {
            let pairs: Vec<(&str, String)> =
                pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            doc.raw(&facts(&pairs));
        }
        Block::Kpis(list) => doc.raw(&kpis(list)),
        Block::Heading { level, text } => doc.heading(*level, text),
        Block::Paragraph(p) => doc.raw(&paragraph(p)),
        Block::Pre { class, code, text } => {
            let class = class
                .map(|c| format!(" class=\"{}\"", html(c)))
                .unwrap_or_default();
            let text = if *code {
                format!("<code>{}</code>", html(text))
            } else {
                html(text)
            };
            doc.raw(&format!("<pre{class}>{text}</pre>\n"));
        }
        Block::Table(t) => doc.raw(&table_html(t)),
        Block::Bars(b) => doc.raw(&bars::svg(b)),
        Block::Chart(c) => doc.chart(c.clone()),
    }
}

/// Every block of `sections`, in order; a framed section as a `<section>` of its own.
pub fn sections(doc: &mut Doc, sections: &[Section]) {
    for s in sections {
        if let Some(f) = &s.frame {
            let kind = f
                .kind
                .as_ref()
                .map(|k| format!(" data-kind=\"{}\"", html(k)))
                .unwrap_or_default();
            doc.raw(&format!("<section class=\"{}\"{kind}>\n", html(f.class)));
        }
        for b in &s.blocks {
            block(doc, b);
        }
        if s.frame.is_some() {
            doc.raw("</section>\n");
        }
    }
}

/// A page of its own: `title`, an `<h1>` and the sections.
pub fn page(title: &str, heading: &str, list: &[Section]) -> String {
    let mut doc = Doc::new(title);
    doc.heading(1, heading);
    sections(&mut doc, list);
    doc.finish()
}

/// A run's sections: in order, except that every chart is drawn where the first one stands
/// (the charts over time sit together, one under the other, on the same time axis).
pub fn run_sections(doc: &mut Doc, sections: &[Section]) {
    let all = || sections.iter().flat_map(|s| &s.blocks);
    let mut charts_drawn = false;
    for b in all() {
        match b {
            Block::Chart(_) if charts_drawn => {}
            Block::Chart(_) => {
                for c in all().filter(|b| matches!(b, Block::Chart(_))) {
                    block(doc, c);
                }
                charts_drawn = true;
            }
            other => block(doc, other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sections::{keys, perturbations, pooler};
    use hotbench_stats::hot_keys::HotKeyRecord;
    use hotbench_stats::probe_record::{HotRow, ProbeRecord};

    /// A section's markup (the page's body between its shell).
    fn markup(s: Section) -> String {
        let mut doc = Doc::new("t");
        sections(&mut doc, &[s]);
        let page = doc.finish();
        let start = page.find("<main>\n").expect("main") + "<main>\n".len();
        let end = page.find("<footer>").expect("footer");
        page[start..end].to_string()
    }

    #[test]
    fn keys_and_rows_are_charted_tabled_and_escaped() {
        let mut rec = hotbench_stats::testdata::record("r", 1.0, 2, 100, 2.0);
        assert_eq!(markup(keys::section(&rec)), "");
        rec.hot_keys = vec![HotKeyRecord {
            variable: "c".into(),
            value: "<1>".into(),
            attempts: 40,
            committed: 39,
            time_share: 0.62,
            ..Default::default()
        }];
        let probes = ProbeRecord {
            hot_rows: vec![HotRow {
                relation: "acct".into(),
                key: "id=<1>".into(),
                count: 9,
                pct: 75.0,
            }],
            ..Default::default()
        };
        rec.probes = Some(probes);
        let h = markup(keys::section(&rec));
        assert!(h.contains("<svg class=\"bars\""), "{h}");
        assert!(h.contains("c=&lt;1&gt;") && !h.contains("<1>"), "{h}");
        assert!(h.contains("62.0%"), "{h}");
        assert!(h.contains("id=&lt;1&gt;") && h.contains("75%"), "{h}");
        assert!(!h.contains("hot-key-zipf"), "{h}");
        rec.hot_key_zipf = vec![hotbench_stats::zipf::ZipfShare {
            variable: "k".into(),
            lo: 1,
            hi: 100,
            s: 1.5,
            k: 10,
            predicted_share: 0.8123,
            observed_share: 0.8011,
            transactions: 9,
            approximate: false,
        }];
        let h = markup(keys::section(&rec));
        assert!(h.contains("random_zipfian(1, 100, 1.5)"), "{h}");
        assert!(h.contains("80.1%") && h.contains("81.2%"), "{h}");
    }

    #[test]
    fn the_pooler_is_escaped_and_a_direct_run_has_no_pooler_markup() {
        let rec = hotbench_stats::RunRecord {
            pooler: Some(hotbench_stats::PoolerSetup {
                kind: "pgbouncer".into(),
                version: "1.18.0<".into(),
                pool_mode: "transaction".into(),
                pool_size: Some(10),
                started_by_hotbench: true,
            }),
            probes: Some(ProbeRecord {
                pooler: Some(hotbench_stats::PoolerSummary {
                    samples: 30,
                    wait_pct: 89.0,
                    times: hotbench_stats::PoolerTimes {
                        avg_wait_ms: Some(44.0),
                        ..Default::default()
                    },
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let h = markup(pooler::section(&rec));
        assert!(
            h.contains(
                "<h4>Connection pooler</h4>\n<p>PgBouncer 1.18.0&lt;, transaction pool of 10</p>"
            ),
            "{h}"
        );
        assert!(
            h.contains("<td>89%</td>") && h.contains("<td>44</td>"),
            "{h}"
        );
        let direct = hotbench_stats::RunRecord {
            probes: Some(ProbeRecord::default()),
            ..Default::default()
        };
        assert_eq!(markup(pooler::section(&direct)), "");
    }

    #[test]
    fn the_perturbations_table_escapes_what_the_server_said() {
        let mut failed = hotbench_stats::PerturbationRecord::new(
            "1s:checkpoint".into(),
            "checkpoint",
            "".into(),
            1.0,
        );
        failed.error = Some("42501: <denied>".into());
        let rec = hotbench_stats::RunRecord {
            perturbations: vec![failed],
            ..Default::default()
        };
        let h = markup(perturbations::section(&rec));
        assert!(
            h.starts_with("<h4>Perturbations</h4>\n<table class=\"perturbations\">"),
            "{h}"
        );
        assert!(h.contains("<td><code>1s:checkpoint</code></td>"), "{h}");
        assert!(
            h.contains("42501: &lt;denied&gt;") && !h.contains("<denied>"),
            "{h}"
        );
    }

    #[test]
    fn a_runs_charts_are_drawn_together_where_the_first_stands() {
        use crate::analysis::chart::{Chart, Series};
        let chart = |title: &str| {
            let mut c = Chart::new(title, "time", "s", "x");
            c.x = vec![1.0];
            c.series.push(Series::line("a", vec![Some(1.0)]));
            c
        };
        let mut a = Section::new("a");
        a.table(Table::new("first", &["x"], vec![]));
        a.chart(chart("one"));
        let mut b = Section::new("b");
        b.table(Table::new("second", &["x"], vec![]));
        b.chart(chart("two"));
        let mut doc = Doc::new("t");
        run_sections(&mut doc, &[a, b]);
        let page = doc.finish();
        let at = |what: &str| page.find(what).unwrap_or_else(|| panic!("{what}: {page}"));
        assert!(at("class=\"first\"") < at("id=\"chart0\""));
        assert!(at("id=\"chart0\"") < at("id=\"chart1\""));
        assert!(at("id=\"chart1\"") < at("class=\"second\""));
    }
}
