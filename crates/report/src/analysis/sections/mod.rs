//! A run's report as one ordered list of sections ([`RUN`]), each built by one function of
//! the record in a file of its own (the model is `analysis::section`). The terminal
//! (`text::section`, after pgbench's report) and the page (`html::section`) walk the same
//! list: a new section is a file here and a line in [`RUN`]; the renderers show its blocks
//! as they show every other section's.

use hotbench_stats::RunRecord;

use crate::analysis::section::Section;

pub mod commands;
pub mod errors;
pub mod groups;
pub mod header;
pub mod headline;
pub mod hosts;
pub mod keys;
pub mod notes;
pub mod perturbations;
pub mod pooler;
pub mod probes;
pub mod rtt;
pub mod script_latency;
pub mod timeline;

/// A run's sections, in the order both renderers show them.
pub const RUN: &[fn(&RunRecord) -> Section] = &[
    header::section,
    headline::section,
    timeline::section,
    commands::section,
    script_latency::section,
    errors::section,
    rtt::section,
    keys::section,
    hosts::section,
    groups::section,
    pooler::section,
    probes::section,
    perturbations::section,
    notes::section,
];

/// Every section of a run, in order.
pub fn run(rec: &RunRecord) -> Vec<Section> {
    RUN.iter().map(|section| section(rec)).collect()
}
