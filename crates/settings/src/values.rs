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

/// What a list option (`-c 1,2,4`, `--pool-size`, `--retry-on`, `--variants`) holds, for
/// its messages: `invalid {what} "ENTRY" in {option} "TEXT": expected a list such as {example}`.
pub struct ListOption<'a> {
    pub what: &'a str,
    pub option: &'a str,
    pub example: &'a str,
}

impl ListOption<'_> {
    /// The message for `entry` of `text`.
    pub fn bad(&self, entry: &str, text: &str) -> String {
        format!(
            "invalid {} \"{entry}\" in {} \"{text}\": expected a list such as {}",
            self.what, self.option, self.example
        )
    }

    /// The entries of `text` (`1,2,4`; blanks separate too: `1 2 4`), in order. An empty
    /// entry (`1,,2`, a trailing comma) is a typo, not an entry to skip: refused, as is an
    /// empty list.
    pub fn entries<'t>(&self, text: &'t str) -> Result<Vec<&'t str>, String> {
        let mut out = Vec::new();
        for entry in text.split(',') {
            if entry.trim().is_empty() {
                return Err(self.bad(entry, text));
            }
            out.extend(entry.split_whitespace());
        }
        Ok(out)
    }
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

    #[test]
    fn list_entries_refuse_empty_ones() {
        let l = ListOption {
            what: "pool size",
            option: "--pool-size",
            example: "4,8,16",
        };
        assert_eq!(l.entries("4, 8 16"), Ok(vec!["4", "8", "16"]));
        for typo in ["4,,8", "4,8,", ",4", "", " "] {
            assert!(
                l.entries(typo)
                    .unwrap_err()
                    .starts_with("invalid pool size \""),
                "{typo:?}"
            );
        }
    }
}
