//! `hotbench compare ladder-a.json ladder-b.json` in the terminal: the document's sections
//! (`analysis::documents::compare_ladder`) in the terminal.

use crate::analysis::compare_ladder::LadderComparison;
use crate::analysis::documents::compare_ladder::sections;
use crate::text::section::render;

/// The files once, then each variant's table and verdicts.
pub fn render_text(c: &LadderComparison) -> String {
    render(&sections(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare_ladder::tests::two_files;
    use crate::analysis::documents::compare::WIDTH;

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
