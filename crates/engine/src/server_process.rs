//! What the `restart` and `pause` perturbations need of the server beyond SQL: its processes.
//! hotbench can act on them only for a server it started (the embedded one, whose lifecycle is
//! `pgserver`'s); the command that resolved the target hands the engine a [`ServerProcess`]
//! for it ([`crate::RunConfig::server`]), and for any other server these kinds run the user's
//! `--perturb-cmd` or are refused before the run starts (`perturb::check`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use hotbench_settings::perturb::RestartMode;

/// A server whose processes this run may act on.
pub trait ServerProcess: Send + Sync {
    /// Stops the server (`mode`) and starts it again where it was; the line says what
    /// happened (pids, how long each step took).
    fn restart(&self, mode: RestartMode) -> Result<String, String>;
    /// Stops every process of the server but the postmaster until the handle is resumed or
    /// dropped; should this process hang or die, they are continued after `deadline` at the
    /// latest.
    fn pause(&self, deadline: Duration) -> Result<Box<dyn PausedServer>, String>;
}

/// A server paused by [`ServerProcess::pause`].
pub trait PausedServer: Send {
    /// How many processes are stopped.
    fn stopped(&self) -> usize;
    /// Continues them.
    fn resume(self: Box<Self>);
}

/// [`ServerProcess`] as a configuration carries it.
#[derive(Clone)]
pub struct ServerHandle(pub Arc<dyn ServerProcess>);

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerHandle(..)")
    }
}
