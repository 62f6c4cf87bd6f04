//! What a run is told, each setting declared once: its flag (clap), its default, its
//! validation (the flag's value parser, with pgbench's wording where pgbench has the flag)
//! and its field in the result record (serde). `hotbench run`, `scenario run`, `sweep` and
//! `demo` flatten the same [`RunSettings`]; the engine's `RunConfig` carries it whole and the
//! record's `config` writes it whole, so a new setting is added here and read where it acts.
//!
//! The lowest crate that knows about runs: `stats` types the record with these types, the
//! engine executes them, the binary parses them.

pub mod backoff;
pub mod duration;
pub mod perturb;
pub mod perturb_cmd;
pub mod run;
pub mod values;
pub mod workload;

pub use backoff::Backoff;
pub use perturb::Perturbation;
pub use run::{PoolMode, PoolerSpec, RunSettings, ThreadsDefault};
pub use workload::{GoodputRule, Limit, OnDisconnect, QueryMode, ShardConfig, GOODPUT_VARIABLE};
