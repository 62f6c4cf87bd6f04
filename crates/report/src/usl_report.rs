//! `hotbench usl`'s output: each series' USL fit in words (σ, κ, λ, the peak concurrency
//! N_max and throughput X_max there, R², the dominant constraint), as JSON
//! (`hotbench-usl/1`) and as an HTML page of measured points against the fitted curve. The
//! chart is shared with `hotbench sweep`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::escape::html;
use crate::html::{num, table, Chart, Doc, Series};
use crate::usl::{self, Constraint, UslError, UslFit};
use crate::usl_input::PointSeries;

pub const USL_FORMAT: &str = "hotbench-usl/1";

/// One series and its fit.
#[derive(Debug, Clone)]
pub struct SeriesFit {
    pub series: PointSeries,
    pub fit: UslFit,
}

impl SeriesFit {
    /// Fits a series; an error names the series when it has a label.
    pub fn new(series: PointSeries) -> Result<SeriesFit, String> {
        match usl::fit(&series.points) {
            Ok(fit) => Ok(SeriesFit { series, fit }),
            Err(e @ UslError::TooFewPoints(_)) if series.label.is_empty() => Err(e.to_string()),
            Err(e) => Err(format!("{}: {e}", series.label)),
        }
    }

    fn max_n(&self) -> f64 {
        self.series.points.iter().map(|p| p.0).fold(1.0, f64::max)
    }

    pub fn constraint(&self) -> Constraint {
        self.fit.dominant_constraint(self.max_n())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FitJson {
    pub label: String,
    pub sigma: f64,
    pub kappa: f64,
    pub lambda: f64,
    /// Concurrency of peak throughput (none without a retrograde region, κ = 0).
    pub n_max: Option<f64>,
    /// Throughput at `n_max`, or the asymptote λ/σ when κ = 0.
    pub x_max: Option<f64>,
    pub r2: f64,
    pub constraint: Constraint,
    /// The measured `[clients, throughput]` points.
    pub points: Vec<[f64; 2]>,
}

/// The `--json` document: the first (usually only) series' fit at the top level, every
/// series in `fits`.
#[derive(Debug, Clone, Serialize)]
pub struct UslJson {
    pub format: &'static str,
    #[serde(flatten)]
    pub first: FitJson,
    pub fits: Vec<FitJson>,
}

fn fit_json(s: &SeriesFit) -> FitJson {
    FitJson {
        label: s.series.label.clone(),
        sigma: s.fit.sigma,
        kappa: s.fit.kappa,
        lambda: s.fit.lambda,
        n_max: s.fit.peak_concurrency(),
        x_max: s.fit.peak_throughput(),
        r2: s.fit.r2,
        constraint: s.constraint(),
        points: s.series.points.iter().map(|&(n, x)| [n, x]).collect(),
    }
}

/// `None` without any series.
pub fn to_json(fits: &[SeriesFit]) -> Option<UslJson> {
    let all: Vec<FitJson> = fits.iter().map(fit_json).collect();
    Some(UslJson {
        format: USL_FORMAT,
        first: all.first()?.clone(),
        fits: all,
    })
}

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
    use crate::usl::tests::CISCO;

    fn cisco() -> SeriesFit {
        SeriesFit::new(PointSeries {
            label: String::new(),
            points: CISCO.to_vec(),
        })
        .unwrap()
    }

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

    #[test]
    fn json_has_the_documented_fields() {
        let v = serde_json::to_value(to_json(&[cisco()]).unwrap()).unwrap();
        for k in ["sigma", "kappa", "lambda", "n_max", "x_max", "r2"] {
            assert!(v[k].as_f64().is_some(), "{k}: {v}");
        }
        assert_eq!(v["format"], USL_FORMAT);
        assert_eq!(v["constraint"], "contention");
        assert_eq!(v["fits"].as_array().unwrap().len(), 1);
        assert_eq!(v["points"][0][1], 955.16);
        assert!(to_json(&[]).is_none());
    }

    #[test]
    fn page_draws_points_and_curve_and_escapes_labels() {
        let mut s = cisco();
        s.series.label = "<b>x</b>".into();
        let page = render_html(&[s]);
        assert!(page.contains("&lt;b&gt;x&lt;/b&gt;"));
        assert!(!page.contains("<b>x</b>"));
        assert!(page.contains("USL fit"));
    }

    #[test]
    fn too_few_points_names_the_series() {
        let e = SeriesFit::new(PointSeries {
            label: "v".into(),
            points: vec![(1.0, 1.0)],
        })
        .unwrap_err();
        assert!(e.starts_with("v: the USL fit needs at least 3"), "{e}");
    }
}
