//! pgbench's `SimpleStats`: count, min, max, sum and sum of squares of microsecond values.
//!
//! pgbench derives its "latency average" and "latency stddev" lines from these sums, so we
//! keep them exactly as it does (in f64 µs) to print the same numbers.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SimpleStats {
    pub count: u64,
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    pub sum2: f64,
}

impl SimpleStats {
    /// Adds one value (µs).
    #[inline]
    pub fn add(&mut self, value: f64) {
        if self.count == 0 || value < self.min {
            self.min = value;
        }
        if self.count == 0 || value > self.max {
            self.max = value;
        }
        self.count = self.count.saturating_add(1);
        self.sum += value;
        self.sum2 += value * value;
    }

    pub fn merge(&mut self, other: &SimpleStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        if self.count == 0 || other.max > self.max {
            self.max = other.max;
        }
        self.count = self.count.saturating_add(other.count);
        self.sum += other.sum;
        self.sum2 += other.sum2;
    }

    /// Mean in µs, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population standard deviation in µs, as pgbench computes it.
    pub fn stddev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let mean = self.mean();
        let var = self.sum2 / self.count as f64 - mean * mean;
        if var > 0.0 {
            var.sqrt()
        } else {
            0.0
        }
    }

    /// The difference `self - earlier` of two cumulative snapshots (min/max are not
    /// recoverable from sums and are taken from `self`).
    pub fn since(&self, earlier: &SimpleStats) -> SimpleStats {
        SimpleStats {
            count: self.count.saturating_sub(earlier.count),
            min: self.min,
            max: self.max,
            sum: self.sum - earlier.sum,
            sum2: self.sum2 - earlier.sum2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_stddev_match_definition() {
        let mut s = SimpleStats::default();
        for v in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            s.add(v);
        }
        assert_eq!(s.count, 8);
        assert_eq!(s.mean(), 5.0);
        assert_eq!(s.stddev(), 2.0);
        assert_eq!((s.min, s.max), (2.0, 9.0));
    }

    #[test]
    fn merge_equals_adding_all() {
        let mut a = SimpleStats::default();
        let mut b = SimpleStats::default();
        let mut all = SimpleStats::default();
        for v in 1..50 {
            let v = v as f64;
            if (v as u32).is_multiple_of(3) {
                a.add(v)
            } else {
                b.add(v)
            }
            all.add(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let empty = SimpleStats::default();
        a.merge(&empty);
        assert_eq!(a, all);
    }
}
