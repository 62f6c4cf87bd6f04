//! The emulated round-trip time (`--rtt`) as a terminal line (the page has it in the
//! header's facts).

use hotbench_stats::RunRecord;

use crate::analysis::section::Section;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("rtt");
    if rec.bench.rtt_us > 0 {
        s.line(format!(
            "emulated round-trip time: {:.3} ms",
            rec.bench.rtt_us as f64 / 1000.0
        ));
    }
    s
}
