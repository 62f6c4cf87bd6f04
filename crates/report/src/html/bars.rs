//! Horizontal bar charts (the section model's `Bars`) as inline SVG, for ladders, sets of
//! runs and hot keys: one bar per item, its value, a label (escaped) and an optional badge
//! (speedup, check results), and a dashed labelled line (a ladder's ceiling) where there is
//! one. Static markup: no script needed to draw it.

use crate::analysis::number::num;
use crate::analysis::section::Bars;
use crate::html::escape::html;

/// An SVG chart of the bars, with the line (labelled) at its value.
pub fn svg(chart: &Bars) -> String {
    let (title, unit, bars) = (&chart.title, &chart.unit, &chart.bars);
    if bars.is_empty() {
        return String::new();
    }
    let line = chart
        .line
        .as_ref()
        .map(|(l, v)| (l.as_str(), *v))
        .filter(|(_, v)| v.is_finite() && *v > 0.0);
    let max = bars
        .iter()
        .map(|b| b.value)
        .chain(line.map(|(_, v)| v))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (label_w, bar_w, row_h, top) = (190.0, 560.0, 26.0, 28.0);
    let height = top + row_h * bars.len() as f64 + 8.0;
    let width = label_w + bar_w + 260.0;
    let mut o = format!(
        "<svg class=\"bars\" data-bars=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" \
         height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\">\n\
         <text x=\"0\" y=\"16\" font-weight=\"600\">{} ({})</text>\n",
        bars.len(),
        html(title),
        html(unit)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = top + row_h * i as f64;
        let w = if max > 0.0 && b.value.is_finite() {
            (b.value / max * bar_w).max(1.0)
        } else {
            1.0
        };
        let fill = if b.bad {
            "#c62828"
        } else if b.highlight {
            "#7f7f7f"
        } else {
            "#1f77b4"
        };
        o.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" fill=\"{fill}\"/>\
             <text x=\"{}\" y=\"{}\">{} {}</text>\n",
            label_w - 8.0,
            y + 16.0,
            html(&b.label),
            y + 3.0,
            row_h - 6.0,
            label_w + w + 6.0,
            y + 16.0,
            html(&num(b.value)),
            html(&b.badge)
        ));
    }
    if let (Some((label, v)), true) = (line, max > 0.0) {
        let x = label_w + v / max * bar_w;
        let bottom = top + row_h * bars.len() as f64;
        o.push_str(&format!(
            "<line class=\"ceiling\" x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{bottom}\" \
             stroke=\"#d62728\" stroke-dasharray=\"5,3\"/>\
             <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#d62728\">{} {}</text>\n",
            top - 4.0,
            top - 6.0,
            html(label),
            html(&num(v))
        ));
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::section::Bar;

    fn svg_with_line(title: &str, unit: &str, bars: &[Bar], line: Option<(&str, f64)>) -> String {
        svg(&Bars {
            title: title.into(),
            unit: unit.into(),
            bars: bars.to_vec(),
            line: line.map(|(l, v)| (l.to_string(), v)),
        })
    }

    #[test]
    fn labels_are_escaped_and_bars_scaled() {
        let s = svg_with_line(
            "goodput",
            "per s",
            &[
                Bar {
                    label: "<script>x</script>".into(),
                    value: 50.0,
                    badge: "×1.0".into(),
                    highlight: true,
                    bad: false,
                },
                Bar {
                    label: "b".into(),
                    value: 100.0,
                    badge: "\"x\"".into(),
                    highlight: false,
                    bad: true,
                },
            ],
            None,
        );
        assert!(!s.contains("<script>"));
        assert!(s.contains("&lt;script&gt;"));
        assert!(s.contains("width=\"280.0\"") && s.contains("width=\"560.0\""));
        assert!(s.contains("&quot;x&quot;"));
        assert!(!s.contains("class=\"ceiling\""));
        let bar = |v: f64| Bar {
            label: "a".into(),
            value: v,
            badge: String::new(),
            highlight: false,
            bad: false,
        };
        // The ceiling is the scale's maximum when above every bar: its line at the end.
        let s = svg_with_line("g", "per s", &[bar(50.0)], Some(("ceiling <x>", 200.0)));
        assert!(s.contains("width=\"140.0\""), "{s}");
        assert!(s.contains("<line class=\"ceiling\" x1=\"750.0\""), "{s}");
        assert!(s.contains("ceiling &lt;x&gt; 200"), "{s}");
    }
}
