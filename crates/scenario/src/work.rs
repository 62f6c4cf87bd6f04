//! The scenario's work, told apart from the harness around it: which group of a variant does
//! the work (its latency and rate are the ladder's), when a backlog ran out (the rate stops
//! there), and what the other groups did, listed apart (a producer that fell behind its rate
//! is flagged, since its own latency is mostly schedule lag).

use hotbench_engine::GroupConfig;
use hotbench_results::RunRecord;

use crate::manifest::Manifest;
use hotbench_results::MonitorSeries;

/// The group doing the scenario's work: the only group; else the manifest's `work_group`
/// when the variant has it; else the only group without a rate; else `None` (all groups).
pub fn work_group(m: &Manifest, groups: &[GroupConfig]) -> Option<String> {
    if let [only] = groups {
        return Some(only.name.clone());
    }
    if let Some(w) = &m.work_group {
        if groups.iter().any(|g| &g.name == w) {
            return Some(w.clone());
        }
    }
    let mut free = groups.iter().filter(|g| g.rate.is_none());
    match (free.next(), free.next()) {
        (Some(g), None) => Some(g.name.clone()),
        _ => None,
    }
}

/// When the `until_empty` monitor first read 0 after starting above 0, before the run's
/// end: the moment the backlog ran out. A run that starts empty (no backlog) never "runs
/// out": its rate is over the whole run.
pub fn ran_out_at(series: &[MonitorSeries], monitor: &str, duration_s: f64) -> Option<f64> {
    let s = series.iter().find(|s| s.name == monitor)?;
    let first = s.samples.first()?;
    if first.1 <= 0.0 {
        return None;
    }
    s.samples
        .iter()
        .find(|(_, v)| *v <= 0.0)
        .map(|(t, _)| *t)
        .filter(|t| *t < duration_s)
}

/// The variant's notes about its work: when it ran out, then [`other_group_notes`].
pub fn notes(r: &RunRecord, work_group: Option<&str>, ran_out_at_s: Option<f64>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = ran_out_at_s {
        out.push(format!(
            "the backlog ran out at {t:.1} s: the rate is the work done until then"
        ));
    }
    out.extend(other_group_notes(r, work_group));
    out
}

/// Lines about the groups other than the work group: their rate and latency, and a flag
/// when a rate-limited one fell more than 5% behind.
pub fn other_group_notes(r: &RunRecord, work_group: Option<&str>) -> Vec<String> {
    let Some(work) = work_group else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in r.groups.iter().filter(|g| g.name != work) {
        let t = &g.totals;
        let asked = g
            .rate
            .map(|rate| format!(" ({rate:.0}/s asked)"))
            .unwrap_or_default();
        out.push(format!(
            "other group {}: {:.0} tps{asked}, p99 {:.2} ms (not in the ladder's latency)",
            g.name, t.tps, t.latency.p99_ms
        ));
        if let Some(s) = g.shortfall(r.duration_s) {
            out.push(format!(
                "⚠ behind its rate: {} (more than {:.0}% short)",
                s.describe(),
                hotbench_results::BEHIND_TOLERANCE * 100.0
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(samples: &[(f64, f64)]) -> Vec<MonitorSeries> {
        vec![MonitorSeries {
            name: "backlog".into(),
            samples: samples.to_vec(),
        }]
    }

    #[test]
    fn a_backlog_runs_out_at_its_first_zero() {
        let s = series(&[
            (0.0, 500.0),
            (1.0, 200.0),
            (2.0, 0.0),
            (3.0, 4.0),
            (4.0, 0.0),
        ]);
        assert_eq!(ran_out_at(&s, "backlog", 15.0), Some(2.0));
        assert_eq!(ran_out_at(&s, "backlog", 1.5), None, "after the end");
        assert_eq!(ran_out_at(&s, "other", 15.0), None);
        let empty_from_start = series(&[(0.0, 0.0), (1.0, 3.0), (2.0, 0.0)]);
        assert_eq!(ran_out_at(&empty_from_start, "backlog", 15.0), None);
    }
}
