//! `hotbench compare --html`: the document's sections (`analysis::documents::compare`) as a
//! page, then each run's section.

use hotbench_stats::RunRecord;

use crate::analysis::compare::Comparison;
use crate::analysis::documents::compare::sections;
use crate::html::doc::Doc;
use crate::html::run::run_section;

/// The comparison as an HTML page: the table, overlays, then each run's section.
pub fn render_html(c: &Comparison, runs: &[(String, RunRecord)]) -> String {
    let mut doc = Doc::new(&format!("hotbench compare: {}", c.names.join(" vs ")));
    doc.heading(1, "hotbench: comparison");
    crate::html::section::sections(&mut doc, &sections(c, runs));
    for (n, r) in runs {
        run_section(&mut doc, n, r);
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::compare::tests::three_runs;

    #[test]
    fn better_cells_are_marked() {
        let runs = three_runs();
        let page = render_html(&compare(&runs), &runs);
        assert!(page.contains("class=\"better\""));
    }
}
