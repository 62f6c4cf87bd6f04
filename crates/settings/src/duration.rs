//! Parsing of human durations used by hotbench's own options (`--rtt 1ms`,
//! `--retry-backoff exp:10ms:1s`, scenario `-T 30s`): a number with an optional unit
//! `us`, `ms`, `s`, `m` or `h`. A bare number means `default_unit`.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Micros,
    Millis,
    Seconds,
}

/// Parses `text` into microseconds.
pub fn parse_duration_us(text: &str, default_unit: Unit) -> Result<i64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("invalid duration \"{text}\": expected a number with unit us, ms, s, m or h")
    })?;
    let factor = match unit.trim() {
        "" => match default_unit {
            Unit::Micros => 1.0,
            Unit::Millis => 1e3,
            Unit::Seconds => 1e6,
        },
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        other => {
            return Err(format!(
                "invalid duration \"{text}\": unknown unit \"{other}\" (use us, ms, s, m or h)"
            ))
        }
    };
    let us = value * factor;
    if !us.is_finite() || !(0.0..=1e15).contains(&us) {
        return Err(format!("invalid duration \"{text}\": out of range"));
    }
    Ok(us.round() as i64)
}

/// A run length given to `-T` (`run` and `scenario run` alike): a bare number of seconds, as
/// pgbench, or a number with a unit (`90s`, `2m`). Reports print seconds, so it must come to a
/// whole number of them, at least one.
pub fn parse_whole_seconds(text: &str) -> Result<u64, String> {
    let us = parse_duration_us(text, Unit::Seconds)?;
    if us < 1_000_000 {
        return Err(format!(
            "invalid duration \"{text}\": must be at least 1 second"
        ));
    }
    if us % 1_000_000 != 0 {
        return Err(format!(
            "invalid duration \"{text}\": must be a whole number of seconds"
        ));
    }
    Ok((us / 1_000_000) as u64)
}

/// Formats microseconds compactly (`1ms`, `250us`, `1.5s`).
pub fn format_us(us: i64) -> String {
    if us == 0 {
        "0".into()
    } else if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us >= 1_000_000 {
        format!("{}s", us as f64 / 1e6)
    } else if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else if us >= 1000 {
        format!("{}ms", us as f64 / 1e3)
    } else {
        format!("{us}us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_defaults() {
        assert_eq!(parse_duration_us("1ms", Unit::Seconds), Ok(1000));
        assert_eq!(parse_duration_us("250us", Unit::Seconds), Ok(250));
        assert_eq!(parse_duration_us("1.5s", Unit::Millis), Ok(1_500_000));
        assert_eq!(parse_duration_us("2m", Unit::Millis), Ok(120_000_000));
        assert_eq!(parse_duration_us("30", Unit::Seconds), Ok(30_000_000));
        assert_eq!(parse_duration_us("30", Unit::Millis), Ok(30_000));
        assert!(parse_duration_us("ms", Unit::Millis).is_err());
        assert!(parse_duration_us("5 parsecs", Unit::Millis)
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration_us("-1s", Unit::Millis).is_err());
    }

    #[test]
    fn formats_round_trip() {
        for us in [0, 250, 1000, 1500, 1_000_000, 2_500_000] {
            let text = format_us(us);
            assert_eq!(parse_duration_us(&text, Unit::Micros), Ok(us), "{text}");
        }
    }

    #[test]
    fn whole_seconds_with_or_without_units() {
        assert_eq!(parse_whole_seconds("30"), Ok(30));
        assert_eq!(parse_whole_seconds("2s"), Ok(2));
        assert_eq!(parse_whole_seconds("2m"), Ok(120));
        assert_eq!(
            parse_whole_seconds("1500ms").unwrap_err(),
            "invalid duration \"1500ms\": must be a whole number of seconds"
        );
        assert!(parse_whole_seconds("500ms")
            .unwrap_err()
            .contains("at least 1 second"));
        assert!(parse_whole_seconds("2 fortnights").is_err());
    }
}
