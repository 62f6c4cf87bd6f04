//! The byte stream under a connection: TCP or Unix socket, optionally wrapped in rustls.
//!
//! Works in blocking and non-blocking mode alike. With TLS, plaintext may sit decrypted
//! inside rustls after the socket has been drained, and ciphertext may wait inside
//! rustls for a writable socket; `read_into` therefore drains every decrypted byte and
//! `flush` reports whether rustls still holds output, so a level-triggered poller never
//! misses data.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, BytesMut};
use rustls::ClientConnection;

/// Plain socket.
#[derive(Debug)]
pub(crate) enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    pub(crate) fn set_nonblocking(&self, nb: bool) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_nonblocking(nb),
            Socket::Unix(s) => s.set_nonblocking(nb),
        }
    }

    pub(crate) fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Socket::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }
}

/// Ends a connection's socket from another thread ([`crate::Connection::interrupter`]): a
/// read or write blocked on it returns at once (EOF or an error), as if the server had
/// closed it. It holds its own handle on the socket, so it never touches another one.
#[derive(Debug)]
pub struct Interrupter(Socket);

impl Interrupter {
    pub(crate) fn of(sock: &Socket) -> io::Result<Interrupter> {
        Ok(Interrupter(match sock {
            Socket::Tcp(s) => Socket::Tcp(s.try_clone()?),
            Socket::Unix(s) => Socket::Unix(s.try_clone()?),
        }))
    }

    /// Shuts the socket down both ways (errors ignored: the socket may be closed already).
    pub fn interrupt(&self) {
        let _ = match &self.0 {
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// Socket plus optional TLS session.
#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) sock: Socket,
    pub(crate) tls: Option<Box<ClientConnection>>,
    nonblocking: bool,
}

/// rustls errors travel inside `io::Error` (as rustls itself does); [`crate::Error::io`]
/// unwraps them into [`crate::Error::Tls`].
fn tls_err(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl Stream {
    pub(crate) fn plain(sock: Socket) -> Stream {
        Stream {
            sock,
            tls: None,
            nonblocking: false,
        }
    }

    pub(crate) fn set_nonblocking(&mut self, nb: bool) -> io::Result<()> {
        self.sock.set_nonblocking(nb)?;
        self.nonblocking = nb;
        Ok(())
    }

    pub(crate) fn is_nonblocking(&self) -> bool {
        self.nonblocking
    }

    /// Runs the TLS handshake to completion (blocking socket, deadline via timeouts).
    pub(crate) fn handshake(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(());
        };
        while tls.is_handshaking() {
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "timeout expired"));
                }
            }
            let (_, _) = tls.complete_io(&mut self.sock)?;
        }
        // Flush anything left (e.g. Finished) so the server sees it.
        while tls.wants_write() {
            tls.write_tls(&mut self.sock)?;
        }
        Ok(())
    }

    /// Decrypted bytes waiting inside rustls (0 without TLS).
    pub(crate) fn tls_buffered_plaintext(&mut self) -> usize {
        match self.tls.as_mut() {
            Some(tls) => tls
                .process_new_packets()
                .map(|s| s.plaintext_bytes_to_read())
                .unwrap_or(0),
            None => 0,
        }
    }

    /// Reads what is available into `buf`.
    ///
    /// `Ok(0)` = end of stream. In non-blocking mode `WouldBlock` means nothing was
    /// available. With TLS every decrypted byte is drained into `buf`.
    pub(crate) fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if buf.capacity() - buf.len() < crate::reader::READ_CHUNK {
            buf.reserve(crate::reader::READ_CHUNK);
        }
        match self.tls.as_mut() {
            None => read_plain(&mut self.sock, buf),
            Some(tls) => read_tls(tls, &mut self.sock, buf),
        }
    }

    /// Writes as much of `buf` as the socket takes, advancing it. `Ok(true)` when
    /// everything (including TLS records buffered in rustls) reached the socket;
    /// `Ok(false)` when the socket would block (non-blocking mode) and output remains.
    pub(crate) fn flush_from(&mut self, buf: &mut BytesMut) -> io::Result<bool> {
        match self.tls.as_mut() {
            None => {
                while !buf.is_empty() {
                    match self.sock.write(buf) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => buf.advance(n),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                        Err(e) => return Err(e),
                    }
                }
                Ok(true)
            }
            Some(tls) => loop {
                if !buf.is_empty() {
                    let n = tls.writer().write(buf)?;
                    buf.advance(n);
                }
                if !tls.wants_write() {
                    if buf.is_empty() {
                        return Ok(true);
                    }
                    // rustls took nothing and has nothing to send: cannot progress.
                    return Err(io::ErrorKind::WriteZero.into());
                }
                match tls.write_tls(&mut self.sock) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) => return Err(e),
                }
            },
        }
    }

    /// Best-effort goodbye on drop: Terminate (and close_notify with TLS), written without
    /// blocking; whatever does not fit is dropped with the socket.
    pub(crate) fn say_goodbye(&mut self) {
        let mut msg = BytesMut::with_capacity(8);
        postgres_protocol::message::frontend::terminate(&mut msg);
        let _ = self.sock.set_nonblocking(true);
        match self.tls.as_mut() {
            None => {
                let _ = self.sock.write(&msg);
            }
            Some(tls) => {
                let _ = tls.writer().write_all(&msg);
                tls.send_close_notify();
                while tls.wants_write() {
                    match tls.write_tls(&mut self.sock) {
                        Ok(n) if n > 0 => {}
                        _ => break,
                    }
                }
            }
        }
    }

    /// Output is waiting inside rustls for a writable socket.
    pub(crate) fn wants_write(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.wants_write())
    }
}

fn read_plain(sock: &mut Socket, buf: &mut BytesMut) -> io::Result<usize> {
    let spare = buf.chunk_mut();
    let cap = spare.len();
    let ptr = spare.as_mut_ptr();
    loop {
        // SAFETY: `ptr` points to `cap` writable (possibly uninitialized) bytes of `buf`'s
        // spare capacity; read(2) only writes into them and returns how many it wrote.
        let n = unsafe { libc::read(sock.as_raw_fd(), ptr.cast(), cap) };
        if n >= 0 {
            let n = n as usize;
            // SAFETY: the kernel initialized exactly `n <= cap` bytes.
            unsafe { buf.advance_mut(n) };
            return Ok(n);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn read_tls(
    tls: &mut ClientConnection,
    sock: &mut Socket,
    buf: &mut BytesMut,
) -> io::Result<usize> {
    let mut total = 0;
    let mut eof = false;
    loop {
        // Drain plaintext rustls already holds.
        loop {
            if buf.capacity() - buf.len() < 4096 {
                buf.reserve(crate::reader::READ_CHUNK);
            }
            let start = buf.len();
            // Zero-fill only a bounded window (rustls wants an initialized slice).
            let room = (buf.capacity() - start).min(64 * 1024);
            buf.resize(start + room, 0);
            match tls.reader().read(&mut buf[start..]) {
                Ok(n) => {
                    buf.truncate(start + n);
                    if n == 0 {
                        // close_notify received.
                        return Ok(total);
                    }
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    buf.truncate(start);
                    break;
                }
                Err(e) => {
                    buf.truncate(start);
                    if e.kind() == io::ErrorKind::UnexpectedEof {
                        // Peer closed without close_notify: treat as EOF.
                        return Ok(total);
                    }
                    return Err(e);
                }
            }
        }
        if total > 0 || eof {
            // Opportunistically send anything the read produced (alerts, key updates).
            if tls.wants_write() {
                match tls.write_tls(sock) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(total);
        }
        match tls.read_tls(sock) {
            Ok(0) => eof = true,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        tls.process_new_packets().map_err(tls_err)?;
    }
}
