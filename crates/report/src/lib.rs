//! Renderers of hotbench result records. Every function here is a pure function of a
//! [`hotbench_stats::RunRecord`] (or one of its parts): the text report in pgbench's exact
//! wording, progress lines, and hotbench's extra lines. Nothing here measures or connects.

pub mod probes;
pub mod progress;
pub mod text;

pub use probes::{probe_lines, top_wait};
pub use progress::progress_line;
pub use text::{extra_lines, pgbench_report};
