//! The section model (`analysis::section`) in the terminal: each section's lines, and the
//! tables it marks for the terminal as columns; facts, paragraphs, bars and charts are the
//! page's (the lines say the same in the terminal's words).

use std::fmt::Write as _;

use crate::analysis::section::{Block, Section, Table, TextForm};

/// Every section's terminal text, in order.
pub fn render(sections: &[Section]) -> String {
    let mut o = String::new();
    for s in sections {
        write_section(&mut o, s);
    }
    o
}

/// One section's terminal text.
fn write_section(o: &mut String, s: &Section) {
    for b in &s.blocks {
        match b {
            Block::Line(l) => {
                let _ = writeln!(o, "{l}");
            }
            Block::Table(t) if t.text == TextForm::Columns => columns(o, t),
            _ => {}
        }
    }
}

/// `title:`, then the header and rows indented by two spaces, two spaces between columns,
/// the first left-aligned and the others right-aligned.
fn columns(o: &mut String, t: &Table) {
    if let Some(title) = &t.title {
        let _ = writeln!(o, "{title}:");
    }
    let rows: Vec<Vec<String>> = std::iter::once(t.header.clone())
        .chain(t.rows.iter().map(|r| r.iter().map(|c| c.text()).collect()))
        .collect();
    let ncol = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..ncol).map(width).collect();
    for r in &rows {
        let mut line = String::from("  ");
        for (i, c) in r.iter().enumerate() {
            let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
            if i == 0 {
                let _ = write!(line, "{c}{pad}");
            } else {
                let _ = write!(line, "  {pad}{c}");
            }
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::section::Cell;

    #[test]
    fn lines_and_column_tables_only() {
        let mut s = Section::new("t");
        s.line("a line");
        s.table(Table::new("hidden", &["x"], vec![vec![Cell::from("no")]]));
        s.table(
            Table::new(
                "shown",
                &["script", "p50 ms", "p99 ms"],
                vec![
                    vec![Cell::from("a.sql"), Cell::from("1.50"), Cell::from("12.0")],
                    vec![
                        Cell::from("long-name.sql"),
                        Cell::from("0.900"),
                        Cell::from("3"),
                    ],
                ],
            )
            .titled("latency by script")
            .in_text(TextForm::Columns),
        );
        assert_eq!(
            render(&[s]),
            "a line\n\
             latency by script:\n  \
             script         p50 ms  p99 ms\n  \
             a.sql            1.50    12.0\n  \
             long-name.sql   0.900       3\n"
        );
    }
}
