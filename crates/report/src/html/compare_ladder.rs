//! `hotbench compare ladder-a.json ladder-b.json --html`: one section per variant, its
//! comparison table and throughput overlay.

use hotbench_results::RunRecord;

use crate::analysis::compare_ladder::LadderComparison;
use crate::html::compare::comparison_table;
use crate::html::doc::Doc;
use crate::html::escape::html;
use crate::html::run::throughput_overlay;

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
    use crate::analysis::compare_ladder::tests::two_files;

    #[test]
    fn each_variant_has_a_section() {
        assert!(render_html(&two_files()).contains("queue / skip-locked"));
    }
}
