//! The step letters of `-I`, named by the options that choose steps and by the error that
//! refuses an unknown one.

/// Every step character pgbench 15 knows (`-I`).
pub const ALL_INIT_STEPS: &str = "dtgGvpf";
/// pgbench's default `-I`.
pub const DEFAULT_INIT_STEPS: &str = "dtgvp";
