//! Whole HTML reports: from one or more run records (`hotbench run --html`,
//! `hotbench report a.json b.json`), from scenario ladders (`scenario run --html`), and from
//! any mix of result documents read back from files, recognised by their `format` field.

use hotbench_stats::{
    Ladder, LadderFile, RunRecord, SweepDoc, LADDER_FORMAT, RESULT_FORMAT, SWEEP_FORMAT,
};

use crate::bars::{self, Bar};
use crate::html::Doc;
use crate::ladder::ladder_section;
use crate::run_html::{hdr_chart, run_section, throughput_overlay};
use crate::sweep;

/// A result document read from a file.
#[derive(Debug, Clone)]
pub enum Document {
    /// A run record, with its name (file name) for titles.
    Run(String, Box<RunRecord>),
    Ladders(Vec<Ladder>),
    Sweep(Box<SweepDoc>),
}

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("{name}: not JSON: {source}")]
    Json {
        name: String,
        source: serde_json::Error,
    },
    #[error("{name}: unknown result format \"{format}\" (this hotbench reads {})", KNOWN_FORMATS.join(", "))]
    Format { name: String, format: String },
    #[error("{name}: invalid {format} document: {source}")]
    Shape {
        name: String,
        format: String,
        source: serde_json::Error,
    },
}

/// Reads a result document of any kind from JSON text.
pub fn parse_document(name: &str, text: &str) -> Result<Document, DocumentError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|source| DocumentError::Json {
            name: name.to_string(),
            source,
        })?;
    let format = v
        .get("format")
        .and_then(|f| f.as_str())
        .unwrap_or("")
        .to_string();
    let shape = |source| DocumentError::Shape {
        name: name.to_string(),
        format: format.clone(),
        source,
    };
    let unknown = |format: &str| DocumentError::Format {
        name: name.to_string(),
        format: format.to_string(),
    };
    // Whole `family/version` strings: a later version of a known family is as unknown as
    // a foreign family (its shape may differ in ways this reader would misread).
    let doc = match format.as_str() {
        RESULT_FORMAT => Document::Run(
            name.to_string(),
            Box::new(serde_json::from_value(v).map_err(shape)?),
        ),
        LADDER_FORMAT => {
            let f: LadderFile = serde_json::from_value(v).map_err(shape)?;
            Document::Ladders(f.ladders)
        }
        SWEEP_FORMAT => Document::Sweep(Box::new(serde_json::from_value(v).map_err(shape)?)),
        other => return Err(unknown(other)),
    };
    // Run records nested in ladders and sweeps carry their own format too.
    let nested: Vec<&RunRecord> = match &doc {
        Document::Run(..) => Vec::new(),
        Document::Ladders(ls) => ls
            .iter()
            .flat_map(|l| &l.variants)
            .filter_map(|v| v.record.as_ref())
            .collect(),
        Document::Sweep(s) => s.runs.iter().collect(),
    };
    match nested.iter().find(|r| r.format != RESULT_FORMAT) {
        Some(r) => Err(unknown(&r.format)),
        None => Ok(doc),
    }
}

/// Every format `parse_document` reads.
pub const KNOWN_FORMATS: [&str; 3] = [RESULT_FORMAT, LADDER_FORMAT, SWEEP_FORMAT];

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
                    crate::html::num(r.totals.tps)
                )
            } else {
                format!("({} tps)", crate::html::num(r.totals.tps))
            },
            highlight: i == 0,
            bad: r.status != hotbench_stats::RunStatus::Completed,
        })
        .collect();
    doc.raw(&bars::svg("Goodput per run", "per second", &list));
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
                doc.chart(sweep::usl_chart(s));
                doc.raw(&format!(
                    "<pre>{}</pre>\n",
                    crate::escape::html(&sweep::render_text(s))
                ));
            }
        }
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::record;

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

    #[test]
    fn documents_are_recognised_by_format() {
        let r = record("a", 1.0, 2, 100, 1.0);
        let text = serde_json::to_string(&r).unwrap();
        assert!(matches!(
            parse_document("a.json", &text),
            Ok(Document::Run(..))
        ));
        let err = parse_document("x.json", "{\"format\": \"other/1\"}").unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown result format \"other/1\""),
            "{err}"
        );
        assert!(parse_document("y.json", "not json").is_err());
    }

    #[test]
    fn later_versions_of_known_formats_are_refused() {
        let r = record("a", 1.0, 2, 100, 1.0);
        let mut v = serde_json::to_value(&r).unwrap();
        for f in [
            "hotbench-result/2",
            "hotbench-result/10",
            "hotbench-result",
            "",
        ] {
            v["format"] = f.into();
            let err = parse_document("r.json", &v.to_string()).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("unknown result format \"{f}\"")),
                "{err}"
            );
        }
        let mut nested = r.clone();
        nested.format = "hotbench-result/2".into();
        for doc in [
            serde_json::json!({"format": "hotbench-ladder/2", "ladders": []}),
            serde_json::json!({"format": "hotbench-sweep/2", "runs": []}),
            serde_json::json!({"format": "hotbench-ladder/1",
                "ladders": [{"variants": [{"name": "v", "record": nested}]}]}),
            serde_json::json!({"format": "hotbench-sweep/1", "runs": [nested]}),
        ] {
            let err = parse_document("d.json", &doc.to_string()).unwrap_err();
            assert!(err.to_string().contains("unknown result format"), "{err}");
        }
    }
}
