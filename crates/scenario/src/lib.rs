//! hotbench-scenario: the contention experiments as data. A scenario is a directory with a
//! `scenario.toml` manifest and SQL/script files (built-in ones are compiled in from
//! `scenarios/`, users add their own with `--dir`). A ladder runs the scenario's variants
//! on the same data and clients, each from a freshly set-up schema, checks the data after
//! each, and ranks them against the baseline.
//!
//! - [`source`]: built-in and on-disk scenario bundles; [`manifest`]: the format and its
//!   validation; [`params`]: `{{name}}` parameters and `-D` variables, typed by
//!   [`param_type`].
//! - [`ladder::run_ladder`] runs it; [`result`] is what it returns (and writes as JSON);
//!   [`table::render`] prints the ladder table.
//!
//! The format is documented in `docs/scenarios.md`.

pub mod background;
pub mod ceiling;
pub mod checkpoints;
pub mod checks;
pub mod claim;
pub mod db;
pub mod error;
pub mod ladder;
pub mod live;
pub mod manifest;
pub mod param_type;
pub mod params;
pub mod perturbations;
pub mod phases;
pub mod pooling;
pub mod progress;
pub mod selection;
pub mod source;
pub mod sqlsplit;
pub mod table;
pub mod work;

pub use error::{Result, ScenarioError};
pub use hotbench_stats::{Ladder, LadderFile, VariantResult, LADDER_FORMAT};
pub use ladder::{run_ladder, select_variants, LadderOptions, ProbeStarter};
pub use live::LiveSink;
pub use manifest::{load, Scenario};
pub use pooling::ClientRoute;
pub use source::{all_bundles, find_bundle, Bundle};

/// Loads scenario `name` (user directories first, then the built-in ones).
pub fn find(name: &str, dirs: &[std::path::PathBuf]) -> Result<Scenario> {
    load(find_bundle(name, dirs)?)
}
