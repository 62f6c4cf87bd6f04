//! A `--threshold`'s verdict on one subject, as the result, ladder and sweep files store it
//! (`thresholds[]`); the language and its evaluation are `threshold.rs`.

use serde::{Deserialize, Serialize};

/// One threshold checked on one subject, as the result, ladder and sweep files store it
/// (`thresholds[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Outcome {
    /// The expression as given.
    pub threshold: String,
    /// The subject's name (variant, clients), empty for a single run.
    pub subject: String,
    /// The measured value in the metric's unit (ms, %, ratio; 1/0 for checks), null when
    /// the subject has no such measurement.
    pub measured: Option<f64>,
    /// The measured value as printed.
    pub shown: String,
    pub ok: bool,
}
