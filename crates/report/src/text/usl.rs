//! `hotbench usl`'s terminal output: the document's sections (`analysis::documents::usl`)
//! in the terminal.

use crate::analysis::documents::usl::sections;
use crate::analysis::usl_series::SeriesFit;
use crate::text::section::render;

/// Every series: its points, fitted values and the fit.
pub fn render_text(fits: &[SeriesFit]) -> String {
    render(&sections(fits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::usl_series::tests::cisco;

    #[test]
    fn text_names_peak_and_constraint() {
        let text = render_text(&[cisco()]);
        assert!(text.contains("σ (contention) = 0.026716"), "{text}");
        assert!(
            text.contains("N_max = sqrt((1-σ)/κ) = 35.6 clients"),
            "{text}"
        );
        assert!(
            text.contains("contention dominates at 32 clients"),
            "{text}"
        );
    }
}
