//! The `pause` perturbation (docs/perturbations.md): every child of a postmaster (backends,
//! checkpointer, WAL writer, …) stopped with SIGSTOP, then continued with SIGCONT. A paused
//! server must never outlive hotbench paused: before stopping anything a watchdog is started
//! (an `sh` holding the read end of a pipe only we write to, as the [`crate::guardian`]
//! does). When hotbench resumes the server, exits, panics or is killed, the pipe closes and the
//! watchdog continues the postmaster's process group; it also does so by itself at a deadline
//! (the pause's length and a margin), should hotbench hang. [`Paused`] continues the server
//! when it is dropped, and the guardian of a server hotbench started continues its group
//! before stopping it.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::error::{Error, Result};

const WATCHDOG: &str = r#"
trap '' INT HUP TERM PIPE
g=$1
s=$2
( sleep "$s"; kill -s CONT -- "-$g" 2>/dev/null ) &
t=$!
read -r _
kill -s CONT -- "-$g" 2>/dev/null
kill -s KILL "$t" 2>/dev/null
exit 0
"#;

/// A postmaster's children, stopped. Continued by [`Paused::resume`] or on drop.
#[derive(Debug)]
pub struct Paused {
    /// The postmaster's process group (its pid: it leads its group).
    group: u32,
    /// The children stopped.
    pids: Vec<u32>,
    watchdog: Option<(Child, File)>,
}

impl Paused {
    /// How many processes were stopped.
    pub fn stopped(&self) -> usize {
        self.pids.len()
    }

    /// Continues every stopped process (and the postmaster's group, whatever forked meanwhile
    /// included); returns how many were stopped.
    pub fn resume(mut self) -> usize {
        self.continue_all();
        self.pids.len()
    }

    fn continue_all(&mut self) {
        for &p in &self.pids {
            signal(p as i32, libc::SIGCONT);
        }
        continue_group(self.group);
        if let Some((mut child, pipe)) = self.watchdog.take() {
            drop(pipe);
            let _ = child.wait();
        }
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        if self.watchdog.is_some() {
            self.continue_all();
        }
    }
}

/// Stops every child of `postmaster` (which must lead its process group, as every server
/// hotbench starts does); the watchdog continues them after `deadline` at the latest.
pub fn pause_children(postmaster: u32, deadline: Duration) -> Result<Paused> {
    if !crate::process::alive(postmaster) {
        return Err(Error::Invalid(format!(
            "the server (pid {postmaster}) is not running"
        )));
    }
    if group_of(postmaster) != Some(postmaster) {
        return Err(Error::Invalid(format!(
            "the server (pid {postmaster}) does not lead its process group: not one hotbench started"
        )));
    }
    let watchdog = watchdog(postmaster, deadline)?;
    let mut paused = Paused {
        group: postmaster,
        pids: Vec::new(),
        watchdog: Some(watchdog),
    };
    for pid in children_of(postmaster) {
        // SAFETY: kill has no memory-safety preconditions.
        if unsafe { libc::kill(pid as i32, libc::SIGSTOP) } == 0 {
            paused.pids.push(pid);
        } else {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ESRCH) {
                // Dropping `paused` continues what was stopped so far.
                return Err(Error::Io {
                    what: format!("cannot stop the server's process {pid}"),
                    source: e,
                });
            }
        }
    }
    Ok(paused)
}

/// SIGCONT to process group `group` (a postmaster's): whatever was stopped in it runs again.
pub fn continue_group(group: u32) {
    if let Ok(g) = i32::try_from(group) {
        if g > 0 {
            signal(-g, libc::SIGCONT);
        }
    }
}

fn signal(pid: i32, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// The watchdog: continues `group` when the pipe's write end (ours) closes or `deadline`
/// passes, whichever comes first.
fn watchdog(group: u32, deadline: Duration) -> Result<(Child, File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid 2-element array; O_CLOEXEC keeps the write end out of children.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::Io {
            what: "cannot create the pause watchdog's pipe".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: pipe2 just returned these two fresh descriptors; we take sole ownership.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    let secs = deadline.as_secs().max(1).to_string();
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("hotbench-pause-watchdog")
        .arg(group.to_string())
        .arg(secs)
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::Io {
            what: "cannot start the pause watchdog /bin/sh".into(),
            source: e,
        })?;
    // Nothing is ever written: only the end of the pipe matters.
    Ok((child, write))
}

/// Fields of `/proc/PID/stat` after the command name: state, ppid, pgrp, ….
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let mut text = String::new();
    File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    // The command name is in parentheses and may hold spaces or parentheses itself.
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn group_of(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(2)?.parse().ok()
}

/// Live processes whose parent is `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Some(f) = stat_fields(pid) else { continue };
        let ppid = f.get(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) && f.first().is_some_and(|s| s != "Z") {
            out.push(pid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Whether `pid` is stopped, once a signal sent to it has taken effect (it is delivered
    /// when the process next runs: polled, up to 10 s).
    fn stopped(pid: u32, want: bool) -> bool {
        let t = Instant::now();
        loop {
            let now = stat_fields(pid).and_then(|f| f.first().cloned()) == Some("T".into());
            if now == want || t.elapsed() > Duration::from_secs(10) {
                return now;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A shell leading its group with two children: both are stopped, the leader is not;
    /// resuming continues them; and a `Paused` dropped without a resume (a panic, an early
    /// return) continues them too.
    #[test]
    fn children_are_stopped_and_continued_and_a_dropped_pause_continues_them() {
        let mut leader = Command::new("/bin/sh")
            .arg("-c")
            .arg("sleep 30 & sleep 30 & wait")
            .process_group(0)
            .spawn()
            .expect("sh");
        let pid = leader.id();
        let t = Instant::now();
        while children_of(pid).len() < 2 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let kids = children_of(pid);
        assert_eq!(kids.len(), 2, "{kids:?}");
        let p = pause_children(pid, Duration::from_secs(60)).expect("paused");
        assert_eq!(p.stopped(), 2);
        for &k in &kids {
            assert!(stopped(k, true), "child {k} stopped");
        }
        assert!(!stopped(pid, false), "the leader runs on");
        assert_eq!(p.resume(), 2);
        for &k in &kids {
            assert!(!stopped(k, false), "child {k} continued");
        }
        let p = pause_children(pid, Duration::from_secs(60)).expect("paused again");
        for &k in &kids {
            assert!(stopped(k, true), "child {k} stopped again");
        }
        drop(p);
        for &k in &kids {
            assert!(!stopped(k, false), "continued on drop");
        }
        // SAFETY: the test's own process group.
        unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
        let _ = leader.wait();
    }

    /// The watchdog continues the group when its pipe closes without a resume (hotbench
    /// killed mid-pause: the kernel closes the pipe).
    #[test]
    fn the_watchdog_continues_the_group_when_its_pipe_closes() {
        let mut leader = Command::new("/bin/sh")
            .arg("-c")
            .arg("sleep 30 & wait")
            .process_group(0)
            .spawn()
            .expect("sh");
        let pid = leader.id();
        let t = Instant::now();
        while children_of(pid).is_empty() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let kid = children_of(pid)[0];
        let mut p = pause_children(pid, Duration::from_secs(60)).expect("paused");
        assert!(stopped(kid, true));
        // As a death would: the pipe closes, nobody sends SIGCONT but the watchdog.
        let (mut dog, pipe) = p.watchdog.take().expect("watchdog");
        drop(pipe);
        let _ = dog.wait();
        assert!(!stopped(kid, false), "the watchdog continued it");
        // SAFETY: the test's own process group.
        unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
        let _ = leader.wait();
    }
}
