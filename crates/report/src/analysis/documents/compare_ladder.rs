//! `hotbench compare ladder-a.json ladder-b.json`'s document: the files once, then each
//! variant's comparison as `compare` shows runs (in the terminal its table and verdicts, on
//! the page its table and throughput overlay), then the variants not in every file.

use hotbench_stats::RunRecord;

use crate::analysis::compare_ladder::LadderComparison;
use crate::analysis::documents::compare::{comparison, letter, WIDTH};
use crate::analysis::section::{Section, Span};
use crate::analysis::sections::timeline::throughput_overlay;

pub fn sections(c: &LadderComparison) -> Vec<Section> {
    let mut files = Section::new("files");
    for (i, f) in c.files.iter().enumerate() {
        files.line(
            format!("{}: {f}", letter(i))
                .chars()
                .take(WIDTH)
                .collect::<String>(),
        );
    }
    let mut out = vec![files];
    for v in &c.variants {
        let mut s = Section::new("variant");
        s.line("");
        s.line(format!("== {} / {} ==", v.scenario, v.variant));
        s.heading(2, format!("{} / {}", v.scenario, v.variant));
        comparison(&mut s, &v.comparison);
        let list: Vec<(&str, &RunRecord)> = v.runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
        s.chart(throughput_overlay(&list, false));
        out.push(s);
    }
    let mut end = Section::new("missing");
    if !c.missing.is_empty() {
        end.line("");
        end.line(format!(
            "not in every file (not compared): {}",
            c.missing.join(", ")
        ));
        end.paragraph(
            Some("muted"),
            vec![Span::plain(format!(
                "Not in every file (not compared): {}",
                c.missing.join(", ")
            ))],
        );
    }
    if c.variants.is_empty() {
        end.line("");
        end.line("no variant ran in every file: nothing to compare");
    }
    out.push(end);
    out
}
