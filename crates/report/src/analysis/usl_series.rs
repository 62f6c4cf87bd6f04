//! A series of (concurrency, throughput) points and its USL fit (σ, κ, λ, the peak
//! concurrency N_max and throughput X_max there, R², the dominant constraint), and
//! `hotbench usl --json`'s document (`hotbench_results::UslDoc`). Rendered by `text::usl` and
//! `html::usl`.

use hotbench_results::{UslDoc, UslFitRecord, USL_FORMAT};

use crate::analysis::usl::{self, Constraint, UslError, UslFit};
use crate::analysis::usl_input::PointSeries;

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

    /// The largest concurrency measured.
    pub fn max_n(&self) -> f64 {
        self.series.points.iter().map(|p| p.0).fold(1.0, f64::max)
    }

    pub fn constraint(&self) -> Constraint {
        self.fit.dominant_constraint(self.max_n())
    }
}

fn fit_json(s: &SeriesFit) -> UslFitRecord {
    UslFitRecord {
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
pub fn to_json(fits: &[SeriesFit]) -> Option<UslDoc> {
    let all: Vec<UslFitRecord> = fits.iter().map(fit_json).collect();
    Some(UslDoc {
        format: USL_FORMAT.into(),
        first: all.first()?.clone(),
        fits: all,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::usl::tests::CISCO;

    /// Gunther's Cisco benchmark, fitted (also for the renderers' tests).
    pub(crate) fn cisco() -> SeriesFit {
        SeriesFit::new(PointSeries {
            label: String::new(),
            points: CISCO.to_vec(),
        })
        .unwrap()
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
    fn too_few_points_names_the_series() {
        let e = SeriesFit::new(PointSeries {
            label: "v".into(),
            points: vec![(1.0, 1.0)],
        })
        .unwrap_err();
        assert!(e.starts_with("v: the USL fit needs at least 3"), "{e}");
    }
}
