//! What the engine core asks of the world outside it: whether the run was told to stop. Time
//! is not asked for: every input to the core carries the time it happened at (`now`, read
//! by the driver), as in quinn-proto, so unit tests move the clock by passing other numbers
//! and the client state machine runs without a server, a socket or a sleep.

/// The core's view of stop requests (static dispatch: no cost on the hot path).
pub trait Env {
    /// Ctrl-C, SIGTERM or `--exit-on-abort` asked every client to stop.
    fn stop_requested(&self) -> bool;
}

/// The process's stop flag.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemEnv;

impl Env for SystemEnv {
    #[inline]
    fn stop_requested(&self) -> bool {
        crate::signals::stop_requested()
    }
}
