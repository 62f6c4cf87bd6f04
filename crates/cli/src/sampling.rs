//! What `hotbench diagnose` and `hotbench capture` share around a read-only sample of a
//! live server, so the two read their flags, say what they sample and end alike: the
//! sample's length and period from `-T` and `--interval` ([`window`]), the line naming the
//! server and the length with Ctrl-C armed ([`announce`]), and how the sample ended as an
//! exit code and error line ([`exit_code`]). The server itself is resolved by
//! `target::sampled`, and a failed first connection gets `target::with_named_hint`.

use std::time::Duration;

use hotbench_engine::duration::{parse_duration_us, Unit};
use hotbench_results::sample_record::SampleStatus;
use hotbench_results::terminal;

use crate::fail::{Fail, Result};

/// `-T` (at least a second) and `--interval` (at least `min_interval_ms`, at most `-T`).
pub fn window(time: &str, interval: &str, min_interval_ms: u64) -> Result<(Duration, Duration)> {
    let us = parse_duration_us(time, Unit::Seconds)
        .map_err(|e| Fail::input(format!("-T/--time: {e}")))?;
    if us < 1_000_000 {
        return Err(Fail::input(format!(
            "invalid -T/--time \"{time}\": sample at least 1 second"
        )));
    }
    let iv = parse_duration_us(interval, Unit::Millis)
        .map_err(|e| Fail::input(format!("--interval: {e}")))?;
    if iv < min_interval_ms as i64 * 1_000 || iv > us {
        return Err(Fail::input(format!(
            "invalid --interval \"{interval}\": must be at least {min_interval_ms}ms and at most -T"
        )));
    }
    Ok((
        Duration::from_micros(us as u64),
        Duration::from_micros(iv as u64),
    ))
}

/// Arms Ctrl-C (it ends the sample early, keeping what was sampled) and prints
/// `hotbench COMMAND: sampling TARGET for N s (read-only; PERIODS)…`.
pub fn announce(command: &str, target: &str, duration: Duration, periods: &str) {
    hotbench_engine::signals::install();
    eprintln!(
        "hotbench {command}: sampling {} for {:.0} s (read-only; {periods})…",
        terminal::escape(target),
        duration.as_secs_f64(),
    );
}

/// The exit code of a sample that ended so (0, or 2 with its line); `document` names what
/// was written (`diagnosis`, `capture`), which covers what was sampled either way.
pub fn exit_code(status: SampleStatus, document: &str) -> u8 {
    match status {
        SampleStatus::Complete => 0,
        SampleStatus::ServerLost => {
            eprintln!(
                "hotbench: error: the server went away mid-sample; the {document} is partial"
            );
            2
        }
        SampleStatus::Interrupted => {
            eprintln!("hotbench: error: interrupted; the {document} covers what was sampled");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_checked_alike_for_both_commands() {
        let ok = window("30s", "100ms", 10).unwrap();
        assert_eq!(ok, (Duration::from_secs(30), Duration::from_millis(100)));
        for (t, iv, says) in [
            ("0.5", "10ms", "sample at least 1 second"),
            ("5s", "5ms", "must be at least 10ms and at most -T"),
            ("5s", "6s", "must be at least 10ms and at most -T"),
            ("x", "10ms", "-T/--time"),
        ] {
            let e = window(t, iv, 10).unwrap_err();
            assert!(
                e.message.contains(says) && e.code == 1,
                "{t} {iv}: {}",
                e.message
            );
        }
        assert_eq!(exit_code(SampleStatus::Complete, "capture"), 0);
        assert_eq!(exit_code(SampleStatus::ServerLost, "capture"), 2);
    }
}
