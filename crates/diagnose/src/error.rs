//! Why a diagnosis could not be made: the connection, or a session that cannot be made
//! read-only and bounded.

#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    /// No connection (exit 1).
    #[error("could not connect: {0}")]
    Connect(String),
    /// The session could not be made safe; nothing was sampled (exit 1).
    #[error("refusing to sample: {0}")]
    Unsafe(String),
}
