//! Whole HTML reports: from one or more run records (`hotbench run --html`,
//! `hotbench report a.json b.json`), from scenario ladders (`scenario run --html`), and from
//! any mix of result documents read back from files ([`crate::document`]).

use hotbench_stats::{Ladder, RunRecord};

use crate::analysis::documents::sweep::usl_chart;
use crate::analysis::section::{Bar, Bars};
use crate::analysis::sections::timeline::{hdr_chart, throughput_overlay};
use crate::document::Document;
use crate::html::bars;
use crate::html::doc::Doc;
use crate::html::escape::html;
use crate::html::ladder::ladder_section;
use crate::html::run::run_section;
use crate::html::sweep;
use crate::text;

fn runs_summary(doc: &mut Doc, runs: &[(&str, &RunRecord)]) {
    let first = runs
        .first()
        .map(|(_, r)| r.totals.goodput_per_s)
        .unwrap_or(0.0);
    let list: Vec<Bar> = runs
        .iter()
        .enumerate()
        .map(|(i, (name, r))| Bar {
            label: name.to_string(),
            value: r.totals.goodput_per_s,
            badge: if i > 0 && first > 0.0 {
                format!(
                    "×{:.2}  ({} tps)",
                    r.totals.goodput_per_s / first,
                    crate::analysis::number::num(r.totals.tps)
                )
            } else {
                format!("({} tps)", crate::analysis::number::num(r.totals.tps))
            },
            highlight: i == 0,
            bad: r.status != hotbench_stats::RunStatus::Completed,
        })
        .collect();
    doc.raw(&bars::svg(&Bars {
        title: "Goodput per run".into(),
        unit: "per second".into(),
        bars: list,
        line: None,
    }));
    doc.chart(throughput_overlay(runs, false));
    doc.chart(hdr_chart(runs));
}

fn render_named(title: &str, runs: &[(String, RunRecord)]) -> String {
    let mut doc = Doc::new(title);
    doc.heading(1, title);
    let list: Vec<(&str, &RunRecord)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    if list.len() > 1 {
        runs_summary(&mut doc, &list);
    }
    for (n, r) in runs {
        run_section(&mut doc, n, r);
    }
    doc.finish()
}

/// The report of one or more runs (`hotbench run --html`).
pub fn render_html(records: &[RunRecord]) -> String {
    let named: Vec<(String, RunRecord)> = records
        .iter()
        .map(|r| (r.bench.transaction_type.clone(), r.clone()))
        .collect();
    let title = match records {
        [one] => format!("hotbench run: {}", one.bench.transaction_type),
        _ => "hotbench runs".to_string(),
    };
    render_named(&title, &named)
}

/// The report of scenario ladders (`scenario run --html`, `demo --html`).
pub fn render_ladders(ladders: &[Ladder]) -> String {
    let names: Vec<&str> = ladders.iter().map(|l| l.scenario.as_str()).collect();
    let mut doc = Doc::new(&format!("hotbench scenario: {}", names.join(", ")));
    doc.heading(1, &format!("hotbench scenario: {}", names.join(", ")));
    for l in ladders {
        ladder_section(&mut doc, l);
    }
    doc.finish()
}

/// One page from documents read back from files (`hotbench report`).
pub fn render_documents(docs: &[Document]) -> String {
    match docs {
        [Document::Ladders(l)] => return render_ladders(l),
        [Document::Sweep(s)] => return sweep::render_html(s),
        _ => {}
    }
    let runs: Vec<(String, RunRecord)> = docs
        .iter()
        .filter_map(|d| match d {
            Document::Run(n, r) => Some((n.clone(), (**r).clone())),
            _ => None,
        })
        .collect();
    if runs.len() == docs.len() {
        let title = if runs.len() == 1 {
            format!("hotbench run: {}", runs[0].0)
        } else {
            "hotbench runs".into()
        };
        return render_named(&title, &runs);
    }
    let mut doc = Doc::new("hotbench report");
    doc.heading(1, "hotbench report");
    let list: Vec<(&str, &RunRecord)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    if list.len() > 1 {
        runs_summary(&mut doc, &list);
    }
    for d in docs {
        match d {
            Document::Run(n, r) => run_section(&mut doc, n, r),
            Document::Ladders(ls) => ls.iter().for_each(|l| ladder_section(&mut doc, l)),
            Document::Sweep(s) => {
                doc.heading(2, "concurrency sweep");
                doc.chart(usl_chart(s));
                doc.raw(&format!(
                    "<pre>{}</pre>\n",
                    html(&text::sweep::render_text(s))
                ));
            }
        }
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_stats::testdata::record;
    use hotbench_stats::LadderFile;

    #[test]
    fn user_text_is_escaped_everywhere() {
        let evil = "<script>alert(1)</script>.sql";
        let mut r = record(evil, 1_795_343_749.0, 3, 300, 1.0);
        r.notes.push(evil.into());
        r.errors.push(hotbench_stats::ErrorSample {
            sqlstate: "42P01".into(),
            message: evil.into(),
            count: 1,
        });
        r.groups[0].scripts[0]
            .commands
            .push(hotbench_stats::CommandRecord {
                index: 0,
                line: 1,
                text: format!("select '{evil}'"),
                full_text: String::new(),
                count: 1,
                mean_ms: 1.0,
                failures: 0,
                retries: 0,
                latency: Default::default(),
            });
        r.server.target = evil.into();
        let page = render_html(&[r.clone(), r.clone()]);
        assert!(!page.contains("<script>alert"), "unescaped user text");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;.sql"));
        assert_eq!(page.matches("<script").count(), 3);
        let ladder = serde_json::json!({
            "format": "hotbench-ladder/1",
            "ladders": [{"scenario": evil, "title": evil, "demonstrates": evil,
                "variants": [{"name": evil, "baseline": true, "record": r,
                    "checks": [{"name": evil, "ok": false, "detail": evil}],
                    "monitors": [{"name": evil, "samples": [[1.0, 2.0], [2.0, 3.0]]}],
                    "notes": [evil]}]}]
        });
        // A partial file (no engine, params, …) reads with defaults.
        let f: LadderFile = serde_json::from_value(ladder).unwrap();
        let page = render_ladders(&f.ladders);
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("✘"));
    }
}
