//! Observed against predicted key popularity for Zipfian keys: when a `--key` variable comes
//! from `random_zipfian(lo, hi, s)`, value `lo + i - 1` is drawn with probability
//! `i^-s / H(n, s)` (n = hi - lo + 1, H the generalised harmonic number), so the top k values
//! should take `H(k, s) / H(n, s)` of the transactions. Printing both tells whether the skew
//! the run saw is the one asked for (a wrong parameter, a key overwritten by `\gset`, or a
//! sketch that lost the heavy hitters all show as a gap).

use serde::{Deserialize, Serialize};

/// Terms summed exactly before the tail is integrated (Euler–Maclaurin): exact enough for
/// any n, and constant work for a billion keys.
const EXACT_TERMS: u64 = 100_000;

/// `H(n, s) = Σ_{i=1..n} i^-s`.
pub fn harmonic(n: u64, s: f64) -> f64 {
    let exact = n.min(EXACT_TERMS);
    // Smallest terms first: less rounding error.
    let mut sum: f64 = (1..=exact).rev().map(|i| (i as f64).powf(-s)).sum();
    if n > exact {
        // Σ_{i=a..b} f(i) ≈ ∫_a^b f + (f(a) + f(b)) / 2 + (f'(b) - f'(a)) / 12, f = x^-s.
        let (a, b) = ((exact + 1) as f64, n as f64);
        let f = |x: f64| x.powf(-s);
        let df = |x: f64| -s * x.powf(-s - 1.0);
        let integral = if (s - 1.0).abs() < 1e-12 {
            b.ln() - a.ln()
        } else {
            (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s)
        };
        sum += integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0;
    }
    sum
}

/// Share of draws `random_zipfian` gives its `k` most likely values out of `n`.
pub fn predicted_top_share(n: u64, s: f64, k: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    harmonic(k.min(n), s) / harmonic(n, s)
}

/// Share of `total` taken by the `k` largest of `counts`.
pub fn observed_top_share(counts: &[u64], total: u64, k: usize) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.iter().take(k).sum::<u64>() as f64 / total as f64
}

/// The k values compared: the top 1 and the top 10 (fewer when there are fewer values).
pub fn ks(n: u64) -> Vec<u64> {
    let mut out = vec![1];
    if n >= 10 {
        out.push(10);
    }
    out
}

/// One comparison in the result record (`hot_key_zipf`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZipfShare {
    pub variable: String,
    /// `random_zipfian(lo, hi, s)` as the script asked, its arguments evaluated.
    pub lo: i64,
    pub hi: i64,
    pub s: f64,
    pub k: u64,
    /// `H(k, s) / H(n, s)`.
    pub predicted_share: f64,
    /// The k most frequent values' share of the transactions counted for the variable.
    pub observed_share: f64,
    pub transactions: u64,
    /// The key table became a sketch: the observed share is an estimate (an over-count of
    /// at most the evicted values' counts).
    #[serde(default)]
    pub approximate: bool,
}

impl ZipfShare {
    /// The comparisons for one variable, given each value's transaction count.
    pub fn compare(
        variable: &str,
        (lo, hi, s): (i64, i64, f64),
        counts: &[u64],
        total: u64,
        approximate: bool,
    ) -> Vec<ZipfShare> {
        let n = (hi as i128 - lo as i128 + 1).clamp(0, u64::MAX as i128) as u64;
        if n < 2 || total == 0 || !s.is_finite() || s <= 0.0 {
            return Vec::new();
        }
        ks(n)
            .into_iter()
            .map(|k| ZipfShare {
                variable: variable.to_string(),
                lo,
                hi,
                s,
                k,
                predicted_share: predicted_top_share(n, s, k),
                observed_share: observed_top_share(counts, total, k as usize),
                transactions: total,
                approximate,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmonic_numbers_match_their_definition_and_known_limits() {
        assert!((harmonic(1, 1.5) - 1.0).abs() < 1e-15);
        assert!((harmonic(3, 1.0) - (1.0 + 0.5 + 1.0 / 3.0)).abs() < 1e-15);
        assert!((harmonic(2, 2.0) - 1.25).abs() < 1e-15);
        // ζ(2) = π²/6; the tail past 10^9 is below 1e-9.
        let zeta2 = std::f64::consts::PI.powi(2) / 6.0;
        assert!((harmonic(1_000_000_000, 2.0) - zeta2).abs() < 1e-8);
        // H(n, 1) ≈ ln n + γ + 1/2n.
        let n = 10_000_000u64;
        let approx = (n as f64).ln() + 0.577_215_664_901_532_9 + 0.5 / n as f64;
        assert!((harmonic(n, 1.0) - approx).abs() < 1e-9);
        // The integrated tail agrees with the exact sum where both can be computed.
        let exact: f64 = (1..=300_000u64).rev().map(|i| (i as f64).powf(-1.1)).sum();
        assert!((harmonic(300_000, 1.1) - exact).abs() < 1e-9);
    }

    #[test]
    fn predicted_shares_of_the_top_keys() {
        // s = 2, n = 2: weights 1 and 1/4.
        assert!((predicted_top_share(2, 2.0, 1) - 0.8).abs() < 1e-12);
        assert_eq!(predicted_top_share(5, 1.3, 5), 1.0);
        assert_eq!(predicted_top_share(5, 1.3, 50), 1.0);
        let one = predicted_top_share(10_000, 1.1, 1);
        let ten = predicted_top_share(10_000, 1.1, 10);
        assert!(one > 0.0 && one < ten && ten < 1.0);
        assert_eq!(predicted_top_share(0, 1.1, 1), 0.0);
    }

    #[test]
    fn observed_share_takes_the_largest_counts() {
        assert_eq!(observed_top_share(&[1, 7, 2], 10, 1), 0.7);
        assert_eq!(observed_top_share(&[1, 7, 2], 10, 2), 0.9);
        assert_eq!(observed_top_share(&[], 0, 1), 0.0);
    }

    #[test]
    fn comparisons_for_top_1_and_top_10() {
        let c = ZipfShare::compare("k", (1, 1000, 1.5), &[40, 30, 30], 100, false);
        assert_eq!(c.iter().map(|z| z.k).collect::<Vec<_>>(), [1, 10]);
        assert_eq!(c[0].observed_share, 0.4);
        assert_eq!(c[1].observed_share, 1.0);
        assert_eq!(c[0].transactions, 100);
        assert_eq!(
            ZipfShare::compare("k", (1, 5, 1.5), &[1], 1, false).len(),
            1
        );
        assert!(ZipfShare::compare("k", (3, 3, 1.5), &[1], 1, false).is_empty());
        assert!(ZipfShare::compare("k", (1, 9, 1.5), &[], 0, false).is_empty());
    }
}
