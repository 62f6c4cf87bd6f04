//! The embedded server's processes as the engine's `restart` and `pause` perturbations see
//! them: `pgserver`'s [`Control`] of the server this command holds, behind the engine's
//! [`ServerProcess`]. Only the embedded server has one; for a server the user named those
//! kinds run their `--perturb-cmd` or are refused before the run (docs/perturbations.md).

use std::sync::Arc;
use std::time::Duration;

use hotbench_engine::{PausedServer, ServerHandle, ServerProcess};
use hotbench_pgserver::pause::Paused;
use hotbench_pgserver::process::StopMode;
use hotbench_pgserver::Control;
use hotbench_settings::perturb::RestartMode;

use crate::target::Target;

/// The handle the engine gets for `target`'s server, when hotbench runs it.
pub fn handle(target: &Target) -> Option<ServerHandle> {
    let guard = target.embedded.as_ref()?;
    Some(ServerHandle(Arc::new(Embedded(guard.control()))))
}

struct Embedded(Control);

impl ServerProcess for Embedded {
    fn restart(&self, mode: RestartMode) -> Result<String, String> {
        let (stop, name) = match mode {
            RestartMode::Fast => (StopMode::Fast, "fast"),
            RestartMode::Immediate => (StopMode::Immediate, "immediate"),
        };
        let r = self
            .0
            .restart(stop)
            .map_err(|e| format!("restart failed: {e}"))?;
        Ok(format!(
            "restarted ({name} shutdown): pid {} stopped in {:.2} s, pid {} ready {:.2} s later",
            r.old_pid,
            r.stop.as_secs_f64(),
            r.new_pid,
            r.start.as_secs_f64()
        ))
    }

    fn pause(&self, deadline: Duration) -> Result<Box<dyn PausedServer>, String> {
        let p = self
            .0
            .pause(deadline)
            .map_err(|e| format!("pause failed: {e}"))?;
        Ok(Box::new(Stopped(p)))
    }
}

struct Stopped(Paused);

impl PausedServer for Stopped {
    fn stopped(&self) -> usize {
        self.0.stopped()
    }

    fn resume(self: Box<Self>) {
        self.0.resume();
    }
}
