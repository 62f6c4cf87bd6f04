//! pgbench's `-P` progress line, computed from one timeline interval.

use hotbench_results::IntervalStats;

/// Formats `progress: 5.0 s, 744.9 tps, lat 5.273 ms stddev 4.210, 0 failed[, lag …]`.
/// `at` is either the elapsed seconds or (with --progress-timestamp) Unix seconds.
pub fn progress_line(
    at: f64,
    timestamp: bool,
    s: &IntervalStats,
    throttled: bool,
    latency_limit: bool,
    retries_shown: bool,
) -> String {
    let mut line = if timestamp {
        format!("progress: {at:.3} s")
    } else {
        format!("progress: {at:.1} s")
    };
    line.push_str(&format!(
        ", {:.1} tps, lat {:.3} ms stddev {:.3}, {} failed",
        s.tps, s.lat_mean_ms, s.lat_stddev_ms, s.failed
    ));
    if throttled {
        line.push_str(&format!(", lag {:.3} ms", s.lag_mean_ms));
        if latency_limit {
            line.push_str(&format!(", {} skipped", s.skipped));
        }
    }
    if retries_shown {
        line.push_str(&format!(", {} retried, {} retries", s.retried, s.retries));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_pgbench_wording() {
        let s = IntervalStats {
            tps: 744.94,
            lat_mean_ms: 5.2734,
            lat_stddev_ms: 4.21,
            ..Default::default()
        };
        assert_eq!(
            progress_line(1.0, false, &s, false, false, false),
            "progress: 1.0 s, 744.9 tps, lat 5.273 ms stddev 4.210, 0 failed"
        );
        assert_eq!(
            progress_line(60.0, false, &s, true, false, true),
            "progress: 60.0 s, 744.9 tps, lat 5.273 ms stddev 4.210, 0 failed, lag 0.000 ms, 0 retried, 0 retries"
        );
    }
}
