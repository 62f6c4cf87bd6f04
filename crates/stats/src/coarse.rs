//! A small fixed-size latency histogram (log-linear: 8 sub-buckets per power of two, ~9%
//! resolution) for statistics kept per client or per key, where an HDR histogram per entry
//! would cost tens of kilobytes each. Exactly mergeable; quantiles are bucket midpoints.

use serde::{Deserialize, Serialize};

const SUB: u32 = 8;
const POWERS: u32 = 40;
pub(crate) const BUCKETS: usize = (SUB * POWERS) as usize;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoarseHistogram {
    /// Sparse until the first value (a client that never commits costs a pointer).
    counts: Option<Box<[u32]>>,
    total: u64,
}

pub(crate) fn bucket_of(us: u64) -> usize {
    let v = us.max(1);
    let power = 63 - v.leading_zeros();
    let sub = if power >= 3 {
        ((v >> (power - 3)) & u64::from(SUB - 1)) as u32
    } else {
        ((v << (3 - power)) & u64::from(SUB - 1)) as u32
    };
    ((power.min(POWERS - 1)) * SUB + sub) as usize
}

/// The middle of bucket `b`, µs.
pub(crate) fn value_of(b: usize) -> f64 {
    let power = (b as u32) / SUB;
    let sub = (b as u32) % SUB;
    let low = (1u64 << power) as f64 * (1.0 + f64::from(sub) / f64::from(SUB));
    let width = (1u64 << power) as f64 / f64::from(SUB);
    low + width / 2.0
}

impl CoarseHistogram {
    #[inline]
    pub fn record_us(&mut self, us: u64) {
        let counts = self
            .counts
            .get_or_insert_with(|| vec![0u32; BUCKETS].into_boxed_slice());
        let b = bucket_of(us);
        counts[b] = counts[b].saturating_add(1);
        self.total += 1;
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    /// Empties the histogram, keeping its buckets' allocation for the next values.
    pub fn clear(&mut self) {
        if self.total > 0 {
            if let Some(c) = &mut self.counts {
                c.fill(0);
            }
            self.total = 0;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn merge(&mut self, o: &CoarseHistogram) {
        let Some(theirs) = &o.counts else { return };
        let mine = self
            .counts
            .get_or_insert_with(|| vec![0u32; BUCKETS].into_boxed_slice());
        for (a, b) in mine.iter_mut().zip(theirs.iter()) {
            *a = a.saturating_add(*b);
        }
        self.total += o.total;
    }

    /// The value at quantile `q` (0..=1), ms; 0 when empty.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        let Some(counts) = &self.counts else {
            return 0.0;
        };
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (b, &n) in counts.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                return value_of(b) / 1000.0;
            }
        }
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_the_bucket_resolution_and_merge_exactly() {
        let mut h = CoarseHistogram::default();
        assert_eq!(h.quantile_ms(0.99), 0.0);
        for us in 1..=10_000u64 {
            h.record_us(us);
        }
        for (q, want_ms) in [(0.5, 5.0), (0.99, 9.9), (0.01, 0.1)] {
            let got = h.quantile_ms(q);
            assert!(
                (got / want_ms - 1.0).abs() < 0.1,
                "q{q}: {got} vs {want_ms}"
            );
        }
        let mut a = CoarseHistogram::default();
        let mut b = CoarseHistogram::default();
        for us in 1..=5_000u64 {
            a.record_us(us);
        }
        for us in 5_001..=10_000u64 {
            b.record_us(us);
        }
        a.merge(&b);
        assert_eq!(a, h);
        // Huge values land in the last power instead of overflowing.
        h.record_us(u64::MAX);
        assert_eq!(h.len(), 10_001);
    }
}
