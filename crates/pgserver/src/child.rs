//! Every short-lived program hotbench starts (a `--version` probe, `pg_config`, initdb)
//! ends within a limit: a `--pgbouncer-bin` whose `--version` never returns must not hang
//! hotbench. The child runs in its own process group, killed whole when the limit passes
//! (a shell script's `sleep` holds the output pipes as long as the script does).

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a `--version` or `pg_config` probe may take.
pub const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// Waits for `child` until `limit`; past it, kills its process group and says so
/// (`ErrorKind::TimedOut`). The child must have been started in its own process group
/// ([`own_group`]).
pub fn wait_within(child: &mut Child, limit: Duration) -> io::Result<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if start.elapsed() >= limit {
            kill_group(child);
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("did not finish within {} s; stopped", limit.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts `cmd` in a process group of its own, so [`wait_within`] can stop all of it.
pub fn own_group(cmd: &mut Command) -> &mut Command {
    cmd.process_group(0)
}

fn kill_group(child: &mut Child) {
    // SAFETY: plain kill of the process group the child leads (own_group).
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// As `Command::output` (stdin closed, stdout and stderr captured), ended at `limit`.
pub fn output_within(cmd: &mut Command, limit: Duration) -> io::Result<Output> {
    own_group(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as _));
    let err = read(child.stderr.take().map(|p| Box::new(p) as _));
    let status = wait_within(&mut child, limit)?;
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_never_ends_is_stopped_at_the_limit() {
        let t = Instant::now();
        let e = output_within(
            Command::new("sh").args(["-c", "echo started; sleep 1000"]),
            Duration::from_millis(300),
        )
        .expect_err("times out");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        let ok = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2"]),
            Duration::from_secs(10),
        )
        .expect("runs");
        assert_eq!(
            (ok.stdout.as_slice(), ok.stderr.as_slice()),
            (&b"out\n"[..], &b"err\n"[..])
        );
    }
}
