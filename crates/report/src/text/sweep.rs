//! `hotbench sweep`'s terminal output: the document's sections
//! (`analysis::documents::sweep`, or `pool_sweep` for a pool-size sweep) in the terminal.

use hotbench_stats::{SweepAxis, SweepDoc};

use crate::analysis::documents::{pool_sweep, sweep};
use crate::text::section::render;

/// The sweep table and fit, for the terminal (a pool-size sweep's own table instead).
pub fn render_text(doc: &SweepDoc) -> String {
    if doc.axis == SweepAxis::PoolSize {
        return render(&pool_sweep::sections(doc));
    }
    render(&sweep::sections(doc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::documents::pool_sweep::tests::pool_sweep;
    use crate::analysis::sweep::tests::{labelled_sweep, sweep};

    #[test]
    fn sweep_text_has_the_fit() {
        let text = render_text(&sweep());
        assert!(text.contains("USL fit: σ (contention) = "), "{text}");
        assert!(text.contains("peak: "), "{text}");
    }

    #[test]
    fn labelled_series_are_listed_apart() {
        let text = render_text(&labelled_sweep());
        assert!(text.starts_with("hot:\n"), "{text}");
        assert!(text.contains("\nspread:\n"), "{text}");
    }

    #[test]
    fn each_pool_size_is_a_row_and_the_best_is_called_out() {
        let text = render_text(&pool_sweep());
        assert!(
            text.starts_with("update-returning, 100 clients:\n"),
            "{text}"
        );
        assert!(
            text.contains("no pooler        600        600        900  -\n"),
            "{text}"
        );
        assert!(
            text.contains("        4       1500       1500        120"),
            "{text}"
        );
        assert!(
            text.contains(
                "best pool size: 4 (1500 goodput/s, p99 120 ms); without a pooler 600 \
                 goodput/s, p99 900 ms: 2.50× the goodput\n"
            ),
            "{text}"
        );
        let mut doc = pool_sweep();
        doc.runs[0].bench.query_mode = "prepared".into();
        doc.runs[1].bench.query_mode = "extended".into();
        assert!(render_text(&doc).contains(
            "note: without a pooler the query mode was prepared, through the pooler extended"
        ));
    }
}
