//! One error type for the crate, one clear message per failure a user can meet (missing
//! binaries, port in use, disk full, failed download, …), each carrying the path or command it
//! concerns so the message alone says what to fix.

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while finding, creating, starting or stopping a server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No PostgreSQL installation was found and none was asked to be downloaded.
    #[error("no PostgreSQL binaries found{wanted} (searched {searched}); install PostgreSQL, pass --pg-bin DIR, or pass --pg-version N to download one")]
    MissingBinaries {
        /// " for major 17" or "".
        wanted: String,
        /// The places looked at, comma separated.
        searched: String,
    },
    /// A `--pg-bin` directory lacks a required program.
    #[error("{dir}: no `{program}` program here (is this a PostgreSQL bin directory?)")]
    MissingProgram {
        /// Directory given.
        dir: PathBuf,
        /// Program looked for.
        program: String,
    },
    /// The requested TCP port is already taken.
    #[error("port {port} on 127.0.0.1 is already in use; choose another port or stop the program using it")]
    PortInUse {
        /// The port asked for.
        port: u16,
    },
    /// The file system holding the cluster is full.
    #[error("no space left on device for {path} ({detail})")]
    DiskFull {
        /// Directory that filled up.
        path: PathBuf,
        /// What was being done.
        detail: String,
    },
    /// Downloading or unpacking a binary bundle failed.
    #[error("download of PostgreSQL {version} binaries failed: {reason}")]
    Download {
        /// Version asked for.
        version: String,
        /// Why, with the URL where relevant.
        reason: String,
    },
    /// A file-system or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, naming the path or program.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A PostgreSQL program ran but failed; `log` holds the end of its output.
    #[error("{what} failed{}", log_suffix(.log))]
    Command {
        /// The step (`initdb`, `postgres start`, …).
        what: String,
        /// Last lines of its output.
        log: String,
    },
    /// The server did not become ready in time.
    #[error("PostgreSQL did not become ready within {secs} s; last log lines:\n{log}")]
    StartTimeout {
        /// Seconds waited.
        secs: u64,
        /// Last lines of the server log.
        log: String,
    },
    /// No unprivileged account could be found or created to run PostgreSQL as root.
    #[error("running as root, but no unprivileged user to run PostgreSQL as: {0}")]
    NoUser(String),
    /// Invalid option value.
    #[error("{0}")]
    Invalid(String),
    /// State of the default server is inconsistent in a way we won't guess about.
    #[error("{0}")]
    State(String),
}

impl Error {
    /// A download of `version` failed, and why.
    pub(crate) fn download(version: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Download {
            version: version.into(),
            reason: reason.into(),
        }
    }

    /// Wrap an I/O error with what was being done; ENOSPC becomes [`Error::DiskFull`].
    pub(crate) fn io(
        what: impl Into<String>,
        path: &std::path::Path,
        source: std::io::Error,
    ) -> Error {
        let what = what.into();
        if source.raw_os_error() == Some(libc::ENOSPC) {
            return Error::DiskFull {
                path: path.to_path_buf(),
                detail: what,
            };
        }
        Error::Io {
            what: format!("{what} ({})", path.display()),
            source,
        }
    }
}

/// `: LOG` after "failed", or nothing when the program said nothing (no dangling colon).
fn log_suffix(log: &str) -> String {
    match log.trim() {
        "" => " (it printed nothing)".into(),
        l => format!(": {l}"),
    }
}

#[cfg(test)]
mod log_suffix_tests {
    use super::*;

    #[test]
    fn a_program_that_said_nothing_leaves_no_dangling_colon() {
        let quiet = Error::Command {
            what: "psql -c \"select 1\"".into(),
            log: " \n".into(),
        };
        assert_eq!(
            quiet.to_string(),
            "psql -c \"select 1\" failed (it printed nothing)"
        );
        let said = Error::Command {
            what: "initdb".into(),
            log: "disk full".into(),
        };
        assert_eq!(said.to_string(), "initdb failed: disk full");
    }
}
