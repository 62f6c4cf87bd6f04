//! Advisory `flock` locks on files, the one place pgserver calls `flock(2)`: the default
//! server's command lock and users file (`default_server/layout.rs`) and the download cache's
//! lock (`download`). A lock lasts as long as its `File` is open, and the kernel releases it
//! when the process dies, so a killed command never leaves a stale lock behind.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::error::{Error, Result};

/// How to lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// Many holders at once; waits for an exclusive holder to leave.
    Shared,
    /// One holder; waits for every other holder to leave.
    Exclusive,
}

/// Opens (creating it if needed) and locks `path`, waiting for the lock; released when the
/// returned file is dropped.
pub fn lock(path: &Path, mode: LockMode) -> Result<File> {
    let f = open(path)?;
    let op = match mode {
        LockMode::Shared => libc::LOCK_SH,
        LockMode::Exclusive => libc::LOCK_EX,
    };
    flock(&f, op).map_err(|e| Error::io("cannot lock", path, e))?;
    Ok(f)
}

/// An exclusive lock on `path` if nobody else holds one of any kind right now (never waits).
pub fn try_lock_exclusive(path: &Path) -> Option<File> {
    let f = open(path).ok()?;
    flock(&f, libc::LOCK_EX | libc::LOCK_NB).ok()?;
    Some(f)
}

fn open(path: &Path) -> Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io("cannot open lock file", path, e))
}

fn flock(f: &File, op: libc::c_int) -> std::io::Result<()> {
    // SAFETY: flock on a descriptor `f` owns and keeps open for the call.
    if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_locks_coexist_and_keep_out_an_exclusive_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("users");
        let a = lock(&p, LockMode::Shared).expect("first shared");
        let b = lock(&p, LockMode::Shared).expect("second shared");
        assert!(try_lock_exclusive(&p).is_none(), "held shared twice");
        drop((a, b));
        let x = try_lock_exclusive(&p).expect("free again");
        assert!(try_lock_exclusive(&p).is_none(), "held exclusively");
        drop(x);
        assert!(lock(&p, LockMode::Exclusive).is_ok());
        assert!(lock(&dir.path().join("no/such/dir/lock"), LockMode::Shared).is_err());
    }
}
