//! `hotbench capture`: what a user's server runs, sampled read-only (as `diagnose` samples it),
//! becomes an ordinary scenario directory: the touched schema and a data generator, one pgbench
//! script per transaction shape with its key skew and think time, fix variants for the shapes
//! the lab recognises, and `capture.json`, the observed profile a twin run is scored against.

pub mod activity;
pub mod catalog;
pub mod catalog_seq;
pub mod catalog_sig;
pub mod catalog_types;
mod claim_returns;
pub mod client_groups;
pub mod count_key;
pub mod datagen;
mod datagen_expr;
mod datagen_insert;
pub mod fidelity;
pub mod fix_plan;
pub mod fix_shape;
pub mod fixes;
pub mod fixes_sql;
pub mod keys;
pub mod log;
pub mod log_csv;
pub mod log_error;
pub mod log_prefix;
pub mod log_profile;
pub mod log_session;
pub mod log_sql;
pub mod model;
pub mod observed;
pub mod params;
pub mod pgdump;
pub mod profile;
pub mod redact;
pub mod sample;
pub mod scenario_dir;
pub mod schema;
pub mod schema_error;
pub mod schema_options;
pub mod schema_sql;
pub mod script;
pub mod shape_split;
pub mod shapes;
pub mod splice_gaps;
pub mod sql_text;
pub mod sqlnames;
pub mod sqltext;
pub mod summary;
pub mod tracker;
pub mod workload;
