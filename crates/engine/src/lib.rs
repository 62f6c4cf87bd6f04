//! The benchmark engine: one OS thread per `-j`, each owning its clients' connections and
//! driving them from a level-triggered epoll loop (no async runtime, no work stealing), the
//! PostgreSQL wire protocol via `hotbench-wire`, pgbench's client state machine with retries,
//! `-R` scheduling from the scheduled start (no coordinated omission), client groups with
//! their own rates, round-trip emulation, and statistics merged by a coordinator.

mod accounting;
pub mod backoff;
mod client_core;
#[cfg(test)]
mod client_core_knob_tests;
#[cfg(test)]
mod client_core_rate_tests;
#[cfg(test)]
mod client_core_tests;
pub mod clock;
mod collect;
pub mod config;
mod connect_pace;
mod connect_phase;
mod env;
mod events;
mod interval_merge;
mod key_zipf;
mod knobs;
mod machine;
mod observe;
mod per_key;
mod perturb;
mod perturb_cmd;
mod perturb_ctx;
mod perturb_server;
mod perturb_sql;
mod plan;
mod poller;
mod progress;
mod record_build;
mod retry;
pub mod runner;
mod send;
mod server_process;
pub mod signals;
mod slot;
mod start;
mod tally;
mod timers;
mod txlog;
mod usage;
mod worker;

pub use backoff::Backoff;
pub use clock::unix_now_us;
pub use config::{
    DisplayConfig, GoodputRule, GroupConfig, Limit, LogConfig, OnDisconnect, Perturbation,
    QueryMode, RetryPolicy, RunConfig, RunSettings, ShardConfig, ThreadsDefault, WeightedScript,
    GOODPUT_VARIABLE,
};
/// Durations as hotbench's options write them (`1ms`, `30s`), shared with the settings.
pub use hotbench_settings::duration;
pub use observe::RunObserver;
pub use perturb::check_server_kinds;
pub use runner::{run, EngineError, RunOutcome};
pub use server_process::{PausedServer, ServerHandle, ServerProcess};
pub use start::{SharedServer, Workload, FAST_NOTE, JOINED_NOTE, SHARED_NOTE};
