//! `hotbench usl`'s document: each series' points, fitted values and the fit in words (the
//! terminal's lines, shown on the page as they are), the measured points against the fitted
//! curve, and a table of the points. [`fit_lines`] and [`fit_chart`] serve `hotbench
//! sweep` too.

use crate::analysis::chart::{Chart, Series};
use crate::analysis::number::num;
use crate::analysis::section::{Cell, Section, Table};
use crate::analysis::usl::{Constraint, UslFit};
use crate::analysis::usl_series::SeriesFit;

pub fn sections(fits: &[SeriesFit]) -> Vec<Section> {
    let mut s = Section::new("usl");
    let list: Vec<Curve<'_>> = fits
        .iter()
        .map(|f| Curve {
            label: &f.series.label,
            points: &f.series.points,
            fit: Some(&f.fit),
        })
        .collect();
    s.chart(fit_chart(
        "Throughput by concurrency: measured vs USL fit",
        "throughput",
        &list,
    ));
    for (i, f) in fits.iter().enumerate() {
        if i > 0 {
            s.line("");
        }
        if !f.series.label.is_empty() {
            s.line(format!("{}:", f.series.label));
        }
        s.line(" clients   throughput       fitted");
        for &(n, x) in &f.series.points {
            s.line(format!(
                "{:>8} {:>12} {:>12}",
                num(n),
                num(x),
                num(f.fit.throughput(n))
            ));
        }
        for l in fit_lines(&f.fit, f.max_n()) {
            s.line(l);
        }
    }
    s.lines_as_pre();
    let mut rows = Vec::new();
    for f in fits {
        for &(n, x) in &f.series.points {
            rows.push(vec![
                Cell::from(f.series.label.as_str()),
                Cell::num(n),
                Cell::num(x),
                Cell::num(f.fit.throughput(n)),
            ]);
        }
    }
    s.table(Table::new(
        "usl",
        &["series", "clients", "throughput", "fitted"],
        rows,
    ));
    vec![s]
}

/// The fit in words (`hotbench usl`, and under `hotbench sweep`'s table): parameters, peak,
/// and the constraint that dominates at `max_n` clients.
pub fn fit_lines(fit: &UslFit, max_n: f64) -> Vec<String> {
    let mut o = vec![format!(
        "σ (contention) = {:.6}   κ (coherency) = {:.6e}   λ = {} per client   R² = {:.4}",
        fit.sigma,
        fit.kappa,
        num(fit.lambda),
        fit.r2
    )];
    o.push(match (fit.peak_concurrency(), fit.peak_throughput()) {
        (Some(n), Some(x)) => format!(
            "peak: N_max = sqrt((1-σ)/κ) = {n:.1} clients, X_max = {}",
            num(x)
        ),
        (None, Some(x)) => format!("peak: none (κ = 0); throughput approaches λ/σ = {}", num(x)),
        _ => "peak: none (linear scaling: σ = κ = 0)".to_string(),
    });
    o.push(match fit.dominant_constraint(max_n) {
        Constraint::Contention => format!(
            "contention dominates at {max_n:.0} clients (σ ≥ κN): clients queue for something \
             shared (a hot row, a lock)"
        ),
        Constraint::Coherency => format!(
            "coherency dominates at {max_n:.0} clients (κN > σ): clients slow each other down \
             (crosstalk, retries, cache traffic)"
        ),
        Constraint::None => "no constraint: scaling is linear".to_string(),
    });
    o
}

/// One curve of [`fit_chart`]: measured points and their fit, if any.
pub struct Curve<'a> {
    pub label: &'a str,
    pub points: &'a [(f64, f64)],
    pub fit: Option<&'a UslFit>,
}

/// Measured points against fitted curves, from 1 client to past the furthest peak.
pub fn fit_chart(title: &str, y_label: &str, series: &[Curve<'_>]) -> Chart {
    let mut c = Chart::new(title, "linear", "clients", y_label);
    let max_n = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let top = series
        .iter()
        .filter_map(|s| s.fit.and_then(UslFit::peak_concurrency))
        .map(|n| n.min(max_n * 4.0))
        .fold(max_n, f64::max)
        * 1.15;
    let mut x: Vec<f64> = (0..=60)
        .map(|i| 1.0 + (top - 1.0) * f64::from(i) / 60.0)
        .collect();
    x.extend(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    x.sort_by(f64::total_cmp);
    x.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    for Curve {
        label,
        points: pts,
        fit,
    } in series
    {
        let name = |what: &str| {
            if label.is_empty() {
                what.to_string()
            } else {
                format!("{label} {what}")
            }
        };
        let measured: Vec<Option<f64>> = x
            .iter()
            .map(|n| pts.iter().find(|p| (p.0 - n).abs() < 1e-9).map(|p| p.1))
            .collect();
        let mut m = Series::line(name(&format!("measured {y_label}")), measured);
        m.points = true;
        c.series.push(m);
        if let Some(f) = fit {
            let mut s = Series::line(
                name("USL fit"),
                x.iter().map(|n| Some(f.throughput(*n))).collect(),
            );
            s.dashed = true;
            c.series.push(s);
        }
    }
    c.x = x;
    c
}
