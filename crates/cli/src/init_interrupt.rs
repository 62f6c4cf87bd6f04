//! Ctrl-C during `hotbench run -i`: the first one stops the initialization cleanly (the
//! COPY in progress is aborted and rolled back, a long statement is cancelled on the server
//! as pgbench does), the command says so and exits 2; a second Ctrl-C exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hotbench_engine::signals;
use hotbench_init::{InitError, InitOptions};
use hotbench_wire::Connection;

use crate::fail::Fail;

/// How often the watcher looks for a Ctrl-C (a person does not notice 50 ms).
const POLL: Duration = Duration::from_millis(50);

/// Runs the initialization; `Err` carries the failure ready to print (exit 1, or 2 when
/// interrupted).
pub fn run(
    conn: &mut Connection,
    opts: &InitOptions,
    out: &mut dyn std::io::Write,
    fail: impl Fn(InitError) -> Fail,
) -> Result<(), Fail> {
    signals::install();
    let cancel = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (cancel, done, token) = (Arc::clone(&cancel), Arc::clone(&done), conn.cancel_token());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if signals::stop_requested() {
                    cancel.store(true, Ordering::Relaxed);
                    let _ = token.cancel();
                    return;
                }
                std::thread::sleep(POLL);
            }
        })
    };
    let result = hotbench_init::run_init_cancellable(conn, opts, out, &cancel);
    done.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    match result {
        Ok(_) => Ok(()),
        Err(_) if signals::stop_requested() => Err(Fail::run(
            "initialization was interrupted; the tables are incomplete (run \"hotbench run -i\" again)",
        )),
        Err(e) => Err(fail(e)),
    }
}
