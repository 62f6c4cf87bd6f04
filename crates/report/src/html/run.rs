//! One run record as an HTML section: its heading, then the run's sections
//! (`analysis::sections::RUN`: header facts and notes, headline figures, the charts over
//! time, commands, errors, hot keys, pooler, probes, perturbations) as the section model's
//! HTML, the charts drawn together under the headline figures.

use hotbench_stats::RunRecord;

use crate::analysis::sections;
use crate::html::doc::Doc;
use crate::html::section::run_sections;

/// The whole section of one run.
pub fn run_section(doc: &mut Doc, title: &str, rec: &RunRecord) {
    doc.raw("<section class=\"run\">\n");
    doc.heading(2, title);
    run_sections(doc, &sections::run(rec));
    doc.raw("</section>\n");
}
