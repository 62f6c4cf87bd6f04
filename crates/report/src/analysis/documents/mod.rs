//! The other documents as sections of the model (`analysis::section`), one file each:
//! comparisons, sweeps, USL fits and diagnoses. Each file builds a document's ordered list
//! of sections; `text::<document>` and `html::<document>` only walk it.

pub mod compare;
pub mod compare_ladder;
pub mod diagnosis;
pub mod pool_sweep;
pub mod sweep;
pub mod usl;
