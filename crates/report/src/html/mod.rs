//! The self-contained HTML report: a page shell ([`doc`]) with charts declared as data
//! (`analysis::chart`), the section model as escaped markup ([`section`], [`escape`]),
//! a run's section ([`run`]); one file per kind of document, each walking its sections.

pub mod bars;
pub mod compare;
pub mod compare_ladder;
pub mod diagnosis;
pub mod doc;
pub mod downsample;
pub mod escape;
pub mod ladder;
pub mod page;
pub mod run;
pub mod section;
pub mod sweep;
pub mod usl;
