//! The scenario lab's one error type. Every variant names where the problem is (manifest
//! file and line, SQL file and statement, variant) so a user can fix a scenario without
//! reading hotbench's source.

use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A manifest or script problem found while loading (bad TOML, unknown key, missing
    /// file, bad value): `file:line: message`.
    #[error("{}", located(file, *line, message))]
    Manifest {
        file: String,
        line: Option<usize>,
        message: String,
    },
    /// Bad input from the command line (unknown scenario, variant or parameter).
    #[error("{0}")]
    Input(String),
    /// A scenario's SQL failed on the server.
    #[error("{file}:{line}: statement failed: {message}\nstatement: {statement}")]
    Sql {
        file: String,
        line: usize,
        statement: String,
        message: String,
    },
    /// Could not connect, or the connection broke outside the measured run.
    #[error("{0}")]
    Connect(String),
    /// The engine refused the configuration or failed.
    #[error("variant \"{variant}\": {message}")]
    Engine { variant: String, message: String },
    #[error("{0}")]
    Io(String),
}

fn located(file: &str, line: Option<usize>, message: &str) -> String {
    match line {
        Some(l) => format!("{file}:{l}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl ScenarioError {
    pub fn manifest(file: &str, line: Option<usize>, message: impl fmt::Display) -> Self {
        ScenarioError::Manifest {
            file: file.to_string(),
            line,
            message: message.to_string(),
        }
    }

    /// True for errors in user input (exit code 1); false when a run failed (exit code 2).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            ScenarioError::Manifest { .. }
                | ScenarioError::Input(_)
                | ScenarioError::Connect(_)
                | ScenarioError::Sql { .. }
        )
    }
}

pub type Result<T> = std::result::Result<T, ScenarioError>;
