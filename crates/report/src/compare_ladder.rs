//! `hotbench compare ladder-a.json ladder-b.json`: scenario ladders compared variant by
//! variant (lined up by scenario and variant name, e.g. before and after a server setting),
//! each pair or group of runs compared as `hotbench compare` compares runs. Variants missing
//! from some file are listed, not compared.

use std::fmt::Write as _;

use hotbench_stats::RunRecord;
use serde::Serialize;

use crate::compare::{compare, comparison_table, to_json, Comparison, ComparisonJson};
use crate::compare_text::{letter, render_body, WIDTH};
use crate::escape::html;
use crate::html::Doc;
use crate::run_html::throughput_overlay;
use hotbench_stats::Ladder;

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

/// The files once, then each variant's table and verdicts.
pub fn render_text(c: &LadderComparison) -> String {
    let mut o = String::new();
    for (i, f) in c.files.iter().enumerate() {
        let line: String = format!("{}: {f}", letter(i)).chars().take(WIDTH).collect();
        let _ = writeln!(o, "{line}");
    }
    for v in &c.variants {
        let _ = writeln!(o, "\n== {} / {} ==", v.scenario, v.variant);
        o.push_str(&render_body(&v.comparison));
    }
    if !c.missing.is_empty() {
        let _ = writeln!(
            o,
            "\nnot in every file (not compared): {}",
            c.missing.join(", ")
        );
    }
    if c.variants.is_empty() {
        o.push_str("\nno variant ran in every file: nothing to compare\n");
    }
    o
}

#[derive(Serialize)]
pub struct VariantJson {
    pub scenario: String,
    pub variant: String,
    #[serde(flatten)]
    pub comparison: ComparisonJson,
}

#[derive(Serialize)]
pub struct LadderComparisonJson {
    pub files: Vec<String>,
    pub variants: Vec<VariantJson>,
    pub missing: Vec<String>,
}

pub fn ladders_to_json(c: &LadderComparison) -> LadderComparisonJson {
    LadderComparisonJson {
        files: c.files.clone(),
        variants: c
            .variants
            .iter()
            .map(|v| VariantJson {
                scenario: v.scenario.clone(),
                variant: v.variant.clone(),
                comparison: to_json(&v.comparison),
            })
            .collect(),
        missing: c.missing.clone(),
    }
}

/// One section per variant: the table and the throughput overlay.
pub fn render_html(c: &LadderComparison) -> String {
    let mut doc = Doc::new(&format!("hotbench compare: {}", c.files.join(" vs ")));
    doc.heading(1, "hotbench: ladder comparison");
    for v in &c.variants {
        doc.heading(2, &format!("{} / {}", v.scenario, v.variant));
        doc.raw(&comparison_table(&v.comparison));
        let list: Vec<(&str, &RunRecord)> = v.runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
        doc.chart(throughput_overlay(&list, false));
    }
    if !c.missing.is_empty() {
        doc.raw(&format!(
            "<p class=\"muted\">Not in every file (not compared): {}</p>\n",
            html(&c.missing.join(", "))
        ));
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::record;
    use hotbench_stats::VariantResult;

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

    #[test]
    fn variants_line_up_by_name() {
        let a = ladder(&[
            ("for-update", 800),
            ("skip-locked", 8000),
            ("advisory", 4000),
        ]);
        let b = ladder(&[("skip-locked", 16000), ("for-update", 800)]);
        let c = compare_ladders(&[("a.json".into(), vec![a]), ("b.json".into(), vec![b])]);
        let names: Vec<&str> = c.variants.iter().map(|v| v.variant.as_str()).collect();
        assert_eq!(names, ["for-update", "skip-locked"]);
        assert_eq!(c.missing, ["queue/advisory"]);
        let skip = &c.variants[1].comparison;
        assert!((skip.rows[0].cells[1].ratio.unwrap() - 2.0).abs() < 1e-9);
        let text = render_text(&c);
        assert!(text.starts_with("A: a.json\nB: b.json\n"), "{text}");
        assert!(text.contains("== queue / skip-locked =="), "{text}");
        assert!(
            text.contains("not in every file (not compared): queue/advisory"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        let json = serde_json::to_value(ladders_to_json(&c)).unwrap();
        assert_eq!(json["variants"][1]["variant"], "skip-locked");
        assert_eq!(
            json["variants"][1]["metrics"][0]["cells"][1]["verdict"],
            "better"
        );
        assert!(render_html(&c).contains("queue / skip-locked"));
    }
}
