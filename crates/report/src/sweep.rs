//! `hotbench sweep`: the same workload at several client counts, and the Universal
//! Scalability Law fitted to the measured throughput. The sweep document
//! (`hotbench-sweep/1`) keeps every run's full record; text and HTML render from it.

use std::fmt::Write as _;

use hotbench_stats::RunRecord;
use serde::{Deserialize, Serialize};

use crate::escape::html;
use crate::html::{num, table, Chart, Doc, Series};
use crate::run_html::{header, run_section};
use crate::usl::{self, UslFit};

pub const SWEEP_FORMAT: &str = "hotbench-sweep/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepDoc {
    pub format: String,
    /// One run per client count, in the order they ran.
    pub runs: Vec<RunRecord>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct SweepPoint {
    pub clients: usize,
    pub tps: f64,
    pub goodput_per_s: f64,
    pub p99_ms: f64,
}

impl SweepDoc {
    pub fn new(runs: Vec<RunRecord>) -> SweepDoc {
        SweepDoc {
            format: SWEEP_FORMAT.into(),
            runs,
        }
    }

    pub fn points(&self) -> Vec<SweepPoint> {
        self.runs
            .iter()
            .map(|r| SweepPoint {
                clients: r.bench.clients,
                tps: r.totals.tps,
                goodput_per_s: r.totals.goodput_per_s,
                p99_ms: r.totals.latency.p99_ms,
            })
            .collect()
    }

    /// The USL fitted to tps by client count.
    pub fn fit(&self) -> Result<UslFit, usl::UslError> {
        let pts: Vec<(f64, f64)> = self
            .points()
            .iter()
            .map(|p| (p.clients as f64, p.tps))
            .collect();
        usl::fit(&pts)
    }
}

/// The fit in words: parameters, peak concurrency and throughput.
pub fn fit_text(fit: &UslFit) -> String {
    let mut o = format!(
        "USL fit: λ = {} tps per client, σ (contention) = {:.4}, κ (coherency) = {:.6}, R² = {:.3}\n",
        num(fit.lambda),
        fit.sigma,
        fit.kappa,
        fit.r2
    );
    match (fit.peak_concurrency(), fit.peak_throughput()) {
        (Some(n), Some(x)) => {
            let _ = writeln!(
                o,
                "predicted peak: {} tps at {:.0} clients (N* = sqrt((1-σ)/κ) = {n:.1})",
                num(x),
                n.round().max(1.0)
            );
        }
        (None, Some(x)) => {
            let _ = writeln!(
                o,
                "predicted peak: none in range (κ = 0); throughput approaches λ/σ = {} tps",
                num(x)
            );
        }
        _ => {
            let _ = writeln!(o, "predicted peak: none (linear scaling: σ = κ = 0)");
        }
    }
    o
}

/// The sweep table and fit, for the terminal.
pub fn render_text(doc: &SweepDoc) -> String {
    let fit = doc.fit().ok();
    let mut o = String::from("clients        tps  goodput/s     p99 ms   fitted tps\n");
    for p in doc.points() {
        let fitted = fit
            .map(|f| num(f.throughput(p.clients as f64)))
            .unwrap_or_else(|| "–".into());
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
    match doc.fit() {
        Ok(f) => o.push_str(&fit_text(&f)),
        Err(e) => {
            let _ = writeln!(o, "no USL fit: {e}");
        }
    }
    o
}

/// Measured throughput (points) against the fitted curve.
pub fn usl_chart(doc: &SweepDoc) -> Chart {
    let mut c = Chart::new(
        "Throughput by clients: measured vs USL fit",
        "linear",
        "clients",
        "tps",
    );
    let pts = doc.points();
    let max_n = pts.iter().map(|p| p.clients).max().unwrap_or(1) as f64;
    let fit = doc.fit().ok();
    let top = fit
        .and_then(|f| f.peak_concurrency())
        .map(|n| n.min(max_n * 4.0))
        .unwrap_or(0.0)
        .max(max_n)
        * 1.15;
    let mut x: Vec<f64> = (0..=60)
        .map(|i| 1.0 + (top - 1.0) * f64::from(i) / 60.0)
        .collect();
    x.extend(pts.iter().map(|p| p.clients as f64));
    x.sort_by(f64::total_cmp);
    x.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let measured: Vec<Option<f64>> = x
        .iter()
        .map(|n| {
            pts.iter()
                .find(|p| (p.clients as f64 - n).abs() < 1e-9)
                .map(|p| p.tps)
        })
        .collect();
    let mut m = Series::line("measured tps", measured);
    m.points = true;
    c.series.push(m);
    if let Some(f) = fit {
        let mut s = Series::line(
            "USL fit",
            x.iter().map(|n| Some(f.throughput(*n))).collect(),
        );
        s.dashed = true;
        c.series.push(s);
    }
    c.x = x;
    c
}

/// The sweep's HTML page.
pub fn render_html(doc: &SweepDoc) -> String {
    let mut page = Doc::new("hotbench sweep");
    page.heading(1, "hotbench: concurrency sweep");
    if let Some(r) = doc.runs.first() {
        page.raw(&header(r));
    }
    page.chart(usl_chart(doc));
    match doc.fit() {
        Ok(f) => page.raw(&format!("<pre>{}</pre>\n", html(&fit_text(&f)))),
        Err(e) => page.raw(&format!(
            "<p class=\"note\">no USL fit: {}</p>\n",
            html(&e.to_string())
        )),
    }
    let fit = doc.fit().ok();
    let rows: Vec<Vec<String>> = doc
        .points()
        .iter()
        .map(|p| {
            vec![
                p.clients.to_string(),
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                fit.map(|f| num(f.throughput(p.clients as f64)))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    page.raw(&table(
        "sweep",
        &["clients", "tps", "goodput/s", "p99 ms", "fitted tps"],
        &rows,
    ));
    for r in &doc.runs {
        run_section(&mut page, &format!("{} clients", r.bench.clients), r);
    }
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::record;

    #[test]
    fn sweep_renders_fit_and_chart() {
        let runs: Vec<RunRecord> = [1usize, 2, 4, 8]
            .iter()
            .map(|&n| {
                let x = 100.0 * n as f64 / (1.0 + 0.1 * (n as f64 - 1.0));
                let mut r = record("s", 1.0, 2, (x * 2.0) as u64, 1.0);
                r.bench.clients = n;
                r
            })
            .collect();
        let doc = SweepDoc::new(runs);
        let f = doc.fit().unwrap();
        assert!((f.sigma - 0.1).abs() < 0.02, "{f:?}");
        let text = render_text(&doc);
        assert!(text.contains("USL fit: λ = "), "{text}");
        let c = usl_chart(&doc);
        assert!(c.has_data());
        let page = render_html(&doc);
        assert!(page.contains("concurrency sweep"));
    }
}
