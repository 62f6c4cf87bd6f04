//! A guardian process that stops PostgreSQL and removes its directory when we die.
//!
//! Test binaries never run static destructors, and a killed `hotbench` runs nothing at all, so
//! cleanup cannot live in our process. We spawn a tiny `sh` script holding the read end of a
//! pipe whose write end only we hold (close-on-exec, so no other child inherits it). We send it
//! the process groups to stop (`+PID` / `-PID` lines, `+PID SIGNAL` for a process whose
//! first signal is its own). When our process exits, panics or is
//! killed, the kernel closes the write end, the script's `read` hits EOF, continues each
//! group (a server paused by the `pause` perturbation would not act on its stop), sends SIGQUIT
//! (immediate shutdown; SIGINT, fast shutdown, for persistent clusters) to each postmaster,
//! SIGTERM to a PgBouncer (its immediate shutdown: SIGQUIT would dump core),
//! SIGQUIT after 10 s, SIGKILLs each process group after 30 s and removes the directory. It ignores SIGINT/SIGHUP/SIGTERM and sits in its own process group, so Ctrl-C in
//! a terminal reaches us, not it. (PR_SET_PDEATHSIG is no substitute: it fires when the
//! *thread* that spawned the child exits, and test threads come and go.)

use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::error::{Error, Result};

const SCRIPT: &str = r#"
trap '' INT HUP TERM PIPE
dir=$1
first=${2:-QUIT}
pids=
sigs=
while read -r line; do
  case $line in
    +*) set -- ${line#+}; pids="$pids $1"; sigs="$sigs $1:${2:-$first}" ;;
    -*) keep=; for p in $pids; do [ "$p" = "${line#-}" ] || keep="$keep $p"; done; pids=$keep ;;
  esac
done
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
for p in $pids; do
  s=$first
  for e in $sigs; do [ "${e%%:*}" = "$p" ] && s=${e#*:}; done
  kill -s CONT -- "-$p" 2>/dev/null
  kill -s "$s" "$p" 2>/dev/null
done
i=0
while [ $i -lt 300 ]; do
  if [ $i -eq 100 ]; then for p in $pids; do kill -s QUIT "$p" 2>/dev/null; done; fi
  any=
  for p in $pids; do if alive "$p"; then any=1; fi; done
  [ -z "$any" ] && break
  sleep 0.1
  i=$((i+1))
done
for p in $pids; do kill -s KILL -- "-$p" 2>/dev/null; kill -s KILL "$p" 2>/dev/null; done
if [ -n "$dir" ]; then rm -rf -- "$dir"; fi
exit 0
"#;

/// Handle on a running guardian.
#[derive(Debug)]
pub struct Guardian {
    child: Child,
    pipe: Option<File>,
}

impl Guardian {
    /// Start a guardian; on our death it stops the watched groups and removes `remove` (if any).
    /// `fast_first` sends SIGINT (fast shutdown) before SIGQUIT, for data worth keeping.
    pub fn spawn(remove: Option<&Path>, fast_first: bool) -> Result<Guardian> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds is a valid 2-element array; O_CLOEXEC keeps the write end out of children.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        if rc != 0 {
            return Err(Error::Io {
                what: "cannot create guardian pipe".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: pipe2 just returned these two fresh descriptors; we take sole ownership.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        let dir = remove.map(|p| p.display().to_string()).unwrap_or_default();
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("hotbench-guardian")
            .arg(dir)
            .arg(if fast_first { "INT" } else { "QUIT" })
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| Error::Io {
                what: "cannot start guardian /bin/sh".into(),
                source: e,
            })?;
        Ok(Guardian {
            child,
            pipe: Some(write),
        })
    }

    /// Pid of the guardian process.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stop process group `pgid` when we die.
    pub fn watch(&mut self, pgid: u32) {
        self.send(&format!("+{pgid}\n"));
    }

    /// As [`Guardian::watch`], with `signal` (`TERM`, `INT`, …) as the first one sent.
    pub fn watch_with(&mut self, pgid: u32, signal: &str) {
        self.send(&format!("+{pgid} {signal}\n"));
    }

    /// Forget process group `pgid` (we stopped and reaped it ourselves).
    pub fn unwatch(&mut self, pgid: u32) {
        self.send(&format!("-{pgid}\n"));
    }

    fn send(&mut self, line: &str) {
        if let Some(p) = self.pipe.as_mut() {
            // A dead guardian (EPIPE) cannot be helped here; cleanup falls back to our own stop.
            let _ = p.write_all(line.as_bytes());
        }
    }

    /// Run the cleanup now: close the pipe and wait for the guardian to finish its work.
    pub fn finish(&mut self) {
        self.pipe.take();
        let _ = self.child.wait();
    }
}

/// A process we started and the guardian watching it, stopped once: by [`Guarded::stop`]
/// (`Server::stop`, `PgBouncer::stop`), or by the guardian should we die first.
#[derive(Debug, Default)]
pub(crate) struct Guarded {
    child: Option<Child>,
    guardian: Option<Guardian>,
    stopped: bool,
}

impl Guarded {
    pub(crate) fn new(child: Child, guardian: Guardian) -> Guarded {
        Guarded {
            child: Some(child),
            guardian: Some(guardian),
            stopped: false,
        }
    }

    /// Stops the process with `stop(pid)` and reaps it, then lets the guardian finish its
    /// cleanup (it removes the directory). Later calls do nothing.
    pub(crate) fn stop(&mut self, stop: impl FnOnce(u32)) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        if let Some(mut child) = self.child.take() {
            stop(child.id());
            let _ = child.wait();
            if let Some(g) = self.guardian.as_mut() {
                g.unwatch(child.id());
            }
        }
        if let Some(mut g) = self.guardian.take() {
            g.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process watched with its own first signal gets that one: this shell ignores
    /// SIGQUIT (the default first signal) and exits 0 only on SIGTERM, long before the
    /// guardian's SIGQUIT at 10 s or SIGKILL at 30 s.
    #[test]
    fn a_process_watched_with_a_signal_gets_that_signal_first() {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg("trap '' QUIT INT; trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done")
            .process_group(0)
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        // Its traps are set once it says so (a signal before that would kill it outright).
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).expect("read");
        assert_eq!(line, "ready\n");
        let mut g = Guardian::spawn(None, false).expect("guardian");
        g.watch_with(child.id(), "TERM");
        let t0 = std::time::Instant::now();
        g.finish();
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "ended by its SIGTERM trap");
        assert!(t0.elapsed() < std::time::Duration::from_secs(8));
    }
}
