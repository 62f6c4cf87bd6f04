//! What reading a server log can fail with ([`LogError`]: the file, a line of it, or its
//! format) and the longest line read ([`MAX_LINE`]); shared by `log`, which reads the file,
//! and `log_csv`, which reads its records, so the record reader need not import its caller.
//! Re-exported from `crate::log`.

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{file}: cannot read the log: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: u64,
        message: String,
    },
    #[error("{file}: {message}")]
    Format { file: String, message: String },
}

/// A line longer than this (no newline for 64 MiB) is skipped, not held in memory.
pub const MAX_LINE: usize = 64 << 20;
