//! The latency of one hot-keys entry, kept small: the first few committed latencies inline
//! (exact percentiles for the many keys seen only a few times), a [`CoarseHistogram`] from a
//! shared pool only once a key is seen more often. A Space-Saving table over many distinct
//! values replaces an entry on nearly every transaction; with a histogram per entry each
//! replacement zeroed ~1.3 KB and the table's histograms (~1.3 MB at 1,000 entries) pushed
//! the rest of the client out of the caches.

use crate::coarse::CoarseHistogram;

/// Latencies kept inline before an entry takes a histogram from the pool.
pub const INLINE_SAMPLES: usize = 4;

/// No histogram attached.
const NONE: u32 = u32::MAX;

/// One entry's committed latencies: inline samples, or (past [`INLINE_SAMPLES`]) the index
/// of a histogram in its table's [`HistogramPool`], which then holds all of them.
#[derive(Debug, Clone, Copy)]
pub struct KeyLatency {
    inline: [u64; INLINE_SAMPLES],
    /// Samples in `inline` (0 once a histogram is attached).
    len: u32,
    hist: u32,
}

impl Default for KeyLatency {
    fn default() -> KeyLatency {
        KeyLatency {
            inline: [0; INLINE_SAMPLES],
            len: 0,
            hist: NONE,
        }
    }
}

/// The histograms of a table's frequently seen entries. A released histogram keeps its
/// buckets and is cleared when reused, so replacing entries neither allocates nor zeroes
/// anything unless the new value is itself seen often.
#[derive(Debug, Clone, Default)]
pub struct HistogramPool {
    hists: Vec<CoarseHistogram>,
    free: Vec<u32>,
}

impl HistogramPool {
    fn take(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            self.hists[i as usize].clear();
            return i;
        }
        self.hists.push(CoarseHistogram::default());
        (self.hists.len() - 1) as u32
    }

    fn give(&mut self, i: u32) {
        self.free.push(i);
    }

    /// Histograms handed out and not given back.
    pub fn in_use(&self) -> usize {
        self.hists.len() - self.free.len()
    }
}

impl KeyLatency {
    #[inline]
    pub fn record_us(&mut self, us: u64, pool: &mut HistogramPool) {
        if self.hist != NONE {
            pool.hists[self.hist as usize].record_us(us);
        } else if (self.len as usize) < INLINE_SAMPLES {
            self.inline[self.len as usize] = us;
            self.len += 1;
        } else {
            self.spill(pool);
            pool.hists[self.hist as usize].record_us(us);
        }
    }

    /// Moves the inline samples into a histogram from the pool.
    fn spill(&mut self, pool: &mut HistogramPool) {
        let h = pool.take();
        for &us in &self.inline[..self.len as usize] {
            pool.hists[h as usize].record_us(us);
        }
        self.hist = h;
        self.len = 0;
    }

    /// Empties it for a new value, giving its histogram back to the pool.
    #[inline]
    pub fn clear(&mut self, pool: &mut HistogramPool) {
        if self.hist != NONE {
            pool.give(self.hist);
            self.hist = NONE;
        }
        self.len = 0;
    }

    /// Samples recorded.
    pub fn len(&self, pool: &HistogramPool) -> u64 {
        match self.hist {
            NONE => u64::from(self.len),
            h => pool.hists[h as usize].len(),
        }
    }

    pub fn is_empty(&self, pool: &HistogramPool) -> bool {
        self.len(pool) == 0
    }

    /// Adds `theirs` (an entry of a table whose pool is `their_pool`).
    pub fn merge(
        &mut self,
        theirs: &KeyLatency,
        their_pool: &HistogramPool,
        pool: &mut HistogramPool,
    ) {
        if theirs.hist == NONE {
            for &us in &theirs.inline[..theirs.len as usize] {
                self.record_us(us, pool);
            }
            return;
        }
        if self.hist == NONE {
            self.spill(pool);
        }
        pool.hists[self.hist as usize].merge(&their_pool.hists[theirs.hist as usize]);
    }

    /// The value at quantile `q` (0..=1), ms; 0 when empty. Exact (the sample of rank
    /// ⌈q·n⌉) while the samples are inline; the histogram's bucket midpoint after.
    pub fn quantile_ms(&self, q: f64, pool: &HistogramPool) -> f64 {
        if self.hist != NONE {
            return pool.hists[self.hist as usize].quantile_ms(q);
        }
        let n = self.len as usize;
        if n == 0 {
            return 0.0;
        }
        let mut sorted = self.inline;
        sorted[..n].sort_unstable();
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as usize).clamp(1, n);
        sorted[rank - 1] as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_exact_for_few_samples() {
        let mut pool = HistogramPool::default();
        let mut l = KeyLatency::default();
        assert_eq!(l.quantile_ms(0.99, &pool), 0.0);
        for us in [4_000, 1_000, 3_000] {
            l.record_us(us, &mut pool);
        }
        assert_eq!(pool.in_use(), 0, "three samples stay inline");
        assert_eq!(l.len(&pool), 3);
        assert_eq!(l.quantile_ms(0.5, &pool), 3.0);
        assert_eq!(l.quantile_ms(0.99, &pool), 4.0);
        assert_eq!(l.quantile_ms(0.0, &pool), 1.0);
        // 1,234 µs is not a bucket midpoint: inline percentiles are the samples themselves.
        let mut one = KeyLatency::default();
        one.record_us(1_234, &mut pool);
        assert_eq!(one.quantile_ms(0.5, &pool), 1.234);
    }

    #[test]
    fn a_frequent_key_spills_into_a_histogram_with_all_its_samples() {
        let mut pool = HistogramPool::default();
        let mut l = KeyLatency::default();
        for us in 1..=100u64 {
            l.record_us(us * 100, &mut pool);
        }
        assert_eq!(pool.in_use(), 1);
        assert_eq!(l.len(&pool), 100);
        let p50 = l.quantile_ms(0.5, &pool);
        assert!((p50 / 5.0 - 1.0).abs() < 0.1, "{p50}");
    }

    #[test]
    fn a_cleared_entry_starts_clean_and_its_histogram_is_reused_clean() {
        let mut pool = HistogramPool::default();
        let mut old = KeyLatency::default();
        for _ in 0..10 {
            old.record_us(90_000, &mut pool);
        }
        old.clear(&mut pool);
        assert_eq!(pool.in_use(), 0);
        assert!(old.is_empty(&pool));
        assert_eq!(old.quantile_ms(0.99, &pool), 0.0);
        // The successor is seen often: it gets the released histogram, emptied.
        for _ in 0..10 {
            old.record_us(1_000, &mut pool);
        }
        assert_eq!((pool.in_use(), pool.hists.len()), (1, 1));
        assert_eq!(old.len(&pool), 10);
        let p99 = old.quantile_ms(0.99, &pool);
        assert!((p99 - 1.0).abs() < 0.1, "{p99}");
    }

    #[test]
    fn merges_inline_and_pooled_entries() {
        let (mut pa, mut pb) = (HistogramPool::default(), HistogramPool::default());
        let (mut a, mut b, mut c) = Default::default();
        KeyLatency::record_us(&mut a, 1_000, &mut pa);
        for _ in 0..2 {
            KeyLatency::record_us(&mut b, 2_000, &mut pb);
        }
        a.merge(&b, &pb, &mut pa);
        assert_eq!((a.len(&pa), pa.in_use()), (3, 0));
        assert_eq!(a.quantile_ms(0.99, &pa), 2.0);
        for _ in 0..10 {
            KeyLatency::record_us(&mut c, 8_000, &mut pb);
        }
        a.merge(&c, &pb, &mut pa);
        assert_eq!((a.len(&pa), pa.in_use()), (13, 1));
        let p99 = a.quantile_ms(0.99, &pa);
        assert!((p99 / 8.0 - 1.0).abs() < 0.1, "{p99}");
    }
}
