//! Retry back-off (`--retry-backoff none|fixed:DUR|exp:MIN:MAX[:MULT]`). Exponential back-off
//! uses "full jitter" (a uniform draw in `[0, min(MAX, MIN·MULT^(try-1))]`), which spreads
//! retrying clients apart instead of letting them collide again in lockstep.

use crate::duration::{parse_duration_us, Unit};

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Backoff {
    None,
    Fixed { us: i64 },
    Exp { min_us: i64, max_us: i64, mult: f64 },
}

impl Backoff {
    pub fn parse(text: &str) -> Result<Backoff, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let dur = |s: &str| parse_duration_us(s, Unit::Millis);
        match parts.as_slice() {
            ["none"] => Ok(Backoff::None),
            ["fixed", d] => Ok(Backoff::Fixed { us: dur(d)? }),
            ["exp", min, max] | ["exp", min, max, _] => {
                let min_us = dur(min)?;
                let max_us = dur(max)?;
                let mult = match parts.get(3) {
                    Some(m) => m
                        .parse::<f64>()
                        .ok()
                        .filter(|m| m.is_finite() && *m >= 1.0)
                        .ok_or_else(|| {
                            format!("invalid back-off multiplier \"{m}\": expected a number ≥ 1")
                        })?,
                    None => 2.0,
                };
                if max_us < min_us {
                    return Err(format!(
                        "invalid back-off \"{text}\": MAX must not be below MIN"
                    ));
                }
                Ok(Backoff::Exp {
                    min_us,
                    max_us,
                    mult,
                })
            }
            _ => Err(format!(
                "invalid back-off \"{text}\": expected none, fixed:DUR or exp:MIN:MAX[:MULT]"
            )),
        }
    }

    /// Delay before try number `try_no` (2 = first retry). `unit` is a uniform draw in [0,1).
    pub fn delay_us(&self, try_no: u32, unit: f64) -> i64 {
        match *self {
            Backoff::None => 0,
            Backoff::Fixed { us } => us,
            Backoff::Exp {
                min_us,
                max_us,
                mult,
            } => {
                let exp = try_no.saturating_sub(2).min(64) as i32;
                let cap = (min_us as f64 * mult.powi(exp)).min(max_us as f64);
                (cap * unit.clamp(0.0, 1.0)) as i64
            }
        }
    }
}

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
    fn parse_forms() {
        assert_eq!(Backoff::parse("none"), Ok(Backoff::None));
        assert_eq!(Backoff::parse("fixed:5ms"), Ok(Backoff::Fixed { us: 5000 }));
        assert_eq!(
            Backoff::parse("exp:10ms:1s"),
            Ok(Backoff::Exp {
                min_us: 10_000,
                max_us: 1_000_000,
                mult: 2.0
            })
        );
        assert!(Backoff::parse("exp:1s:10ms").is_err());
        assert!(Backoff::parse("exp:1ms:10ms:0.5").is_err());
        assert!(Backoff::parse("linear:1ms").is_err());
    }

    #[test]
    fn exponential_grows_and_caps() {
        let b = Backoff::parse("exp:10ms:100ms:2").unwrap();
        assert_eq!(b.delay_us(2, 1.0), 10_000);
        assert_eq!(b.delay_us(3, 1.0), 20_000);
        assert_eq!(b.delay_us(5, 1.0), 80_000);
        assert_eq!(b.delay_us(6, 1.0), 100_000);
        assert_eq!(b.delay_us(60, 1.0), 100_000);
        assert_eq!(b.delay_us(3, 0.5), 10_000);
    }

    #[test]
    fn jitter_is_uniformish() {
        let mut j = Jitter::new(42);
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| j.next_unit()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
