//! `hotbench compare`'s document. The terminal's output stays within 100 columns whatever
//! the file names and waits: runs are columns A, B, C… named in a legend, the table holds
//! values, ratios and verdict marks, confidence intervals and top waits get their own lines,
//! and each run is then compared with the first in words, one metric per line. The page has
//! a table of the same cells (each cell's p-value and confidence interval as its tooltip),
//! a legend, throughput and latency overlays, then each run's own section.

use std::fmt::Write as _;

use hotbench_stats::RunRecord;

use crate::analysis::compare::{Cell, Comparison, Verdict, MIN_INTERVALS};
use crate::analysis::number::num;
use crate::analysis::section::{self, Section, Span, Style, Table};
use crate::analysis::sections::timeline::{hdr_chart, throughput_overlay};

/// The widest line the text output may have.
pub const WIDTH: usize = 100;

/// The legend of files, the comparison, and the overlays of `runs` on the page.
pub fn sections(c: &Comparison, runs: &[(String, RunRecord)]) -> Vec<Section> {
    let mut s = Section::new("comparison");
    for l in legend(&c.names) {
        s.line(l);
    }
    s.line("");
    comparison(&mut s, c);
    let list: Vec<(&str, &RunRecord)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
    s.chart(throughput_overlay(&list, false));
    s.chart(throughput_overlay(&list, true));
    s.chart(hdr_chart(&list));
    vec![s]
}

/// `A: name`, one line per file, cut to the width.
pub fn legend(names: &[String]) -> Vec<String> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| fit(&format!("{}: {name}", letter(i)), WIDTH))
        .collect()
}

/// The table, confidence intervals, top waits and verdicts (the terminal's lines), and
/// the page's table and legend.
pub fn comparison(s: &mut Section, c: &Comparison) {
    body(s, c);
    s.table(table(c));
    s.paragraph(
        Some("muted"),
        vec![Span::plain(
            "↑/↓ higher/lower is better; × ratio to the first run; ~ within \
         run-to-run noise, + better, − worse (Welch's t-test on per-interval values with \
         effective sample sizes for autocorrelation, p > 0.05 is noise); hover a cell for \
         its p-value and 95% confidence interval.",
        )],
    );
}

fn marker(v: Verdict) -> &'static str {
    match v {
        Verdict::Noise => " ~",
        Verdict::Better => " +",
        Verdict::Worse => " -",
        Verdict::Reference | Verdict::Untested => "",
    }
}

/// `value ×ratio mark`, as in the table.
fn cell_text(c: &Cell) -> String {
    let mut s = num(c.value);
    if let Some(r) = c.ratio {
        let _ = write!(s, " ×{r:.2}");
    }
    s.push_str(marker(c.verdict));
    s
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// Column letters: A…Z, then A1, B1….
pub fn letter(i: usize) -> String {
    let c = char::from(b'A' + (i % 26) as u8);
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26)
    }
}

/// Cuts `s` to `width` characters, ending with … when cut.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t
}

fn metric_label(metric: &str, higher_is_better: bool) -> String {
    format!("{metric} {}", if higher_is_better { "↑" } else { "↓" })
}

/// Right-aligned columns after a left-aligned first one.
fn columns(s: &mut Section, lines: &[Vec<String>]) {
    let ncol = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..ncol)
        .map(|i| {
            lines
                .iter()
                .map(|l| l.get(i).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in lines {
        let mut row = String::new();
        for (i, cell) in l.iter().enumerate() {
            let pad = " ".repeat(widths[i].saturating_sub(cell.chars().count()));
            if i == 0 {
                row.push_str(cell);
                row.push_str(&pad);
            } else {
                row.push_str("   ");
                row.push_str(&pad);
                row.push_str(cell);
            }
        }
        s.line(row.trim_end());
    }
}

/// The terminal's table, confidence intervals, top waits and verdicts.
fn body(s: &mut Section, c: &Comparison) {
    let mut table: Vec<Vec<String>> = vec![std::iter::once(String::new())
        .chain((0..c.names.len()).map(letter))
        .collect()];
    for r in &c.rows {
        let mut line = vec![metric_label(r.metric, r.higher_is_better)];
        line.extend(r.cells.iter().map(cell_text));
        table.push(line);
    }
    columns(s, &table);
    let mut cis: Vec<Vec<String>> = Vec::new();
    for r in c
        .rows
        .iter()
        .filter(|r| r.cells.iter().any(|x| x.ci95.is_some()))
    {
        let mut line = vec![metric_label(r.metric, r.higher_is_better)];
        line.extend(r.cells.iter().enumerate().map(|(i, x)| match x.ci95 {
            Some((lo, hi)) => format!("{} {}–{}", letter(i), num(lo), num(hi)),
            None => format!("{} –", letter(i)),
        }));
        cis.push(line);
    }
    if !cis.is_empty() {
        s.line("");
        s.line("95% confidence intervals (effective sample sizes, autocorrelation-corrected):");
        columns(s, &cis);
    }
    if c.waits.iter().any(Option::is_some) {
        s.line("");
        for (i, w) in c.waits.iter().enumerate() {
            let w = w.as_deref().unwrap_or("–");
            s.line(fit(&format!("top waits {}: {w}", letter(i)), WIDTH));
        }
    }
    s.line("");
    s.line("↑/↓: higher/lower is better; ×: ratio to A; ~ within run-to-run noise, + better,");
    s.line(
        "- worse (Welch's t-test on per-interval values, effective sample sizes; p > 0.05 is noise)",
    );
    for (i, name) in c.names.iter().enumerate().skip(1) {
        versus(s, c, i, name);
    }
}

/// `B vs A:` and one line per tested metric.
fn versus(s: &mut Section, c: &Comparison, i: usize, name: &str) {
    let mut lines = Vec::new();
    let mut short = false;
    for r in &c.rows {
        let cell = &r.cells[i];
        let base = &r.cells[0];
        let Some(p) = cell.p else {
            short |= r.tested && cell.verdict == Verdict::Untested;
            continue;
        };
        let ratio = cell
            .ratio
            .map(|x| format!("×{x:.2}"))
            .unwrap_or_else(|| "–".into());
        let neff = match (base.n_eff, cell.n_eff) {
            (Some(a), Some(b)) => format!(
                "; n_eff {a:.1}/{} and {b:.1}/{}",
                base.intervals, cell.intervals
            ),
            _ => String::new(),
        };
        let plain = cell
            .p_uncorrected
            .map(|u| format!(", uncorrected {}", fmt_p(u)))
            .unwrap_or_default();
        lines.push(fit(
            &format!(
                "  {:<10} {ratio:>6}  {:<12}  (p {}{plain}{neff})",
                r.metric,
                cell.verdict.word(),
                fmt_p(p)
            ),
            WIDTH,
        ));
    }
    if short {
        lines.push(format!(
            "  too few full intervals (< {MIN_INTERVALS}) to tell differences from noise"
        ));
    }
    if lines.is_empty() {
        return;
    }
    s.line("");
    s.line(fit(
        &format!("{} vs A ({name} vs {}):", letter(i), c.names[0]),
        WIDTH,
    ));
    for l in lines {
        s.line(l);
    }
}

/// The page's table: each cell's p-value and confidence interval in its tooltip.
fn table(c: &Comparison) -> Table {
    let mut header: Vec<&str> = vec!["metric"];
    header.extend(c.names.iter().map(String::as_str));
    let mut rows: Vec<Vec<section::Cell>> = c
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![section::Cell::from(metric_label(
                r.metric,
                r.higher_is_better,
            ))];
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
                section::Cell::styled(Style::Class(class), cell_text(cell)).titled(title.join("; "))
            }));
            row
        })
        .collect();
    if c.waits.iter().any(Option::is_some) {
        let mut row = vec![section::Cell::from("top waits")];
        row.extend(
            c.waits
                .iter()
                .map(|w| section::Cell::from(w.as_deref().unwrap_or("–"))),
        );
        rows.push(row);
    }
    Table::new("compare", &header, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_and_fitting() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(27), "B1");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
