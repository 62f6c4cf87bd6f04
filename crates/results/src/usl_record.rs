//! The USL document (`hotbench usl --json`, format [`USL_FORMAT`]): per series, the Universal
//! Scalability Law's σ, κ, λ fitted to measured throughput, the peak it predicts and the
//! constraint that dominates. Fitted by `hotbench_report::usl`.

use serde::{Deserialize, Serialize};

pub const USL_FORMAT: &str = "hotbench-usl/1";

/// Which term of the USL's denominator costs more at a given concurrency.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Constraint {
    /// σ(N−1) ≥ κN(N−1): queueing for a shared resource (a hot row, a lock).
    Contention,
    /// κN(N−1) > σ(N−1): crosstalk between clients (cache lines, lock managers, retries).
    Coherency,
    /// σ = κ = 0: linear scaling.
    #[default]
    None,
}

impl Constraint {
    pub fn name(self) -> &'static str {
        match self {
            Constraint::Contention => "contention",
            Constraint::Coherency => "coherency",
            Constraint::None => "none",
        }
    }
}

/// One series' fit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UslFitRecord {
    pub label: String,
    pub sigma: f64,
    pub kappa: f64,
    pub lambda: f64,
    /// Concurrency of peak throughput (none without a retrograde region, κ = 0).
    pub n_max: Option<f64>,
    /// Throughput at `n_max`, or the asymptote λ/σ when κ = 0.
    pub x_max: Option<f64>,
    pub r2: f64,
    pub constraint: Constraint,
    /// The measured `[clients, throughput]` points.
    pub points: Vec<[f64; 2]>,
}

/// The document: the first (usually only) series' fit at the top level, every series in
/// `fits`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UslDoc {
    pub format: String,
    #[serde(flatten)]
    pub first: UslFitRecord,
    pub fits: Vec<UslFitRecord>,
}
