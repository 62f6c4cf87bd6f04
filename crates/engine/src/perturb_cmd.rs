//! `--perturb-cmd 'KIND=SHELL COMMAND'`: the user's own command for a `restart` or `pause` of
//! a server hotbench did not start, run with `sh -c` in a process group of its own (killed
//! whole when it outlives its limit, as `pgserver::child` does with every program hotbench
//! waits for). Its exit status and the tail of its output (standard output and error
//! together, control characters escaped) are the entry's `detail`, or its `error` when it
//! failed.
//!
//! Its environment is hotbench's own plus `HOTBENCH_PERTURB_KIND`, `_ARGS`, `_SPEC` and, for
//! `pause`, `_SECONDS`; nothing of the run's connection options is added, so a password
//! given in a connection string or URL never reaches it (a `PGPASSWORD` the user exported is
//! in hotbench's environment and so in its, as in any program they start).

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use hotbench_settings::perturb::{Kind, Perturbation};

use crate::perturb::Ctx;

/// The longest a command may run.
pub(crate) const LIMIT: Duration = Duration::from_secs(600);
/// How long a command still running when the run ends is given before it is stopped.
pub(crate) const AFTER_END: Duration = Duration::from_secs(10);
/// How much of its output the entry keeps (the end of it), in characters.
const TAIL_CHARS: usize = 400;
/// How often the wait looks at the command.
const POLL: Duration = Duration::from_millis(20);

/// Runs `command` for `p`: the detail line when it exited 0, else why not.
pub(crate) fn run(ctx: &Ctx, p: &Perturbation, command: &str) -> Result<String, String> {
    let (read, write) = pipe().map_err(|e| format!("could not run the command: {e}"))?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .env("HOTBENCH_PERTURB_KIND", p.kind.name())
        .env("HOTBENCH_PERTURB_ARGS", p.kind.args())
        .env("HOTBENCH_PERTURB_SPEC", p.to_string())
        .stdin(Stdio::null())
        .process_group(0);
    if let Kind::Pause { hold_us } = p.kind {
        cmd.env(
            "HOTBENCH_PERTURB_SECONDS",
            format!("{}", hold_us as f64 / 1e6),
        );
    }
    let err = write
        .try_clone()
        .map_err(|e| format!("could not run the command: {e}"))?;
    cmd.stdout(Stdio::from(write)).stderr(Stdio::from(err));
    let t = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not run /bin/sh: {e}"))?;
    // Our copies of the write end go with `cmd`: the output ends when the command's does.
    drop(cmd);
    let mut out = Output::new(read);
    let mut end_seen: Option<Instant> = None;
    let status = loop {
        out.drain();
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(format!("could not wait for the command: {e}")),
        }
        if ctx.is_stopped() {
            end_seen.get_or_insert_with(Instant::now);
        }
        let over = if t.elapsed() >= LIMIT {
            Some(format!("did not finish within {} s", LIMIT.as_secs()))
        } else if end_seen.is_some_and(|e| e.elapsed() >= AFTER_END) {
            Some(format!(
                "still running {} s after the run ended",
                AFTER_END.as_secs()
            ))
        } else {
            None
        };
        if let Some(why) = over {
            kill_group(child.id());
            let _ = child.wait();
            out.drain();
            break Err(format!("command {why}; stopped{}", out.shown()));
        }
        std::thread::sleep(POLL);
    };
    out.drain();
    let took = t.elapsed().as_secs_f64();
    let status = status?;
    let said = describe(status);
    if status.success() {
        Ok(format!("command {said} after {took:.1} s{}", out.shown()))
    } else {
        Err(format!("command {said} after {took:.1} s{}", out.shown()))
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended".to_string(),
    }
}

fn kill_group(pid: u32) {
    if let Ok(p) = i32::try_from(pid) {
        // SAFETY: plain kill of the process group the child leads (`process_group(0)`).
        unsafe {
            libc::kill(-p, libc::SIGKILL);
        }
    }
}

/// A pipe whose read end does not block (a daemon the command started may hold the write
/// end long after the command exited: its output is read while the command runs, never
/// waited for).
fn pipe() -> std::io::Result<(File, File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid 2-element array; O_CLOEXEC keeps both ends out of other children
    // (the command gets the write end through its own dup2).
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned these two fresh descriptors; we take sole ownership.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fds[0], libc::F_GETFL);
        libc::fcntl(fds[0], libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    Ok((File::from(read), File::from(write)))
}

/// The command's output as it comes, its end kept.
struct Output {
    pipe: File,
    tail: Vec<u8>,
}

impl Output {
    fn new(pipe: File) -> Output {
        Output {
            pipe,
            tail: Vec::new(),
        }
    }

    /// Reads what is there now.
    fn drain(&mut self) {
        let mut buf = [0u8; 4096];
        while let Ok(n) = self.pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            self.tail.extend_from_slice(&buf[..n]);
            let keep = TAIL_CHARS * 4;
            if self.tail.len() > 2 * keep {
                self.tail.drain(..self.tail.len() - keep);
            }
        }
    }

    /// `; output: …` with its last lines (one line, control characters escaped), or nothing.
    fn shown(&self) -> String {
        let text = String::from_utf8_lossy(&self.tail);
        let joined = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" | ");
        if joined.is_empty() {
            return String::new();
        }
        let chars: Vec<char> = joined.chars().collect();
        let start = chars.len().saturating_sub(TAIL_CHARS);
        let cut: String = chars[start..].iter().collect();
        let more = if start > 0 { "…" } else { "" };
        format!("; output: {more}{}", hotbench_stats::terminal::escape(&cut))
    }
}
