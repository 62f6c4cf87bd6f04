//! Parse errors, displayed the way pgbench reports script syntax errors.

use std::fmt;

/// A script that pgbench would refuse. `Display` gives pgbench's text:
///
/// ```text
/// FILE:LINE: MESSAGE (DETAIL) in command "set"
/// \set x 1 +
///           ^ error found here
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    /// Script name (file name or builtin description).
    pub source: String,
    /// 1-based line of the offending command.
    pub line: usize,
    /// What is wrong ("syntax error", "missing argument", …).
    pub message: String,
    /// Extra detail pgbench prints in parentheses (e.g. the function name).
    pub detail: Option<String>,
    /// The meta-command name, when the error is in a meta-command.
    pub command: Option<String>,
    /// The offending command text (from its backslash to its end).
    pub text: Option<String>,
    /// 0-based byte column in `text` where the error was found.
    pub column: Option<usize>,
}

impl ScriptError {
    pub(crate) fn new(source: &str, line: usize, message: impl Into<String>) -> Self {
        ScriptError {
            source: source.to_string(),
            line,
            message: message.into(),
            detail: None,
            command: None,
            text: None,
            column: None,
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.source, self.line, self.message)?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        if let (Some(c), None) = (self.column, &self.text) {
            write!(f, " at column {}", c + 1)?;
        }
        if let Some(c) = &self.command {
            write!(f, " in command \"{c}\"")?;
        }
        if let Some(t) = &self.text {
            write!(f, "\n{t}")?;
            if let Some(c) = self.column {
                write!(f, "\n{:>width$} error found here", "^", width = c + 1)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScriptError {}
