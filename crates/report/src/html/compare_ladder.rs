//! `hotbench compare ladder-a.json ladder-b.json --html`: the document's sections
//! (`analysis::documents::compare_ladder`) as a page.

use crate::analysis::compare_ladder::LadderComparison;
use crate::analysis::documents::compare_ladder::sections;
use crate::html::section::page;

/// One section per variant: the table and the throughput overlay.
pub fn render_html(c: &LadderComparison) -> String {
    page(
        &format!("hotbench compare: {}", c.files.join(" vs ")),
        "hotbench: ladder comparison",
        &sections(c),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare_ladder::tests::two_files;

    #[test]
    fn each_variant_has_a_section() {
        assert!(render_html(&two_files()).contains("queue / skip-locked"));
    }
}
