//! A level-triggered epoll set plus a timerfd for microsecond wake-ups: the only blocking
//! point of a worker thread. Level-triggered so a connection with unread data is reported
//! again until the client consumes it, and no client can be starved by an edge it missed.

use std::io;
use std::os::fd::RawFd;

pub struct Poller {
    epfd: RawFd,
    timerfd: RawFd,
    events: Vec<libc::epoll_event>,
    registered: usize,
    armed_at: i64,
}

/// Token reserved for the timer.
pub const TIMER_TOKEN: u64 = u64::MAX;

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

impl Poller {
    pub fn new(capacity: usize) -> io::Result<Self> {
        // SAFETY: plain syscalls; the fds are owned by this struct and closed in Drop.
        let epfd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        let timerfd = match cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        }) {
            Ok(fd) => fd,
            Err(e) => {
                unsafe { libc::close(epfd) };
                return Err(e);
            }
        };
        let mut p = Poller {
            epfd,
            timerfd,
            events: Vec::with_capacity(capacity.max(16)),
            registered: 0,
            armed_at: i64::MAX,
        };
        p.ctl(libc::EPOLL_CTL_ADD, timerfd, TIMER_TOKEN, true)?;
        Ok(p)
    }

    fn ctl(&mut self, op: libc::c_int, fd: RawFd, token: u64, readable: bool) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: if readable { libc::EPOLLIN as u32 } else { 0 },
            u64: token,
        };
        // SAFETY: ev lives across the call; fd validity is the caller's contract.
        cvt(unsafe { libc::epoll_ctl(self.epfd, op, fd, &mut ev) })?;
        Ok(())
    }

    /// Starts watching `fd` for readability under `token`.
    pub fn add(&mut self, fd: RawFd, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, true)?;
        self.registered += 1;
        Ok(())
    }

    /// Stops watching `fd` (ignores "not registered").
    pub fn remove(&mut self, fd: RawFd) {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: see ctl.
        let rc = unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_DEL, fd, &mut ev) };
        if rc == 0 {
            self.registered = self.registered.saturating_sub(1);
        }
    }

    /// Waits until a watched fd is readable or the monotonic time `deadline_us` (as from
    /// [`crate::clock::now_us`]) passes; `None` waits without timeout. `now` is the caller's
    /// latest reading of that clock. Fills `ready` with the tokens of readable fds (the
    /// timer's token is not reported).
    pub fn wait(
        &mut self,
        deadline_us: Option<i64>,
        now: i64,
        ready: &mut Vec<u64>,
    ) -> io::Result<()> {
        ready.clear();
        let timeout_ms = match deadline_us {
            None => -1,
            Some(d) => {
                if d <= now {
                    0
                } else {
                    self.arm(d, now)?;
                    -1
                }
            }
        };
        self.events.clear();
        self.events.reserve(self.registered + 1);
        let cap = self.events.capacity() as libc::c_int;
        // SAFETY: the buffer has `cap` slots; the kernel writes at most that many.
        let n = unsafe { libc::epoll_wait(self.epfd, self.events.as_mut_ptr(), cap, timeout_ms) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(err);
        }
        // SAFETY: epoll_wait initialised the first n entries.
        unsafe { self.events.set_len(n as usize) };
        for ev in &self.events {
            if ev.u64 == TIMER_TOKEN {
                let mut buf = [0u8; 8];
                // SAFETY: reading the 8-byte expiration counter of our own timerfd.
                unsafe { libc::read(self.timerfd, buf.as_mut_ptr().cast(), 8) };
                self.armed_at = i64::MAX;
            } else {
                ready.push(ev.u64);
            }
        }
        Ok(())
    }

    fn arm(&mut self, deadline: i64, now: i64) -> io::Result<()> {
        if deadline == self.armed_at {
            return Ok(());
        }
        let delta = (deadline - now).max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (delta / 1_000_000) as libc::time_t,
                tv_nsec: ((delta % 1_000_000) * 1000) as libc::c_long,
            },
        };
        // SAFETY: relative timer on our own timerfd.
        cvt(unsafe { libc::timerfd_settime(self.timerfd, 0, &spec, std::ptr::null_mut()) })?;
        self.armed_at = deadline;
        Ok(())
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        // SAFETY: closing fds we own.
        unsafe {
            libc::close(self.timerfd);
            libc::close(self.epfd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::now_us;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn timer_wakes_up_on_time() {
        let mut p = Poller::new(4).unwrap();
        let mut ready = Vec::new();
        let start = now_us();
        p.wait(Some(start + 3000), start, &mut ready).unwrap();
        let waited = now_us() - start;
        assert!(ready.is_empty());
        assert!(waited >= 2900, "woke after {waited} µs");
        assert!(waited < 200_000, "woke after {waited} µs");
    }

    #[test]
    fn readable_socket_is_reported_until_drained() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut p = Poller::new(4).unwrap();
        p.add(b.as_raw_fd(), 7).unwrap();
        a.write_all(b"x").unwrap();
        let mut ready = Vec::new();
        p.wait(Some(now_us() + 1_000_000), now_us(), &mut ready)
            .unwrap();
        assert_eq!(ready, vec![7]);
        // Level-triggered: still readable because nothing was read.
        p.wait(Some(now_us() + 1_000_000), now_us(), &mut ready)
            .unwrap();
        assert_eq!(ready, vec![7]);
        p.remove(b.as_raw_fd());
        p.wait(Some(now_us() + 1000), now_us(), &mut ready).unwrap();
        assert!(ready.is_empty());
    }
}
