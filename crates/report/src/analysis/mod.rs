//! The numbers a rendering needs that a record does not hold: the Universal Scalability Law
//! fitted to throughput by concurrency, whether a difference between runs is more than
//! run-to-run noise, comparisons of runs and ladders, and which intervals of a timeline are
//! whole; and what each report shows, as sections of one format-neutral model
//! ([`section`]): a run's ([`sections`]) and every other document's ([`documents`]). Pure
//! functions of records; no markup here (`text` and `html` walk the sections).

pub mod chart;
pub mod compare;
pub mod compare_ladder;
pub mod documents;
pub mod noise;
pub mod number;
pub mod section;
pub mod sections;
pub mod sweep;
pub mod timeline;
pub mod usl;
pub mod usl_input;
pub mod usl_series;
