//! The experiment a finding points to: a lab scenario, the variants that fit, parameters
//! estimated from the sample, as a typed [`SuggestedLadder`] (what `diagnose --run` runs),
//! and the exact `hotbench scenario run …` command rendered from it (to print). Pure. The
//! cli's tests check every ladder it can suggest against the shipped scenarios (names,
//! variants and parameters exist) and that the printed command means the same ladder.

use hotbench_stats::diagnosis_record::{Estimate, Finding, SuggestedLadder};

/// Most clients a suggested ladder runs (it runs on the embedded server: a laptop).
pub const MAX_CLIENTS: u32 = 200;
/// Most hot keys a suggested ladder spreads its load over.
pub const MAX_KEYS: u32 = 1000;
/// Shortest `--rtt` worth adding (the embedded server's own round trip is ~0.05 ms).
pub const MIN_RTT_MS: f64 = 0.2;
/// Shortest `--think` worth adding: a client's sub-millisecond time between statements
/// (pgbench's own CPU) is not reproduced by a sleep, which overshoots it on a busy machine
/// (measured: pgbench's 0.3 ms as --think put the lab at 0.27× its rate, none at 0.64×).
pub const MIN_THINK_MS: f64 = 1.0;

/// A scenario to run, before it becomes a command.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Suggestion {
    pub scenario: &'static str,
    /// Empty: the whole ladder.
    pub variants: Vec<&'static str>,
    /// `--param NAME=VALUE`s.
    pub params: Vec<(&'static str, String)>,
    pub estimate: Estimate,
}

impl Suggestion {
    pub fn new(scenario: &'static str, estimate: Estimate) -> Suggestion {
        Suggestion {
            scenario,
            variants: Vec::new(),
            params: Vec::new(),
            estimate,
        }
    }

    /// The ladder to run: the scenario, variants and parameters, the estimate's clients
    /// (at most [`MAX_CLIENTS`]) and its round trip or think time when worth adding.
    pub fn ladder(&self) -> SuggestedLadder {
        let tenths_us = |ms: f64| (ms * 10.0).round() as i64 * 100;
        SuggestedLadder {
            scenario: self.scenario.to_string(),
            variants: self.variants.iter().map(|v| v.to_string()).collect(),
            clients: self.estimate.clients.clamp(1, MAX_CLIENTS),
            params: self
                .params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            rtt_us: self
                .estimate
                .rtt_ms
                .filter(|r| *r >= MIN_RTT_MS)
                .map(tenths_us),
            think_us: self
                .estimate
                .think_ms
                .filter(|r| *r >= MIN_THINK_MS)
                .map(tenths_us),
        }
    }

    /// The command's arguments after `hotbench`.
    pub fn args(&self) -> Vec<String> {
        ladder_args(&self.ladder())
    }

    /// Fills the finding's scenario, variants, estimate, ladder and command.
    pub fn apply(self, f: &mut Finding) {
        let ladder = self.ladder();
        let args = ladder_args(&ladder);
        f.command = Some(command_line(&args));
        f.command_args = args;
        f.suggestion = Some(ladder);
        f.scenario = Some(self.scenario.to_string());
        f.variants = self.variants.iter().map(|v| v.to_string()).collect();
        f.estimate = Some(self.estimate);
    }
}

/// `l` as `scenario run`'s arguments (after `hotbench`).
pub fn ladder_args(l: &SuggestedLadder) -> Vec<String> {
    let mut a: Vec<String> = vec!["scenario".into(), "run".into(), l.scenario.clone()];
    a.push("-c".into());
    a.push(l.clients.to_string());
    if !l.variants.is_empty() {
        a.push("--variants".into());
        a.push(l.variants.join(","));
    }
    for (k, v) in &l.params {
        a.push("--param".into());
        a.push(format!("{k}={v}"));
    }
    // Tenths of a millisecond, as `--rtt 1.3ms`.
    let ms = |us: i64| format!("{}.{}ms", us / 1000, us % 1000 / 100);
    if let Some(us) = l.rtt_us {
        a.push("--rtt".into());
        a.push(ms(us));
    }
    if let Some(us) = l.think_us {
        a.push("--think".into());
        a.push(ms(us));
    }
    a
}

/// `hotbench ARGS…` as a shell line (arguments quoted when they need it).
pub fn command_line(args: &[String]) -> String {
    let mut s = String::from("hotbench");
    for a in args {
        s.push(' ');
        s.push_str(&shell_quote(a));
    }
    s
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=,.:/+@%".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// The estimate from what the sample saw: sessions on the relation, distinct hot rows (when
/// keys were read: ctids change with every update), the time between statements (network
/// round trips for remote clients, think time for local ones: see [`think_time`]).
pub fn estimate(sessions: u32, rows: Option<u64>, rtt_ms: Option<f64>) -> Estimate {
    Estimate {
        clients: sessions.clamp(1, MAX_CLIENTS),
        hot_keys: rows.map(|r| r.clamp(1, u64::from(MAX_KEYS)) as u32),
        rtt_ms: ms(rtt_ms),
        think_ms: None,
    }
}

/// `e` with the time between a transaction's statements as think time (`--think`), not as a
/// network round trip: the clients were on the server's host.
pub fn think_time(mut e: Estimate, gap_ms: Option<f64>) -> Estimate {
    e.rtt_ms = None;
    e.think_ms = ms(gap_ms);
    e
}

fn ms(v: Option<f64>) -> Option<f64> {
    v.filter(|r| r.is_finite() && *r > 0.0)
        .map(|r| (r * 10.0).round() / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_carry_clients_variants_params_and_rtt() {
        let mut s = Suggestion::new("daily-limit", estimate(16, Some(8), Some(1.26)));
        s.params.push(("customers", "8".into()));
        s.variants = vec!["select-for-update", "update-returning"];
        assert_eq!(
            command_line(&s.args()),
            "hotbench scenario run daily-limit -c 16 --variants select-for-update,update-returning \
             --param customers=8 --rtt 1.3ms"
        );
        let s = Suggestion::new("counters", think_time(estimate(8, None, None), Some(8.64)));
        assert_eq!(
            command_line(&s.args()),
            "hotbench scenario run counters -c 8 --think 8.6ms"
        );
        let s = Suggestion::new("counters", estimate(900, None, Some(0.05)));
        assert_eq!(
            command_line(&s.args()),
            "hotbench scenario run counters -c 200"
        );
        assert_eq!(shell_quote("a b'c"), "'a b'\\''c'");
        let mut f = Finding::default();
        s.apply(&mut f);
        assert_eq!(f.scenario.as_deref(), Some("counters"));
        assert_eq!(f.command_args[..3], ["scenario", "run", "counters"]);
        let l = f.suggestion.expect("the typed ladder");
        assert_eq!((l.clients, l.rtt_us, l.think_us), (200, None, None));
        let s = Suggestion::new("counters", estimate(2, None, Some(1.0)));
        assert_eq!(s.ladder().rtt_us, Some(1000));
        assert_eq!(s.args()[5..], ["--rtt", "1.0ms"]);
    }
}
