//! `hotbench diagnose --html`: the document's sections (`analysis::documents::diagnosis`)
//! as one self-contained page, every value from the server escaped.

use hotbench_stats::diagnosis_record::Diagnosis;

use crate::analysis::documents::diagnosis::{sections, title};
use crate::html::section::page;

/// The whole page.
pub fn render_html(d: &Diagnosis) -> String {
    page(&title(d), &title(d), &sections(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_stats::diagnosis_record::{Finding, FindingKind, FindingStatement, KeyShare};
    use hotbench_stats::probe_record::HotRow;

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
