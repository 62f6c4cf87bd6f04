//! Value parsers shared by settings: pgbench's integer options (`option_parse_int`, with its
//! exact messages, which scripts grep) and hotbench's durations with a floor.

use crate::duration::{parse_duration_us, Unit};

/// The largest value pgbench accepts for its integer options (C's `INT_MAX`).
pub const INT_MAX: i64 = i32::MAX as i64;

/// pgbench's `option_parse_int`: `value` as an integer in `min..=max`, or pgbench's message
/// naming `option` (`-j/--jobs must be in range 1..2147483647`).
pub fn int_in(value: &str, option: &str, min: i64, max: i64) -> Result<i64, String> {
    let v: i64 = value
        .trim()
        .parse()
        .map_err(|_| format!("invalid value \"{value}\" for option {option}"))?;
    if v < min || v > max {
        return Err(format!("{option} must be in range {min}..{max}"));
    }
    Ok(v)
}

/// A duration of at least 10 ms (`--interval`, `--probe-interval`): finer sampling costs
/// more than it shows. A bare number is in `unit`.
pub fn duration_at_least_10ms(value: &str, option: &str, unit: Unit) -> Result<i64, String> {
    let us = parse_duration_us(value, unit)?;
    if us < 10_000 {
        return Err(format!(
            "invalid {option} \"{value}\": must be at least 10ms"
        ));
    }
    Ok(us)
}

/// `on` or `off`.
pub fn on_off(value: &str, option: &str) -> Result<bool, String> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("invalid {option} \"{value}\": expected on or off")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_messages() {
        assert_eq!(
            int_in("x", "-c/--clients", 1, INT_MAX).unwrap_err(),
            "invalid value \"x\" for option -c/--clients"
        );
        for v in ["0", "-5", "2147483648"] {
            assert_eq!(
                int_in(v, "-c/--clients", 1, INT_MAX).unwrap_err(),
                "-c/--clients must be in range 1..2147483647"
            );
        }
        assert_eq!(int_in(" 7 ", "-j/--jobs", 1, INT_MAX), Ok(7));
    }

    #[test]
    fn floors_and_switches() {
        assert_eq!(
            duration_at_least_10ms("5ms", "--interval", Unit::Seconds).unwrap_err(),
            "invalid --interval \"5ms\": must be at least 10ms"
        );
        assert_eq!(
            duration_at_least_10ms("2", "--interval", Unit::Seconds),
            Ok(2_000_000)
        );
        assert_eq!(on_off("off", "--probe"), Ok(false));
        assert!(on_off("maybe", "--probe")
            .unwrap_err()
            .contains("expected on or off"));
    }
}
