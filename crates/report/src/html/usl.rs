//! `hotbench usl --html`: measured points against the fitted curve; the chart
//! ([`fit_chart`]) is shared with `hotbench sweep`.

use crate::analysis::chart::{Chart, Series};
use crate::analysis::number::num;
use crate::analysis::usl::UslFit;
use crate::analysis::usl_series::SeriesFit;
use crate::html::doc::{table, Doc};
use crate::html::escape::html;
use crate::text::usl::render_text;

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

/// The page: chart, the fits in words, a table of the points.
pub fn render_html(fits: &[SeriesFit]) -> String {
    let mut page = Doc::new("hotbench usl");
    page.heading(1, "hotbench: Universal Scalability Law fit");
    let list: Vec<Curve<'_>> = fits
        .iter()
        .map(|s| Curve {
            label: &s.series.label,
            points: &s.series.points,
            fit: Some(&s.fit),
        })
        .collect();
    page.chart(fit_chart(
        "Throughput by concurrency: measured vs USL fit",
        "throughput",
        &list,
    ));
    page.raw(&format!("<pre>{}</pre>\n", html(&render_text(fits))));
    let mut rows = Vec::new();
    for s in fits {
        for &(n, x) in &s.series.points {
            rows.push(vec![
                html(&s.series.label),
                num(n),
                num(x),
                num(s.fit.throughput(n)),
            ]);
        }
    }
    page.raw(&table(
        "usl",
        &["series", "clients", "throughput", "fitted"],
        &rows,
    ));
    page.finish()
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
