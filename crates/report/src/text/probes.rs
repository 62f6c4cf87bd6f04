//! The probes' lines in the text report (after pgbench's, which stay untouched). Pure
//! functions of the result record.

use std::fmt::Write;

use hotbench_results::probe_record::{format_share, ProbeRecord};
use hotbench_results::RunRecord;

/// The probe lines: top waits, lock waits, dead tuples at end, probe notes (empty without
/// probes).
pub fn probe_lines(rec: &RunRecord) -> String {
    rec.probe_record()
        .map(|p| probe_record_lines(&p))
        .unwrap_or_default()
}

/// [`probe_lines`] of a probe record.
pub fn probe_record_lines(p: &ProbeRecord) -> String {
    let mut o = String::new();
    if !p.waits.is_empty() {
        let _ = writeln!(
            o,
            "top waits: {} (of {} backend samples, every {} ms, from {})",
            p.top_waits_text(3),
            hotbench_stats::saturating_sum(p.waits.iter().map(|w| w.count)),
            p.wait_interval_ms.round(),
            p.wait_source
        );
    }
    if !p.engine_waits.is_empty() {
        let list: Vec<String> = p.engine_waits.iter().take(3).map(format_share).collect();
        let _ = writeln!(o, "{} waits: {}", p.engine, list.join(", "));
    }
    let l = &p.locks;
    if l.max_waiting > 0 {
        let mut s = format!("lock waits: up to {} backends waiting", l.max_waiting);
        if l.longest_chain > 0 {
            let _ = write!(s, ", longest blocking chain {}", l.longest_chain);
        }
        if let Some(t) = &l.hot_tuple {
            let _ = write!(
                s,
                ", hot tuple {} {}",
                t.relation,
                t.ctid.as_deref().unwrap_or("")
            );
        } else if let Some(r) = &l.hot_relation {
            let _ = write!(s, ", hot relation {}", r.relation);
        }
        let _ = writeln!(o, "{s}");
    }
    for r in p.hot_rows.iter().take(3) {
        let _ = writeln!(
            o,
            "hot row: {} ({}) {:.0}% of lock waits",
            r.relation, r.key, r.pct
        );
    }
    let mut tables: Vec<_> = p
        .tables
        .iter()
        .filter(|t| t.dead_tuples_end > 0 || t.dead_tuples_start > 0)
        .collect();
    tables.sort_by_key(|t| std::cmp::Reverse(t.dead_tuples_end));
    if !tables.is_empty() {
        let list: Vec<String> = tables
            .iter()
            .take(3)
            .map(|t| {
                format!(
                    "{} {} ({:+} during the run)",
                    t.name,
                    t.dead_tuples_end,
                    t.dead_tuples_end - t.dead_tuples_start
                )
            })
            .collect();
        let _ = writeln!(o, "dead tuples at end: {}", list.join(", "));
    } else if !p.tables.is_empty() {
        let _ = writeln!(o, "dead tuples at end: 0");
    }
    for n in &p.notes {
        let _ = writeln!(o, "note: probe: {n}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::probe_record::{HotRow, HotSpot, LockSummary, TableSummary, WaitShare};

    #[test]
    fn lines_and_top_wait() {
        let p = ProbeRecord {
            wait_source: "pg_stat_activity".into(),
            wait_interval_ms: 100.0,
            waits: vec![
                WaitShare {
                    event: "Lock:tuple".into(),
                    count: 60,
                    pct: 60.0,
                },
                WaitShare {
                    event: "CPU".into(),
                    count: 40,
                    pct: 40.0,
                },
            ],
            locks: LockSummary {
                max_waiting: 7,
                longest_chain: 2,
                hot_tuple: Some(HotSpot {
                    relation: "limits".into(),
                    ctid: Some("(0,3)".into()),
                    count: 9,
                }),
                ..Default::default()
            },
            hot_rows: vec![HotRow {
                relation: "daily_limit".into(),
                key: "customer_id=1".into(),
                count: 41,
                pct: 41.2,
            }],
            tables: vec![TableSummary {
                name: "jobs".into(),
                dead_tuples_start: 10,
                dead_tuples_end: 510,
                ..Default::default()
            }],
            notes: vec!["statements: pg_stat_statements is not installed".into()],
            ..Default::default()
        };
        assert_eq!(p.top_wait_label().as_deref(), Some("Lock:tuple 60%"));
        let text = probe_record_lines(&p);
        assert!(
            text.starts_with("top waits: Lock:tuple 60.0%, CPU 40.0% (of 100 backend samples"),
            "{text}"
        );
        assert!(text.contains("lock waits: up to 7 backends waiting, longest blocking chain 2, hot tuple limits (0,3)"), "{text}");
        assert!(
            text.contains("hot row: daily_limit (customer_id=1) 41% of lock waits\n"),
            "{text}"
        );
        assert!(
            text.contains("dead tuples at end: jobs 510 (+500 during the run)"),
            "{text}"
        );
        assert!(text.contains("note: probe: statements: pg_stat_statements is not installed\n"));
    }
}
