//! A run's report as sections of the model (`analysis::section`), one file each: the
//! terminal and the page both walk them.

pub mod keys;
pub mod perturbations;
pub mod pooler;
pub mod probes;
