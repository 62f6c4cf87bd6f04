//! `hotbench sweep`'s terminal output: per series, the table of client counts with the fitted
//! throughput beside the measured one, then the fit in words.

use std::fmt::Write as _;

use hotbench_results::{SweepAxis, SweepDoc};

use crate::analysis::sweep::fit;
use crate::text::number::num;
use crate::text::usl::fit_lines;

/// The sweep table and fit, for the terminal (a pool-size sweep's own table instead).
pub fn render_text(doc: &SweepDoc) -> String {
    if doc.axis == SweepAxis::PoolSize {
        return crate::text::pool_sweep::render_pool_text(doc);
    }
    let mut o = String::new();
    for series in doc.series() {
        if !series.label.is_empty() {
            let _ = writeln!(o, "{}:", series.label);
        }
        let fit = fit(&series);
        o.push_str("clients        tps  goodput/s     p99 ms   fitted tps\n");
        for p in series.points() {
            let fitted = fit
                .as_ref()
                .map(|f| num(f.throughput(p.clients as f64)))
                .unwrap_or_else(|_| "–".into());
            let _ = writeln!(
                o,
                "{:>7} {:>10} {:>10} {:>10} {:>12}",
                p.clients,
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                fitted
            );
        }
        match fit {
            Ok(f) => {
                let max_n = series
                    .runs
                    .iter()
                    .map(|r| r.bench.clients)
                    .max()
                    .unwrap_or(1);
                o.push_str("USL fit: ");
                o.push_str(&fit_lines(&f, max_n as f64));
            }
            Err(e) => {
                let _ = writeln!(o, "no USL fit: {e}");
            }
        }
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
