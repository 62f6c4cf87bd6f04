//! The null server's socket loop: one thread, one level-triggered epoll set over the listener
//! and every connection. A readable connection is read once into its buffer, every complete
//! message is answered by its `Session`, and all the replies go out in one write, so a
//! transaction costs the server one read and one write (plus its share of an `epoll_wait`).

use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::os::unix::net::UnixListener;

use crate::session::{Flow, Session};

/// Tokens of the listeners (connections are numbered from 0).
const TCP_LISTENER: u64 = u64::MAX;
const UNIX_LISTENER: u64 = u64::MAX - 1;

/// Where the server listens: TCP, and optionally a Unix socket as PostgreSQL's
/// (`DIR/.s.PGSQL.PORT`), which costs both sides far less kernel work per message.
pub struct Listeners {
    pub tcp: TcpListener,
    pub unix: Option<UnixListener>,
}
/// Room kept free in a connection's input buffer for one read.
const READ_ROOM: usize = 64 * 1024;

struct Conn {
    fd: RawFd,
    session: Session,
    input: Vec<u8>,
    /// Replies the socket did not take yet (then the connection waits for EPOLLOUT).
    pending: Vec<u8>,
    /// Registered for EPOLLOUT (instead of EPOLLIN) because `pending` is not empty.
    blocked: bool,
    closing: bool,
}

/// How the server runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Poll without sleeping (the server owns its core): clients' sends never pay for
    /// waking it up.
    pub busy_poll: bool,
    /// Event loops (threads), each accepting its share of the connections (at least one):
    /// one per server core, so a many-core machine's server outruns one client core.
    pub threads: usize,
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Serves the listeners until an unrecoverable error (it never returns otherwise), on
/// `opts.threads` event loops that share the listeners (EPOLLEXCLUSIVE: one loop is woken
/// per new connection, and keeps it).
pub fn serve(listeners: Listeners, opts: Options) -> io::Result<()> {
    let mut extra = Vec::new();
    let n = opts.threads.max(1);
    for i in 1..n {
        let copy = Listeners {
            tcp: listeners.tcp.try_clone()?,
            unix: match &listeners.unix {
                Some(u) => Some(u.try_clone()?),
                None => None,
            },
        };
        let t = std::thread::Builder::new()
            .name(format!("null-server-{i}"))
            .spawn(move || event_loop(copy, opts))
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("could not start event loop thread {} of {n}: {e}", i + 1),
                )
            })?;
        extra.push(t);
    }
    event_loop(listeners, opts)
}

fn event_loop(listeners: Listeners, opts: Options) -> io::Result<()> {
    let Listeners { tcp, unix } = listeners;
    tcp.set_nonblocking(true)?;
    // SAFETY: plain syscalls on fds this function owns.
    let epfd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
    listen(epfd, tcp.as_raw_fd(), TCP_LISTENER)?;
    if let Some(u) = &unix {
        u.set_nonblocking(true)?;
        listen(epfd, u.as_raw_fd(), UNIX_LISTENER)?;
    }
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut events: Vec<libc::epoll_event> = Vec::with_capacity(1024);
    let mut out = Vec::with_capacity(READ_ROOM);
    let mut next_pid = 1000u32;
    loop {
        events.clear();
        let timeout = if opts.busy_poll { 0 } else { -1 };
        // SAFETY: the buffer has capacity for the number of events asked.
        let n = unsafe {
            libc::epoll_wait(
                epfd,
                events.as_mut_ptr(),
                events.capacity() as libc::c_int,
                timeout,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // SAFETY: epoll_wait initialised the first n entries.
        unsafe { events.set_len(n as usize) };
        for ev in &events {
            let token = ev.u64;
            if token == TCP_LISTENER || token == UNIX_LISTENER {
                let accepted = accepted(&tcp, unix.as_ref(), token == UNIX_LISTENER);
                for fd in accepted {
                    add_conn(fd, epfd, &mut conns, &mut free, &mut next_pid);
                }
                continue;
            }
            let i = token as usize;
            let Some(conn) = conns.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            let keep = if conn.blocked {
                flush_pending(conn, epfd, i as u64)
            } else {
                on_readable(conn, epfd, i as u64, &mut out)
            };
            if !keep {
                if let Some(c) = conns[i].take() {
                    // SAFETY: closing a connection fd we own (removes it from the epoll set).
                    unsafe { libc::close(c.fd) };
                }
                free.push(i);
            }
        }
        if events.len() == events.capacity() {
            events.reserve(events.capacity());
        }
    }
}

/// Watches a listener shared with the other loops.
fn listen(epfd: RawFd, fd: RawFd, token: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event {
        events: (libc::EPOLLIN | libc::EPOLLEXCLUSIVE) as u32,
        u64: token,
    };
    // SAFETY: ev outlives the call.
    cvt(unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
    Ok(())
}

fn ctl(epfd: RawFd, op: libc::c_int, fd: RawFd, token: u64, writable: bool) -> io::Result<()> {
    let events = if writable {
        libc::EPOLLOUT as u32
    } else {
        libc::EPOLLIN as u32
    };
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: ev outlives the call.
    cvt(unsafe { libc::epoll_ctl(epfd, op, fd, &mut ev) })?;
    Ok(())
}

/// Every connection waiting on the listener, non-blocking.
fn accepted(tcp: &TcpListener, unix: Option<&UnixListener>, from_unix: bool) -> Vec<RawFd> {
    let mut fds = Vec::new();
    match unix {
        Some(u) if from_unix => {
            while let Ok((s, _)) = u.accept() {
                if s.set_nonblocking(true).is_ok() {
                    fds.push(s.into_raw_fd());
                }
            }
        }
        _ => {
            while let Ok((s, _)) = tcp.accept() {
                let _ = s.set_nodelay(true);
                if s.set_nonblocking(true).is_ok() {
                    fds.push(s.into_raw_fd());
                }
            }
        }
    }
    fds
}

fn add_conn(
    fd: RawFd,
    epfd: RawFd,
    conns: &mut Vec<Option<Conn>>,
    free: &mut Vec<usize>,
    next_pid: &mut u32,
) {
    let i = free.pop().unwrap_or_else(|| {
        conns.push(None);
        conns.len() - 1
    });
    if ctl(epfd, libc::EPOLL_CTL_ADD, fd, i as u64, false).is_err() {
        // SAFETY: the fd is ours and registered nowhere.
        unsafe { libc::close(fd) };
        free.push(i);
        return;
    }
    *next_pid = next_pid.wrapping_add(1);
    conns[i] = Some(Conn {
        fd,
        session: Session::new(*next_pid),
        input: Vec::with_capacity(READ_ROOM),
        pending: Vec::new(),
        blocked: false,
        closing: false,
    });
}

/// Reads once, answers every complete message with one write. False: close it.
fn on_readable(conn: &mut Conn, epfd: RawFd, token: u64, out: &mut Vec<u8>) -> bool {
    conn.input.reserve(READ_ROOM);
    let len = conn.input.len();
    let room = conn.input.capacity() - len;
    // SAFETY: reading into the vector's spare capacity, then extending its length by what
    // the kernel wrote.
    let n = unsafe { libc::read(conn.fd, conn.input.as_mut_ptr().add(len).cast(), room) };
    if n == 0 {
        return false;
    }
    if n < 0 {
        let e = io::Error::last_os_error();
        return matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        );
    }
    // SAFETY: the kernel initialised n bytes after len.
    unsafe { conn.input.set_len(len + n as usize) };
    out.clear();
    let (used, flow) = conn.session.handle(&conn.input, out);
    conn.input.drain(..used);
    if flow == Flow::Close {
        conn.closing = true;
    }
    if !out.is_empty() {
        conn.pending.extend_from_slice(out);
        return flush_pending(conn, epfd, token);
    }
    !conn.closing
}

/// Writes what is pending; waits for EPOLLOUT if the socket is full. False: close it.
fn flush_pending(conn: &mut Conn, epfd: RawFd, token: u64) -> bool {
    let mut done = 0;
    while done < conn.pending.len() {
        let rest = &conn.pending[done..];
        // SAFETY: sending from a live buffer; MSG_NOSIGNAL: a gone client is an error, not
        // a SIGPIPE.
        let n = unsafe {
            libc::send(
                conn.fd,
                rest.as_ptr().cast(),
                rest.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => {
                    conn.pending.drain(..done);
                    if !conn.blocked {
                        conn.blocked = true;
                        return ctl(epfd, libc::EPOLL_CTL_MOD, conn.fd, token, true).is_ok();
                    }
                    return true;
                }
                _ => return false,
            }
        }
        done += n as usize;
    }
    conn.pending.clear();
    if conn.blocked {
        // Back to waiting for input.
        conn.blocked = false;
        return ctl(epfd, libc::EPOLL_CTL_MOD, conn.fd, token, false).is_ok() && !conn.closing;
    }
    !conn.closing
}
