//! What was seen of the user's transactions, whatever the source (activity sampling, a server
//! log): the one input shape detection, parameter fitting and script writing read, so each
//! source only has to produce these.

use serde::{Deserialize, Serialize};

/// One statement as the server ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedStatement {
    /// The statement text: literals inline (simple protocol, a log's `statement:`), or with
    /// `$n` placeholders (extended protocol).
    pub sql: String,
    /// Bind values of `$1…$n` when the source shows them (a log's `DETAIL: parameters:`);
    /// `None` for a NULL, empty when unknown or none.
    pub params: Vec<Option<String>>,
    /// Seconds since the capture began when the statement started.
    pub started_at_s: f64,
    /// How long it ran, when the source says.
    pub duration_s: Option<f64>,
}

/// One transaction of one session: the ordered statements between BEGIN and COMMIT (or one
/// autocommit statement).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedTransaction {
    /// The session it ran in (backend pid, or a log's session id).
    pub session: String,
    pub statements: Vec<ObservedStatement>,
    /// A single statement outside BEGIN/COMMIT.
    pub autocommit: bool,
    /// Every statement of it was seen (a log); false when sampling saw only some.
    pub complete: bool,
    /// Ended in ROLLBACK (or an error) rather than COMMIT.
    pub rolled_back: bool,
}
