//! `hotbench compare ladder-a.json ladder-b.json` in the terminal: the files once, then each
//! variant's table and verdicts as `text::compare` prints runs.

use std::fmt::Write as _;

use crate::analysis::compare_ladder::LadderComparison;
use crate::text::compare::{letter, render_body, WIDTH};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare_ladder::tests::two_files;

    #[test]
    fn files_once_then_each_variant() {
        let text = render_text(&two_files());
        assert!(text.starts_with("A: a.json\nB: b.json\n"), "{text}");
        assert!(text.contains("== queue / skip-locked =="), "{text}");
        assert!(
            text.contains("not in every file (not compared): queue/advisory"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }
}
