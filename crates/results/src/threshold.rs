//! Pass/fail thresholds for CI (`--threshold EXPR`, k6's model): `p99<50ms`, `tps>=1000`,
//! `failed=0`, `retries<1%`, `checks=pass`, and on ladders per variant
//! (`skip-locked:jobs/s>=3000`) or for the best variant against the baseline
//! (`best:vs_baseline>=3`). Parsing and evaluation are pure: the commands build
//! [`Subject`]s from their final results, evaluate, print them (`hotbench_report::text::threshold`) and store
//! [`Outcome`]s in the JSON. An unscoped threshold applies to every subject (each variant
//! of a ladder, each run of a sweep).

pub use crate::threshold_outcome::Outcome;
use crate::RunRecord;

use crate::Ladder;

/// Which subjects a threshold checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    All,
    /// A ladder variant by name.
    Variant(String),
    /// Per ladder: the variant with the highest speedup over the baseline.
    Best,
    /// Per ladder: the baseline variant.
    Baseline,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Latency {
    Mean,
    P50,
    P90,
    P99,
    P999,
    Max,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    Tps,
    Goodput,
    /// `UNIT/s`: a scenario's work measured in the database (`jobs/s`).
    WorkPerS(String),
    Latency(Latency),
    Failed,
    Retries,
    Checks,
    VsBaseline,
    /// `--perturb`'s time to recover to 90 % / 99 % (s), the slowest perturbation's.
    Ttr90,
    Ttr99,
    /// `--perturb`'s work lost, the largest of the perturbations'.
    Lost,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }
}

/// The limit, in the metric's own unit (ms for latencies).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    Number(f64),
    /// A share of transactions (committed + failed), in percent.
    Percent(f64),
    /// `pass` (true) or `fail`.
    Pass(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The expression as given.
    pub text: String,
    pub scope: Scope,
    pub metric: Metric,
    pub op: Op,
    pub limit: Limit,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid --threshold \"{text}\": {why}")]
pub struct ThresholdError {
    pub text: String,
    pub why: String,
}

const USAGE: &str = "expected [VARIANT:|best:|baseline:]METRIC OP VALUE, e.g. p99<50ms, tps>=1000, \
                     failed=0, retries<1%, checks=pass, skip-locked:jobs/s>=3000, best:vs_baseline>=3";

fn metric_of(name: &str) -> Option<Metric> {
    let lat = |l| Some(Metric::Latency(l));
    match name {
        "tps" => Some(Metric::Tps),
        "goodput/s" | "goodput" => Some(Metric::Goodput),
        "p50" | "p(50)" | "median" => lat(Latency::P50),
        "p90" | "p(90)" => lat(Latency::P90),
        "p99" | "p(99)" => lat(Latency::P99),
        "p99.9" | "p(99.9)" => lat(Latency::P999),
        "max" | "max_latency" => lat(Latency::Max),
        "mean" | "avg" | "latency" => lat(Latency::Mean),
        "failed" | "failures" => Some(Metric::Failed),
        "retries" => Some(Metric::Retries),
        "checks" => Some(Metric::Checks),
        "vs_baseline" | "speedup" => Some(Metric::VsBaseline),
        "ttr90" => Some(Metric::Ttr90),
        "ttr99" => Some(Metric::Ttr99),
        "lost" => Some(Metric::Lost),
        _ => {
            let unit = name.strip_suffix("/s")?;
            let ok = !unit.is_empty()
                && unit
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
            ok.then(|| Metric::WorkPerS(unit.to_string()))
        }
    }
}

fn number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

fn limit_of(metric: &Metric, value: &str) -> Result<Limit, String> {
    let bad = |what: &str| Err(format!("\"{value}\" is not {what}"));
    match metric {
        Metric::Checks => match value {
            "pass" | "ok" | "true" => Ok(Limit::Pass(true)),
            "fail" | "false" => Ok(Limit::Pass(false)),
            _ => bad("pass or fail"),
        },
        Metric::Latency(_) => {
            let (digits, scale) = [("ms", 1.0), ("us", 0.001), ("µs", 0.001), ("s", 1000.0)]
                .iter()
                .find_map(|(u, f)| value.strip_suffix(u).map(|d| (d, *f)))
                .unwrap_or((value, 1.0));
            match number(digits) {
                Some(v) => Ok(Limit::Number(v * scale)),
                None => bad("a duration such as 50ms, 1.5s or 800us"),
            }
        }
        Metric::Failed | Metric::Retries => match value.strip_suffix('%') {
            Some(p) => number(p)
                .map(Limit::Percent)
                .map_or_else(|| bad("a number or a percentage"), Ok),
            None => number(value)
                .map(Limit::Number)
                .map_or_else(|| bad("a number or a percentage"), Ok),
        },
        Metric::VsBaseline => {
            let v = value.trim_end_matches(['x', '×']);
            number(v)
                .map(Limit::Number)
                .map_or_else(|| bad("a ratio such as 3 or 1.5x"), Ok)
        }
        Metric::Ttr90 | Metric::Ttr99 => {
            let (digits, scale) = [("ms", 0.001), ("s", 1.0)]
                .iter()
                .find_map(|(u, f)| value.strip_suffix(u).map(|d| (d, *f)))
                .unwrap_or((value, 1.0));
            match number(digits) {
                Some(v) => Ok(Limit::Number(v * scale)),
                None => bad("a duration such as 10s or 500ms"),
            }
        }
        Metric::Tps | Metric::Goodput | Metric::WorkPerS(_) | Metric::Lost => number(value)
            .map(Limit::Number)
            .map_or_else(|| bad("a number"), Ok),
    }
}

/// Parses one `--threshold` expression.
pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
    let err = |why: String| ThresholdError {
        text: text.to_string(),
        why,
    };
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (scope, rest) = match compact.rsplit_once(':') {
        Some((s, r)) => {
            let scope = match s {
                "" => return Err(err(format!("empty variant name; {USAGE}"))),
                "best" => Scope::Best,
                "baseline" => Scope::Baseline,
                v => Scope::Variant(v.to_string()),
            };
            (scope, r)
        }
        None => (Scope::All, compact.as_str()),
    };
    let Some(at) = rest.find(['<', '>', '=', '!']) else {
        return Err(err(format!("no comparison (<, <=, >, >=, =, !=); {USAGE}")));
    };
    let (name, tail) = rest.split_at(at);
    let (op, value) = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ]
    .iter()
    .find_map(|(s, op)| tail.strip_prefix(s).map(|v| (*op, v)))
    .ok_or_else(|| err(format!("unknown comparison; {USAGE}")))?;
    if value.is_empty() || value.starts_with(['<', '>', '=', '!']) {
        return Err(err(format!("missing or malformed value; {USAGE}")));
    }
    let metric = metric_of(name).ok_or_else(|| {
        err(format!(
            "unknown metric \"{name}\" (tps, goodput/s, UNIT/s, p50, p90, p99, p99.9, max, \
             mean, failed, retries, checks, vs_baseline, ttr90, ttr99, lost)"
        ))
    })?;
    let limit = limit_of(&metric, value).map_err(err)?;
    if metric == Metric::Checks && !matches!(op, Op::Eq | Op::Ne) {
        return Err(err("checks take = or != (checks=pass)".into()));
    }
    Ok(Threshold {
        text: text.trim().to_string(),
        scope,
        metric,
        op,
        limit,
    })
}

/// Parses every expression; the first bad one is the error.
pub fn parse_all(texts: &[String]) -> Result<Vec<Threshold>, ThresholdError> {
    texts.iter().map(|t| parse(t)).collect()
}

/// Something a threshold is checked against: a run, a sweep's run, a ladder variant.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    /// Shown before the value (empty for a single run).
    pub name: String,
    /// The name `VARIANT:` matches (ladder variants only).
    pub variant: Option<String>,
    /// The ladder it belongs to: `best:` and `baseline:` choose within one.
    pub group: usize,
    pub baseline: bool,
    /// The variant's work group's view of its run (its latency, not a producer's lag).
    pub record: std::borrow::Cow<'a, RunRecord>,
    /// Checks passed and run.
    pub checks: Option<(usize, usize)>,
    /// The scenario's work unit and work per second.
    pub work: Option<(String, f64)>,
    pub vs_baseline: Option<f64>,
}

impl<'a> Subject<'a> {
    /// A plain run (`name` empty for a single one).
    pub fn run(name: impl Into<String>, record: &'a RunRecord) -> Subject<'a> {
        Subject {
            name: name.into(),
            variant: None,
            group: 0,
            baseline: false,
            record: std::borrow::Cow::Borrowed(record),
            checks: None,
            work: None,
            vs_baseline: None,
        }
    }
}

/// Every variant that ran, of every ladder.
pub fn ladder_subjects(ladders: &[Ladder]) -> Vec<Subject<'_>> {
    let mut out = Vec::new();
    for (g, l) in ladders.iter().enumerate() {
        let base = l
            .variants
            .iter()
            .find(|v| v.baseline && v.record.is_some())
            .and_then(|v| v.useful_per_s());
        for v in &l.variants {
            let Some(record) = v.work_record() else {
                continue;
            };
            let useful = v.useful_per_s();
            out.push(Subject {
                name: if ladders.len() > 1 {
                    format!("{}/{}", l.scenario, v.name)
                } else {
                    v.name.clone()
                },
                variant: Some(v.name.clone()),
                group: g,
                baseline: v.baseline,
                record,
                checks: (!v.checks.is_empty())
                    .then(|| (v.checks.iter().filter(|c| c.ok).count(), v.checks.len())),
                work: match (&l.work_unit, v.work, useful) {
                    (Some(u), Some(_), Some(x)) => Some((u.clone(), x)),
                    _ => None,
                },
                vs_baseline: match (base, useful) {
                    (Some(b), Some(x)) if b > 0.0 => Some(x / b),
                    _ => None,
                },
            });
        }
    }
    out
}

fn metric_label(m: &Metric) -> String {
    match m {
        Metric::Tps => "tps".into(),
        Metric::Goodput => "goodput/s".into(),
        Metric::WorkPerS(u) => format!("{u}/s"),
        Metric::Latency(l) => match l {
            Latency::Mean => "mean",
            Latency::P50 => "p50",
            Latency::P90 => "p90",
            Latency::P99 => "p99",
            Latency::P999 => "p99.9",
            Latency::Max => "max",
        }
        .into(),
        Metric::Failed => "failed".into(),
        Metric::Retries => "retries".into(),
        Metric::Checks => "checks".into(),
        Metric::VsBaseline => "vs_baseline".into(),
        Metric::Ttr90 => "ttr90".into(),
        Metric::Ttr99 => "ttr99".into(),
        Metric::Lost => "lost".into(),
    }
}

/// The measured value and how to print it, or why there is none.
fn measure(t: &Threshold, s: &Subject<'_>) -> Result<(f64, String), String> {
    let tot = &s.record.totals;
    let transactions = tot.counters.cnt.saturating_add(tot.counters.failures()) as f64;
    let share = |n: u64| {
        if transactions > 0.0 {
            n as f64 * 100.0 / transactions
        } else {
            0.0
        }
    };
    let count_or_share = |n: u64| match t.limit {
        // A share of nothing is no measurement: 0% of 0 transactions must not pass `<1%`.
        Limit::Percent(_) if transactions == 0.0 => {
            Err("not measured (no transaction ended)".to_string())
        }
        Limit::Percent(_) => {
            let p = share(n);
            Ok((p, format!("{p:.3}% ({n})")))
        }
        _ => Ok((n as f64, n.to_string())),
    };
    let ms = |v: f64| (v, format!("{v:.3} ms"));
    Ok(match &t.metric {
        Metric::Tps => (tot.tps, format!("{:.1}", tot.tps)),
        Metric::Goodput => (tot.goodput_per_s, format!("{:.1}", tot.goodput_per_s)),
        Metric::WorkPerS(u) => match &s.work {
            Some((unit, x)) if unit == u => (*x, format!("{x:.1}")),
            Some((unit, _)) => return Err(format!("not measured (work is counted in {unit})")),
            None => return Err(format!("not measured (no {u} counted)")),
        },
        Metric::Latency(l) => {
            let p = &tot.latency;
            if p.count == 0 {
                // Latencies are of committed transactions: with none, every percentile is
                // an empty histogram's 0, which would pass any `<` limit.
                let why = tot
                    .counters
                    .no_commit_reason()
                    .unwrap_or_else(|| "no latency recorded".into());
                return Err(format!("not measured ({why})"));
            }
            ms(match l {
                Latency::Mean => p.mean_ms,
                Latency::P50 => p.p50_ms,
                Latency::P90 => p.p90_ms,
                Latency::P99 => p.p99_ms,
                Latency::P999 => p.p999_ms,
                Latency::Max => p.max_ms,
            })
        }
        Metric::Failed => count_or_share(tot.counters.failures())?,
        Metric::Retries => count_or_share(tot.counters.retries)?,
        Metric::Checks => match s.checks {
            Some((ok, n)) if ok == n => (1.0, format!("pass ({ok}/{n})")),
            Some((ok, n)) => (0.0, format!("fail ({ok}/{n} passed)")),
            None => return Err("not measured (no checks)".into()),
        },
        Metric::VsBaseline => match s.vs_baseline {
            Some(r) => (r, format!("{r:.2}×")),
            None => return Err("not measured (no baseline)".into()),
        },
        Metric::Ttr90 | Metric::Ttr99 | Metric::Lost => recovery(&t.metric, &s.record)?,
    })
}

/// The worst of the judged perturbations' TTR (s) or work lost; a perturbation that never
/// recovered fails a TTR threshold, whatever its limit.
fn recovery(m: &Metric, rec: &RunRecord) -> Result<(f64, String), String> {
    let judged: Vec<_> = rec
        .perturbations
        .iter()
        .filter(|p| p.baseline_per_s.is_some() && p.error.is_none())
        .collect();
    if judged.is_empty() {
        return Err("not measured (no perturbation judged)".into());
    }
    let worst = |v: Vec<Option<f64>>| v.into_iter().try_fold(0.0f64, |w, v| v.map(|v| w.max(v)));
    match m {
        Metric::Lost => {
            let l = worst(judged.iter().map(|p| p.lost).collect()).unwrap_or(f64::INFINITY);
            Ok((l, format!("{l:.0}")))
        }
        _ => {
            let ttr = |p: &&crate::PerturbationRecord| match m {
                Metric::Ttr90 => p.ttr90_s,
                _ => p.ttr99_s,
            };
            match worst(judged.iter().map(ttr).collect()) {
                Some(t) => Ok((t, format!("{t:.2} s"))),
                None => Err("not recovered by the end of the run".into()),
            }
        }
    }
}

fn limit_value(l: Limit) -> f64 {
    match l {
        Limit::Number(v) | Limit::Percent(v) => v,
        Limit::Pass(p) => f64::from(u8::from(p)),
    }
}

/// The subjects a threshold applies to.
fn chosen<'s, 'a>(t: &Threshold, subjects: &'s [Subject<'a>]) -> Vec<&'s Subject<'a>> {
    match &t.scope {
        Scope::All => subjects.iter().collect(),
        Scope::Variant(v) => subjects
            .iter()
            .filter(|s| s.variant.as_deref() == Some(v))
            .collect(),
        Scope::Baseline => subjects.iter().filter(|s| s.baseline).collect(),
        Scope::Best => {
            let mut groups: Vec<usize> = subjects.iter().map(|s| s.group).collect();
            groups.dedup();
            groups
                .into_iter()
                .filter_map(|g| {
                    subjects
                        .iter()
                        .filter(|s| s.group == g && !s.baseline)
                        .max_by(|a, b| {
                            let r = |s: &Subject<'_>| s.vs_baseline.unwrap_or(f64::NEG_INFINITY);
                            r(a).total_cmp(&r(b))
                        })
                })
                .collect()
        }
    }
}

/// Every threshold on every subject it applies to. A threshold that matches no subject
/// (an unknown variant, a ladder without a baseline) is one failed outcome.
pub fn evaluate(thresholds: &[Threshold], subjects: &[Subject<'_>]) -> Vec<Outcome> {
    let mut out = Vec::new();
    for t in thresholds {
        let chosen = chosen(t, subjects);
        if chosen.is_empty() {
            let why = match &t.scope {
                Scope::Variant(v) => format!("no variant \"{v}\" ran"),
                Scope::Best | Scope::Baseline => "no ladder variant to choose from".into(),
                Scope::All => "nothing was measured".into(),
            };
            out.push(Outcome {
                threshold: t.text.clone(),
                subject: String::new(),
                measured: None,
                shown: why,
                ok: false,
            });
        }
        for s in chosen {
            let (measured, shown, ok) = match measure(t, s) {
                Ok((v, shown)) => (Some(v), shown, t.op.holds(v, limit_value(t.limit))),
                Err(why) => (None, why, false),
            };
            out.push(Outcome {
                threshold: t.text.clone(),
                subject: s.name.clone(),
                measured,
                shown: format!("{} = {shown}", metric_label(&t.metric)),
                ok,
            });
        }
    }
    out
}

/// True when every outcome passed.
pub fn all_ok(outcomes: &[Outcome]) -> bool {
    outcomes.iter().all(|o| o.ok)
}

#[cfg(test)]
#[path = "threshold_tests.rs"]
mod tests;
