//! `hotbench usl`'s terminal output: each series' points, fitted values and the fit in
//! words; [`fit_lines`] is shared with `hotbench sweep`'s table.

use std::fmt::Write as _;

use crate::analysis::number::num;
use crate::analysis::usl::{Constraint, UslFit};
use crate::analysis::usl_series::SeriesFit;

/// The fit in words for the terminal (`hotbench usl`, and under `hotbench sweep`'s table):
/// parameters, peak, and the constraint that dominates at `max_n` clients.
pub fn fit_lines(fit: &UslFit, max_n: f64) -> String {
    let mut o = format!(
        "σ (contention) = {:.6}   κ (coherency) = {:.6e}   λ = {} per client   R² = {:.4}\n",
        fit.sigma,
        fit.kappa,
        num(fit.lambda),
        fit.r2
    );
    match (fit.peak_concurrency(), fit.peak_throughput()) {
        (Some(n), Some(x)) => {
            let _ = writeln!(
                o,
                "peak: N_max = sqrt((1-σ)/κ) = {n:.1} clients, X_max = {}",
                num(x)
            );
        }
        (None, Some(x)) => {
            let _ = writeln!(
                o,
                "peak: none (κ = 0); throughput approaches λ/σ = {}",
                num(x)
            );
        }
        _ => o.push_str("peak: none (linear scaling: σ = κ = 0)\n"),
    }
    let why = match fit.dominant_constraint(max_n) {
        Constraint::Contention => format!(
            "contention dominates at {max_n:.0} clients (σ ≥ κN): clients queue for something \
             shared (a hot row, a lock)"
        ),
        Constraint::Coherency => format!(
            "coherency dominates at {max_n:.0} clients (κN > σ): clients slow each other down \
             (crosstalk, retries, cache traffic)"
        ),
        Constraint::None => "no constraint: scaling is linear".to_string(),
    };
    o.push_str(&why);
    o.push('\n');
    o
}

/// Every series: its points, fitted values and the fit.
pub fn render_text(fits: &[SeriesFit]) -> String {
    let mut o = String::new();
    for (i, s) in fits.iter().enumerate() {
        if i > 0 {
            o.push('\n');
        }
        if !s.series.label.is_empty() {
            let _ = writeln!(o, "{}:", s.series.label);
        }
        o.push_str(" clients   throughput       fitted\n");
        for &(n, x) in &s.series.points {
            let _ = writeln!(
                o,
                "{:>8} {:>12} {:>12}",
                num(n),
                num(x),
                num(s.fit.throughput(n))
            );
        }
        o.push_str(&fit_lines(&s.fit, s.max_n()));
    }
    o
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
