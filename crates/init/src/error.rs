//! Why initialization or the table check failed, worded as pgbench 15 words it.
//!
//! pgbench prints `pgbench: error: MESSAGE`, then optional `pgbench: detail: …` and
//! `pgbench: hint: …` lines, and exits with status 1. [`InitError`]'s `Display` is the
//! message; [`InitError::detail`] and [`InitError::hint`] are the other two lines, so the
//! CLI prints `hotbench: error: …` / `hotbench: detail: …` / `hotbench: hint: …` the same
//! way. Server errors keep the wire error (for its SQLSTATE) next to the libpq-style text.

use hotbench_wire::Error as WireError;

/// Errors of `hotbench run -i` and of [`crate::get_table_info`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// `-I ""`.
    #[error("no initialization steps specified")]
    NoSteps,
    /// A step character outside [`crate::ALL_INIT_STEPS`].
    #[error("unrecognized initialization step \"{0}\"")]
    UnrecognizedStep(char),
    /// An option value out of range or inconsistent (pgbench's wording).
    #[error("{0}")]
    InvalidOption(String),
    /// A statement failed (pgbench's `executeStatement`).
    #[error("query failed: {message}")]
    Query {
        /// The statement sent.
        query: String,
        /// The server's error as libpq renders it (`ERROR:  …`, `LINE 1: …`, DETAIL, HINT).
        message: String,
        /// The underlying error (SQLSTATE via [`WireError::sqlstate`]).
        #[source]
        source: WireError,
    },
    /// `COPY … FROM STDIN` did not start.
    #[error("unexpected copy in result: {message}")]
    CopyStart {
        /// libpq-style error text.
        message: String,
        /// The underlying error.
        #[source]
        source: WireError,
    },
    /// Sending COPY data or ending the COPY failed.
    #[error("PQendcopy failed: {message}")]
    CopyEnd {
        /// libpq-style error text.
        message: String,
        /// The underlying error.
        #[source]
        source: WireError,
    },
    /// `select count(*) from pgbench_branches` failed (usually: not initialized).
    #[error("could not count number of branches: {message}")]
    CountBranches {
        /// libpq-style error text.
        message: String,
        /// The connection's database, for the hint (when the table is missing).
        database: Option<String>,
        /// The underlying error.
        #[source]
        source: WireError,
    },
    /// `count(*)` was not a positive number.
    #[error("invalid count(*) from pgbench_branches: \"{0}\"")]
    InvalidCount(String),
    /// `pgbench_branches` exists but no `pgbench_accounts` in `search_path`.
    #[error("no pgbench_accounts table found in search_path")]
    NoAccountsTable {
        /// The connection's database, for the hint.
        database: String,
    },
    /// `pg_partitioned_table.partstrat` is neither `r` nor `h`.
    #[error("unexpected partition method: \"{0}\"")]
    UnexpectedPartitionMethod(String),
    /// Canceled through [`crate::run::run_init_cancellable`]'s flag.
    #[error("initialization canceled")]
    Canceled,
    /// Writing progress to stderr failed.
    #[error("could not write initialization progress: {0}")]
    Output(#[from] std::io::Error),
}

fn init_hint(database: &str) -> String {
    format!(
        "Perhaps you need to do initialization (\"hotbench run -i\") in database \"{database}\"."
    )
}

impl InitError {
    /// pgbench's `detail:` line, if any.
    pub fn detail(&self) -> Option<String> {
        match self {
            InitError::UnrecognizedStep(_) => Some(format!(
                "Allowed step characters are: \"{}\".",
                crate::steps::ALL_INIT_STEPS
            )),
            InitError::Query { query, .. } => Some(format!("Query was: {query}")),
            _ => None,
        }
    }

    /// pgbench's `hint:` line, if any (the "Perhaps you need to do initialization" one).
    pub fn hint(&self) -> Option<String> {
        match self {
            InitError::CountBranches {
                database: Some(db), ..
            } => Some(init_hint(db)),
            InitError::NoAccountsTable { database } => Some(init_hint(database)),
            _ => None,
        }
    }

    /// The SQLSTATE of the server error behind this one, if any.
    pub fn sqlstate(&self) -> Option<hotbench_wire::SqlState> {
        self.wire_error().and_then(WireError::sqlstate)
    }

    /// The wire error behind this one, if any.
    pub fn wire_error(&self) -> Option<&WireError> {
        match self {
            InitError::Query { source, .. }
            | InitError::CopyStart { source, .. }
            | InitError::CopyEnd { source, .. }
            | InitError::CountBranches { source, .. } => Some(source),
            _ => None,
        }
    }

    /// pgbench's exit status for this error: always 1 (bad input or failed set-up).
    pub fn exit_code(&self) -> i32 {
        1
    }
}
