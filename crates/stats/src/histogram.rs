//! HDR latency histograms in microseconds with 3 significant digits, mergeable exactly and
//! serialisable (V2 + deflate, base64) inside the JSON result so that runs from several
//! client machines can be merged without loss.
//!
//! There is one per script command per thread, so a histogram costs nothing until its first
//! value and then only covers the range recorded so far (auto-resize): a 200,000-command
//! script must not pay ~190 KB per command for an hour-long range it never uses.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest trackable value of a fresh histogram: 2,048 µs (24 KB of counts);
/// longer latencies grow it one power of two at a time (auto-resize).
const INITIAL_HIGHEST_US: u64 = 2_048;

#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    /// `None` until the first value is recorded or merged.
    inner: Option<Histogram<u64>>,
}

/// The percentiles hotbench reports everywhere, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("histogram could not be decoded: {0:?}")]
    Decode(String),
    #[error("histograms could not be merged: {0:?}")]
    Merge(String),
}

fn fresh() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, INITIAL_HIGHEST_US, 3)
        .expect("static histogram bounds are valid");
    h.auto(true);
    h
}

impl LatencyHistogram {
    /// An empty histogram (allocates nothing).
    pub fn new() -> Self {
        LatencyHistogram { inner: None }
    }

    /// Records one latency in µs (values below 1 µs are recorded as 1 µs).
    #[inline]
    pub fn record_us(&mut self, us: u64) {
        // With auto-resize on, recording can only fail on overflow of u64 counts.
        let _ = self.inner.get_or_insert_with(fresh).record(us.max(1));
    }

    pub fn len(&self) -> u64 {
        self.inner.as_ref().map_or(0, |h| h.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the histogram, keeping its allocation.
    pub fn reset(&mut self) {
        if let Some(h) = self.inner.as_mut() {
            h.reset();
        }
    }

    pub fn merge(&mut self, other: &LatencyHistogram) -> Result<(), HistogramError> {
        let Some(o) = other.inner.as_ref().filter(|o| !o.is_empty()) else {
            return Ok(());
        };
        match self.inner.as_mut() {
            Some(h) => h
                .add(o)
                .map_err(|e| HistogramError::Merge(format!("{e:?}"))),
            None => {
                self.inner = Some(o.clone());
                Ok(())
            }
        }
    }

    /// The histogram when it holds values.
    fn recorded(&self) -> Option<&Histogram<u64>> {
        self.inner.as_ref().filter(|h| !h.is_empty())
    }

    /// Value at quantile `q` (0..=1) in µs.
    pub fn value_at_quantile_us(&self, q: f64) -> u64 {
        self.recorded().map_or(0, |h| h.value_at_quantile(q))
    }

    pub fn max_us(&self) -> u64 {
        self.recorded().map_or(0, |h| h.max())
    }

    pub fn mean_us(&self) -> f64 {
        self.recorded().map_or(0.0, |h| h.mean())
    }

    pub fn percentiles(&self) -> Percentiles {
        let ms = |us: u64| us as f64 / 1000.0;
        Percentiles {
            count: self.len(),
            mean_ms: self.mean_us() / 1000.0,
            p50_ms: ms(self.value_at_quantile_us(0.50)),
            p90_ms: ms(self.value_at_quantile_us(0.90)),
            p99_ms: ms(self.value_at_quantile_us(0.99)),
            p999_ms: ms(self.value_at_quantile_us(0.999)),
            max_ms: ms(self.max_us()),
        }
    }

    /// Each recorded value (µs, the highest of its bucket) with its count, lowest first.
    pub fn recorded_us(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.recorded()
            .into_iter()
            .flat_map(|h| h.iter_recorded())
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
    }

    /// Iterates `(value_us, percentile 0..100, count_at_or_below)` points of the
    /// percentile distribution, for plots.
    pub fn distribution(&self, ticks_per_half: u32) -> Vec<(u64, f64, u64)> {
        let Some(h) = self.recorded() else {
            return Vec::new();
        };
        h.iter_quantiles(ticks_per_half)
            .map(|v| {
                (
                    v.value_iterated_to(),
                    v.percentile(),
                    v.count_since_last_iteration(),
                )
            })
            .collect()
    }

    /// Compressed, base64-encoded HdrHistogram V2 representation.
    pub fn to_base64(&self) -> String {
        let mut buf = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        // An unallocated histogram is written as an empty one, as readers always expected.
        let empty;
        let h = match self.inner.as_ref() {
            Some(h) => h,
            None => {
                empty = fresh();
                &empty
            }
        };
        // Serialising into a Vec cannot fail for I/O reasons; fall back to empty.
        if ser.serialize(h, &mut buf).is_err() {
            buf.clear();
        }
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    pub fn from_base64(text: &str) -> Result<Self, HistogramError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        if bytes.is_empty() {
            return Ok(Self::new());
        }
        let mut de = Deserializer::new();
        let mut inner: Histogram<u64> = de
            .deserialize(&mut &bytes[..])
            .map_err(|e| HistogramError::Decode(format!("{e:?}")))?;
        inner.auto(true);
        Ok(LatencyHistogram { inner: Some(inner) })
    }
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        LatencyHistogram::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_uniform_values() {
        let mut h = LatencyHistogram::new();
        for us in 1..=10_000u64 {
            h.record_us(us);
        }
        let p = h.percentiles();
        assert_eq!(p.count, 10_000);
        assert!((p.p50_ms - 5.0).abs() < 0.01, "{p:?}");
        assert!((p.p99_ms - 9.9).abs() < 0.01, "{p:?}");
        assert!((p.max_ms - 10.0).abs() < 0.01, "{p:?}");
    }

    #[test]
    fn base64_round_trip_and_exact_merge() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for us in 0..5000u64 {
            a.record_us(us * 7 + 1);
            b.record_us(us * 13 + 5);
        }
        let a2 = LatencyHistogram::from_base64(&a.to_base64()).unwrap();
        assert_eq!(a2.len(), a.len());
        assert_eq!(a2.value_at_quantile_us(0.99), a.value_at_quantile_us(0.99));
        let mut merged = a2.clone();
        merged.merge(&b).unwrap();
        let mut direct = a.clone();
        direct.merge(&b).unwrap();
        assert_eq!(merged.len(), 10_000);
        assert_eq!(merged.percentiles(), direct.percentiles());
    }

    #[test]
    fn values_beyond_an_hour_auto_resize() {
        let hour = 3_600_000_000;
        let mut h = LatencyHistogram::new();
        h.record_us(10 * hour);
        assert_eq!(h.len(), 1);
        assert!(h.max_us() >= 9 * hour);
    }

    /// Heap bytes held by the histogram's counts.
    fn heap_bytes(h: &LatencyHistogram) -> usize {
        h.inner
            .as_ref()
            .map_or(0, |h| h.distinct_values() * std::mem::size_of::<u64>())
    }

    #[test]
    fn unused_histograms_allocate_nothing_and_small_ranges_stay_small() {
        let mut h = LatencyHistogram::new();
        assert_eq!(heap_bytes(&h), 0);
        assert_eq!(h.percentiles(), Percentiles::default());
        // Merging empty histograms does not allocate either.
        h.merge(&LatencyHistogram::new()).unwrap();
        assert_eq!(heap_bytes(&h), 0);
        for us in [50, 700, 2_000] {
            h.record_us(us);
        }
        assert!(heap_bytes(&h) <= 24 * 1024, "{}", heap_bytes(&h));
        // 100 ms needs a few more buckets, far below the hour-long range (~190 KB).
        h.record_us(100_000);
        assert!(heap_bytes(&h) <= 64 * 1024, "{}", heap_bytes(&h));
        assert_eq!(h.len(), 4);
    }

    #[test]
    fn lazy_and_grown_histograms_merge_and_serialise_like_full_ones() {
        let mut small = LatencyHistogram::new();
        let mut wide = LatencyHistogram::new();
        for us in 1..=3_000u64 {
            small.record_us(us);
            wide.record_us(us * 1_000);
        }
        let mut into_empty = LatencyHistogram::new();
        into_empty.merge(&wide).unwrap();
        into_empty.merge(&small).unwrap();
        let mut into_small = small.clone();
        into_small.merge(&wide).unwrap();
        assert_eq!(into_empty.percentiles(), into_small.percentiles());
        assert_eq!(into_small.len(), 6_000);
        assert!((into_small.value_at_quantile_us(0.25) as f64 - 1_500.0).abs() < 2.0);
        let back = LatencyHistogram::from_base64(&into_small.to_base64()).unwrap();
        assert_eq!(back.percentiles(), into_small.percentiles());
        let none = LatencyHistogram::from_base64(&LatencyHistogram::new().to_base64()).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn garbage_base64_is_an_error_not_a_panic() {
        assert!(LatencyHistogram::from_base64("%%%").is_err());
        assert!(LatencyHistogram::from_base64("AAAA").is_err());
    }
}
