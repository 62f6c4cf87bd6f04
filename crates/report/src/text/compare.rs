//! `hotbench compare`'s terminal output: the document's sections
//! (`analysis::documents::compare`) in the terminal, within 100 columns.

use crate::analysis::compare::Comparison;
use crate::analysis::documents::compare::sections;
use crate::text::section::render;

/// The whole text output: which file is A, B…, the table, confidence intervals, top waits
/// and verdicts.
pub fn render_text(c: &Comparison) -> String {
    render(&sections(c, &[]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::compare::tests::{short, three_runs};
    use crate::analysis::documents::compare::WIDTH;
    use hotbench_stats::testdata::record;

    #[test]
    fn three_runs_with_long_names_and_waits_fit_100_columns() {
        let long = "results/2026-11-23/after-the-index-change-with-fillfactor-70.json";
        let runs: Vec<(String, hotbench_stats::RunRecord)> = (0..3)
            .map(|i| {
                let r = record("s", 1.0, 8, 8000 + i * 1000, 2.0 + i as f64);
                (format!("{long}-{i}"), r)
            })
            .collect();
        let mut cmp = compare(&runs);
        let wait = "Lock:transactionid 63.2%, LWLock:WALWrite 20.1%, IO:DataFileRead 10.4%";
        cmp.waits = vec![Some(wait.into()), None, Some(wait.into())];
        let text = render_text(&cmp);
        for line in text.lines() {
            assert!(
                line.chars().count() <= WIDTH,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(text.contains("A: results/"), "{text}");
        assert!(text.contains("top waits A: Lock:transactionid"), "{text}");
        assert!(text.contains("top waits B: –"), "{text}");
        assert!(text.contains("C vs A ("), "{text}");
        assert!(text.contains("95% confidence intervals"), "{text}");
    }

    #[test]
    fn ratios_and_noise_in_words() {
        let text = render_text(&compare(&three_runs()));
        assert!(text.contains("tps ↑"), "{text}");
        assert!(text.contains("×2.00 +"), "{text}");
        assert!(
            text.contains("B vs A (b vs a):\n  tps         ×1.00  within noise"),
            "{text}"
        );
        let text = render_text(&short());
        assert!(
            text.contains("B vs A (y vs x):\n  too few full intervals"),
            "{text}"
        );
    }
}
