//! What the server probes sampled during a run: wait events, lock waits, hot rows, table
//! health and statements. The terminal gets a few lines (the top waits, lock waits, hot
//! rows, dead tuples at the end, the probe's notes) after pgbench's, which stay untouched;
//! the page charts over time (waits stacked, dead tuples, backends waiting on locks, the
//! oldest snapshot) and tables. `diagnose`'s page draws the same charts.

use std::fmt::Write;

use hotbench_stats::probe_record::{format_share, ProbeInterval, ProbeRecord};
use hotbench_stats::RunRecord;

use crate::analysis::chart::{Chart, Series};
use crate::analysis::section::{Cell, Section, Span, Table};
use crate::analysis::timeline::probe_intervals;

/// Waits drawn individually in the stacked chart; the rest are summed as `other`.
const TOP_WAITS: usize = 8;

/// Waits and hot rows in the terminal's lines.
const TOP_LINES: usize = 3;

/// Waits and statements in the page's tables.
const TOP_ROWS: usize = 10;

/// The probes' section (empty without probes).
pub fn section(rec: &RunRecord) -> Section {
    rec.probe_record()
        .map(|p| record_section(&p))
        .unwrap_or_else(|| Section::new("probes"))
}

/// [`section`] of a probe record.
pub fn record_section(p: &ProbeRecord) -> Section {
    let mut s = Section::new("probes");
    lines(&mut s, p);
    s.chart(waits_chart(p));
    s.chart(health_chart(p));
    s.chart(locks_chart(p));
    s.chart(xmin_chart(p));
    tables(&mut s, p);
    for n in &p.notes {
        s.paragraph(Some("note"), vec![Span::plain(format!("probe: {n}"))]);
    }
    s
}

/// Top waits, lock waits, hot rows, dead tuples at end, probe notes.
fn lines(s: &mut Section, p: &ProbeRecord) {
    if !p.waits.is_empty() {
        s.line(format!(
            "top waits: {} (of {} backend samples, every {} ms, from {})",
            p.top_waits_text(TOP_LINES),
            hotbench_stats::saturating_sum(p.waits.iter().map(|w| w.count)),
            p.wait_interval_ms.round(),
            p.wait_source
        ));
    }
    if !p.engine_waits.is_empty() {
        let list: Vec<String> = p
            .engine_waits
            .iter()
            .take(TOP_LINES)
            .map(format_share)
            .collect();
        s.line(format!("{} waits: {}", p.engine, list.join(", ")));
    }
    let l = &p.locks;
    if l.max_waiting > 0 {
        let mut line = format!("lock waits: up to {} backends waiting", l.max_waiting);
        if l.longest_chain > 0 {
            let _ = write!(line, ", longest blocking chain {}", l.longest_chain);
        }
        if let Some(t) = &l.hot_tuple {
            let _ = write!(
                line,
                ", hot tuple {} {}",
                t.relation,
                t.ctid.as_deref().unwrap_or("")
            );
        } else if let Some(r) = &l.hot_relation {
            let _ = write!(line, ", hot relation {}", r.relation);
        }
        s.line(line);
    }
    for r in p.hot_rows.iter().take(TOP_LINES) {
        s.line(format!(
            "hot row: {} ({}) {:.0}% of lock waits",
            r.relation, r.key, r.pct
        ));
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
            .take(TOP_LINES)
            .map(|t| {
                format!(
                    "{} {} ({:+} during the run)",
                    t.name,
                    t.dead_tuples_end,
                    t.dead_tuples_end - t.dead_tuples_start
                )
            })
            .collect();
        s.line(format!("dead tuples at end: {}", list.join(", ")));
    } else if !p.tables.is_empty() {
        s.line("dead tuples at end: 0");
    }
    for n in &p.notes {
        s.line(format!("note: probe: {n}"));
    }
}

/// The page's tables: top waits, lock waits, tables, statements.
fn tables(s: &mut Section, p: &ProbeRecord) {
    if !p.waits.is_empty() {
        let rows = p
            .waits
            .iter()
            .take(TOP_ROWS)
            .map(|w| {
                vec![
                    Cell::from(w.event.as_str()),
                    Cell::from(w.count.to_string()),
                    Cell::from(format!("{:.1}%", w.pct)),
                ]
            })
            .collect();
        s.table(
            Table::new("waits", &["wait event", "samples", "share"], rows).titled(format!(
                "Top waits (from {}, every {} ms)",
                p.wait_source,
                p.wait_interval_ms.round()
            )),
        );
    }
    let l = &p.locks;
    if l.max_waiting > 0 {
        let mut text = format!(
            "up to {} backends waiting on locks, longest blocking chain {}",
            l.max_waiting, l.longest_chain
        );
        if let Some(t) = &l.hot_tuple {
            let _ = write!(
                text,
                ", hot tuple {} {}",
                t.relation,
                t.ctid.as_deref().unwrap_or("")
            );
        } else if let Some(r) = &l.hot_relation {
            let _ = write!(text, ", hot relation {}", r.relation);
        }
        s.paragraph(None, vec![Span::plain(text)]);
    }
    if !p.tables.is_empty() {
        let rows = p
            .tables
            .iter()
            .map(|t| {
                vec![
                    Cell::from(t.name.as_str()),
                    Cell::from(t.inserts.to_string()),
                    Cell::from(t.updates.to_string()),
                    Cell::from(t.hot_updates.to_string()),
                    Cell::from(t.deletes.to_string()),
                    Cell::from(t.live_tuples_end.to_string()),
                    Cell::from(format!("{} → {}", t.dead_tuples_start, t.dead_tuples_end)),
                    Cell::from(t.autovacuums.to_string()),
                ]
            })
            .collect();
        s.table(
            Table::new(
                "tables",
                &[
                    "table",
                    "inserts",
                    "updates",
                    "HOT",
                    "deletes",
                    "live",
                    "dead",
                    "autovacuums",
                ],
                rows,
            )
            .titled("Tables"),
        );
    }
    if !p.statements.is_empty() {
        let rows = p
            .statements
            .iter()
            .take(TOP_ROWS)
            .map(|st| {
                vec![
                    Cell::code(st.query.as_str()),
                    Cell::from(st.calls.to_string()),
                    Cell::num(st.mean_ms),
                    Cell::num(st.shared_blks_hit_per_call + st.shared_blks_read_per_call),
                ]
            })
            .collect();
        s.table(
            Table::new(
                "statements",
                &["statement", "calls", "mean ms", "blocks/call"],
                rows,
            )
            .titled("Statements (pg_stat_statements)"),
        );
    }
}

/// Stacked wait events over time, as average backends in each wait.
pub fn waits_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new(
        "Server wait events (average backends)",
        "time",
        "s",
        "backends",
    );
    c.stacked = true;
    c.colour_by_label = true;
    let top: Vec<&str> = p
        .waits
        .iter()
        .take(TOP_WAITS)
        .map(|w| w.event.as_str())
        .collect();
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    let per = |iv: &ProbeInterval, n: u64| {
        if iv.samples > 0 {
            n as f64 / f64::from(iv.samples)
        } else {
            n as f64
        }
    };
    for ev in &top {
        let vals = tl
            .iter()
            .map(|iv| Some(per(iv, iv.waits.get(*ev).copied().unwrap_or(0))))
            .collect();
        c.series.push(Series::line(*ev, vals));
    }
    let other: Vec<Option<f64>> = tl
        .iter()
        .map(|iv| {
            let n = hotbench_stats::saturating_sum(
                iv.waits
                    .iter()
                    .filter(|(k, _)| !top.contains(&k.as_str()))
                    .map(|(_, v)| *v),
            );
            Some(per(iv, n))
        })
        .collect();
    if other.iter().any(|v| v.is_some_and(|v| v > 0.0)) {
        c.series.push(Series::line("other", other));
    }
    c
}

/// Dead tuples per table over time.
pub fn health_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Table health: dead tuples", "time", "s", "tuples");
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    let mut names: Vec<String> = p.tables.iter().map(|t| t.name.clone()).collect();
    for iv in tl {
        for t in &iv.tables {
            if !names.contains(&t.name) {
                names.push(t.name.clone());
            }
        }
    }
    for name in names {
        let vals: Vec<Option<f64>> = tl
            .iter()
            .map(|iv| {
                iv.tables
                    .iter()
                    .find(|t| t.name == name)
                    .map(|t| t.dead_tuples as f64)
            })
            .collect();
        c.series.push(Series::line(format!("{name} dead"), vals));
    }
    c
}

/// Backends waiting on locks: a count of backends, on its own axis (the oldest snapshot's
/// age, in thousands of xids, would flatten it to zero).
pub fn locks_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Backends waiting on locks", "time", "s", "backends");
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    if tl.iter().any(|i| i.lock_waiting_max > 0) {
        c.series.push(Series::line(
            "waiting on locks (max)",
            tl.iter()
                .map(|i| Some(f64::from(i.lock_waiting_max)))
                .collect(),
        ));
    }
    c
}

/// Age of the oldest snapshot (xmin) on the server, in transaction ids.
pub fn xmin_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Oldest snapshot (xmin age)", "time", "s", "xids");
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    if tl.iter().any(|i| i.xmin_age.is_some_and(|a| a > 0)) {
        c.series.push(Series::line(
            "oldest xmin age",
            tl.iter().map(|i| i.xmin_age.map(|a| a as f64)).collect(),
        ));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_stats::probe_record::{HotRow, HotSpot, LockSummary, TableSummary, WaitShare};

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
        let s = record_section(&p);
        let text = s.lines().join("\n");
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
        assert!(text.ends_with("\nnote: probe: statements: pg_stat_statements is not installed"));
    }

    #[test]
    fn a_short_last_probe_interval_is_not_drawn_and_units_get_their_own_charts() {
        let iv = |t: f64, dt: f64, waiting: u32, xmin: i64| ProbeInterval {
            t,
            dt,
            samples: 10,
            lock_waiting_max: waiting,
            xmin_age: Some(xmin),
            ..Default::default()
        };
        let p = ProbeRecord {
            timeline: vec![
                iv(1.0, 1.0, 3, 4000),
                iv(2.0, 1.0, 4, 5000),
                iv(3.0, 1.0, 3, 6000),
                iv(3.05, 0.05, 0, 6000),
            ],
            ..Default::default()
        };
        assert_eq!(probe_intervals(&p).len(), 3);
        let locks = locks_chart(&p);
        assert_eq!(locks.x, vec![1.0, 2.0, 3.0]);
        assert_eq!(locks.y_label, "backends");
        assert_eq!(locks.series.len(), 1);
        let xmin = xmin_chart(&p);
        assert_eq!(xmin.y_label, "xids");
        assert_eq!(xmin.series[0].values.last(), Some(&Some(6000.0)));
    }
}
