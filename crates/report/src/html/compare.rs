//! `hotbench compare --html`: the comparison table (each cell's p-value and confidence
//! interval in its title), throughput and latency overlays, then each run's section.

use hotbench_results::RunRecord;

use crate::analysis::compare::{Comparison, Verdict};
use crate::html::doc::{table, Doc};
use crate::html::escape::html;
use crate::html::run::{hdr_chart, run_section, throughput_overlay};
use crate::text::compare::{cell_text, fmt_p};
use crate::text::number::num;

/// The comparison's HTML table (each cell's p-value and confidence interval in its title)
/// and the legend under it.
pub fn comparison_table(c: &Comparison) -> String {
    let mut header: Vec<&str> = vec!["metric"];
    header.extend(c.names.iter().map(String::as_str));
    let mut rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![format!(
                "{} {}",
                html(r.metric),
                if r.higher_is_better { "↑" } else { "↓" }
            )];
            row.extend(r.cells.iter().map(|cell| {
                let class = match cell.verdict {
                    Verdict::Better => "better",
                    Verdict::Worse => "worse",
                    Verdict::Noise => "noise",
                    _ => "",
                };
                let mut title = Vec::new();
                if let Some(p) = cell.p {
                    title.push(format!("p={} ({})", fmt_p(p), cell.verdict.word()));
                }
                if let Some((lo, hi)) = cell.ci95 {
                    title.push(format!("95% CI {}–{}", num(lo), num(hi)));
                }
                format!(
                    "<span class=\"{class}\" title=\"{}\">{}</span>",
                    html(&title.join("; ")),
                    html(&cell_text(cell))
                )
            }));
            row
        })
        .collect();
    if c.waits.iter().any(Option::is_some) {
        let mut row = vec!["top waits".to_string()];
        row.extend(c.waits.iter().map(|w| html(w.as_deref().unwrap_or("–"))));
        rows.push(row);
    }
    let mut o = table("compare", &header, &rows);
    o.push_str(
        "<p class=\"muted\">↑/↓ higher/lower is better; × ratio to the first run; ~ within \
         run-to-run noise, + better, − worse (Welch's t-test on per-interval values with \
         effective sample sizes for autocorrelation, p &gt; 0.05 is noise); hover a cell for \
         its p-value and 95% confidence interval.</p>\n",
    );
    o
}

/// The comparison as an HTML page: the table, overlays, then each run's section.
pub fn render_html(c: &Comparison, runs: &[(String, RunRecord)]) -> String {
    let mut doc = Doc::new(&format!("hotbench compare: {}", c.names.join(" vs ")));
    doc.heading(1, "hotbench: comparison");
    doc.raw(&comparison_table(c));
    let list: Vec<(&str, &RunRecord)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    doc.chart(throughput_overlay(&list, false));
    doc.chart(throughput_overlay(&list, true));
    doc.chart(hdr_chart(&list));
    for (n, r) in runs {
        run_section(&mut doc, n, r);
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::compare::tests::three_runs;

    #[test]
    fn better_cells_are_marked() {
        let runs = three_runs();
        let page = render_html(&compare(&runs), &runs);
        assert!(page.contains("class=\"better\""));
    }
}
