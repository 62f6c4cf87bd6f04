//! The numbers a rendering needs that a record does not hold: the Universal Scalability Law
//! fitted to throughput by concurrency, whether a difference between runs is more than
//! run-to-run noise, comparisons of runs and ladders, and which intervals of a timeline are
//! whole. Pure functions of records; no markup or text layout here (that is `text` and
//! `html`, which read these results).

pub mod compare;
pub mod compare_ladder;
pub mod compare_ttr;
pub mod noise;
pub mod sweep;
pub mod timeline;
pub mod usl;
pub mod usl_input;
pub mod usl_series;
