//! Terminal and plain-text output: the final report in pgbench's exact wording
//! ([`pgbench`]), then the run's sections ([`section`] walks the section model); each
//! document's sections (comparisons, sweeps, USL fits, diagnoses); `-P` progress lines,
//! Prometheus' text format and threshold verdicts.

pub mod compare;
pub mod compare_ladder;
pub mod diagnosis;
pub mod pgbench;
pub mod progress;
pub mod prometheus;
pub mod section;
pub mod sweep;
pub mod threshold;
pub mod usl;
#[cfg(test)]
mod versions;
