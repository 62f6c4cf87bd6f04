//! The run's notes as the terminal's last lines (`note: …`); the page shows them under its
//! header (`header`).

use hotbench_stats::RunRecord;

use crate::analysis::section::Section;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("notes");
    for n in &rec.notes {
        s.line(format!("note: {n}"));
    }
    s
}
