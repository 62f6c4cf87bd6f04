//! χ² goodness-of-fit of the random functions against their theoretical
//! distributions (10⁶ draws each, fixed seeds, so the tests are deterministic).

use hotbench_script::{exponential_rand, gaussian_rand, getrand, zipfian_rand, PrngState};

const DRAWS: usize = 1_000_000;

/// Critical value of χ² with `df` degrees of freedom at a tail probability of
/// about 1e-6 (Wilson–Hilferty approximation, z = 4.75).
fn chi2_critical(df: f64) -> f64 {
    let z = 4.75;
    let h = 2.0 / (9.0 * df);
    df * (1.0 - h + z * h.sqrt()).powi(3)
}

/// χ² statistic and degrees of freedom; bins expecting fewer than 5 draws are
/// merged into their neighbour.
fn chi2(observed: &[u64], probs: &[f64]) -> (f64, f64) {
    assert_eq!(observed.len(), probs.len());
    let total: u64 = observed.iter().sum();
    let mut stat = 0.0;
    let mut bins = 0usize;
    let (mut o_acc, mut e_acc) = (0.0, 0.0);
    for (o, p) in observed.iter().zip(probs) {
        o_acc += *o as f64;
        e_acc += p * total as f64;
        if e_acc >= 5.0 {
            stat += (o_acc - e_acc).powi(2) / e_acc;
            bins += 1;
            o_acc = 0.0;
            e_acc = 0.0;
        }
    }
    if e_acc > 0.0 {
        stat += (o_acc - e_acc).powi(2) / e_acc;
        bins += 1;
    }
    (stat, (bins - 1) as f64)
}

fn check(name: &str, observed: &[u64], probs: &[f64]) {
    let sum: f64 = probs.iter().sum();
    assert!(
        (sum - 1.0).abs() < 1e-9,
        "{name}: probabilities sum to {sum}"
    );
    let (stat, df) = chi2(observed, probs);
    let crit = chi2_critical(df);
    assert!(
        stat < crit,
        "{name}: chi2 = {stat:.1} with {df} df exceeds {crit:.1}"
    );
    // Also catch a suspiciously perfect fit (e.g. a deterministic generator).
    assert!(
        stat > df / 4.0,
        "{name}: chi2 = {stat:.1} with {df} df is too small"
    );
}

#[test]
fn uniform_random_fits() {
    let mut rng = PrngState::seed(11);
    let n = 100usize;
    let mut obs = vec![0u64; n];
    for _ in 0..DRAWS {
        let v = getrand(&mut rng, 1, n as i64);
        obs[(v - 1) as usize] += 1;
    }
    check("random(1, 100)", &obs, &vec![1.0 / n as f64; n]);
}

#[test]
fn zipfian_fits_zipf_law() {
    let (n, s) = (1000usize, 1.1);
    let mut rng = PrngState::seed(12);
    let mut obs = vec![0u64; n];
    for _ in 0..DRAWS {
        let v = zipfian_rand(&mut rng, 1, n as i64, s);
        assert!((1..=n as i64).contains(&v));
        obs[(v - 1) as usize] += 1;
    }
    let h: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
    let probs: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s) / h).collect();
    check("random_zipfian(1, 1000, 1.1)", &obs, &probs);
}

#[test]
fn exponential_fits_truncated_exponential() {
    let (n, param) = (100usize, 5.0);
    let mut rng = PrngState::seed(13);
    let mut obs = vec![0u64; n];
    for _ in 0..DRAWS {
        let v = exponential_rand(&mut rng, 1, n as i64, param);
        obs[(v - 1) as usize] += 1;
    }
    // P(rand <= x) = (1 - e^{-px}) / (1 - e^{-p}) on [0, 1].
    let cdf = |x: f64| (1.0 - (-param * x).exp()) / (1.0 - (-param).exp());
    let probs: Vec<f64> = (0..n)
        .map(|j| cdf((j + 1) as f64 / n as f64) - cdf(j as f64 / n as f64))
        .collect();
    check("random_exponential(1, 100, 5)", &obs, &probs);
}

/// erf by its Taylor series (accurate to ~1e-12 for |x| < 3.5).
fn erf(x: f64) -> f64 {
    let mut term = x;
    let mut sum = x;
    let x2 = x * x;
    for n in 1..200 {
        term *= -x2 / n as f64;
        let t = term / (2 * n + 1) as f64;
        sum += t;
        if t.abs() < 1e-17 {
            break;
        }
    }
    2.0 / std::f64::consts::PI.sqrt() * sum
}

fn phi(z: f64) -> f64 {
    0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2))
}

#[test]
fn gaussian_fits_truncated_normal() {
    let (n, param) = (100usize, 4.0);
    let mut rng = PrngState::seed(14);
    let mut obs = vec![0u64; n];
    for _ in 0..DRAWS {
        let v = gaussian_rand(&mut rng, 1, n as i64, param);
        obs[(v - 1) as usize] += 1;
    }
    let norm = phi(param) - phi(-param);
    let z = |j: usize| -param + 2.0 * param * j as f64 / n as f64;
    let probs: Vec<f64> = (0..n).map(|j| (phi(z(j + 1)) - phi(z(j))) / norm).collect();
    check("random_gaussian(1, 100, 4)", &obs, &probs);
}

#[test]
fn chi2_rejects_a_slightly_wrong_law() {
    // Power check: Zipf draws with s = 1.1 must not fit s = 1.12.
    let n = 1000usize;
    let mut rng = PrngState::seed(15);
    let mut obs = vec![0u64; n];
    for _ in 0..DRAWS {
        obs[(zipfian_rand(&mut rng, 1, n as i64, 1.1) - 1) as usize] += 1;
    }
    let h: f64 = (1..=n).map(|k| (k as f64).powf(-1.12)).sum();
    let probs: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-1.12) / h).collect();
    let (stat, df) = chi2(&obs, &probs);
    assert!(stat > chi2_critical(df), "chi2 {stat} should reject");
}

#[test]
fn poisson_delays_average_to_the_center() {
    // getPoissonRand: exponential inter-arrival delays rounded to integers.
    let mut rng = hotbench_script::PrngState::seed(16);
    let center = 2500.0;
    let n = 200_000;
    let mut sum = 0i64;
    let mut below_center = 0usize;
    for _ in 0..n {
        let d = hotbench_script::poisson_rand(&mut rng, center);
        assert!(d >= 0);
        sum += d;
        if (d as f64) < center {
            below_center += 1;
        }
    }
    let mean = sum as f64 / n as f64;
    // Standard error of the mean is center / sqrt(n) ≈ 5.6.
    assert!((mean - center).abs() < 30.0, "mean {mean}");
    // P(X < mean) = 1 - 1/e for an exponential law.
    let frac = below_center as f64 / n as f64;
    assert!(
        (frac - (1.0 - (-1.0f64).exp())).abs() < 0.01,
        "fraction {frac}"
    );
}
