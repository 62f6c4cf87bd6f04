//! PostgreSQL's `pg_prng` (xoroshiro128** seeded through splitmix64) and the
//! random distributions pgbench draws from it.
//!
//! Every function here consumes the generator exactly as pgbench 15 does, so the
//! same state yields the same values: `getrand`, `getExponentialRand`,
//! `getGaussianRand`, `getZipfianRand` (Devroye's rejection method) and
//! `getPoissonRand` (used by the engine for `-R` schedules).

/// State of one `pg_prng` generator. `Copy`, so snapshot/restore is an assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrngState {
    s0: u64,
    s1: u64,
}

/// Smallest accepted `random_gaussian` parameter (`MIN_GAUSSIAN_PARAM`).
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// Smallest accepted `random_zipfian` parameter (`MIN_ZIPFIAN_PARAM`).
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
/// Largest accepted `random_zipfian` parameter (`MAX_ZIPFIAN_PARAM`).
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut val = *state;
    val = (val ^ (val >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    val = (val ^ (val >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    val ^ (val >> 31)
}

impl PrngState {
    /// `pg_prng_seed`: fills the state from a 64-bit seed with splitmix64.
    pub fn seed(seed: u64) -> Self {
        let mut s = seed;
        let s0 = splitmix64(&mut s);
        let s1 = splitmix64(&mut s);
        if s0 == 0 && s1 == 0 {
            PrngState {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            PrngState { s0, s1 }
        }
    }

    /// `pg_prng_uint64`: the next raw 64-bit output of xoroshiro128**.
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `pg_prng_uint64_range`: uniform in `[rmin, rmax]` by bitmask rejection;
    /// `rmin` when the range is empty.
    pub fn u64_range(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax > rmin {
            let range = rmax - rmin;
            let rshift = range.leading_zeros();
            loop {
                let val = self.next_u64() >> rshift;
                if val <= range {
                    return rmin + val;
                }
            }
        } else {
            rmin
        }
    }

    /// `pg_prng_double`: uniform in `[0, 1)` with 52 random bits.
    pub fn double(&mut self) -> f64 {
        let v = self.next_u64();
        (v >> 12) as f64 * (1.0 / 4_503_599_627_370_496.0)
    }

    /// `pg_prng_double_normal`: standard normal by the basic Box-Muller transform.
    pub fn double_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }
}

/// pgbench `getrand`: uniform integer in `[min, max]` (caller guarantees
/// `max - min` does not overflow).
pub fn getrand(rng: &mut PrngState, min: i64, max: i64) -> i64 {
    min.wrapping_add(rng.u64_range(0, max.wrapping_sub(min) as u64) as i64)
}

/// pgbench `getExponentialRand` (`parameter > 0`).
pub fn exponential_rand(rng: &mut PrngState, min: i64, max: i64, parameter: f64) -> i64 {
    let cut = (-parameter).exp();
    let uniform = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / parameter;
    min.wrapping_add(((max.wrapping_sub(min).wrapping_add(1)) as f64 * rand) as i64)
}

/// pgbench `getGaussianRand` (`parameter >= 2`).
pub fn gaussian_rand(rng: &mut PrngState, min: i64, max: i64, parameter: f64) -> i64 {
    let mut stdev;
    loop {
        stdev = rng.double_normal();
        if !(stdev < -parameter || stdev >= parameter) {
            break;
        }
    }
    let rand = (stdev + parameter) / (parameter * 2.0);
    min.wrapping_add(((max.wrapping_sub(min).wrapping_add(1)) as f64 * rand) as i64)
}

fn iterative_zipfian(rng: &mut PrngState, n: i64, s: f64) -> i64 {
    let b = 2.0f64.powf(s - 1.0);
    if n <= 1 {
        return 1;
    }
    loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            return x as i64;
        }
    }
}

/// pgbench `getZipfianRand` (`MIN_ZIPFIAN_PARAM <= s <= MAX_ZIPFIAN_PARAM`).
pub fn zipfian_rand(rng: &mut PrngState, min: i64, max: i64, s: f64) -> i64 {
    let n = max.wrapping_sub(min).wrapping_add(1);
    min.wrapping_sub(1)
        .wrapping_add(iterative_zipfian(rng, n, s))
}

/// pgbench `getPoissonRand`: delay (same unit as `center`) whose series
/// approximates a Poisson process; the engine uses it on `ts_throttle_rs`
/// with `center` = per-thread throttle delay in microseconds.
pub fn poisson_rand(rng: &mut PrngState, center: f64) -> i64 {
    let uniform = 1.0 - rng.double();
    (-uniform.ln() * center + 0.5) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_inclusive_and_bounded() {
        let mut r = PrngState::seed(42);
        for _ in 0..10_000 {
            let v = getrand(&mut r, -3, 3);
            assert!((-3..=3).contains(&v));
        }
        assert_eq!(r.u64_range(5, 5), 5);
    }

    #[test]
    fn double_in_unit_interval() {
        let mut r = PrngState::seed(1);
        for _ in 0..10_000 {
            let d = r.double();
            assert!((0.0..1.0).contains(&d));
        }
    }
}
