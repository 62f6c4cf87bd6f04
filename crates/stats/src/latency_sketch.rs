//! A latency sketch small enough to keep with every timeline interval
//! (`IntervalStats::lat_sketch`), so the latency of any span of the run (a perturbation's
//! window, the rest of the run) can be read back from the record: the interval's
//! percentiles cannot be combined, its HDR histogram is kilobytes. The buckets are
//! [`crate::coarse`]'s (8 per power of two: a quantile is a bucket's middle, within about
//! 6 % of the true value), stored sparse as `[[bucket, count], …]`: at most
//! [`crate::coarse::BUCKETS`] (320) pairs per interval whatever the transactions, usually a
//! few dozen. Exactly mergeable; a file's pairs are read back sorted, deduplicated (summed,
//! saturating) and with unknown buckets dropped, so a hand-edited file cannot break it.

use serde::{Deserialize, Serialize};

use crate::coarse::{bucket_of, value_of, BUCKETS};
use crate::histogram::LatencyHistogram;

/// Counts per coarse bucket, sorted by bucket, no zero counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct LatencySketch(Vec<(u16, u64)>);

impl LatencySketch {
    /// The sketch of a histogram's values (µs).
    pub fn from_histogram(h: &LatencyHistogram) -> LatencySketch {
        let mut counts = [0u64; BUCKETS];
        for (us, n) in h.recorded_us() {
            let b = &mut counts[bucket_of(us)];
            *b = b.saturating_add(n);
        }
        LatencySketch::from_counts(&counts)
    }

    fn from_counts(counts: &[u64; BUCKETS]) -> LatencySketch {
        LatencySketch(
            counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(b, &n)| (b as u16, n))
                .collect(),
        )
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        crate::saturating_sum(self.0.iter().map(|&(_, n)| n))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `o`'s counts (saturating).
    pub fn merge(&mut self, o: &LatencySketch) {
        if o.0.is_empty() {
            return;
        }
        let mut counts = [0u64; BUCKETS];
        for &(b, n) in self.0.iter().chain(&o.0) {
            let c = &mut counts[usize::from(b)];
            *c = c.saturating_add(n);
        }
        *self = LatencySketch::from_counts(&counts);
    }

    /// The value at quantile `q` (0..=1), ms; `None` when empty.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for &(b, n) in &self.0 {
            seen = seen.saturating_add(n);
            if seen >= rank {
                return Some(value_of(usize::from(b)) / 1000.0);
            }
        }
        self.0
            .last()
            .map(|&(b, _)| value_of(usize::from(b)) / 1000.0)
    }
}

impl<'de> Deserialize<'de> for LatencySketch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs: Vec<(u64, u64)> = Vec::deserialize(d)?;
        let mut counts = [0u64; BUCKETS];
        for (b, n) in pairs {
            if let Some(c) = usize::try_from(b).ok().and_then(|b| counts.get_mut(b)) {
                *c = c.saturating_add(n);
            }
        }
        Ok(LatencySketch::from_counts(&counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: impl IntoIterator<Item = u64>) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for v in values {
            h.record_us(v);
        }
        h
    }

    #[test]
    fn quantiles_are_within_the_bucket_resolution_and_merge_exactly() {
        let s = LatencySketch::from_histogram(&hist(1..=10_000));
        assert_eq!(s.count(), 10_000);
        for (q, want) in [(0.5, 5.0), (0.99, 9.9)] {
            let got = s.quantile_ms(q).unwrap_or(0.0);
            assert!((got / want - 1.0).abs() < 0.07, "q{q}: {got} vs {want}");
        }
        let mut a = LatencySketch::from_histogram(&hist(1..=5_000));
        a.merge(&LatencySketch::from_histogram(&hist(5_001..=10_000)));
        assert_eq!(a, s);
        assert_eq!(LatencySketch::default().quantile_ms(0.5), None);
    }

    #[test]
    fn it_stays_small_and_reads_back_whatever_a_file_holds() {
        // A wide spread of latencies still takes at most one pair per bucket.
        let s = LatencySketch::from_histogram(&hist((0..40).map(|p| 1u64 << p)));
        assert!(s.0.len() <= BUCKETS);
        let json = serde_json::to_string(&s).unwrap();
        let back: LatencySketch = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        // Unsorted, duplicated, huge and out-of-range pairs: summed, sorted, dropped.
        let odd: LatencySketch =
            serde_json::from_str("[[30,2],[10,1],[30,18446744073709551615],[999,5],[0,0]]")
                .unwrap();
        assert_eq!(odd.0, vec![(10, 1), (30, u64::MAX)]);
        assert!(serde_json::from_str::<LatencySketch>("[[-1,2]]").is_err());
    }
}
