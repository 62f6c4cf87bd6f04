//! `hotbench compare`'s times to recover: each perturbation (by its spec, every firing of an
//! `every…` pooled) lined up across the sides compared, TTR90 and TTR99 each with its
//! uncertainty, against the first side.
//!
//! A side is one run, or with `--repeats N` N consecutive files (repeated runs of one
//! configuration). Uncertainty:
//! - **resolution**: a TTR is the end of the interval where the goodput was back, so the
//!   true moment lies within the interval before it: ± the timeline's interval (`--interval`);
//!   the rolling window (`rule.rolling_s`) adds the same lag on both sides when they share the
//!   rule, so it cancels in a difference (a side judged with another rule is flagged);
//! - **repeats**: with two firings or more on a side (an `every…`, `--repeats`), their spread
//!   (standard deviation, min–max) and the mean's 95% interval (Student's t).
//!
//! The verdict on a difference: `within resolution` when it is no larger than the two sides'
//! resolutions together; with at least two firings per side, `within noise` when Welch's
//! t-test gives p > 0.05; `worse`/`better` otherwise (shorter is better). A side where a
//! firing did not recover is `worse` than one where every firing did (and the reverse).

use hotbench_results::{PerturbationRecord, RunRecord};

use crate::analysis::noise::{mean_ci95, student_t_two_sided};

/// One side's TTRs of one perturbation.
#[derive(Debug, Clone, PartialEq)]
pub struct TtrCell {
    /// The side's runs (`A`, or `A–C` with repeats).
    pub side: String,
    /// Firings judged (with a baseline), and how many recovered.
    pub firings: usize,
    pub recovered: usize,
    /// Over the recovered firings, s.
    pub mean_s: Option<f64>,
    pub sd_s: Option<f64>,
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    pub ci95: Option<(f64, f64)>,
    /// The timeline's interval (the longest of the side's runs), s.
    pub resolution_s: f64,
    /// This side's mean minus the first side's, s.
    pub diff_s: Option<f64>,
    pub p: Option<f64>,
    /// `reference`, `within resolution`, `within noise`, `better`, `worse` or `untested`.
    pub verdict: &'static str,
}

/// TTR90 or TTR99 of one perturbation across the sides.
#[derive(Debug, Clone, PartialEq)]
pub struct TtrRow {
    pub perturbation: String,
    /// `TTR90` or `TTR99`.
    pub level: &'static str,
    pub cells: Vec<TtrCell>,
    /// The sides were judged with different recovery windows: their TTRs differ by rule.
    pub rules_differ: bool,
}

/// The median spacing of a run's timeline, 1 s without two intervals.
fn resolution(r: &RunRecord) -> f64 {
    let mut d: Vec<f64> = r
        .timeline
        .windows(2)
        .map(|w| w[1].t - w[0].t)
        .filter(|d| *d > 0.0)
        .collect();
    d.sort_by(f64::total_cmp);
    d.get(d.len() / 2).copied().unwrap_or(1.0)
}

/// A run's column letter as the renderers show it (`A`…`Z`, then `A1`…).
fn letter(i: usize) -> String {
    let c = char::from(b'A' + (i % 26) as u8);
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26)
    }
}

/// The column letters of runs `first..first + n` (`A`, `A–C`).
fn side_name(first: usize, n: usize) -> String {
    let l = letter;
    if n <= 1 {
        l(first)
    } else {
        format!("{}–{}", l(first), l(first + n - 1))
    }
}

/// The TTR rows of `runs` taken `repeats` at a time (1: each run its own side). Empty when
/// no run was perturbed.
pub fn compare_ttr(runs: &[(String, RunRecord)], repeats: usize) -> Vec<TtrRow> {
    let n = repeats.max(1);
    let sides: Vec<(String, &[(String, RunRecord)])> = runs
        .chunks(n)
        .enumerate()
        .map(|(i, c)| (side_name(i * n, c.len()), c))
        .collect();
    // Perturbation specs in order of first appearance.
    let mut specs: Vec<&str> = Vec::new();
    for (_, r) in runs {
        for p in &r.perturbations {
            if !specs.contains(&p.spec.as_str()) {
                specs.push(&p.spec);
            }
        }
    }
    let mut rows = Vec::new();
    for spec in specs {
        for (level, ttr) in [
            (
                "TTR90",
                (|p: &PerturbationRecord| p.ttr90_s) as fn(&PerturbationRecord) -> Option<f64>,
            ),
            ("TTR99", |p: &PerturbationRecord| p.ttr99_s),
        ] {
            let rules: Vec<_> = runs
                .iter()
                .flat_map(|(_, r)| &r.perturbations)
                .filter(|p| p.spec == spec && p.baseline_per_s.is_some())
                .map(|p| p.rule)
                .collect();
            let rules_differ = rules.windows(2).any(|w| w[0] != w[1]);
            let mut cells: Vec<TtrCell> = sides
                .iter()
                .map(|(name, rs)| cell(name, rs, spec, ttr))
                .collect();
            let (first, rest) = cells.split_at_mut(1);
            if let Some(base) = first.first() {
                for c in rest {
                    judge(base, c);
                }
            }
            rows.push(TtrRow {
                perturbation: spec.to_string(),
                level,
                cells,
                rules_differ,
            });
        }
    }
    rows
}

/// One side's firings of `spec`.
fn cell(
    side: &str,
    runs: &[(String, RunRecord)],
    spec: &str,
    ttr: fn(&PerturbationRecord) -> Option<f64>,
) -> TtrCell {
    let judged: Vec<&PerturbationRecord> = runs
        .iter()
        .flat_map(|(_, r)| &r.perturbations)
        .filter(|p| p.spec == spec && p.ran() && p.baseline_per_s.is_some())
        .collect();
    let values: Vec<f64> = judged.iter().filter_map(|p| ttr(p)).collect();
    let k = values.len();
    let mean = (k > 0).then(|| values.iter().sum::<f64>() / k as f64);
    let sd = mean
        .filter(|_| k >= 2)
        .map(|m| (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (k - 1) as f64).sqrt());
    let fold = |f: fn(f64, f64) -> f64| values.iter().copied().reduce(f);
    TtrCell {
        side: side.to_string(),
        firings: judged.len(),
        recovered: k,
        mean_s: mean,
        sd_s: sd,
        min_s: fold(f64::min),
        max_s: fold(f64::max),
        ci95: if k >= 2 { mean_ci95(&values) } else { None },
        resolution_s: runs.iter().map(|(_, r)| resolution(r)).fold(0.0, f64::max),
        diff_s: None,
        p: None,
        verdict: "reference",
    }
}

/// Welch's two-sided p-value from two samples' means, standard deviations and sizes.
fn welch(ma: f64, sa: f64, na: f64, mb: f64, sb: f64, nb: f64) -> Option<f64> {
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se = (va + vb).sqrt();
    if se.is_nan() || se <= 0.0 {
        return None;
    }
    let t = (mb - ma) / se;
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some(student_t_two_sided(t.abs(), df))
}

/// `c` against the first side.
fn judge(base: &TtrCell, c: &mut TtrCell) {
    let all = |x: &TtrCell| x.firings > 0 && x.recovered == x.firings;
    c.verdict = match (base.firings > 0, c.firings > 0) {
        (false, _) | (_, false) => "untested",
        _ if all(base) && !all(c) => "worse",
        _ if !all(base) && all(c) => "better",
        _ => "untested",
    };
    if c.verdict != "untested" || base.mean_s.is_none() || c.mean_s.is_none() {
        return;
    }
    let (Some(a), Some(b)) = (base.mean_s, c.mean_s) else {
        return;
    };
    let diff = b - a;
    c.diff_s = Some(diff);
    if diff.abs() <= base.resolution_s + c.resolution_s + 1e-9 {
        c.verdict = "within resolution";
        return;
    }
    if base.recovered >= 2 && c.recovered >= 2 {
        c.p = match (base.mean_s, base.sd_s, c.mean_s, c.sd_s) {
            (Some(ma), Some(sa), Some(mb), Some(sb)) => {
                welch(ma, sa, base.recovered as f64, mb, sb, c.recovered as f64)
            }
            _ => None,
        };
        if c.p.is_some_and(|p| p > 0.05) {
            c.verdict = "within noise";
            return;
        }
    }
    c.verdict = if diff < 0.0 { "better" } else { "worse" };
}

#[cfg(test)]
#[path = "compare_ttr_tests.rs"]
mod tests;
