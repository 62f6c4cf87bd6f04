//! `hotbench compare`'s terminal output, kept within 100 columns whatever the file names
//! and waits: runs are columns A, B, C… named in a legend, the table holds values, ratios
//! and verdict marks, confidence intervals and top waits get their own lines, and each run
//! is then compared with the first in words, one metric per line.

use std::fmt::Write as _;

use crate::analysis::compare::{Cell, Comparison, Verdict, MIN_INTERVALS};
use crate::text::number::num;

/// The widest line the text output may have.
pub const WIDTH: usize = 100;

fn marker(v: Verdict) -> &'static str {
    match v {
        Verdict::Noise => " ~",
        Verdict::Better => " +",
        Verdict::Worse => " -",
        Verdict::Reference | Verdict::Untested => "",
    }
}

/// `value ×ratio mark`, as in the table.
pub(crate) fn cell_text(c: &Cell) -> String {
    let mut s = num(c.value);
    if let Some(r) = c.ratio {
        let _ = write!(s, " ×{r:.2}");
    }
    s.push_str(marker(c.verdict));
    s
}

pub(crate) fn fmt_p(p: f64) -> String {
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
fn columns(lines: &[Vec<String>]) -> String {
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
    let mut o = String::new();
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
        o.push_str(row.trim_end());
        o.push('\n');
    }
    o
}

/// The whole text output: which file is A, B…, then [`render_body`].
pub fn render_text(c: &Comparison) -> String {
    let mut o = String::new();
    for (i, name) in c.names.iter().enumerate() {
        let _ = writeln!(o, "{}", fit(&format!("{}: {name}", letter(i)), WIDTH));
    }
    o.push('\n');
    o.push_str(&render_body(c));
    o
}

/// The table, confidence intervals, top waits and verdicts.
pub fn render_body(c: &Comparison) -> String {
    let mut o = String::new();
    let mut table: Vec<Vec<String>> = vec![std::iter::once(String::new())
        .chain((0..c.names.len()).map(letter))
        .collect()];
    for r in &c.rows {
        let mut line = vec![metric_label(r.metric, r.higher_is_better)];
        line.extend(r.cells.iter().map(cell_text));
        table.push(line);
    }
    o.push_str(&columns(&table));
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
        o.push_str(
            "\n95% confidence intervals (effective sample sizes, autocorrelation-corrected):\n",
        );
        o.push_str(&columns(&cis));
    }
    if c.waits.iter().any(Option::is_some) {
        o.push('\n');
        for (i, w) in c.waits.iter().enumerate() {
            let w = w.as_deref().unwrap_or("–");
            let _ = writeln!(
                o,
                "{}",
                fit(&format!("top waits {}: {w}", letter(i)), WIDTH)
            );
        }
    }
    o.push_str(
        "\n↑/↓: higher/lower is better; ×: ratio to A; ~ within run-to-run noise, + better,\n\
         - worse (Welch's t-test on per-interval values, effective sample sizes; p > 0.05 is noise)\n",
    );
    for (i, name) in c.names.iter().enumerate().skip(1) {
        o.push_str(&versus(c, i, name));
    }
    o
}

/// `B vs A:` and one line per tested metric.
fn versus(c: &Comparison, i: usize, name: &str) -> String {
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
        return String::new();
    }
    let mut o = format!(
        "\n{}\n",
        fit(
            &format!("{} vs A ({name} vs {}):", letter(i), c.names[0]),
            WIDTH
        )
    );
    for l in lines {
        o.push_str(&l);
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::compare::tests::{short, three_runs};
    use hotbench_results::testdata::record;

    #[test]
    fn three_runs_with_long_names_and_waits_fit_100_columns() {
        let long = "results/2026-11-23/after-the-index-change-with-fillfactor-70.json";
        let runs: Vec<(String, hotbench_results::RunRecord)> = (0..3)
            .map(|i| {
                let r = record("s", 1.0, 8, 8000 + i * 1000, 2.0 + i as f64);
                (format!("{long}-{i}"), r)
            })
            .collect();
        let mut cmp = compare(&runs);
        let wait = "Lock:transactionid 63.2%, LWLock:WALWrite 20.1%, IO:DataFileRead 10.4%";
        cmp.waits = vec![Some(wait.into()), None, Some(wait.into())];
        let text = render_text(&cmp);
        for line in text.lines() {
            assert!(
                line.chars().count() <= WIDTH,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(text.contains("A: results/"), "{text}");
        assert!(text.contains("top waits A: Lock:transactionid"), "{text}");
        assert!(text.contains("top waits B: –"), "{text}");
        assert!(text.contains("C vs A ("), "{text}");
        assert!(text.contains("95% confidence intervals"), "{text}");
    }

    #[test]
    fn ratios_and_noise_in_words() {
        let text = render_text(&compare(&three_runs()));
        assert!(text.contains("tps ↑"), "{text}");
        assert!(text.contains("×2.00 +"), "{text}");
        assert!(
            text.contains("B vs A (b vs a):\n  tps         ×1.00  within noise"),
            "{text}"
        );
        let text = render_text(&short());
        assert!(
            text.contains("B vs A (y vs x):\n  too few full intervals"),
            "{text}"
        );
    }

    #[test]
    fn letters_and_fitting() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(27), "B1");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
