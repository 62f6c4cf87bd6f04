//! `hotbench compare`'s times to recover in text: per perturbation, TTR90 and TTR99 of each
//! side with its uncertainty, and each later side against the first, within 100 columns.

use std::fmt::Write as _;

use crate::analysis::compare_ttr::{TtrCell, TtrRow};
use crate::text::compare::WIDTH;

/// The section (empty when no run was perturbed).
pub fn ttr_lines(rows: &[TtrRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut o = String::from(
        "\ntime to recover, s (± the timeline's interval; over several firings: mean, sd, 95% CI):\n",
    );
    let mut last = "";
    for r in rows {
        if r.perturbation != last {
            let _ = writeln!(o, "{}", fit(&r.perturbation, WIDTH));
            last = &r.perturbation;
        }
        for (i, c) in r.cells.iter().enumerate() {
            let head = if i == 0 { r.level } else { "" };
            let _ = writeln!(o, "{}", fit(&format!("  {head:<5}  {}", cell(c)), WIDTH));
        }
        if r.rules_differ {
            let _ = writeln!(o, "         judged with other recovery windows: not comparable as is");
        }
    }
    o
}

fn cell(c: &TtrCell) -> String {
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
            let _ = write!(s, " (p {})", crate::text::compare::fmt_p(p));
        }
    }
    s
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

#[cfg(test)]
mod tests {
    use super::*;

    fn c(side: &str, mean: Option<f64>, verdict: &'static str) -> TtrCell {
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

    #[test]
    fn each_side_on_its_line_against_the_first_within_100_columns() {
        let rows = vec![TtrRow {
            perturbation: format!("3s:ddl-lock={},1s", "t".repeat(200)),
            level: "TTR90",
            cells: vec![
                c("A", Some(1.3), "reference"),
                c("B", Some(2.4), "worse"),
                c("C", None, "worse"),
            ],
            rules_differ: false,
        }];
        let t = ttr_lines(&rows);
        assert!(t.lines().all(|l| l.chars().count() <= WIDTH), "{t}");
        assert!(t.contains("  TTR90  A   1.30 ±0.10 (1/1 recovered)\n"), "{t}");
        assert!(t.contains("         B   2.40 ±0.10 (1/1 recovered): worse, +1.10 s\n"), "{t}");
        assert!(t.contains("         C   not recovered (0/1 recovered): worse\n"), "{t}");
        assert_eq!(ttr_lines(&[]), "");
    }
}
