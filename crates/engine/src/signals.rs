//! Ctrl-C / SIGTERM / SIGHUP: the first signal asks the run to stop gracefully (report and
//! JSON are still written, a ladder's schema dropped), the second exits at once. Workers
//! notice through an eventfd that every poller watches, so a sleeping thread wakes
//! immediately.
//!
//! SIGHUP is a closed terminal or ssh session as much as a `kill -HUP`: its default (exit
//! 129) left a run's JSON saying `running` and a ladder's schema behind. It is handled like
//! SIGTERM, except where the process was started with it ignored (`nohup`), which is left
//! so; and since the terminal may be gone, its standard output and error are pointed at
//! `/dev/null` (when they were that terminal), so printing the final report cannot fail
//! before the results are written.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// `/dev/null`, opened at install, for a hung-up terminal's standard streams.
static NULL_FD: AtomicI32 = AtomicI32::new(-1);
/// Whether standard output / error were a terminal at install.
static STDOUT_TTY: AtomicBool = AtomicBool::new(false);
static STDERR_TTY: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGHUP {
        detach_terminal();
    }
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 2 {
        // SAFETY: _exit is async-signal-safe. Result files are written atomically, so
        // whatever is on disk is complete.
        unsafe { libc::_exit(130) };
    }
    wake_all();
}

/// Points standard output and error that were the terminal at `/dev/null` (dup2 is
/// async-signal-safe): writes to a hung-up terminal fail, and Rust's printing panics then.
fn detach_terminal() {
    let null = NULL_FD.load(Ordering::SeqCst);
    if null < 0 {
        return;
    }
    for (fd, tty) in [(1, &STDOUT_TTY), (2, &STDERR_TTY)] {
        if tty.load(Ordering::SeqCst) {
            // SAFETY: dup2 onto our own standard descriptors.
            unsafe { libc::dup2(null, fd) };
        }
    }
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
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        NULL_FD.store(null, Ordering::SeqCst);
        STDOUT_TTY.store(libc::isatty(1) == 1, Ordering::SeqCst);
        STDERR_TTY.store(libc::isatty(2) == 1, Ordering::SeqCst);
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
        // `nohup` ignores SIGHUP on purpose: keep it ignored.
        if libc::signal(libc::SIGHUP, handler) == libc::SIG_IGN {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
        }
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
