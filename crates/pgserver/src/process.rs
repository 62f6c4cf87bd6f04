//! Running the postmaster: spawn it as the run-as user in its own process group, wait until
//! `postmaster.pid` says "ready", classify start-up failures from its log (port in use, disk
//! full), stop it by signal, and find processes by their working directory (every PostgreSQL
//! process chdirs into its data directory) to prove nothing is left behind.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::account::RunAs;
use crate::binaries::PgBinaries;
use crate::error::{Error, Result};

/// How to ask the postmaster to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// SIGINT: abort sessions, checkpoint, exit (data kept consistent).
    Fast,
    /// SIGQUIT: exit at once; recovery on next start. For throwaway clusters.
    Immediate,
}

/// Fields of `postmaster.pid` we use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidFile {
    /// Postmaster pid.
    pub pid: u32,
    /// Data directory it serves.
    pub data_dir: PathBuf,
    /// TCP port.
    pub port: u16,
    /// First socket directory.
    pub socket_dir: Option<PathBuf>,
    /// "starting", "ready", "stopping", … (PostgreSQL 10+).
    pub status: String,
}

/// Parse `DATA/postmaster.pid`, if present and well-formed.
pub fn read_pid_file(data: &Path) -> Option<PidFile> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    parse_pid_file(&text)
}

pub(crate) fn parse_pid_file(text: &str) -> Option<PidFile> {
    let lines: Vec<&str> = text.lines().collect();
    let pid = lines.first()?.trim().parse().ok()?;
    let data_dir = PathBuf::from(lines.get(1)?.trim());
    let port = lines
        .get(3)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    let socket_dir = lines
        .get(4)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map(PathBuf::from);
    let status = lines
        .get(7)
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    Some(PidFile {
        pid,
        data_dir,
        port,
        socket_dir,
        status,
    })
}

/// Is `pid` a live (non-zombie) process?
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(s) => !s
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z')),
        Err(_) => false,
    }
}

/// Pids of processes whose working directory is `dir` or below it (also "(deleted)" ones).
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) {
            let s = cwd.to_string_lossy();
            let s = s.strip_suffix(" (deleted)").unwrap_or(&s);
            if Path::new(s).starts_with(dir) {
                out.push(pid);
            }
        }
    }
    out
}

/// Does `pid` look like a postmaster serving `data` (its cwd is `data`)?
pub fn is_postmaster_of(pid: u32, data: &Path) -> bool {
    let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) else {
        return false;
    };
    let want = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
    alive(pid) && cwd == want
}

/// Make a child die with us while it runs in the foreground (initdb, single-user mode). Only
/// for children waited on by the same thread: PDEATHSIG fires when the spawning thread exits.
pub(crate) fn die_with_parent(cmd: &mut Command) {
    // SAFETY: prctl and getppid are async-signal-safe; runs after setuid so it is not reset.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                return Err(std::io::Error::other("parent exited"));
            }
            Ok(())
        });
    }
}

/// Open (append) the log file for a child's stdout/stderr.
/// Readable by us only (a server log holds failed statements, user data among them), and
/// never through a symbolic link put in its place.
pub(crate) fn log_handle(log: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)
        .map_err(|e| Error::io("cannot open log file", log, e))?;
    // One an older hotbench made 0644: best effort (it may be another account's).
    let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    Ok(f)
}

/// Text of `log` from byte `from` on, last `lines` lines.
pub fn log_tail(log: &Path, from: u64, lines: usize) -> String {
    let mut s = String::new();
    if let Ok(mut f) = std::fs::File::open(log) {
        let _ = f.seek(SeekFrom::Start(from));
        let _ = f.read_to_string(&mut s);
    }
    let all: Vec<&str> = s.lines().collect();
    let start = all.len().saturating_sub(lines);
    all[start..].join("\n")
}

/// Start the postmaster for `data`. `detached` puts it in a new session (outlives us);
/// otherwise it gets its own process group (Ctrl-C in a terminal does not reach it).
pub fn spawn(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    log: &Path,
    detached: bool,
) -> Result<Child> {
    let out = log_handle(log)?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io("cannot open log file", log, e))?;
    let mut cmd = Command::new(bins.program("postgres"));
    cmd.arg("-D")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    user.apply(&mut cmd);
    if detached {
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    } else {
        cmd.process_group(0);
    }
    cmd.spawn()
        .map_err(|e| Error::io("cannot start postgres", &bins.program("postgres"), e))
}

/// Wait until the postmaster `child` reports ready in `postmaster.pid`.
/// `major` < 10 servers write no status line: for them, accepting TCP counts as ready.
pub fn wait_ready(
    child: &mut Child,
    data: &Path,
    log: &Path,
    log_from: u64,
    port: u16,
    major: u32,
    timeout: Duration,
) -> Result<()> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let tail = log_tail(log, log_from, 15);
            return Err(classify_failure(
                &tail,
                port,
                data,
                &format!("postgres exited ({status})"),
            ));
        }
        if let Some(pf) = read_pid_file(data) {
            // PostgreSQL 10+ writes "ready" (it listens earlier, while still starting up);
            // older ones write no status at all: the port's listening socket must be its own
            // (another process answering there is not our server).
            let listening = major < 10
                && crate::ports::listener(child.id(), port) == Some(crate::ports::Listener::Ours);
            if pf.pid == child.id() && (pf.status == "ready" || listening) {
                return Ok(());
            }
        }
        if start.elapsed() > timeout {
            return Err(Error::StartTimeout {
                secs: timeout.as_secs(),
                log: log_tail(log, log_from, 15),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Turn a failed start's log into one clear error.
pub(crate) fn classify_failure(tail: &str, port: u16, data: &Path, what: &str) -> Error {
    if tail.contains("Address already in use") {
        Error::PortInUse { port }
    } else if tail.contains("No space left on device") {
        Error::DiskFull {
            path: data.to_path_buf(),
            detail: last_line(tail),
        }
    } else {
        Error::Command {
            what: what.into(),
            log: tail.to_string(),
        }
    }
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

fn signal(pid: u32, sig: libc::c_int) {
    if let Ok(p) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(p, sig) };
    }
}

fn signal_group(pgid: u32, sig: libc::c_int) {
    if let Ok(p) = libc::pid_t::try_from(pgid) {
        // SAFETY: as in signal; a negative pid addresses the process group.
        unsafe { libc::kill(-p, sig) };
    }
}

fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let start = Instant::now();
    while alive(pid) {
        if start.elapsed() > timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Stop the postmaster `pid` (not necessarily our child): `mode`, then SIGQUIT after
/// `grace`, then SIGKILL to it and its process group. Returns once it is gone.
pub fn stop(pid: u32, mode: StopMode, grace: Duration) {
    match mode {
        StopMode::Fast => signal(pid, libc::SIGINT),
        StopMode::Immediate => signal(pid, libc::SIGQUIT),
    }
    if wait_gone(pid, grace) {
        return;
    }
    signal(pid, libc::SIGQUIT);
    if wait_gone(pid, Duration::from_secs(10)) {
        return;
    }
    signal(pid, libc::SIGKILL);
    signal_group(pid, libc::SIGKILL);
    wait_gone(pid, Duration::from_secs(5));
}

/// Stop a process that is not a postmaster (a PgBouncer we started): SIGTERM, then SIGKILL
/// to it and its process group after `grace`. Returns once it is gone.
pub fn terminate(pid: u32, grace: Duration) {
    signal(pid, libc::SIGTERM);
    if wait_gone(pid, grace) {
        return;
    }
    signal(pid, libc::SIGKILL);
    signal_group(pid, libc::SIGKILL);
    wait_gone(pid, Duration::from_secs(5));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_file_parses() {
        let t =
            "4242\n/tmp/hb/data\n1700000000\n5433\n/tmp/hb/s\n127.0.0.1\n  1234  5678\nready   \n";
        let p = parse_pid_file(t).expect("parses");
        assert_eq!(p.pid, 4242);
        assert_eq!(p.port, 5433);
        assert_eq!(p.socket_dir.as_deref(), Some(Path::new("/tmp/hb/s")));
        assert_eq!(p.status, "ready");
        assert!(parse_pid_file("garbage").is_none());
    }

    #[test]
    fn failures_are_classified() {
        let e = classify_failure(
            "LOG: could not bind IPv4 address \"127.0.0.1\": Address already in use",
            5,
            Path::new("/d"),
            "x",
        );
        assert!(matches!(e, Error::PortInUse { port: 5 }));
        let e = classify_failure(
            "FATAL: could not write: No space left on device",
            5,
            Path::new("/d"),
            "x",
        );
        assert!(matches!(e, Error::DiskFull { .. }));
    }
}
