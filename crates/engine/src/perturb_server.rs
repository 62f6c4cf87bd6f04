//! The perturbations that act on the server's processes: `restart[=fast|immediate]` and
//! `pause=DURATION`. For a server hotbench started they go through its [`ServerProcess`]
//! (`pgserver` restarts it where it was, or stops every process but the postmaster and has a
//! watchdog continue them should hotbench die); the user's `--perturb-cmd` for the kind, when
//! given, runs instead (`perturb_cmd.rs`), whatever the server.

use std::time::Duration;

use hotbench_settings::perturb::{Kind, Perturbation};
use hotbench_settings::perturb_cmd::command_for;
use hotbench_stats::PerturbationRecord;

use crate::perturb::{early, entry, Ctx};
use crate::server_process::ServerProcess;

/// How long past a pause's end its watchdog waits before it continues the server itself
/// (hotbench hung or killed).
const PAUSE_MARGIN: Duration = Duration::from_secs(30);

/// Fires `p` (a kind that needs the server's processes) now.
pub(crate) fn fire(ctx: &Ctx, p: &Perturbation) -> PerturbationRecord {
    let mut rec = entry(p, ctx.now_s());
    let result = if ctx.is_stopped() {
        Err("not run: the run ended first".to_string())
    } else if let Some(cmd) = command_for(&ctx.commands, p.kind.name()) {
        crate::perturb_cmd::run(ctx, p, cmd)
    } else {
        match &ctx.server {
            Some(server) => on_server(ctx, p, server.0.as_ref()),
            // `perturb::check` refused this before the run.
            None => Err("not run: the server is not one hotbench started".to_string()),
        }
    };
    match result {
        Ok(detail) => rec.detail = Some(detail),
        Err(e) => rec.error = Some(e),
    }
    rec.end_s = Some(ctx.now_s());
    rec
}

fn on_server(ctx: &Ctx, p: &Perturbation, server: &dyn ServerProcess) -> Result<String, String> {
    match &p.kind {
        Kind::Restart(mode) => server.restart(*mode),
        Kind::Pause { hold_us } => {
            let hold = Duration::from_micros((*hold_us).max(0) as u64);
            let paused = server.pause(hold + PAUSE_MARGIN)?;
            let n = paused.stopped();
            let stopped = ctx.wait_for(*hold_us);
            paused.resume();
            Ok(format!(
                "{n} server processes stopped for {}, then continued{}",
                crate::duration::format_us(*hold_us),
                early(stopped)
            ))
        }
        other => Err(format!(
            "{} does not act on the server's processes",
            other.name()
        )),
    }
}
