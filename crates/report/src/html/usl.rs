//! `hotbench usl --html`: the document's sections (`analysis::documents::usl`) as a page.

use crate::analysis::documents::usl::sections;
use crate::analysis::usl_series::SeriesFit;
use crate::html::section::page;

/// The page: chart, the fits in words, a table of the points.
pub fn render_html(fits: &[SeriesFit]) -> String {
    page(
        "hotbench usl",
        "hotbench: Universal Scalability Law fit",
        &sections(fits),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::usl_series::tests::cisco;

    #[test]
    fn page_draws_points_and_curve_and_escapes_labels() {
        let mut s = cisco();
        s.series.label = "<b>x</b>".into();
        let page = render_html(&[s]);
        assert!(page.contains("&lt;b&gt;x&lt;/b&gt;"));
        assert!(!page.contains("<b>x</b>"));
        assert!(page.contains("USL fit"));
    }
}
