//! `--random-seed` handling and the order in which pgbench 15 derives every
//! generator from the base sequence in `main()`.
//!
//! pgbench seeds `base_random_sequence` from the seed, then draws, in order:
//! one state per client (`cs_func_rs`), then `default_seed` (only when `-D`
//! did not define it), then per thread `ts_choose_rs`, `ts_throttle_rs`,
//! `ts_sample_rs`. Reproducing this order gives the same scripts, schedule
//! and values for the same seed.

use crate::prng::{getrand, PrngState};
use std::str::FromStr;

/// The `--random-seed` option value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomSeed {
    /// `time` (the default): the current time in microseconds.
    Time,
    /// `rand`: a strong random source.
    Rand,
    /// An explicit unsigned integer.
    Value(u64),
}

/// A `--random-seed` value pgbench would reject.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unrecognized random seed option \"{0}\"")]
pub struct SeedError(pub String);

impl FromStr for RandomSeed {
    type Err = SeedError;

    /// pgbench rules: `time`, `rand`, or what `sscanf("%lu%c")` reads as exactly
    /// one unsigned long (leading blanks and a sign allowed, nothing after).
    fn from_str(s: &str) -> Result<Self, SeedError> {
        match s {
            "time" => return Ok(RandomSeed::Time),
            "rand" => return Ok(RandomSeed::Rand),
            _ => {}
        }
        let err = || SeedError(s.to_string());
        let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let (neg, digits) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        // strtoul saturates at ULONG_MAX on overflow and negates for '-'.
        let v = digits.parse::<u64>().unwrap_or(u64::MAX);
        Ok(RandomSeed::Value(if neg && v != u64::MAX {
            v.wrapping_neg()
        } else {
            v
        }))
    }
}

impl RandomSeed {
    /// The 64-bit seed: the explicit value, the time in microseconds, or a
    /// random number. (pgbench's `random_seed` variable holds this.)
    pub fn resolve(self) -> u64 {
        match self {
            RandomSeed::Value(v) => v,
            RandomSeed::Time => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros() as u64)
                .unwrap_or(0),
            RandomSeed::Rand => {
                use std::hash::{BuildHasher, Hasher};
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_u64(RandomSeed::Time.resolve());
                h.finish()
            }
        }
    }
}

/// Per-thread generators, in pgbench's `TState` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadRandom {
    /// `ts_choose_rs`: script choice ([`choose_script`]).
    pub choose: PrngState,
    /// `ts_throttle_rs`: `-R` schedule ([`crate::prng::poisson_rand`]).
    pub throttle: PrngState,
    /// `ts_sample_rs`: `--sampling-rate` (`double() > rate` skips the log line).
    pub sample: PrngState,
}

/// Every generator pgbench derives from one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds {
    /// The seed itself (value of the `random_seed` variable).
    pub random_seed: u64,
    /// `cs_func_rs` of client 0, 1, … (the expression functions' generator).
    pub clients: Vec<PrngState>,
    /// Value of `default_seed` (None when `-D default_seed=…` was given).
    pub default_seed: Option<u64>,
    /// Thread generators, thread 0, 1, …
    pub threads: Vec<ThreadRandom>,
}

/// Derives all generators exactly as pgbench 15 `main()` does. `nthreads` is
/// clamped to `nclients` like pgbench; pass `draw_default_seed = false` when
/// the user defined `default_seed` with `-D` (pgbench then skips that draw).
pub fn derive_seeds(
    random_seed: u64,
    nclients: usize,
    nthreads: usize,
    draw_default_seed: bool,
) -> Seeds {
    let mut base = PrngState::seed(random_seed);
    let clients = (0..nclients)
        .map(|_| PrngState::seed(base.next_u64()))
        .collect();
    let default_seed = draw_default_seed.then(|| base.next_u64());
    let nthreads = nthreads.min(nclients).max(1);
    let threads = (0..nthreads)
        .map(|_| {
            let choose = PrngState::seed(base.next_u64());
            let throttle = PrngState::seed(base.next_u64());
            let sample = PrngState::seed(base.next_u64());
            ThreadRandom {
                choose,
                throttle,
                sample,
            }
        })
        .collect();
    Seeds {
        random_seed,
        clients,
        default_seed,
        threads,
    }
}

/// How many clients each thread runs (pgbench deals them out in order:
/// thread 0 gets clients `0..counts[0]`, and so on).
pub fn clients_per_thread(nclients: usize, nthreads: usize) -> Vec<usize> {
    let nthreads = nthreads.min(nclients).max(1);
    let mut dealt = 0;
    (0..nthreads)
        .map(|i| {
            let n = (nclients - dealt + nthreads - i - 1) / (nthreads - i);
            dealt += n;
            n
        })
        .collect()
}

/// pgbench `chooseScript`: weighted choice of a script index on the thread's
/// `ts_choose_rs`. With one script nothing is drawn. Weights must not all be 0.
pub fn choose_script(rng: &mut PrngState, weights: &[i32]) -> usize {
    if weights.len() <= 1 {
        return 0;
    }
    let total: i64 = weights.iter().map(|&w| i64::from(w)).sum();
    if total <= 0 {
        return 0;
    }
    let mut w = getrand(rng, 0, total - 1);
    let mut i = 0;
    loop {
        w -= i64::from(weights.get(i).copied().unwrap_or(0));
        i += 1;
        if w < 0 || i >= weights.len() {
            return i - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_parsing() {
        assert_eq!("time".parse(), Ok(RandomSeed::Time));
        assert_eq!("12".parse(), Ok(RandomSeed::Value(12)));
        assert_eq!(" 12".parse(), Ok(RandomSeed::Value(12)));
        assert!("12 ".parse::<RandomSeed>().is_err());
        assert!("x".parse::<RandomSeed>().is_err());
        assert_eq!("-1".parse(), Ok(RandomSeed::Value(u64::MAX)));
        // Checked against pgbench 15 (value of :random_seed).
        assert_eq!("+5".parse(), Ok(RandomSeed::Value(5)));
        assert_eq!("-5".parse(), Ok(RandomSeed::Value(5u64.wrapping_neg())));
        assert_eq!(
            "18446744073709551616".parse(),
            Ok(RandomSeed::Value(u64::MAX))
        );
        assert!("0x10".parse::<RandomSeed>().is_err());
        assert!("".parse::<RandomSeed>().is_err());
        assert!("time1".parse::<RandomSeed>().is_err());
    }

    #[test]
    fn deal_clients() {
        assert_eq!(clients_per_thread(10, 3), vec![4, 3, 3]);
        assert_eq!(clients_per_thread(2, 8), vec![1, 1]);
    }
}
