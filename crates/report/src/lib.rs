//! Renderers of hotbench result records, and the analysis they show. Every function here is
//! a pure function of a [`hotbench_stats::RunRecord`] (or of another result document):
//! - [`analysis`]: what those show beyond the record (run comparison with its noise test,
//!   the USL fit of a sweep or of any points), and every report as one format-neutral list
//!   of sections (`analysis::section`, a run's `analysis::sections::RUN`, the other
//!   documents' `analysis::documents`);
//! - [`text`]: those sections for the terminal, after the report in pgbench's exact
//!   wording; progress lines and Prometheus' text format;
//! - [`html`]: the same sections as the self-contained HTML report of runs, ladders, sweeps
//!   and comparisons;
//! - [`document`]: result documents read back from files.
//!
//! Rendering depends on analysis, never the reverse. Records made from records (`merge`)
//! and verdicts on them (`--threshold`) live with the records in `hotbench_stats`. Nothing
//! here measures or connects.

pub mod analysis;
pub mod document;
pub mod html;
pub mod text;

pub use document::{parse_document, Document};
pub use html::page::{render_documents, render_html, render_ladders};
pub use text::pgbench::{extra_lines, pgbench_report};
pub use text::progress::progress_line;
