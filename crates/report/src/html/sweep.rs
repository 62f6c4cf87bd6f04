//! `hotbench sweep --html`: the document's sections (`analysis::documents::sweep`, or
//! `pool_sweep` for a pool-size sweep) as a page, then every run's own section.

use hotbench_stats::{RunRecord, SweepAxis, SweepDoc};

use crate::analysis::documents::{pool_sweep, sweep};
use crate::analysis::section::Section;
use crate::html::doc::Doc;
use crate::html::run::run_section;
use crate::html::section::sections;

/// The sweep's HTML page (a pool-size sweep's own page instead).
pub fn render_html(doc: &SweepDoc) -> String {
    if doc.axis == SweepAxis::PoolSize {
        return page(
            "hotbench pool-size sweep",
            "hotbench: connection-pool size sweep",
            &pool_sweep::sections(doc),
            &pool_sweep::runs(doc),
        );
    }
    page(
        "hotbench sweep",
        "hotbench: concurrency sweep",
        &sweep::sections(doc),
        &sweep::runs(doc),
    )
}

fn page(title: &str, heading: &str, list: &[Section], runs: &[(String, &RunRecord)]) -> String {
    let mut page = Doc::new(title);
    page.heading(1, heading);
    sections(&mut page, list);
    for (title, r) in runs {
        run_section(&mut page, title, r);
    }
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::documents::pool_sweep::tests::pool_sweep;
    use crate::analysis::sweep::tests::sweep;

    #[test]
    fn sweep_page_has_the_chart() {
        let page = render_html(&sweep());
        assert!(page.contains("concurrency sweep"));
        assert!(page.contains("Throughput by clients: measured vs USL fit"));
    }

    #[test]
    fn the_pool_size_page_names_the_best() {
        let page = render_html(&pool_sweep());
        assert!(page.contains("connection-pool size sweep"), "page title");
        assert!(page.contains("<td>4 (best)</td>"));
        assert!(page.contains("<p><b>best pool size: 4 (1500 goodput/s"));
    }
}
