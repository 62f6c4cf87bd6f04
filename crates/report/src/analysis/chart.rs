//! Charts as data, the section model's series: series of optional values over a shared x
//! axis, built by the sections from records. The HTML page embeds them as JSON and
//! `assets/report.js` draws them with uPlot; the terminal shows the same facts as lines.

use serde::Serialize;

/// One chart, drawn by `report.js` with uPlot.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// `time` (seconds), `linear`, or `quantile` (x = 1/(1−q) on a log axis, labelled as
    /// percentiles).
    pub x_kind: &'static str,
    pub y_log: bool,
    /// Series are stacked (each drawn on top of the previous ones).
    pub stacked: bool,
    /// Series take their colour from their label, the same on every chart of the page (wait
    /// events: `Lock:tuple` is one colour everywhere).
    #[serde(skip)]
    pub colour_by_label: bool,
    pub x: Vec<f64>,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
    /// Draw points only (measured values against a fitted line).
    pub points: bool,
    pub dashed: bool,
    /// Fixed colour (`#rrggbb`); else the chart's palette by position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

impl Series {
    pub fn line(label: impl Into<String>, values: Vec<Option<f64>>) -> Series {
        Series {
            label: label.into(),
            values,
            points: false,
            dashed: false,
            color: None,
        }
    }
}

impl Chart {
    pub fn new(
        title: impl Into<String>,
        x_kind: &'static str,
        x_label: &str,
        y_label: &str,
    ) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_kind,
            y_log: false,
            stacked: false,
            colour_by_label: false,
            x: Vec::new(),
            series: Vec::new(),
        }
    }

    /// True when some series has a finite value to draw.
    pub fn has_data(&self) -> bool {
        !self.x.is_empty()
            && self
                .series
                .iter()
                .any(|s| s.values.iter().any(|v| v.is_some_and(f64::is_finite)))
    }
}
