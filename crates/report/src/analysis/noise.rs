//! Is a difference between two runs more than run-to-run noise? Welch's t-test on two
//! per-interval series (tps, p99 …). Intervals are autocorrelated (a checkpoint or a lock
//! convoy spans several), so n intervals carry less than n samples' worth of information:
//! as latte does, the series' autocorrelation time τ is estimated by batch means and the test
//! and the confidence intervals use the effective sample size n/τ. The uncorrected p-value is
//! kept too, to show what the correction changes.

/// Mean, sample variance and count of a series.
fn moments(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var, n)
}

/// Autocorrelation time τ of a series by batch means (latte's estimator): for batches of
/// b = 2, 4, 8 … values (at least 4 batches), τ_b = b·Var(batch means)/Var(values), taken
/// while τ_b > 0.2·b (beyond that the batches are too few to tell); τ is the largest, ≥ 1.
pub fn autocorrelation_time(xs: &[f64]) -> f64 {
    let (_, var, _) = moments(xs);
    if xs.len() < 8 || var <= 0.0 || !var.is_finite() {
        return 1.0;
    }
    let mut tau: f64 = 1.0;
    let mut b = 2;
    while xs.len() / b >= 4 {
        let means: Vec<f64> = xs
            .chunks_exact(b)
            .map(|c| c.iter().sum::<f64>() / b as f64)
            .collect();
        let t = b as f64 * moments(&means).1 / var;
        if t <= 0.2 * b as f64 {
            break;
        }
        tau = tau.max(t);
        b *= 2;
    }
    tau
}

/// Effective sample size n/τ, at least 2 (and at most n).
pub fn effective_n(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    (n / autocorrelation_time(xs)).clamp(n.min(2.0), n)
}

/// Two-sided p-value of Welch's t-test with each side's sample size given (`n_a`, `n_b`:
/// the effective sizes for the corrected test, the lengths for the plain one).
fn welch_p_sized(a: &[f64], n_a: f64, b: &[f64], n_b: f64) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va, _) = moments(a);
    let (mb, vb, _) = moments(b);
    let (na, nb) = (n_a.max(2.0), n_b.max(2.0));
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    Some(student_t_two_sided(t, df))
}

/// Two-sided p-value of Welch's t-test, each interval counted as a sample (uncorrected);
/// `None` with fewer than 2 samples on a side.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    welch_p_sized(a, a.len() as f64, b, b.len() as f64)
}

/// Welch's t-test on effective sample sizes (autocorrelation-corrected).
pub fn welch_p_corrected(a: &[f64], b: &[f64]) -> Option<f64> {
    welch_p_sized(a, effective_n(a), b, effective_n(b))
}

/// The two-sided critical value t such that P(|T| ≥ t) = `alpha` at `df` degrees of freedom.
pub fn t_critical(alpha: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1e3);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if student_t_two_sided(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// 95% confidence interval of a series' mean on its effective sample size.
pub fn mean_ci95(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let (m, v, _) = moments(xs);
    let n = effective_n(xs);
    let half = t_critical(0.05, n - 1.0) * (v / n).sqrt();
    Some((m - half, m + half))
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    inc_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// Regularised incomplete beta function I_x(a, b) (continued fraction, Numerical Recipes).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method
/// (Numerical Recipes' `betacf`).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / away_from_zero(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        // The even and the odd step of the fraction.
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 / away_from_zero(1.0 + aa * d);
            c = away_from_zero(1.0 + aa / c);
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// Lentz's guard: a denominator that would vanish becomes tiny instead.
fn away_from_zero(v: f64) -> f64 {
    const TINY: f64 = 1e-300;
    if v.abs() < TINY {
        TINY
    } else {
        v
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_distribution_matches_tables() {
        // t = 2.228 at 10 df is the two-sided 5% point; t = 1.96 at huge df likewise.
        assert!((student_t_two_sided(2.228, 10.0) - 0.05).abs() < 1e-3);
        assert!((student_t_two_sided(1.96, 1e6) - 0.05).abs() < 1e-3);
        assert!((student_t_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-10);
    }

    /// A deterministic pseudo-random series in [-0.5, 0.5) (xorshift).
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut x = seed.max(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 10_000) as f64 / 10_000.0 - 0.5
            })
            .collect()
    }

    #[test]
    fn autocorrelation_time_of_independent_and_clustered_series() {
        let iid = noise(7, 64);
        let tau = autocorrelation_time(&iid);
        assert!(tau < 2.0, "independent values: τ {tau}");
        // Each value repeated 4 times: τ ≈ 4, so 64 values are worth about 16.
        let clustered: Vec<f64> = noise(9, 16).iter().flat_map(|&v| [v; 4]).collect();
        let n = effective_n(&clustered);
        assert!((8.0..=24.0).contains(&n), "clustered: n_eff {n}");
        assert_eq!(effective_n(&[1.0, 2.0, 3.0]), 3.0);
    }

    #[test]
    fn correction_widens_the_test_on_autocorrelated_series() {
        // Two slowly wandering series with the same mean level but different phases.
        let a: Vec<f64> = noise(3, 10)
            .iter()
            .flat_map(|&v| [100.0 + 4.0 * v; 6])
            .collect();
        let b: Vec<f64> = noise(5, 10)
            .iter()
            .flat_map(|&v| [100.0 + 4.0 * v; 6])
            .collect();
        let plain = welch_p(&a, &b).unwrap();
        let corrected = welch_p_corrected(&a, &b).unwrap();
        assert!(corrected > plain, "plain {plain} corrected {corrected}");
        let (lo, hi) = mean_ci95(&a).unwrap();
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!(lo < mean && mean < hi);
        assert!((t_critical(0.05, 10.0) - 2.228).abs() < 1e-3);
    }

    #[test]
    fn same_series_is_noise_and_shifted_one_is_not() {
        let a = [100.0, 104.0, 98.0, 101.0, 97.0, 103.0, 99.0, 102.0];
        let b = [101.0, 99.0, 103.0, 98.0, 100.0, 102.0, 97.0, 104.0];
        assert!(welch_p(&a, &b).unwrap() > 0.5);
        let c: Vec<f64> = a.iter().map(|x| x * 1.2).collect();
        assert!(welch_p(&a, &c).unwrap() < 0.001);
        assert_eq!(welch_p(&a[..1], &b), None);
    }
}
