//! `hotbench capture`: what a user's server runs, sampled read-only (as `diagnose` samples it),
//! becomes an ordinary scenario directory: the touched schema and a data generator, one pgbench
//! script per transaction shape with its key skew and think time, fix variants for the shapes
//! the lab recognises, and `capture.json`, the observed profile a twin run is scored against.

pub mod activity;
pub mod budget;
pub mod catalog;
pub mod catalog_seq;
pub mod catalog_sig;
pub mod catalog_types;
pub mod chain;
mod claim_returns;
pub mod client_groups;
pub mod count_key;
pub mod datagen;
mod datagen_expr;
mod datagen_insert;
pub mod fidelity;
pub mod fidelity_key;
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
pub mod nested;
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
mod script_names;
mod script_quote;
pub mod shape_join;
pub mod shape_split;
pub mod shapes;
pub mod splice_gaps;
pub mod sql_text;
pub mod sqlnames;
pub mod sqltext;
pub mod summary;
pub mod ties;
pub mod tracker;
pub mod workload;
