//! What the engine core asks of the world outside it: the time and whether the run was told
//! to stop. The worker passes the real clock and signal flag; unit tests pass a clock they
//! move by hand, so the client state machine runs without a server, a socket or a sleep.

/// The core's view of time and stop requests (static dispatch: no cost on the hot path).
pub trait Env {
    /// Monotonic microseconds (same origin as [`crate::clock::now_us`]).
    fn now(&self) -> i64;
    /// Ctrl-C, SIGTERM or `--exit-on-abort` asked every client to stop.
    fn stop_requested(&self) -> bool;
}

/// The real clock and the process's stop flag.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemEnv;

impl Env for SystemEnv {
    #[inline]
    fn now(&self) -> i64 {
        crate::clock::now_us()
    }

    #[inline]
    fn stop_requested(&self) -> bool {
        crate::signals::stop_requested()
    }
}
