//! How a statement's values are drawn, fitted to the values seen in one slot: one value is a
//! constant; integers are a key range whose hottest values are kept exactly with their
//! shares (values seen more often than a uniform draw over the range would plausibly give
//! any value) and whose other values — the tail — follow a uniform draw, `random_zipfian`
//! or `random_exponential` over their ranks (see [`fit_tail`] for how), mapped to keys with
//! `permute()` so that the tail's popular ranks are not neighbouring keys. Values are
//! weighted by their inclusion weights (see [`crate::tracker`]). Pure.

use std::collections::BTreeMap;

use crate::sql_text::Value;

/// Hot values kept exactly, at most.
pub const MAX_HOT: usize = 10;

/// The tail's distribution over its ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tail {
    Uniform,
    /// `random_zipfian(1, n, s)`.
    Zipfian(f64),
    /// `random_exponential(1, n, theta)`.
    Exponential(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Fit {
    /// No value was seen (bind parameters the source did not show).
    Unknown,
    /// Always this value (as seen).
    Constant(Value),
    /// Integers in `lo..=hi`: `hot` values with their shares (0–1, of all draws), the rest
    /// from `tail`.
    Int {
        lo: i64,
        hi: i64,
        hot: Vec<(i64, f64)>,
        tail: Tail,
    },
}

/// What was fitted, with the numbers it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub fit: Fit,
    pub observations: u64,
    pub distinct: u64,
    /// One line saying where the numbers came from (the script's comment).
    pub why: String,
}

/// Fits one slot's weighted values.
pub fn fit(values: &[(Value, f64)]) -> Fitted {
    let known: Vec<&(Value, f64)> = values
        .iter()
        .filter(|(v, w)| !matches!(v, Value::Unknown) && *w > 0.0 && w.is_finite())
        .collect();
    let observations = known.len() as u64;
    if known.is_empty() {
        return Fitted {
            fit: Fit::Unknown,
            observations: 0,
            distinct: 0,
            why: "no value seen (bind parameters were not visible)".into(),
        };
    }
    let ints: Option<Vec<(i64, f64)>> = known
        .iter()
        .map(|(v, w)| match v {
            Value::Number(_) => v.as_int().map(|i| (i, *w)),
            _ => None,
        })
        .collect();
    match ints {
        Some(ints) => fit_ints(&ints, observations),
        None => most_common(&known, observations),
    }
}

/// A slot of texts (or fractions): its most common value, said so.
fn most_common(known: &[&(Value, f64)], observations: u64) -> Fitted {
    let mut by: Vec<(String, Value, f64)> = Vec::new();
    for (v, w) in known {
        let k = format!("{v:?}");
        match by.iter_mut().find(|b| b.0 == k) {
            Some(b) => b.2 += w,
            None => by.push((k, v.clone(), *w)),
        }
    }
    by.sort_by(|a, b| b.2.total_cmp(&a.2));
    let total: f64 = by.iter().map(|b| b.2).sum();
    let distinct = by.len() as u64;
    let (_, v, w) = by.swap_remove(0);
    let why = if distinct == 1 {
        format!("the same value in all {observations} seen")
    } else {
        format!(
            "the most common of {distinct} distinct values seen ({:.0}% of {observations}); the others are not reproduced",
            100.0 * w / total
        )
    };
    Fitted {
        fit: Fit::Constant(v),
        observations,
        distinct,
        why,
    }
}

fn fit_ints(ints: &[(i64, f64)], observations: u64) -> Fitted {
    let mut counts: BTreeMap<i64, f64> = BTreeMap::new();
    for (v, w) in ints {
        *counts.entry(*v).or_default() += w;
    }
    let distinct = counts.len() as u64;
    if distinct == 1 {
        let v = ints[0].0;
        return Fitted {
            fit: Fit::Constant(Value::Number(v.to_string())),
            observations,
            distinct,
            why: format!("the same value in all {observations} seen"),
        };
    }
    let (min, max) = (
        *counts.keys().next().unwrap_or(&0),
        *counts.keys().next_back().unwrap_or(&0),
    );
    // The range a uniform draw of n values spans on average is (n-1)/(n+1) of the whole:
    // widen the seen range by one average spacing on each side, not below 1 for keys seen
    // positive.
    let n = observations.max(2) as f64;
    let step = ((max - min) as f64 / (n - 1.0)).round() as i64;
    let lo = if min >= 1 {
        (min - step).max(1)
    } else {
        min - step
    };
    let hi = max.saturating_add(step);
    let domain = (hi - lo + 1).max(1) as f64;
    let total: f64 = counts.values().sum();
    // Weighted values are worth fewer observations: the effective sample size (Σw)²/Σw²
    // judges what is hot, the weighted shares say how hot.
    let sum_sq: f64 = ints.iter().map(|(_, w)| w * w).sum();
    let n_eff = (total * total / sum_sq.max(1e-12)).clamp(1.0, n);
    let unit = n_eff / total;
    let mut sorted: Vec<(i64, f64)> = counts.iter().map(|(k, c)| (*k, c * unit)).collect();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let limit = uniform_max(n_eff, domain);
    let hot: Vec<(i64, f64)> = sorted
        .iter()
        .take(MAX_HOT)
        // Plausibly not uniform, and at least twice a uniform key's share.
        .take_while(|(_, c)| *c > limit && *c >= 3.0 && *c >= 2.0 * n_eff / domain)
        .map(|(k, c)| (*k, c / n_eff))
        .collect();
    let tail_counts: Vec<f64> = sorted.iter().skip(hot.len()).map(|x| x.1).collect();
    let tail_domain = (domain - hot.len() as f64).max(1.0);
    // The distinct values are counted among the values actually seen (not weighted).
    let hot_keys: Vec<i64> = hot.iter().map(|h| h.0).collect();
    let tail_seen = ints.iter().filter(|(v, _)| !hot_keys.contains(v)).count() as f64;
    let tail = fit_tail(&tail_counts, tail_domain, tail_seen);
    let hot_share: f64 = hot.iter().map(|h| h.1).sum();
    let why = match (&hot[..], tail) {
        ([], Tail::Uniform) => format!(
            "uniform over {lo}..{hi}: {observations} values seen, {distinct} distinct, none more often than the {limit:.0} a uniform draw allows"
        ),
        _ => format!(
            "{} hot value{} ({:.1}% of draws, each seen more often than the {limit:.0} a uniform draw over {lo}..{hi} allows), the other {:.1}% {}; {observations} values seen, {distinct} distinct",
            hot.len(),
            if hot.len() == 1 { "" } else { "s" },
            100.0 * hot_share,
            100.0 * (1.0 - hot_share),
            match tail {
                Tail::Uniform => "uniform".to_string(),
                Tail::Zipfian(s) => format!("zipfian over their ranks (s = {s:.3}: the distinct values seen)"),
                Tail::Exponential(t) => format!("exponential over their ranks (theta = {t:.3}: the distinct values seen)"),
            }
        ),
    };
    Fitted {
        fit: Fit::Int { lo, hi, hot, tail },
        observations,
        distinct,
        why,
    }
}

/// About the largest count a uniform draw of `n` values over `domain` keys gives any one key
/// (Poisson tail bound with a union over the keys).
fn uniform_max(n: f64, domain: f64) -> f64 {
    let lambda = n / domain;
    let l = domain.max(2.0).ln();
    lambda + (2.0 * lambda * l).sqrt() + l
}

/// The best of uniform, Zipfian and exponential for counts sorted by rank (largest first)
/// over `domain` ranks, from `n` values seen. Ranked by their own counts even uniform values look
/// skewed, so skew is judged by how many distinct values were seen: a uniform draw of `n`
/// over `domain` shows about `domain (1 - e^{-n/domain})`; clearly fewer means popular
/// values repeat. Each skewed model's parameter is then the one that gives the distinct
/// count seen (unbiased where the rank likelihood is not), and the two are compared by the
/// likelihood of the ranks.
fn fit_tail(counts: &[f64], domain: f64, n: f64) -> Tail {
    let seen = counts.len() as f64;
    if counts.len() < 3 || n <= 0.0 {
        return Tail::Uniform;
    }
    let uniform_distinct = domain * (1.0 - (-n / domain).exp());
    if seen >= 0.9 * uniform_distinct {
        return Tail::Uniform;
    }
    let zipf_p = |s: f64| {
        let h = hotbench_stats::zipf::harmonic(domain as u64, s);
        move |r: f64| r.powf(-s) / h
    };
    let exp_p = |theta: f64| {
        let a = theta / domain;
        let norm = (1.0 - (-a).exp()) / (1.0 - (-theta).exp());
        move |r: f64| (-a * (r - 1.0)).exp() * norm
    };
    // Distinct counts fall as the parameter grows.
    let s = solve(1.001, 6.0, |s| distinct(&zipf_p(s), n, domain) - seen);
    let theta = solve(0.01, 2000.0, |t| distinct(&exp_p(t), n, domain) - seen);
    let ll = |p: &dyn Fn(f64) -> f64| {
        counts
            .iter()
            .enumerate()
            .map(|(r, c)| c * p((r + 1) as f64).max(1e-300).ln())
            .sum::<f64>()
    };
    let (zl, el) = (ll(&zipf_p(s)), ll(&exp_p(theta)));
    if zl >= el {
        Tail::Zipfian((s * 1000.0).round() / 1000.0)
    } else {
        Tail::Exponential((theta * 1000.0).round() / 1000.0)
    }
}

/// Expected distinct ranks among `n` draws with rank probabilities `p` over `domain` ranks:
/// exact for the first ranks, then in geometric buckets.
fn distinct(p: &dyn Fn(f64) -> f64, n: f64, domain: f64) -> f64 {
    let seen = |q: f64| 1.0 - (-n * q).exp();
    let exact = domain.min(10_000.0) as u64;
    let mut d: f64 = (1..=exact).map(|r| seen(p(r as f64))).sum();
    let mut r = exact as f64 + 1.0;
    while r <= domain {
        let next = (r * 1.01).ceil().min(domain + 1.0).max(r + 1.0);
        let width = next - r;
        d += width * seen(p((r + next - 1.0) / 2.0));
        r = next;
    }
    d
}

/// The root of a decreasing `f` on `[a, b]` (an end when it has none).
fn solve(mut a: f64, mut b: f64, f: impl Fn(f64) -> f64) -> f64 {
    if f(a) <= 0.0 {
        return a;
    }
    if f(b) >= 0.0 {
        return b;
    }
    for _ in 0..60 {
        let m = (a + b) / 2.0;
        if f(m) > 0.0 {
            a = m;
        } else {
            b = m;
        }
    }
    (a + b) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: i64) -> (Value, f64) {
        (Value::Number(v.to_string()), 1.0)
    }

    /// A deterministic generator (no dependency).
    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn uniform_keys_are_uniform_and_constants_constant() {
        let mut seed = 7;
        let v: Vec<(Value, f64)> = (0..2000)
            .map(|_| n(1 + (lcg(&mut seed) * 100_000.0) as i64))
            .collect();
        let f = fit(&v);
        let Fit::Int {
            lo,
            hi,
            ref hot,
            tail,
        } = f.fit
        else {
            panic!("{f:?}")
        };
        assert!(hot.is_empty() && tail == Tail::Uniform, "{f:?}");
        assert!(
            (1..200).contains(&lo) && (99_801..100_300).contains(&hi),
            "{lo}..{hi}"
        );
        assert_eq!(
            fit(&[n(1), n(1)]).fit,
            Fit::Constant(Value::Number("1".into()))
        );
        let t = fit(&[
            (Value::Text("a".into()), 1.0),
            (Value::Text("b".into()), 3.0),
        ]);
        assert_eq!(t.fit, Fit::Constant(Value::Text("b".into())));
        assert_eq!(fit(&[(Value::Unknown, 1.0)]).fit, Fit::Unknown);
    }

    #[test]
    fn zipfian_keys_keep_their_hottest_values_and_a_skewed_tail() {
        // random_zipfian(1, 1000, 1.2) by inversion.
        let s = 1.2;
        let h = hotbench_stats::zipf::harmonic(1000, s);
        let cdf: Vec<f64> = (1..=1000)
            .scan(0.0, |acc, i| {
                *acc += (i as f64).powf(-s) / h;
                Some(*acc)
            })
            .collect();
        let mut seed = 11;
        let v: Vec<(Value, f64)> = (0..5000)
            .map(|_| {
                let u = lcg(&mut seed);
                n(1 + cdf.iter().position(|c| *c >= u).unwrap_or(999) as i64)
            })
            .collect();
        let f = fit(&v);
        let Fit::Int { hot, tail, .. } = &f.fit else {
            panic!("{f:?}")
        };
        assert_eq!(hot[0].0, 1, "{f:?}");
        // rank 1's share: 1 / H(1000, 1.2) ≈ 0.22
        assert!((hot[0].1 - 1.0 / h).abs() < 0.03, "{f:?}");
        assert!(hot.len() >= 3);
        assert!(
            matches!(tail, Tail::Zipfian(_) | Tail::Exponential(_)),
            "{f:?}"
        );
        assert!(f.why.contains("hot value"));
    }
}
