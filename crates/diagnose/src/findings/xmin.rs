//! An old snapshot: a session, replication slot or prepared transaction that held the xmin
//! horizon at every read of the sample, while dead tuples grew (or the horizon lagged by
//! thousands of transactions). Vacuum cannot remove what it still may see, so tables written
//! meanwhile bloat and their scans (a queue's claims above all) slow down.

use hotbench_results::diagnosis_record::{Evidence, Finding, FindingKind, FindingStatement};

use super::input::{check, pct, Input};
use crate::facts::{trend_ms, Facts};
use hotbench_results::diagnosis_record::Check;

/// Transactions the horizon must lag by, when no table is seen growing dead tuples.
pub const MIN_AGE: i64 = 1000;

pub fn find(input: &Input, f: &Facts, checks: &mut Vec<Check>) -> Option<Finding> {
    let s = input.probe.sessions.as_ref()?;
    let held = s
        .xmin_holders
        .iter()
        .filter(|h| s.xmin_rounds >= 2 && h.seen >= s.xmin_rounds)
        .max_by_key(|h| h.xmin_age);
    let mut grown: Vec<(&str, i64, u64)> = f
        .relations
        .iter()
        .filter(|r| r.dead_growth() > 0)
        .map(|r| (r.name.as_str(), r.dead_growth(), r.busy))
        .collect();
    grown.sort_by_key(|g| std::cmp::Reverse(g.1));
    let oldest = s.xmin_holders.first();
    let Some(h) = held.filter(|h| !grown.is_empty() || h.xmin_age >= MIN_AGE) else {
        checks.push(check(
            "oldest xmin",
            match oldest {
                Some(o) => format!(
                    "{} transactions behind at most ({} {}, seen at {} of {} reads): not held through the sample",
                    o.xmin_age, o.kind, o.id, o.seen, s.xmin_rounds
                ),
                None => format!("no holder seen in {} reads", s.xmin_rounds),
            },
            false,
        ));
        return None;
    };
    let who = match h.kind.as_str() {
        "session" => format!(
            "session {} ({}, {})",
            h.id,
            if h.application_name.is_empty() {
                "no application_name"
            } else {
                &h.application_name
            },
            h.state
        ),
        other => format!("{other} {}", h.id),
    };
    let tables: Vec<String> = grown
        .iter()
        .take(3)
        .map(|(n, d, _)| format!("{n} (+{d})"))
        .collect();
    let busy: u64 = grown.iter().map(|g| g.2).sum();
    let on_tables = f.share(busy).min(1.0);
    let (share, slower) = slowdown(input, f, &grown);
    let age = h
        .xact_age_s
        .map(|a| format!(", transaction open {a:.0} s"))
        .unwrap_or_default();
    checks.push(check(
        "oldest xmin",
        format!(
            "{} transactions behind, held by {who} at every read",
            h.xmin_age
        ),
        true,
    ));
    let mut finding = Finding {
        kind: FindingKind::XminHorizon,
        title: format!(
            "old snapshot: {who} held the xmin horizon through the sample ({} transactions behind{age}){}",
            h.xmin_age,
            if tables.is_empty() { String::new() } else { format!("; dead tuples grew in {}", tables.join(", ")) }
        ),
        // The holder is the subject; the bloating tables are in the title and evidence.
        relation: None,
        share,
        holder: Some(h.clone()),
        evidence: vec![
            Evidence::new("holder", who.clone()),
            Evidence::new("xmin age", format!("{} transactions", h.xmin_age)),
            Evidence::new("held at", format!("{} of {} reads", h.seen, s.xmin_rounds)),
            Evidence::new("active time on the bloating tables' statements", pct(on_tables)),
            Evidence::new(
                "active time it cost",
                if slower.is_empty() {
                    "not measured: no statement on the bloating tables got slower during the \
                     sample (ranked by that, 0%)"
                        .to_string()
                } else {
                    format!("{} ({})", pct(share), slower.join("; "))
                },
            ),
        ],
        advice: match h.kind.as_str() {
            "session" => format!(
                "end it (SELECT pg_terminate_backend({}) if it is forgotten), and set \
                 idle_in_transaction_session_timeout so an idle transaction cannot hold the \
                 horizon again",
                h.id
            ),
            "replication slot" => "drop the slot if its standby is gone, or see why it lags \
                                   (hot_standby_feedback holds the horizon for the standby's queries)"
                .into(),
            _ => "COMMIT PREPARED or ROLLBACK PREPARED it".into(),
        },
        ..Default::default()
    };
    if let Some(a) = h.xact_age_s {
        finding
            .evidence
            .push(Evidence::new("transaction age", format!("{a:.1} s")));
    }
    for (n, d, _) in grown.iter().take(3) {
        finding.evidence.push(Evidence::new(
            format!("dead tuples in {n}"),
            format!("+{d}"),
        ));
    }
    if !h.query.is_empty() {
        finding.statements.push(FindingStatement {
            role: "holding".into(),
            query: h.query.clone(),
            state: h.state.clone(),
            samples: u64::from(h.seen),
            ..Default::default()
        });
    }
    Some(finding)
}

/// The share of active time the old snapshot cost: for each bloating table's statements that
/// got slower from the first to the last third of the sample (pg_stat_statements), the part
/// of their active time that is the slowdown (`1 - first / last`). Zero when none got
/// slower: a finding's share is always active time it explains.
fn slowdown(input: &Input, f: &Facts, grown: &[(&str, i64, u64)]) -> (f64, Vec<String>) {
    let mut share = 0.0;
    let mut said = Vec::new();
    for (name, _, _) in grown {
        let Some(r) = f.relation(&crate::shape::relation_key(name)) else {
            continue;
        };
        for s in &r.statements {
            let q = s.statement.queryid.as_str();
            if q.is_empty() {
                continue;
            }
            if let Some((a, b)) = trend_ms(input.probe, &[q]) {
                if a > 0.0 && b > a {
                    let active = s
                        .statement
                        .samples
                        .saturating_sub(s.statement.idle_in_transaction);
                    share += f.share(active) * (1.0 - a / b);
                    said.push(format!("{name}: {a:.2} → {b:.2} ms"));
                }
            }
        }
    }
    (share.min(1.0), said)
}
