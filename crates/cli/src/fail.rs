//! The one error type commands return: a message already worded for the user, optional
//! detail/hint lines, and pgbench's exit code (1 bad input, 2 the run failed).

use std::fmt;

#[derive(Debug)]
pub struct Fail {
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// A further `error:` line after the detail and hint (pgbench reports some failures twice:
    /// the cause, then what it stopped).
    pub then: Option<String>,
    pub code: u8,
}

impl Fail {
    /// Bad input: flags, scripts, connection at start-up (exit 1).
    pub fn input(message: impl Into<String>) -> Fail {
        Fail {
            message: message.into(),
            detail: None,
            hint: None,
            then: None,
            code: 1,
        }
    }

    /// The run itself failed (exit 2).
    pub fn run(message: impl Into<String>) -> Fail {
        Fail {
            code: 2,
            ..Fail::input(message)
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Fail {
        self.hint = Some(hint.into());
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Fail {
        self.detail = Some(detail.into());
        self
    }

    pub fn then(mut self, message: impl Into<String>) -> Fail {
        self.then = Some(message.into());
        self
    }

    /// Prints `hotbench: error: …` (and detail/hint lines) to stderr.
    /// Server text in them (messages, names) is escaped for the terminal.
    pub fn print(&self) {
        let e = |s: &str| hotbench_stats::terminal::escape_lines(s).into_owned();
        eprintln!("hotbench: error: {}", e(&self.message));
        if let Some(d) = &self.detail {
            eprintln!("hotbench: detail: {}", e(d));
        }
        if let Some(h) = &self.hint {
            eprintln!("hotbench: hint: {}", e(h));
        }
        if let Some(t) = &self.then {
            eprintln!("hotbench: error: {}", e(t));
        }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A flag's value parser answers with a `Fail` (its detail and hint lines kept): clap carries
/// it as the error's source, and `main` prints it as any other.
impl std::error::Error for Fail {}

pub type Result<T> = std::result::Result<T, Fail>;
