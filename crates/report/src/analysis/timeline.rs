//! Which intervals of a timeline a chart draws: all but a last partial one (the final stats
//! round or interval closes a few milliseconds after the last full second, which would plot
//! as a dip or a spike). Shared by the run's and the pooler's charts.

use hotbench_results::probe_record::{ProbeInterval, ProbeRecord};
use hotbench_results::{IntervalRecord, RunRecord};

/// How many intervals of these `widths` to draw: all but a last partial interval shorter than
/// half the usual one (a few milliseconds after the last full second say little and plot as a
/// dip to zero or a spike).
pub fn without_partial_tail(widths: &[f64]) -> usize {
    if widths.len() < 2 {
        return widths.len();
    }
    let last = widths[widths.len() - 1];
    let mut sorted = widths.to_vec();
    sorted.sort_by(f64::total_cmp);
    let nominal = sorted[sorted.len() / 2];
    if last < nominal * 0.5 {
        widths.len() - 1
    } else {
        widths.len()
    }
}

/// The run's timeline without a last partial interval.
pub fn intervals(rec: &RunRecord) -> &[IntervalRecord] {
    let tl = &rec.timeline;
    let widths: Vec<f64> = std::iter::once(tl.first().map_or(0.0, |i| i.t))
        .chain(tl.windows(2).map(|w| w[1].t - w[0].t))
        .take(tl.len())
        .collect();
    &tl[..without_partial_tail(&widths)]
}

/// The probes' timeline without a last partial interval (the final stats round comes right
/// after the run ends).
pub fn probe_intervals(p: &ProbeRecord) -> &[ProbeInterval] {
    let widths: Vec<f64> = p.timeline.iter().map(|i| i.dt).collect();
    &p.timeline[..without_partial_tail(&widths)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_last_interval_is_left_out_and_a_full_one_stays() {
        assert_eq!(without_partial_tail(&[1.0, 1.0, 0.9]), 3);
        assert_eq!(without_partial_tail(&[1.0, 1.0, 0.2]), 2);
        assert_eq!(without_partial_tail(&[0.2]), 1);
        let iv = |t: f64, dt: f64| ProbeInterval {
            t,
            dt,
            ..Default::default()
        };
        let p = ProbeRecord {
            timeline: vec![iv(1.0, 1.0), iv(2.0, 1.0), iv(3.0, 1.0), iv(3.05, 0.05)],
            ..Default::default()
        };
        assert_eq!(probe_intervals(&p).len(), 3);
    }
}
