//! pgbench's numeric options and their one-line range messages, checked the way pgbench's
//! getopt loop does: every value as soon as it is read (they are the flags' value parsers),
//! in command-line order, before the mode checks, so `-T -1` says `-T/--time must be in
//! range 1..2147483647` whatever else is on the line. Floating values (`-R`, `-L`,
//! `--sampling-rate`) must also be finite and meaningful: pgbench takes `nan`, `inf` and
//! `1e-20` and then schedules nonsense; hotbench refuses them.

use crate::fail::{Fail, Result};

pub use hotbench_settings::values::INT_MAX;

/// Longest mean delay or latency limit accepted, in microseconds (about 31 years): beyond
/// it, `-R`/`-L` values only overflow the schedule.
const MAX_DELAY_US: f64 = 1e15;

/// Files a run needs besides one socket per client (pgbench's margin).
const SPARE_FILES: u64 = 3;

/// `-T`: a bare number as pgbench reads it, or hotbench's duration with a unit (`2s`, `1m`)
/// that comes to whole seconds (the report prints `duration: N s`).
pub fn parse_time(value: &str) -> Result<i64> {
    if value.trim_end().ends_with(|c: char| c.is_alphabetic()) {
        return hotbench_engine::duration::parse_whole_seconds(value)
            .map(|s| s as i64)
            // pgbench's line first (parsers look for it), hotbench's unit rules as detail.
            .map_err(|e| {
                Fail::input(format!("invalid value \"{value}\" for option -T/--time"))
                    .detail(e.to_string())
            });
    }
    parse_int(value, "-T/--time", 1, INT_MAX)
}

/// pgbench's `option_parse_int` (`hotbench_settings::values::int_in`), as an input error.
pub fn parse_int(value: &str, option: &str, min: i64, max: i64) -> Result<i64> {
    hotbench_settings::values::int_in(value, option, min, max).map_err(Fail::input)
}

/// C's `atof`: the longest numeric prefix, 0 when none.
pub fn atof(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    for i in (1..=t.len()).rev() {
        if t.is_char_boundary(i) && t[..i].parse::<f64>().is_ok() {
            end = i;
            break;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

/// A rate in transactions per second that a schedule can follow: > 0, finite, and a mean
/// delay between transactions that fits the schedule.
pub fn rate_is_meaningful(v: f64) -> bool {
    v > 0.0 && v.is_finite() && 1e6 / v <= MAX_DELAY_US
}

/// `-R`: transactions per second.
pub fn parse_rate(r: &str) -> Result<f64> {
    let v = atof(r);
    if !rate_is_meaningful(v) {
        return Err(Fail::input(format!("invalid rate limit: \"{r}\"")));
    }
    Ok(v)
}

/// `-L`: milliseconds, > 0, finite, at least a microsecond; returns microseconds.
pub fn parse_latency_limit(l: &str) -> Result<i64> {
    let us = atof(l) * 1000.0;
    if !(1.0..=MAX_DELAY_US).contains(&us) {
        return Err(Fail::input(format!("invalid latency limit: \"{l}\"")));
    }
    Ok(us as i64)
}

/// `--sampling-rate`: a fraction in (0, 1].
pub fn parse_sampling_rate(s: &str) -> Result<f64> {
    let v = atof(s);
    if !(v > 0.0 && v <= 1.0) {
        return Err(Fail::input(format!("invalid sampling rate: \"{s}\"")));
    }
    Ok(v)
}

/// `--max-tries`: 0 (unlimited) or more.
pub fn parse_max_tries(t: &str) -> Result<u32> {
    match t.trim().parse::<i64>() {
        Ok(v) if (0..=i64::from(u32::MAX)).contains(&v) => Ok(v as u32),
        _ => Err(Fail::input(format!(
            "invalid number of maximum tries: \"{t}\""
        ))),
    }
}

/// `-F`: 10..100.
pub fn fillfactor(v: &str) -> Result<i32> {
    parse_int(v, "-F/--fillfactor", 10, 100).map(|n| n as i32)
}

/// `-s`: 1..2147483647.
pub fn scale(v: &str) -> Result<i32> {
    parse_int(v, "-s/--scale", 1, INT_MAX).map(|n| n as i32)
}

/// `--partitions`: 0..2147483647.
pub fn partitions(v: &str) -> Result<i32> {
    parse_int(v, "--partitions", 0, INT_MAX).map(|n| n as i32)
}

/// `-P`: seconds, 1..2147483647.
pub fn progress(v: &str) -> Result<u32> {
    parse_int(v, "-P/--progress", 1, INT_MAX).map(|n| n as u32)
}

/// `-t`: transactions per client, 1..2147483647.
pub fn transactions(v: &str) -> Result<u64> {
    parse_int(v, "-t/--transactions", 1, INT_MAX).map(|n| n as u64)
}

/// `--aggregate-interval`: seconds, 1..2147483647.
pub fn aggregate_interval(v: &str) -> Result<u32> {
    parse_int(v, "--aggregate-interval", 1, INT_MAX).map(|n| n as u32)
}

/// One connection per client must fit in the open-files limit (raised to the hard limit
/// first, as for 1,000 clients): pgbench's check, instead of trying to allocate state for
/// two billion clients and aborting.
pub fn check_open_files(clients: usize) -> Result<()> {
    let _ = hotbench_pgserver::limits::raise_nofile_limit();
    let limit = hotbench_pgserver::limits::nofile_limit();
    let needed = (clients as u64).saturating_add(SPARE_FILES);
    if needed > limit {
        return Err(Fail::input(format!(
            "need at least {needed} open files, but system limit is {limit}"
        ))
        .hint("Reduce number of clients, or use limit/ulimit to increase the system limit."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atof_reads_numeric_prefix() {
        assert_eq!(atof("100"), 100.0);
        assert_eq!(atof("1.5x"), 1.5);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof(" 2e3"), 2000.0);
    }

    #[test]
    fn parse_int_messages_match_pgbench() {
        assert_eq!(
            parse_int("x", "-c/--clients", 1, INT_MAX)
                .unwrap_err()
                .message,
            "invalid value \"x\" for option -c/--clients"
        );
        for v in ["0", "-5", "2147483648"] {
            assert_eq!(
                parse_int(v, "-c/--clients", 1, INT_MAX)
                    .unwrap_err()
                    .message,
                "-c/--clients must be in range 1..2147483647"
            );
        }
    }

    #[test]
    fn non_finite_and_meaningless_floats_are_refused() {
        for r in ["nan", "inf", "-inf", "infinity", "1e-20", "0", "-5", "x"] {
            let e = parse_rate(r).unwrap_err();
            assert_eq!(e.message, format!("invalid rate limit: \"{r}\""));
        }
        assert_eq!(parse_rate("100").unwrap(), 100.0);
        assert_eq!(parse_rate("0.5").unwrap(), 0.5);
        for l in ["nan", "inf", "1e-20", "0", "-1", "1e300"] {
            let e = parse_latency_limit(l).unwrap_err();
            assert_eq!(e.message, format!("invalid latency limit: \"{l}\""));
        }
        assert_eq!(parse_latency_limit("2.5").unwrap(), 2500);
        for s in ["nan", "inf", "0", "1.5", "-0.1"] {
            assert!(parse_sampling_rate(s).is_err(), "{s}");
        }
        for t in ["-10", "-1", "x", "4294967296"] {
            let e = parse_max_tries(t).unwrap_err();
            assert_eq!(
                e.message,
                format!("invalid number of maximum tries: \"{t}\"")
            );
        }
        assert_eq!(parse_max_tries("0").unwrap(), 0);
    }

    #[test]
    fn clients_beyond_the_open_files_limit_are_refused() {
        let e = check_open_files(i32::MAX as usize).unwrap_err();
        assert!(
            e.message.starts_with("need at least 2147483650 open files"),
            "{}",
            e.message
        );
        assert_eq!(e.code, 1);
        check_open_files(10).unwrap();
    }
}
