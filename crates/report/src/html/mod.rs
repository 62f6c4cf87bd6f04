//! The self-contained HTML report: a page shell ([`doc`]) with charts declared as data
//! (`analysis::chart`) and sections written as escaped markup ([`escape`]) from records and from the
//! `analysis` results; one file per kind of document.

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
