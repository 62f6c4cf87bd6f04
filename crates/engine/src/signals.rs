//! Ctrl-C / SIGTERM: the first signal asks the run to stop gracefully (report and JSON are
//! still written), the second exits at once. Workers notice through an eventfd that every
//! poller watches, so a sleeping thread wakes immediately.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(_sig: libc::c_int) {
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 2 {
        // SAFETY: _exit is async-signal-safe. Result files are written atomically, so
        // whatever is on disk is complete.
        unsafe { libc::_exit(130) };
    }
    wake_all();
}

/// Installs the handlers (idempotent) and returns the wake-up eventfd.
pub fn install() -> RawFd {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        return fd;
    }
    // SAFETY: creating an eventfd and installing a handler that only touches atomics and
    // calls async-signal-safe functions.
    unsafe {
        let efd = libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK);
        WAKE_FD.store(efd, Ordering::SeqCst);
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
        efd
    }
}

/// True once a stop was requested (signal or [`request_stop`]).
#[inline]
pub fn stop_requested() -> bool {
    SIGNALS.load(Ordering::Relaxed) > 0
}

/// Requests a graceful stop, as the first Ctrl-C does.
pub fn request_stop() {
    SIGNALS.fetch_add(1, Ordering::SeqCst);
    wake_all();
}

/// Clears a previous stop request (for running several benchmarks in one process).
pub fn reset() {
    SIGNALS.store(0, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let mut buf = [0u8; 8];
        // SAFETY: draining our own non-blocking eventfd.
        unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 8) };
    }
}

fn wake_all() {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: write(2) on an eventfd is async-signal-safe.
        unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
    }
}
