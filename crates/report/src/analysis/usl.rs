//! The Universal Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)), fitted to measured
//! throughput at several client counts: σ is contention (serialisation), κ coherency
//! (crosstalk), λ the throughput of one client without either. The fit is least squares on
//! X, started from the linearised form N/X = (1 + σ(N−1) + κN(N−1))/λ (ordinary least
//! squares) and refined by Levenberg–Marquardt with λ, σ, κ kept ≥ 0.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UslFit {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
    /// Coefficient of determination of the fit on X.
    pub r2: f64,
}

impl UslFit {
    /// Predicted throughput at `n` clients.
    pub fn throughput(&self, n: f64) -> f64 {
        usl(self.lambda, self.sigma, self.kappa, n)
    }

    /// Concurrency of peak throughput, sqrt((1−σ)/κ); `None` when κ = 0 (no retrograde
    /// region: throughput approaches λ/σ) or σ ≥ 1.
    pub fn peak_concurrency(&self) -> Option<f64> {
        (self.kappa > 0.0 && self.sigma < 1.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt())
    }

    /// Throughput at the peak concurrency, or the asymptote λ/σ without a peak.
    pub fn peak_throughput(&self) -> Option<f64> {
        match self.peak_concurrency() {
            Some(n) => Some(self.throughput(n)),
            None if self.sigma > 0.0 => Some(self.lambda / self.sigma),
            None => None,
        }
    }
}

/// Which term of the USL's denominator costs more (typed in `stats`: the USL document
/// stores it).
pub use hotbench_results::Constraint;

impl UslFit {
    /// The constraint that dominates at `n` clients (the largest measured count, normally):
    /// contention σ(N−1) against coherency κN(N−1), i.e. σ against κN.
    pub fn dominant_constraint(&self, n: f64) -> Constraint {
        if self.sigma <= 0.0 && self.kappa <= 0.0 {
            Constraint::None
        } else if self.sigma >= self.kappa * n {
            Constraint::Contention
        } else {
            Constraint::Coherency
        }
    }
}

fn usl(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UslError {
    #[error("the USL fit needs at least 3 distinct client counts with throughput > 0 (got {0})")]
    TooFewPoints(usize),
}

/// Fits the USL to `(clients, throughput)` points.
pub fn fit(points: &[(f64, f64)]) -> Result<UslFit, UslError> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, x)| n.is_finite() && x.is_finite() && *n >= 1.0 && *x > 0.0)
        .collect();
    let mut distinct: Vec<f64> = pts.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return Err(UslError::TooFewPoints(distinct.len()));
    }
    let mut p = linear_start(&pts);
    let mut cost = sse(&pts, p);
    let mut mu = 1e-3;
    for _ in 0..500 {
        // Jacobian of the residual r = X − f: J = −∂f/∂p; build JᵀJ and Jᵀr.
        let mut jtj = [[0.0f64; 3]; 3];
        let mut jtr = [0.0f64; 3];
        for &(n, x) in &pts {
            let d = 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0);
            let f = p[0] * n / d;
            let g = [n / d, -f * (n - 1.0) / d, -f * n * (n - 1.0) / d];
            let r = x - f;
            for i in 0..3 {
                jtr[i] += g[i] * r;
                for j in 0..3 {
                    jtj[i][j] += g[i] * g[j];
                }
            }
        }
        let mut improved = false;
        for _ in 0..30 {
            let mut a = jtj;
            for (i, row) in a.iter_mut().enumerate() {
                row[i] += mu * jtj[i][i].max(1e-300);
            }
            let Some(step) = solve3(a, jtr) else {
                mu *= 10.0;
                continue;
            };
            let cand = [
                (p[0] + step[0]).max(0.0),
                (p[1] + step[1]).max(0.0),
                (p[2] + step[2]).max(0.0),
            ];
            let c = sse(&pts, cand);
            if c < cost {
                let rel = (cost - c) / cost.max(1e-300);
                p = cand;
                cost = c;
                mu = (mu / 10.0).max(1e-12);
                improved = rel > 1e-15;
                break;
            }
            mu *= 10.0;
        }
        if !improved {
            break;
        }
    }
    let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
    let tss: f64 = pts.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let r2 = if tss > 0.0 { 1.0 - cost / tss } else { 1.0 };
    Ok(UslFit {
        lambda: p[0],
        sigma: p[1],
        kappa: p[2],
        r2,
    })
}

fn sse(pts: &[(f64, f64)], p: [f64; 3]) -> f64 {
    pts.iter()
        .map(|&(n, x)| (x - usl(p[0], p[1], p[2], n)).powi(2))
        .sum()
}

/// Ordinary least squares of N/X = a + b(N−1) + cN(N−1), then λ = 1/a, σ = bλ, κ = cλ
/// (clamped ≥ 0; λ falls back to the best measured X/N when a ≤ 0).
fn linear_start(pts: &[(f64, f64)]) -> [f64; 3] {
    let mut ata = [[0.0f64; 3]; 3];
    let mut aty = [0.0f64; 3];
    for &(n, x) in pts {
        let row = [1.0, n - 1.0, n * (n - 1.0)];
        let y = n / x;
        for i in 0..3 {
            aty[i] += row[i] * y;
            for j in 0..3 {
                ata[i][j] += row[i] * row[j];
            }
        }
    }
    let best_per_client = pts.iter().map(|&(n, x)| x / n).fold(0.0, f64::max);
    match solve3(ata, aty) {
        Some([a, b, c]) if a > 0.0 => {
            let lambda = 1.0 / a;
            [lambda, (b * lambda).max(0.0), (c * lambda).max(0.0)]
        }
        _ => [best_per_client, 0.0, 0.0],
    }
}

/// Solves a 3×3 linear system by Gaussian elimination with partial pivoting.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..3 {
            let f = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (k, v) in a[row].iter_mut().enumerate().skip(col) {
                *v -= f * pivot_row[k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let s: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn synthetic(lambda: f64, sigma: f64, kappa: f64, noise: f64) -> Vec<(f64, f64)> {
        // Deterministic ±noise pattern, so the test never flakes.
        let wiggle = [1.0, -0.6, 0.3, -1.0, 0.8, -0.2, 0.5, -0.9, 0.1, 0.7];
        [1, 2, 4, 8, 16, 24, 32, 48, 64, 96]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let n = n as f64;
                (n, usl(lambda, sigma, kappa, n) * (1.0 + noise * wiggle[i]))
            })
            .collect()
    }

    fn within(got: f64, want: f64, tol: f64) -> bool {
        ((got - want) / want).abs() <= tol
    }

    #[test]
    fn recovers_known_parameters_exactly_without_noise() {
        let f = fit(&synthetic(1200.0, 0.06, 0.0008, 0.0)).unwrap();
        assert!(within(f.lambda, 1200.0, 1e-6), "{f:?}");
        assert!(within(f.sigma, 0.06, 1e-6), "{f:?}");
        assert!(within(f.kappa, 0.0008, 1e-6), "{f:?}");
        assert!(f.r2 > 0.999_999);
    }

    #[test]
    fn recovers_sigma_and_kappa_within_5_percent_with_1_percent_noise() {
        // Client counts 1..96 span each curve's peak, so κ is identifiable.
        for (l, s, k) in [
            (1000.0, 0.05, 0.001),
            (500.0, 0.1, 0.0005),
            (200.0, 0.03, 0.002),
        ] {
            let f = fit(&synthetic(l, s, k, 0.01)).unwrap();
            println!(
                "λ {l} σ {s} κ {k}: errors λ {:+.2}% σ {:+.2}% κ {:+.2}%",
                (f.lambda / l - 1.0) * 100.0,
                (f.sigma / s - 1.0) * 100.0,
                (f.kappa / k - 1.0) * 100.0
            );
            assert!(within(f.sigma, s, 0.05), "σ {} vs {s}: {f:?}", f.sigma);
            assert!(within(f.kappa, k, 0.05), "κ {} vs {k}: {f:?}", f.kappa);
            assert!(within(f.lambda, l, 0.05), "λ {} vs {l}: {f:?}", f.lambda);
        }
    }

    #[test]
    fn peak_concurrency_and_throughput() {
        let f = UslFit {
            lambda: 1000.0,
            sigma: 0.05,
            kappa: 0.001,
            r2: 1.0,
        };
        let n = f.peak_concurrency().unwrap();
        assert!((n - (0.95f64 / 0.001).sqrt()).abs() < 1e-9);
        let peak = f.peak_throughput().unwrap();
        assert!(peak > f.throughput(n - 1.0) && peak > f.throughput(n + 1.0));
        let linear = UslFit { kappa: 0.0, ..f };
        assert_eq!(linear.peak_concurrency(), None);
        assert!((linear.peak_throughput().unwrap() - 20_000.0).abs() < 1e-6);
    }

    #[test]
    fn too_few_points_is_an_error() {
        assert_eq!(
            fit(&[(1.0, 10.0), (2.0, 18.0), (2.0, 19.0)]),
            Err(UslError::TooFewPoints(2))
        );
    }

    /// Baron Schwartz, "Practical Scalability Analysis with the Universal Scalability Law"
    /// (VividCortex, 2015): the Cisco benchmark (throughput at 1..32 concurrency) and its
    /// published nonlinear least-squares fit, σ = 0.02671591, κ = 7.690945e-4,
    /// λ = 995.6486, N_max = 35, X_max = 12341 (the values codahale/usl4j's tests use too).
    pub(crate) const CISCO: [(f64, f64); 32] = [
        (1.0, 955.16),
        (2.0, 1878.91),
        (3.0, 2688.01),
        (4.0, 3548.68),
        (5.0, 4315.54),
        (6.0, 5130.43),
        (7.0, 5931.37),
        (8.0, 6531.08),
        (9.0, 7219.8),
        (10.0, 7867.61),
        (11.0, 8278.71),
        (12.0, 8646.7),
        (13.0, 9047.84),
        (14.0, 9426.55),
        (15.0, 9645.37),
        (16.0, 9897.24),
        (17.0, 10097.6),
        (18.0, 10240.5),
        (19.0, 10532.39),
        (20.0, 10798.52),
        (21.0, 11151.43),
        (22.0, 11518.63),
        (23.0, 11806.0),
        (24.0, 12089.37),
        (25.0, 12075.41),
        (26.0, 12177.29),
        (27.0, 12211.41),
        (28.0, 12158.93),
        (29.0, 12155.27),
        (30.0, 12118.04),
        (31.0, 12140.4),
        (32.0, 12074.39),
    ];

    #[test]
    fn reproduces_the_published_cisco_fit_within_0_1_percent() {
        let f = fit(&CISCO).unwrap();
        assert!(within(f.sigma, 0.02671591, 1e-3), "σ {f:?}");
        assert!(within(f.kappa, 7.690945e-4, 1e-3), "κ {f:?}");
        assert!(within(f.lambda, 995.6486, 1e-3), "λ {f:?}");
        // The book gives N_max as whole clients (35.57 → 35) and X_max at that N.
        assert_eq!(f.peak_concurrency().unwrap().floor(), 35.0);
        assert!(within(f.throughput(35.0), 12341.0, 1e-3), "{f:?}");
        // Schwartz: the Cisco system is contention-bound, not coherency-bound.
        assert_eq!(f.dominant_constraint(32.0), Constraint::Contention);
        assert_eq!(f.dominant_constraint(64.0), Constraint::Coherency);
    }
}
