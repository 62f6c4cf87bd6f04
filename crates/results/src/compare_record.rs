//! The comparison document (`hotbench compare --json`, format [`COMPARE_FORMAT`]): each
//! metric of each run against the first, with its ratio, confidence interval, effective
//! sample size, p-value and verdict, and the perturbations' times to recover; for ladder
//! files, one such comparison per variant.
//! Computed by `hotbench_report::compare`.

use serde::{Deserialize, Serialize};

pub const COMPARE_FORMAT: &str = "hotbench-compare/1";

/// Runs compared with the first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComparisonDoc {
    /// [`COMPARE_FORMAT`] at a document's top level, empty (left out) when nested.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    pub runs: Vec<String>,
    pub metrics: Vec<MetricComparison>,
    /// Each run's top wait event, when probes ran.
    pub top_waits: Vec<Option<String>>,
    /// The perturbations' times to recover, side by side (absent when none was perturbed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ttr: Vec<TtrComparison>,
}

/// TTR90 or TTR99 of one perturbation (by its spec) across the sides compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TtrComparison {
    pub perturbation: String,
    /// `ttr90` or `ttr99`.
    pub level: String,
    /// The sides were judged with different recovery windows (`rule`).
    pub rules_differ: bool,
    pub cells: Vec<TtrCellComparison>,
}

/// One side's times to recover (one run, or `--repeats` runs): over its recovered firings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TtrCellComparison {
    /// Its runs' column letters (`A`, `A–C`).
    pub side: String,
    pub firings: usize,
    pub recovered: usize,
    pub mean_s: Option<f64>,
    pub sd_s: Option<f64>,
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    /// The timeline's interval: a TTR is known to within it.
    pub resolution_s: f64,
    /// Its mean minus the first side's, s.
    pub diff_s: Option<f64>,
    pub p: Option<f64>,
    /// `reference`, `within resolution`, `within noise`, `better`, `worse` or `untested`.
    pub verdict: String,
}

/// One metric across the runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetricComparison {
    pub metric: String,
    pub higher_is_better: bool,
    pub cells: Vec<CellComparison>,
}

/// One run's value of a metric, against the first run's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CellComparison {
    pub run: String,
    pub value: f64,
    pub ratio: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub intervals: usize,
    pub n_eff: Option<f64>,
    pub p: Option<f64>,
    pub p_uncorrected: Option<f64>,
    /// `reference`, `better`, `worse`, `within noise` or `untested`.
    pub verdict: String,
}

/// Ladder files compared variant by variant (variants lined up by name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LadderComparisonDoc {
    /// [`COMPARE_FORMAT`].
    pub format: String,
    pub files: Vec<String>,
    pub variants: Vec<ComparedVariant>,
    /// Variants not in every file (not compared).
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComparedVariant {
    pub scenario: String,
    pub variant: String,
    #[serde(flatten)]
    pub comparison: ComparisonDoc,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_comparisons_leave_out_the_format_and_documents_round_trip() {
        let nested = ComparisonDoc {
            runs: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        let doc = LadderComparisonDoc {
            format: COMPARE_FORMAT.into(),
            variants: vec![ComparedVariant {
                scenario: "queue".into(),
                variant: "skip-locked".into(),
                comparison: nested.clone(),
            }],
            ..Default::default()
        };
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["format"], COMPARE_FORMAT);
        // The variant's comparison is flattened beside its names, without a format.
        assert_eq!(v["variants"][0]["runs"][1], "b");
        assert!(v["variants"][0].get("format").is_none(), "{v}");
        let back: LadderComparisonDoc = serde_json::from_value(v).unwrap();
        assert_eq!(back, doc);
    }
}
