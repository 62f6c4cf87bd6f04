//! Terminal and plain-text output: the final report in pgbench's exact wording
//! ([`pgbench`]) and hotbench's extra lines, `-P` progress lines, Prometheus' text format,
//! comparisons, sweeps, USL fits and threshold verdicts.

pub mod compare;
pub mod compare_ladder;
pub mod diagnosis;
pub mod keys;
pub mod number;
pub mod perturbations;
pub mod pgbench;
pub mod pool_sweep;
pub mod pooler;
pub mod probes;
pub mod progress;
pub mod prometheus;
pub mod sweep;
pub mod threshold;
pub mod usl;
#[cfg(test)]
mod versions;
