//! `--threshold` outcomes in the terminal: one ✔/✘ line per threshold and subject, with the
//! measured value, and how many failed. (Parsing and evaluation: `hotbench_results::threshold`.)

use std::fmt::Write as _;

use hotbench_results::threshold::Outcome;

/// `thresholds:` and one ✔/✘ line per outcome.
pub fn render(outcomes: &[Outcome]) -> String {
    if outcomes.is_empty() {
        return String::new();
    }
    let w = outcomes
        .iter()
        .map(|o| o.threshold.chars().count())
        .max()
        .unwrap_or(0);
    let mut o = String::from("thresholds:\n");
    for x in outcomes {
        let mark = if x.ok { '✔' } else { '✘' };
        let pad = " ".repeat(w - x.threshold.chars().count());
        let who = if x.subject.is_empty() {
            String::new()
        } else {
            format!("{}: ", x.subject)
        };
        let _ = writeln!(o, "  {mark} {}{pad}   {who}{}", x.threshold, x.shown);
    }
    let failed = outcomes.iter().filter(|x| !x.ok).count();
    if failed > 0 {
        let _ = writeln!(o, "{failed} of {} threshold checks failed", outcomes.len());
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(threshold: &str, subject: &str, shown: &str, ok: bool) -> Outcome {
        Outcome {
            threshold: threshold.into(),
            subject: subject.into(),
            measured: None,
            shown: shown.into(),
            ok,
        }
    }

    #[test]
    fn one_line_per_outcome_aligned_and_failures_counted() {
        let text = render(&[
            outcome("tps>=900", "", "tps = 1000", true),
            outcome("p50<1ms", "", "p50 = 2.249 ms", false),
            outcome("jobs/s>=3000", "skip-locked", "jobs/s = 2900", false),
        ]);
        assert!(text.starts_with("thresholds:\n  ✔ tps>=900"), "{text}");
        assert!(text.contains("✘ p50<1ms        p50 = 2.249 ms"), "{text}");
        assert!(
            text.contains("✘ jobs/s>=3000   skip-locked: jobs/s = 2900"),
            "{text}"
        );
        assert!(text.contains("2 of 3 threshold checks failed"), "{text}");
        assert_eq!(render(&[]), "");
    }
}
