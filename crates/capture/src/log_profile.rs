//! What a server log (`--log`) says about the workload's rate and sessions, for a capture
//! whose shapes come from the log: the log covers its own period, not the sample's, so
//! its transactions are counted over the log's span (its first statement's start to its
//! last one's end), and its sessions are read from their statements' times (the sample
//! may have seen none of them running).

use std::collections::HashMap;

use hotbench_results::capture_record::Sessions;

use crate::observed::ObservedTransaction;

/// Sessions idle this long or more between transactions, and busy under half the time,
/// look like open arrivals (as the sampled rule in `workload`).
pub const OPEN_IDLE_MS: f64 = 10.0;

/// A transaction's start and end (seconds since the log's first message).
fn bounds(t: &ObservedTransaction) -> Option<(f64, f64)> {
    let start = t
        .statements
        .iter()
        .map(|s| s.started_at_s)
        .fold(f64::INFINITY, f64::min);
    let end = t
        .statements
        .iter()
        .map(|s| s.started_at_s + s.duration_s.unwrap_or(0.0))
        .fold(f64::NEG_INFINITY, f64::max);
    (start.is_finite() && end.is_finite()).then_some((start, end.max(start)))
}

/// The log's span in seconds: its first transaction's start to its last one's end; `None`
/// when it holds no transaction or they all ran at one instant.
pub fn span_s(log: &[ObservedTransaction]) -> Option<f64> {
    let (lo, hi) = log
        .iter()
        .filter_map(bounds)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (s, e)| {
            (lo.min(s), hi.max(e))
        });
    let span = hi - lo;
    (span.is_finite() && span > 0.0).then_some(span)
}

/// The sessions the log shows: `seen` is the most that ran at once (each session from its
/// first statement's start to its last one's end, so sessions that ran one after another,
/// such as a setup script's, count once), busy and active time over the log's span, and
/// the mean gap between a session's consecutive transactions.
pub fn sessions(log: &[ObservedTransaction]) -> Sessions {
    let Some(span) = span_s(log) else {
        return Sessions::default();
    };
    // Per session (in the log's order): its span, and the previous transaction's end.
    let mut by_session: Vec<(f64, f64)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let (mut busy, mut active) = (0.0, 0.0);
    let (mut gap_sum, mut gaps) = (0.0, 0u64);
    for t in log {
        let Some((s, e)) = bounds(t) else { continue };
        busy += e - s;
        active += t
            .statements
            .iter()
            .map(|x| x.duration_s.unwrap_or(0.0))
            .sum::<f64>();
        match index
            .get(t.session.as_str())
            .and_then(|&i| by_session.get_mut(i))
        {
            Some(entry) => {
                if s >= entry.1 {
                    gap_sum += s - entry.1;
                    gaps += 1;
                }
                entry.0 = entry.0.min(s);
                entry.1 = entry.1.max(e);
            }
            None => {
                index.insert(&t.session, by_session.len());
                by_session.push((s, e));
            }
        }
    }
    let seen = peak_overlap(by_session.iter().copied());
    let mean_busy = busy / span;
    let idle_between_ms = (gaps > 0).then(|| 1000.0 * gap_sum / gaps as f64);
    Sessions {
        seen,
        mean_busy,
        mean_active: active / span,
        open_arrivals: seen >= 2
            && mean_busy < 0.5 * seen as f64
            && idle_between_ms.is_some_and(|m| m >= OPEN_IDLE_MS),
        idle_between_ms,
        remote: false,
    }
}

/// The most intervals that overlap at one instant.
fn peak_overlap(spans: impl Iterator<Item = (f64, f64)>) -> u32 {
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for (s, e) in spans {
        edges.push((s, 1));
        edges.push((e, -1));
    }
    // Ends before starts at one instant: a session that ended as another began is not two.
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut peak) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        peak = peak.max(now);
    }
    peak.max(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observed::ObservedStatement;

    fn tx(session: &str, at: &[(f64, f64)]) -> ObservedTransaction {
        ObservedTransaction {
            session: session.into(),
            statements: at
                .iter()
                .map(|&(s, d)| ObservedStatement {
                    sql: "select 1".into(),
                    started_at_s: s,
                    duration_s: Some(d),
                    params: Vec::new(),
                })
                .collect(),
            autocommit: at.len() == 1,
            complete: true,
            rolled_back: false,
        }
    }

    #[test]
    fn span_runs_from_the_first_start_to_the_last_end() {
        assert_eq!(span_s(&[]), None);
        let log = [tx("a", &[(1.0, 0.5)]), tx("b", &[(2.0, 0.25), (3.0, 1.0)])];
        assert_eq!(span_s(&log), Some(3.0));
    }

    #[test]
    fn sessions_that_ran_one_after_another_count_once() {
        let log = [
            tx("setup", &[(0.0, 1.0)]),
            tx("a", &[(2.0, 1.0)]),
            tx("b", &[(2.5, 1.0)]),
            tx("a", &[(4.0, 1.0)]),
            tx("b", &[(4.5, 1.0)]),
        ];
        let s = sessions(&log);
        assert_eq!(s.seen, 2);
        // 5 s of transactions over a span of 5.5 s; a's and b's gaps are 1 s each.
        assert!((s.mean_busy - 5.0 / 5.5).abs() < 1e-9, "{s:?}");
        assert_eq!(s.idle_between_ms, Some(1000.0));
        // Busy under half the time with 1 s between transactions: open arrivals.
        assert!(s.open_arrivals);
        // Back to back, the same two sessions are closed.
        let busy = [
            tx("a", &[(0.0, 1.0)]),
            tx("b", &[(0.0, 1.0)]),
            tx("a", &[(1.0, 1.0)]),
        ];
        assert!(!sessions(&busy).open_arrivals);
    }
}
