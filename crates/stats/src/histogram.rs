//! HDR latency histograms in microseconds with 3 significant digits, mergeable exactly and
//! serialisable (V2 + deflate, base64) inside the JSON result so that runs from several
//! client machines can be merged without loss.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest trackable value before auto-resize kicks in: one hour in µs.
const HIGHEST_US: u64 = 3_600_000_000;

#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
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

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let mut inner = Histogram::<u64>::new_with_bounds(1, HIGHEST_US, 3)
            .expect("static histogram bounds are valid");
        inner.auto(true);
        LatencyHistogram { inner }
    }

    /// Records one latency in µs (values below 1 µs are recorded as 1 µs).
    #[inline]
    pub fn record_us(&mut self, us: u64) {
        // With auto-resize on, recording can only fail on overflow of u64 counts.
        let _ = self.inner.record(us.max(1));
    }

    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    pub fn reset(&mut self) {
        self.inner.reset();
    }

    pub fn merge(&mut self, other: &LatencyHistogram) -> Result<(), HistogramError> {
        self.inner
            .add(&other.inner)
            .map_err(|e| HistogramError::Merge(format!("{e:?}")))
    }

    /// Value at quantile `q` (0..=1) in µs.
    pub fn value_at_quantile_us(&self, q: f64) -> u64 {
        if self.inner.is_empty() {
            0
        } else {
            self.inner.value_at_quantile(q)
        }
    }

    pub fn max_us(&self) -> u64 {
        if self.inner.is_empty() {
            0
        } else {
            self.inner.max()
        }
    }

    pub fn mean_us(&self) -> f64 {
        if self.inner.is_empty() {
            0.0
        } else {
            self.inner.mean()
        }
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

    /// Iterates `(value_us, percentile 0..100, count_at_or_below)` points of the
    /// percentile distribution, for plots.
    pub fn distribution(&self, ticks_per_half: u32) -> Vec<(u64, f64, u64)> {
        if self.inner.is_empty() {
            return Vec::new();
        }
        self.inner
            .iter_quantiles(ticks_per_half)
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
        // Serialising into a Vec cannot fail for I/O reasons; fall back to empty.
        if ser.serialize(&self.inner, &mut buf).is_err() {
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
        Ok(LatencyHistogram { inner })
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
        let mut h = LatencyHistogram::new();
        h.record_us(10 * HIGHEST_US);
        assert_eq!(h.len(), 1);
        assert!(h.max_us() >= 9 * HIGHEST_US);
    }

    #[test]
    fn garbage_base64_is_an_error_not_a_panic() {
        assert!(LatencyHistogram::from_base64("%%%").is_err());
        assert!(LatencyHistogram::from_base64("AAAA").is_err());
    }
}
