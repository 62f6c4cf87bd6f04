//! The HTML page shell: one self-contained file (uPlot's JS and CSS, the page's own script
//! and style, and the data, all inline: it opens offline, from a mail attachment, years
//! later). Sections are written as escaped markup by the renderers; charts are declared as
//! data ([`Chart`]) and drawn by `assets/report.js`, which reports on `<pre id="status">`
//! and `<html data-ready>` when every chart has drawn (the browser test reads that).

use crate::analysis::chart::Chart;
use crate::html::downsample::downsample;
use crate::html::escape::{html, script_json};
use std::collections::BTreeMap;

const UPLOT_JS: &str = include_str!("../../assets/uPlot.iife.min.js");

const UPLOT_CSS: &str = include_str!("../../assets/uPlot.min.css");

const REPORT_JS: &str = include_str!("../../assets/report.js");

const REPORT_CSS: &str = include_str!("../../assets/report.css");

/// A page being written: escaped markup plus the charts it places.
pub struct Doc {
    title: String,
    body: String,
    charts: Vec<Chart>,
    /// Label → colour for charts coloured by label, in order of first appearance.
    label_colours: BTreeMap<String, &'static str>,
}

/// Colours of labelled series (wait events), distinct for the first dozen labels of a page.
const LABEL_PALETTE: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939",
];

impl Doc {
    pub fn new(title: &str) -> Doc {
        Doc {
            title: title.to_string(),
            body: String::new(),
            charts: Vec::new(),
            label_colours: BTreeMap::new(),
        }
    }

    /// Appends markup the caller has already escaped.
    pub fn raw(&mut self, markup: &str) {
        self.body.push_str(markup);
    }

    /// A heading of `level` (2–4) with escaped text.
    pub fn heading(&mut self, level: u8, text: &str) {
        let l = level.clamp(1, 6);
        self.body
            .push_str(&format!("<h{l}>{}</h{l}>\n", html(text)));
    }

    /// Places `chart` here, when it has data to draw (else nothing).
    pub fn chart(&mut self, mut chart: Chart) {
        if !chart.has_data() {
            return;
        }
        downsample(&mut chart);
        if chart.colour_by_label {
            for s in &mut chart.series {
                let next = LABEL_PALETTE[self.label_colours.len() % LABEL_PALETTE.len()];
                let c = *self.label_colours.entry(s.label.clone()).or_insert(next);
                s.color = Some(c.to_string());
            }
        }
        let id = self.charts.len();
        self.body.push_str(&format!(
            "<div class=\"chart\" id=\"chart{id}\" data-chart=\"{id}\"></div>\n"
        ));
        self.charts.push(chart);
    }

    pub fn chart_count(&self) -> usize {
        self.charts.len()
    }

    /// The complete page.
    pub fn finish(self) -> String {
        let mut o = String::with_capacity(UPLOT_JS.len() + self.body.len() + 64 * 1024);
        o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        o.push_str(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n",
        );
        o.push_str(&format!("<title>{}</title>\n", html(&self.title)));
        o.push_str("<style>\n");
        o.push_str(UPLOT_CSS);
        o.push('\n');
        o.push_str(REPORT_CSS);
        o.push_str("\n</style>\n</head>\n<body>\n<main>\n");
        o.push_str(&self.body);
        o.push_str("<footer>hotbench ".to_string().as_str());
        o.push_str(&html(env!("CARGO_PKG_VERSION")));
        o.push_str(
            " · charts by uPlot (MIT) · <pre id=\"status\">loading</pre></footer>\n</main>\n",
        );
        o.push_str("<script id=\"hotbench-data\" type=\"application/json\">");
        o.push_str(&script_json(&self.charts));
        o.push_str("</script>\n<script>\n");
        o.push_str(UPLOT_JS);
        o.push_str("\n</script>\n<script>\n");
        o.push_str(REPORT_JS);
        o.push_str("\n</script>\n</body>\n</html>\n");
        o
    }
}

/// `<table>` from a header and rows of already-escaped cells.
pub fn table(class: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    let mut o = format!("<table class=\"{}\">\n<thead><tr>", html(class));
    for h in header {
        o.push_str(&format!("<th>{}</th>", html(h)));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            o.push_str(&format!("<td>{c}</td>"));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    o
}

/// A definition list (`<dl>`) of escaped name/value pairs.
pub fn facts(pairs: &[(&str, String)]) -> String {
    let mut o = String::from("<dl class=\"facts\">\n");
    for (k, v) in pairs {
        o.push_str(&format!("<dt>{}</dt><dd>{}</dd>\n", html(k), html(v)));
    }
    o.push_str("</dl>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::chart::Series;

    #[test]
    fn page_is_self_contained_and_escapes_title_and_chart_text() {
        let mut d = Doc::new("<b>t</b>");
        let mut c = Chart::new("</script><script>alert(1)</script>", "time", "s", "tps");
        c.x = vec![1.0, 2.0];
        c.series.push(Series::line("x", vec![Some(1.0), None]));
        d.chart(c);
        let empty = Chart::new("empty", "time", "s", "tps");
        d.chart(empty);
        assert_eq!(d.chart_count(), 1);
        let page = d.finish();
        assert!(page.contains("<title>&lt;b&gt;t&lt;/b&gt;</title>"));
        assert!(!page.contains("alert(1)</script>"));
        assert!(!page.contains("http://") || !page.contains("src=\"http"));
        assert!(!page.contains("<script src"));
        assert_eq!(page.matches("<script").count(), 3);
    }

    #[test]
    fn a_label_keeps_its_colour_across_charts() {
        let mut d = Doc::new("t");
        let chart = |labels: &[&str]| {
            let mut c = Chart::new("waits", "time", "s", "backends");
            c.colour_by_label = true;
            c.x = vec![1.0];
            for l in labels {
                c.series.push(Series::line(*l, vec![Some(1.0)]));
            }
            c
        };
        d.chart(chart(&["Lock:tuple", "IO:WALSync"]));
        d.chart(chart(&["IO:WALSync", "Lock:transactionid", "Lock:tuple"]));
        let colour = |chart: usize, label: &str| {
            d.charts[chart]
                .series
                .iter()
                .find(|s| s.label == label)
                .and_then(|s| s.color.clone())
        };
        assert_eq!(colour(0, "Lock:tuple"), colour(1, "Lock:tuple"));
        assert_eq!(colour(0, "IO:WALSync"), colour(1, "IO:WALSync"));
        assert_ne!(colour(1, "Lock:transactionid"), colour(1, "Lock:tuple"));
        assert_ne!(colour(1, "Lock:transactionid"), colour(1, "IO:WALSync"));
    }
}
