//! `hotbench compare`'s document. The terminal's output stays within 100 columns whatever
//! the file names and waits: runs are columns A, B, C… named in a legend, the table holds
//! values, ratios and verdict marks, confidence intervals and top waits get their own lines,
//! and each run is then compared with the first in words, one metric per line. The page has
//! a table of the same cells (each cell's p-value and confidence interval as its tooltip),
//! a legend, throughput and latency overlays, then each run's own section. Perturbed runs'
//! times to recover follow the verdicts ([`ttr`]; the numbers are `analysis::compare_ttr`'s):
//! per perturbation, TTR90 and TTR99 of each side with its uncertainty, each later side
//! against the first, a line per side in the terminal and a table on the page.

use std::fmt::Write as _;

use hotbench_results::RunRecord;

use crate::analysis::compare::{Cell, Comparison, Verdict, MIN_INTERVALS};
use crate::analysis::compare_ttr::{TtrCell, TtrRow};
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
/// the page's table and legend; then the perturbations' times to recover
/// (`ttr`).
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
    ttr(s, &c.ttr);
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

/// Adds the TTR lines, heading, table and its key to `s` (nothing for no rows).
pub fn ttr(s: &mut Section, rows: &[TtrRow]) {
    let Some(first) = rows.first() else {
        return;
    };
    lines(s, rows);
    s.heading(3, "Time to recover");
    let mut header: Vec<&str> = vec!["perturbation", ""];
    header.extend(first.cells.iter().map(|x| x.side.as_str()));
    let table_rows = rows
        .iter()
        .map(|r| {
            let mut row = vec![
                section::Cell::code(r.perturbation.as_str()),
                section::Cell::from(r.level),
            ];
            row.extend(r.cells.iter().map(page_cell));
            row
        })
        .collect();
    s.table(Table::new("compare-ttr", &header, table_rows));
    let code = |t: &str| Span::new(Style::Code, t);
    s.paragraph(
        Some("muted"),
        vec![
            Span::plain(
                "± the timeline's interval (a TTR is known to within it); over several \
                 firings (an ",
            ),
            code("every…"),
            Span::plain(", "),
            code("--repeats"),
            Span::plain(
                ") the mean, with the spread and 95% interval in the title; a difference \
                 within both sides' resolution, or with p > 0.05 over repeats, is noise.",
            ),
        ],
    );
}

/// The terminal's lines: the perturbation, then each side on its own line.
fn lines(s: &mut Section, rows: &[TtrRow]) {
    s.line("");
    s.line(
        "time to recover, s (± the timeline's interval; over several firings: mean, sd, 95% CI):",
    );
    let mut last = "";
    for r in rows {
        if r.perturbation != last {
            s.line(fit(&r.perturbation, WIDTH));
            last = &r.perturbation;
        }
        for (i, c) in r.cells.iter().enumerate() {
            let head = if i == 0 { r.level } else { "" };
            s.line(fit(&format!("  {head:<5}  {}", text_cell(c)), WIDTH));
        }
        if r.rules_differ {
            s.line("         judged with other recovery windows: not comparable as is");
        }
    }
}

fn text_cell(c: &TtrCell) -> String {
    let mut s = format!("{:<3} ", c.side);
    match c.mean_s {
        None if c.firings == 0 => s.push_str("not perturbed"),
        None => s.push_str("not recovered"),
        Some(m) => {
            let _ = write!(s, "{m:.2} ±{:.2}", c.resolution_s);
            if let (Some(sd), Some((lo, hi))) = (c.sd_s, c.ci95) {
                let _ = write!(s, " sd {sd:.2} CI {lo:.2}–{hi:.2}");
            }
        }
    }
    if c.firings > 0 {
        let _ = write!(s, " ({}/{} recovered)", c.recovered, c.firings);
    }
    if c.verdict != "reference" {
        let _ = write!(s, ": {}", c.verdict);
        if let Some(d) = c.diff_s {
            let _ = write!(s, ", {d:+.2} s");
        }
        if let Some(p) = c.p {
            let _ = write!(s, " (p {})", fmt_p(p));
        }
    }
    s
}

/// The page's cell: the value ± resolution, coloured by verdict, the rest in its tooltip.
fn page_cell(x: &TtrCell) -> section::Cell {
    let class = match x.verdict {
        "better" => "better",
        "worse" => "worse",
        "within noise" | "within resolution" => "noise",
        _ => "",
    };
    let value = match x.mean_s {
        Some(m) => format!("{m:.2} ±{:.2} s", x.resolution_s),
        None if x.firings == 0 => "–".into(),
        None => "not recovered".into(),
    };
    let mut title = vec![format!("{}/{} recovered", x.recovered, x.firings)];
    if let (Some(sd), Some((lo, hi))) = (x.sd_s, x.ci95) {
        title.push(format!("sd {sd:.2}, 95% CI {lo:.2}–{hi:.2}"));
    }
    if let Some(d) = x.diff_s {
        title.push(format!("{d:+.2} s against the first"));
    }
    if let Some(p) = x.p {
        title.push(format!("p={}", fmt_p(p)));
    }
    title.push(x.verdict.to_string());
    section::Cell::class(class, value).titled(title.join("; "))
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

    fn ttr_cell(side: &str, mean: Option<f64>, verdict: &'static str) -> TtrCell {
        TtrCell {
            side: side.into(),
            firings: 1,
            recovered: usize::from(mean.is_some()),
            mean_s: mean,
            sd_s: None,
            min_s: mean,
            max_s: mean,
            ci95: None,
            resolution_s: 0.1,
            diff_s: mean.filter(|_| verdict != "reference").map(|m| m - 1.3),
            p: None,
            verdict,
        }
    }

    fn rows() -> Vec<TtrRow> {
        vec![TtrRow {
            perturbation: format!("3s:ddl-lock={},1s", "t".repeat(200)),
            level: "TTR90",
            cells: vec![
                ttr_cell("A", Some(1.3), "reference"),
                ttr_cell("B", Some(2.4), "worse"),
                ttr_cell("C", None, "worse"),
            ],
            rules_differ: false,
        }]
    }

    #[test]
    fn each_side_on_its_line_against_the_first_within_100_columns() {
        let mut s = Section::new("t");
        ttr(&mut s, &rows());
        let t: String = s.lines().iter().map(|l| format!("{l}\n")).collect();
        assert!(t.lines().all(|l| l.chars().count() <= WIDTH), "{t}");
        assert!(
            t.contains("  TTR90  A   1.30 ±0.10 (1/1 recovered)\n"),
            "{t}"
        );
        assert!(
            t.contains("         B   2.40 ±0.10 (1/1 recovered): worse, +1.10 s\n"),
            "{t}"
        );
        assert!(
            t.contains("         C   not recovered (0/1 recovered): worse\n"),
            "{t}"
        );
        let mut s = Section::new("t");
        ttr(&mut s, &[]);
        assert!(s.blocks.is_empty());
    }

    #[test]
    fn the_page_has_a_cell_per_side_coloured_by_verdict_with_the_rest_in_its_title() {
        let mut s = Section::new("t");
        ttr(&mut s, &rows());
        let t = s.tables().next().expect("a table");
        assert_eq!(t.class, "compare-ttr");
        assert_eq!(t.header, ["perturbation", "", "A", "B", "C"]);
        let b = &t.rows[0][3];
        assert_eq!(b.text(), "2.40 ±0.10 s");
        assert_eq!(b.0[0].style, Style::Class("worse"));
        assert_eq!(
            b.0[0].title.as_deref(),
            Some("1/1 recovered; +1.10 s against the first; worse")
        );
        assert_eq!(t.rows[0][4].text(), "not recovered");
    }
}
