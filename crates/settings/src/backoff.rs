//! Retry back-off (`--retry-backoff none|fixed:DUR|exp:MIN:MAX[:MULT]`). Exponential back-off
//! uses "full jitter" (a uniform draw in `[0, min(MAX, MIN·MULT^(try-1))]`), which spreads
//! retrying clients apart instead of letting them collide again in lockstep. The draw itself
//! is the engine's (`hotbench_engine::backoff::Jitter`); this is the setting and its arithmetic.

use serde::{Deserialize, Serialize};

use crate::duration::{parse_duration_us, Unit};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
}
