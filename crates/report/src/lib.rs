//! Renderers of hotbench result records. Every function here is a pure function of a
//! [`hotbench_stats::RunRecord`] (or one of its parts): the text report in pgbench's exact
//! wording, progress lines, and hotbench's extra lines; the self-contained HTML report
//! ([`page`]), run comparison ([`compare`]), the concurrency sweep and its USL fit
//! ([`sweep`], [`usl`]) and the merge of several machines' results ([`merge`]). Nothing here
//! measures or connects.

pub mod bars;
pub mod compare;
pub mod compare_ladder;
pub mod compare_text;
pub mod downsample;
pub mod escape;
pub mod html;
pub mod keys_html;
pub mod keys_text;
pub mod ladder;
pub mod merge;
pub mod noise;
pub mod page;
pub mod probes;
pub mod progress;
pub mod prometheus;
pub mod run_html;
pub mod shards;
pub mod sweep;
#[cfg(test)]
mod testdata;
pub mod text;
#[cfg(test)]
mod text_versions;
pub mod threshold;
pub mod usl;
pub mod usl_input;
pub mod usl_report;

pub use page::{parse_document, render_documents, render_html, render_ladders, Document};
pub use probes::probe_lines;
pub use progress::progress_line;
pub use text::{extra_lines, pgbench_report};
