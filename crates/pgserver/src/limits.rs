//! Resource limits: 1,000 client connections need well over 1,000 file descriptors in our own
//! process, so raise the soft RLIMIT_NOFILE to the hard limit.

use crate::error::{Error, Result};

/// Raise our soft open-files limit to the hard limit; returns (old soft, new soft).
pub fn raise_nofile_limit() -> Result<(u64, u64)> {
    // SAFETY: rlimit is plain data.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return Err(Error::Io {
            what: "getrlimit(RLIMIT_NOFILE)".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    let old = rl.rlim_cur as u64;
    if rl.rlim_cur >= rl.rlim_max {
        return Ok((old, old));
    }
    rl.rlim_cur = rl.rlim_max;
    // SAFETY: valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } != 0 {
        return Err(Error::Io {
            what: "setrlimit(RLIMIT_NOFILE)".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok((old, rl.rlim_cur as u64))
}

/// Current soft open-files limit.
pub fn nofile_limit() -> u64 {
    // SAFETY: as above.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    rl.rlim_cur as u64
}
