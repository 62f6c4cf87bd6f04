//! `hotbench diagnose --html` (`hotbench-diagnosis/1` rendered; every value from the server
//! escaped): one self-contained page — the findings (each with its
//! evidence, statements and command), the hot rows, the wait timeline with lock waits, the
//! oldest snapshot and dead tuples over the sample, what was looked at, and `--run`'s ranking.

use hotbench_results::diagnosis_record::{Diagnosis, DiagnosisStatus, Finding, LabRun};

use crate::html::bars::{self, Bar};
use crate::html::doc::{facts, table, Doc};
use crate::html::escape::html;
use crate::html::run::{health_chart, locks_chart, waits_chart, xmin_chart};
use crate::text::number::num;

/// The whole page.
pub fn render_html(d: &Diagnosis) -> String {
    let title = format!("hotbench diagnose: {}", d.target);
    let mut doc = Doc::new(&title);
    doc.heading(1, &title);
    doc.raw(&facts(&[
        ("server", d.server_version.clone()),
        ("role", d.role.clone()),
        (
            "sampled",
            format!(
                "{:.1} s, waits every {:.0} ms, statements and tables every {:.0} ms",
                d.duration_s, d.interval_ms, d.stats_interval_ms
            ),
        ),
        (
            "status",
            match d.status {
                DiagnosisStatus::Complete => "complete",
                DiagnosisStatus::Interrupted => "interrupted: the findings cover what was sampled",
                DiagnosisStatus::ServerLost => {
                    "the server went away mid-sample: the findings cover what was sampled"
                }
            }
            .to_string(),
        ),
        (
            "server cores",
            d.server_cores
                .map_or("unknown".to_string(), |c| c.to_string()),
        ),
    ]));
    doc.heading(2, "Findings");
    if d.findings.is_empty() {
        doc.raw(&format!(
            "<p class=\"finding none\">No contention found in {:.1} s: nothing crossed its \
             threshold (see what was looked at below).</p>\n",
            d.duration_s
        ));
    }
    for (i, f) in d.findings.iter().enumerate() {
        doc.raw(&finding(i + 1, f));
    }
    hot_rows(&mut doc, d);
    doc.heading(2, "Wait timeline");
    let p = &d.probe;
    doc.chart(waits_chart(p));
    doc.chart(locks_chart(p));
    doc.chart(xmin_chart(p));
    doc.chart(health_chart(p));
    doc.heading(2, "Looked at");
    let rows: Vec<Vec<String>> = d
        .looked_at
        .iter()
        .map(|c| {
            vec![
                html(&c.what),
                format!("<span class=\"text\">{}</span>", html(&c.value)),
                if c.found {
                    "<span class=\"bad\">finding</span>".into()
                } else {
                    "<span class=\"muted\">–</span>".into()
                },
            ]
        })
        .collect();
    doc.raw(&table("looked-at", &["check", "measured", ""], &rows));
    for n in &d.notes {
        doc.raw(&format!("<p class=\"note\">{}</p>\n", html(n)));
    }
    if let Some(l) = &d.lab {
        lab(&mut doc, l);
    }
    doc.finish()
}

fn finding(n: usize, f: &Finding) -> String {
    let mut o = format!(
        "<section class=\"run finding\" data-kind=\"{}\">\n<h3>{n}. {} — {:.0}% of active time</h3>\n<p>{}</p>\n",
        f.kind.name(),
        f.kind.name(),
        f.share * 100.0,
        html(&f.title)
    );
    if let Some(c) = &f.command {
        o.push_str(&format!(
            "<p>Reproduce and measure the fixes:</p>\n<pre class=\"command\"><code>{}</code></pre>\n",
            html(c)
        ));
    }
    let mut pairs: Vec<(&str, String)> = Vec::new();
    if let Some(r) = &f.relation {
        pairs.push(("relation", r.clone()));
    }
    if !f.keys.is_empty() {
        let keys: Vec<String> = f
            .keys
            .iter()
            .take(5)
            .map(|k| format!("{} ({:.0}%)", k.key, k.pct))
            .collect();
        pairs.push(("keys", keys.join("; ")));
    }
    for e in &f.evidence {
        pairs.push((e.what.as_str(), e.value.clone()));
    }
    o.push_str(&facts(&pairs));
    if !f.statements.is_empty() {
        let rows: Vec<Vec<String>> = f
            .statements
            .iter()
            .map(|s| {
                vec![
                    html(&s.role),
                    html(&s.state),
                    s.samples.to_string(),
                    format!("<code>{}</code>", html(&s.query)),
                ]
            })
            .collect();
        o.push_str(&table(
            "statements",
            &["role", "state", "samples", "statement"],
            &rows,
        ));
    }
    if !f.advice.is_empty() {
        o.push_str(&format!("<p><b>What to do:</b> {}</p>\n", html(&f.advice)));
    }
    o.push_str("</section>\n");
    o
}

fn hot_rows(doc: &mut Doc, d: &Diagnosis) {
    let p = &d.probe;
    if p.hot_rows.is_empty() {
        return;
    }
    doc.heading(2, "Hot rows");
    let list: Vec<Bar> = p
        .hot_rows
        .iter()
        .enumerate()
        .map(|(i, r)| Bar {
            label: r.key.clone(),
            value: r.pct,
            badge: format!("{} waits", r.count),
            highlight: i == 0,
            bad: false,
        })
        .collect();
    doc.raw(&bars::svg(
        "Rows lock waits queued on",
        "% of lock waits",
        &list,
    ));
    let rows: Vec<Vec<String>> = p
        .hot_rows
        .iter()
        .map(|r| {
            vec![
                html(&r.relation),
                format!("<code>{}</code>", html(&r.key)),
                r.count.to_string(),
                format!("{}%", num(r.pct)),
            ]
        })
        .collect();
    doc.raw(&table(
        "hot-rows",
        &["relation", "key", "lock waits", "share"],
        &rows,
    ));
}

fn lab(doc: &mut Doc, l: &LabRun) {
    doc.heading(2, &format!("Lab run: {}", l.scenario));
    doc.raw(&format!(
        "<pre class=\"command\"><code>{}</code></pre>\n",
        html(&l.command)
    ));
    if let Some(e) = &l.error {
        doc.raw(&format!(
            "<p class=\"note\">did not complete: {}</p>\n",
            html(e)
        ));
    }
    let list: Vec<Bar> = l
        .ranking
        .iter()
        .filter(|v| v.skipped.is_none())
        .map(|v| Bar {
            label: v.name.clone(),
            value: v.per_s,
            badge: match v.vs_baseline {
                Some(x) => format!("×{x:.2}{}", if v.checks_ok { "" } else { "  checks ✘" }),
                None => String::new(),
            },
            highlight: v.baseline,
            bad: !v.checks_ok,
        })
        .collect();
    doc.raw(&bars::svg("Useful work per variant", "per second", &list));
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::diagnosis_record::{FindingKind, FindingStatement, KeyShare};
    use hotbench_results::probe_record::HotRow;

    #[test]
    fn server_text_is_escaped_and_every_part_is_there() {
        let evil = "<script>alert(1)</script>";
        let mut d = Diagnosis::new();
        d.target = evil.into();
        d.notes.push(evil.into());
        d.probe.hot_rows.push(HotRow {
            relation: evil.into(),
            key: format!("id={evil}"),
            count: 3,
            pct: 50.0,
        });
        d.findings.push(Finding {
            kind: FindingKind::HotRow,
            title: evil.into(),
            keys: vec![KeyShare {
                key: evil.into(),
                count: 3,
                pct: 50.0,
            }],
            command: Some(format!("hotbench scenario run daily-limit -c 2 # {evil}")),
            statements: vec![FindingStatement {
                role: "waiting".into(),
                query: evil.into(),
                ..Default::default()
            }],
            advice: evil.into(),
            ..Default::default()
        });
        let page = render_html(&d);
        assert!(!page.contains("<script>alert"), "unescaped server text");
        assert!(page.contains("data-kind=\"hot_row\""));
        assert!(page.contains(
            "<pre class=\"command\"><code>hotbench scenario run daily-limit -c 2 # &lt;script&gt;"
        ));
        assert!(page.contains("<table class=\"hot-rows\">"));
        assert_eq!(page.matches("<script").count(), 3);
        d.findings.clear();
        assert!(render_html(&d).contains("No contention found"));
    }
}
