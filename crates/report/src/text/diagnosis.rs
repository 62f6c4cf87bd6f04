//! `hotbench diagnose`'s terminal report: the document's sections
//! (`analysis::documents::diagnosis`) in the terminal.

use hotbench_stats::diagnosis_record::Diagnosis;

use crate::analysis::documents::diagnosis::sections;
use crate::text::section::render;

/// The whole text report.
pub fn render_text(d: &Diagnosis) -> String {
    render(&sections(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_stats::diagnosis_record::{
        Check, Evidence, Finding, FindingKind, FindingStatement, KeyShare,
    };

    #[test]
    fn findings_come_first_with_their_commands_then_evidence_and_checks() {
        let mut d = Diagnosis::new();
        d.target = "host=db dbname=app".into();
        d.server_version = "PostgreSQL 15.4 on x86_64-pc-linux-gnu".into();
        d.duration_s = 3.0;
        d.interval_ms = 20.0;
        d.role = "mon".into();
        d.findings.push(Finding {
            kind: FindingKind::HotRow,
            title: "hot row: daily_limit (customer_id=1)".into(),
            relation: Some("daily_limit".into()),
            keys: vec![KeyShare {
                key: "customer_id=1".into(),
                count: 9,
                pct: 41.0,
            }],
            share: 0.74,
            command: Some("hotbench scenario run daily-limit -c 16".into()),
            evidence: vec![Evidence::new("sessions on its statements", "16")],
            statements: vec![FindingStatement {
                role: "waiting".into(),
                query: "select 1 for update".into(),
                samples: 55,
                ..Default::default()
            }],
            ..Default::default()
        });
        d.looked_at.push(Check {
            what: "lock waits".into(),
            value: "70%".into(),
            found: true,
        });
        let t = render_text(&d);
        assert!(t.starts_with("hotbench diagnose: host=db dbname=app (PostgreSQL 15.4), 3.0 s sampled every 20 ms as \"mon\"\n"), "{t}");
        let first = t.find("1. [hot_row] 74% hot row: daily_limit").expect(&t);
        let cmd = t
            .find("   run: hotbench scenario run daily-limit -c 16")
            .expect(&t);
        let ev = t.find("evidence for 1. hot_row").expect(&t);
        assert!(first < cmd && cmd < ev, "{t}");
        assert!(t.contains("   keys: customer_id=1 (41% of lock waits)"));
        assert!(
            t.contains("   waiting       55  select 1 for update"),
            "{t}"
        );
        assert!(t.contains("  ! lock waits: 70%"));
        d.findings.clear();
        assert!(render_text(&d)
            .contains("\nno contention found: nothing below crossed its threshold in 3.0 s\n"));
    }
}
