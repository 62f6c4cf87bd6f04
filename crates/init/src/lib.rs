//! hotbench-init: pgbench 15's initialization mode (`pgbench -i`, here `hotbench run -i`)
//! and the table check pgbench runs before a benchmark with builtin scripts.
//!
//! - [`InitOptions`] / [`run_init`]: steps `dtgGvpf` with pgbench's SQL, messages,
//!   NOTICEs, progress lines and final `done in …` line, on a `hotbench-wire` connection.
//! - [`get_table_info`]: scale from `pgbench_branches`, partitioning from the catalog,
//!   and the "Perhaps you need to do initialization" error.
//! - [`sql`]: the exact statements, without I/O.
//!
//! ```no_run
//! use hotbench_init::{run_init, InitOptions};
//! let mut conn = hotbench_wire::Connection::connect_str("dbname=bench")?;
//! let opts = InitOptions { scale: 10, ..InitOptions::default() };
//! let report = run_init(&mut conn, &opts, &mut std::io::stderr())?;
//! println!("{:?}", report.total());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod error;
pub mod libpq;
pub mod options;
pub mod progress;
pub mod rows;
pub mod run;
mod session;
pub mod sql;
mod steps;
pub mod table_info;

pub use error::InitError;
pub use options::{
    check_init_steps, InitOptions, PartitionMethod, ALL_INIT_STEPS, DEFAULT_INIT_STEPS,
};
pub use run::{run_init, run_init_cancellable, InitReport, StepTiming};
pub use table_info::{get_table_info, TableInfo};
