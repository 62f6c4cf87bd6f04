//! `hotbench compare ladder-a.json ladder-b.json`: scenario ladders compared variant by
//! variant (lined up by scenario and variant name, e.g. before and after a server setting),
//! each pair or group of runs compared as `hotbench compare` compares runs. Variants missing
//! from some file are listed, not compared. Rendered by `text::compare_ladder` and
//! `html::compare_ladder`.

use hotbench_results::{ComparedVariant, Ladder, LadderComparisonDoc, RunRecord, COMPARE_FORMAT};

use crate::analysis::compare::{compare, to_json, Comparison};

/// One variant across the files.
pub struct VariantComparison {
    pub scenario: String,
    pub variant: String,
    pub runs: Vec<(String, RunRecord)>,
    pub comparison: Comparison,
}

pub struct LadderComparison {
    pub files: Vec<String>,
    pub variants: Vec<VariantComparison>,
    /// `scenario/variant` that ran in some files only.
    pub missing: Vec<String>,
}

/// Lines up the files' ladders by scenario and their variants by name, in the first
/// file's order.
pub fn compare_ladders(files: &[(String, Vec<Ladder>)]) -> LadderComparison {
    let mut variants = Vec::new();
    let mut missing = Vec::new();
    let find = |ladders: &[Ladder], scenario: &str, variant: &str| -> Option<RunRecord> {
        ladders
            .iter()
            .filter(|l| l.scenario == scenario)
            .flat_map(|l| l.variants.iter())
            .find(|v| v.name == variant)
            .and_then(|v| v.record.clone())
    };
    let mut seen: Vec<(String, String)> = Vec::new();
    for (_, ladders) in files {
        for l in ladders {
            for v in &l.variants {
                let key = (l.scenario.clone(), v.name.clone());
                if !seen.contains(&key) {
                    seen.push(key);
                }
            }
        }
    }
    for (scenario, variant) in seen {
        let runs: Vec<Option<(String, RunRecord)>> = files
            .iter()
            .map(|(name, ladders)| find(ladders, &scenario, &variant).map(|r| (name.clone(), r)))
            .collect();
        if runs.iter().all(Option::is_some) {
            let runs: Vec<(String, RunRecord)> = runs.into_iter().flatten().collect();
            variants.push(VariantComparison {
                comparison: compare(&runs),
                scenario,
                variant,
                runs,
            });
        } else {
            missing.push(format!("{scenario}/{variant}"));
        }
    }
    LadderComparison {
        files: files.iter().map(|(n, _)| n.clone()).collect(),
        variants,
        missing,
    }
}

impl LadderComparison {
    /// Each variant's TTRs compared with its runs taken `repeats` at a time (`--repeats`).
    pub fn with_repeats(mut self, repeats: usize) -> LadderComparison {
        for v in &mut self.variants {
            v.comparison.ttr = crate::analysis::compare_ttr::compare_ttr(&v.runs, repeats);
        }
        self
    }
}

/// The comparison as a document (`compare --json` of ladder files).
pub fn ladders_to_json(c: &LadderComparison) -> LadderComparisonDoc {
    LadderComparisonDoc {
        format: COMPARE_FORMAT.into(),
        files: c.files.clone(),
        variants: c
            .variants
            .iter()
            .map(|v| ComparedVariant {
                scenario: v.scenario.clone(),
                variant: v.variant.clone(),
                comparison: to_json(&v.comparison),
            })
            .collect(),
        missing: c.missing.clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hotbench_results::testdata::record;
    use hotbench_results::VariantResult;

    fn ladder(variants: &[(&str, u64)]) -> Ladder {
        Ladder {
            scenario: "queue".into(),
            variants: variants
                .iter()
                .map(|(n, count)| VariantResult {
                    name: n.to_string(),
                    record: Some(record(n, 1.0, 8, *count, 1.0)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// a.json with three variants, b.json with two of them (also for the renderers' tests).
    pub(crate) fn two_files() -> LadderComparison {
        let a = ladder(&[
            ("for-update", 800),
            ("skip-locked", 8000),
            ("advisory", 4000),
        ]);
        let b = ladder(&[("skip-locked", 16000), ("for-update", 800)]);
        compare_ladders(&[("a.json".into(), vec![a]), ("b.json".into(), vec![b])])
    }

    #[test]
    fn variants_line_up_by_name() {
        let c = two_files();
        let names: Vec<&str> = c.variants.iter().map(|v| v.variant.as_str()).collect();
        assert_eq!(names, ["for-update", "skip-locked"]);
        assert_eq!(c.missing, ["queue/advisory"]);
        let skip = &c.variants[1].comparison;
        assert!((skip.rows[0].cells[1].ratio.unwrap() - 2.0).abs() < 1e-9);
        let json = serde_json::to_value(ladders_to_json(&c)).unwrap();
        assert_eq!(json["variants"][1]["variant"], "skip-locked");
        assert_eq!(
            json["variants"][1]["metrics"][0]["cells"][1]["verdict"],
            "better"
        );
    }
}
