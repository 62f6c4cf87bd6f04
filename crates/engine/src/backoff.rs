//! Retry back-off's random draw: the setting and its arithmetic are
//! `hotbench_settings::Backoff`; the jitter that spreads retrying clients is drawn here.

pub use hotbench_settings::Backoff;

/// A tiny splitmix64 generator for jitter, kept apart from the script's PRNG so that back-off
/// draws never change the values a retried transaction uses.
#[derive(Debug, Clone)]
pub struct Jitter(u64);

impl Jitter {
    pub fn new(seed: u64) -> Self {
        Jitter(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_uniformish() {
        let mut j = Jitter::new(42);
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| j.next_unit()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
