//! An established session: the object the engine drives and the blocking API runs on.
//!
//! After start-up a [`Connection`] exposes its socket for a poller (raw fd,
//! non-blocking mode) plus buffered, TLS-transparent reads and writes:
//!
//! ```text
//! conn.set_nonblocking(true)?;                 // register conn.as_raw_fd() with epoll/mio
//! wire::encode::query(conn.out_buf(), sql)?;   // or parse/bind/execute/sync
//! if !conn.flush()? { /* wait for WRITABLE, call flush() again */ }
//! // on READABLE:
//! match conn.fill() { Ok(0) => lost, Ok(_) => {}, Err(e) if would_block(&e) => {}, Err(e) => lost }
//! while let Some(msg) = conn.next_message()? { /* DataRow, CommandComplete, ReadyForQuery … */ }
//! ```
//!
//! `fill` drains every decrypted byte out of rustls, so with a level-triggered poller
//! "readable" never hides buffered plaintext; still, after `fill` the caller must pop
//! messages until `next_message` returns `None`. With TLS, `flush` may return `false`
//! while rustls holds encrypted output; [`Connection::wants_write`] says so.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use bytes::BytesMut;
use postgres_protocol::message::backend::Message;

use crate::cancel::CancelToken;
use crate::error::{DbError, Error};
use crate::reader::MessageReader;
use crate::stream::Stream;

/// Receives NoticeResponses met by the blocking API.
pub type NoticeHandler = Box<dyn FnMut(&DbError) + Send>;

/// Notices kept when no handler is set (oldest dropped beyond this).
pub const MAX_KEPT_NOTICES: usize = 256;

/// Transaction status from the last ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    /// `I`: not in a transaction block.
    Idle,
    /// `T`: in a transaction block.
    InTransaction,
    /// `E`: in a failed transaction block (needs ROLLBACK).
    Failed,
}

impl TxStatus {
    /// From ReadyForQuery's status byte (unknown bytes count as idle).
    pub fn from_byte(b: u8) -> TxStatus {
        match b {
            b'T' => TxStatus::InTransaction,
            b'E' => TxStatus::Failed,
            _ => TxStatus::Idle,
        }
    }
}

/// An authenticated session, ready for queries.
pub struct Connection {
    pub(crate) stream: Stream,
    pub(crate) reader: MessageReader,
    pub(crate) out: BytesMut,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) cancel: CancelToken,
    pub(crate) notices: VecDeque<DbError>,
    pub(crate) notice_handler: Option<NoticeHandler>,
    pub(crate) tx_status: TxStatus,
    pub(crate) described: String,
    pub(crate) closed: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.described)
            .field("backend_pid", &self.cancel.process_id())
            .field("tls", &self.is_tls())
            .finish_non_exhaustive()
    }
}

impl AsRawFd for Connection {
    fn as_raw_fd(&self) -> RawFd {
        self.stream.sock.as_raw_fd()
    }
}

impl Connection {
    // ----- identity -------------------------------------------------------------------

    /// Backend process id (BackendKeyData).
    pub fn backend_pid(&self) -> i32 {
        self.cancel.process_id()
    }

    /// A handle that ends this connection's socket from another thread, so a query blocked
    /// on a stalled server returns at once ([`crate::Interrupter`]).
    pub fn interrupter(&self) -> io::Result<crate::Interrupter> {
        crate::stream::Interrupter::of(&self.stream.sock)
    }

    /// A token to cancel this connection's running query from anywhere (`Send + Clone`).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// A ParameterStatus value (`server_version`, `server_encoding`, `TimeZone`, …).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// All ParameterStatus values received so far.
    pub fn parameters(&self) -> &[(String, String)] {
        &self.params
    }

    /// `server_version` as reported (e.g. `17.2 (Debian 17.2-1)`), `""` if unknown.
    pub fn server_version(&self) -> &str {
        self.parameter("server_version").unwrap_or("")
    }

    /// `server_version` as libpq's PQserverVersion: 170002 for 17.2, 90624 for 9.6.24;
    /// 0 if unparsable.
    pub fn server_version_num(&self) -> u32 {
        parse_server_version(self.server_version())
    }

    /// The session runs over TLS.
    pub fn is_tls(&self) -> bool {
        self.stream.tls.is_some()
    }

    /// TLS protocol and cipher suite, if TLS.
    pub fn tls_info(&self) -> Option<String> {
        let tls = self.stream.tls.as_ref()?;
        Some(format!(
            "{:?} {:?}",
            tls.protocol_version()?,
            tls.negotiated_cipher_suite()?.suite()
        ))
    }

    /// libpq-style description of the peer (`connection to server at "h", port 5432`).
    pub fn describe(&self) -> &str {
        &self.described
    }

    /// Transaction status from the last ReadyForQuery seen by the blocking API or
    /// recorded through [`Connection::note_ready_for_query`].
    pub fn tx_status(&self) -> TxStatus {
        self.tx_status
    }

    /// Lets the engine keep `tx_status` current from its own message loop.
    pub fn note_ready_for_query(&mut self, status: u8) {
        self.tx_status = TxStatus::from_byte(status);
    }

    // ----- notices --------------------------------------------------------------------

    /// Sends notices to `handler` instead of keeping them.
    pub fn set_notice_handler(&mut self, handler: Option<NoticeHandler>) {
        self.notice_handler = handler;
    }

    /// Takes the notices kept so far (when no handler is set).
    pub fn take_notices(&mut self) -> Vec<DbError> {
        self.notices.drain(..).collect()
    }

    pub(crate) fn notice(&mut self, n: DbError) {
        match self.notice_handler.as_mut() {
            Some(h) => h(&n),
            None => {
                if self.notices.len() >= MAX_KEPT_NOTICES {
                    self.notices.pop_front();
                }
                self.notices.push_back(n);
            }
        }
    }

    // ----- raw I/O for the engine ----------------------------------------------------

    /// Switches the socket between blocking and non-blocking mode. The blocking API
    /// works in both (it polls on `WouldBlock`).
    pub fn set_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        self.stream.set_nonblocking(nonblocking)
    }

    /// Bounds every blocking read and write of the blocking API (in blocking mode).
    /// When it expires the call fails with an I/O error (`TimedOut`) and the connection
    /// counts as lost (the protocol state is unknown). `None`: wait forever.
    pub fn set_io_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.stream.sock.set_timeouts(timeout)
    }

    /// The server closed the session or an I/O error occurred: only dropping is left.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether the socket is in non-blocking mode.
    pub fn is_nonblocking(&self) -> bool {
        self.stream.is_nonblocking()
    }

    /// The outbound buffer: encode messages here (see [`crate::encode`]), then `flush`.
    pub fn out_buf(&mut self) -> &mut BytesMut {
        &mut self.out
    }

    /// Writes the outbound buffer. `Ok(true)`: all of it (and any TLS records) reached
    /// the socket. `Ok(false)`: the socket would block; wait for writability and call
    /// again. Errors mean the connection is lost.
    pub fn flush(&mut self) -> io::Result<bool> {
        self.stream.flush_from(&mut self.out)
    }

    /// Output is still pending (outbound buffer or TLS records inside rustls).
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty() || self.stream.wants_write()
    }

    /// Writes bytes from the caller's buffer, advancing it (same contract as `flush`).
    pub fn write_from(&mut self, buf: &mut BytesMut) -> io::Result<bool> {
        if !self.out.is_empty() && !self.flush()? {
            return Ok(false);
        }
        self.stream.flush_from(buf)
    }

    /// Reads what the socket has into the internal message buffer. `Ok(0)` = the server
    /// closed the connection; `Err(WouldBlock)` in non-blocking mode = nothing yet. With
    /// TLS, every decrypted byte is moved out of rustls.
    pub fn fill(&mut self) -> io::Result<usize> {
        self.reader.reserve_for_read();
        self.stream.read_into(self.reader.buffer_mut())
    }

    /// Reads what the socket has into the caller's buffer (same contract as `fill`).
    /// Bytes already buffered inside the connection are moved first.
    pub fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let pending = self.reader.buffered();
        if pending > 0 {
            buf.extend_from_slice(self.reader.buffer_mut());
            self.reader.clear();
            return Ok(pending);
        }
        self.stream.read_into(buf)
    }

    /// Pops the next complete backend message from the internal buffer (`Ok(None)`: call
    /// `fill` when readable). Malformed bytes are [`Error::Protocol`].
    #[inline]
    pub fn next_message(&mut self) -> Result<Option<Message>, Error> {
        self.reader.next_message()
    }

    /// A complete message is already buffered, or decrypted TLS bytes wait inside rustls:
    /// process before waiting for the poller.
    pub fn has_buffered_input(&mut self) -> bool {
        self.reader.has_complete_message() || self.stream.tls_buffered_plaintext() > 0
    }

    /// The internal message reader (for engines that want to own the parse loop).
    pub fn reader_mut(&mut self) -> &mut MessageReader {
        &mut self.reader
    }

    // ----- blocking helpers used by the query API ------------------------------------

    /// Waits until the fd is readable/writable (only in non-blocking mode).
    fn wait(&self, events: libc::c_short, timeout: Option<Duration>) -> io::Result<()> {
        let mut pfd = libc::pollfd {
            fd: self.as_raw_fd(),
            events,
            revents: 0,
        };
        let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as libc::c_int);
        loop {
            // SAFETY: one valid pollfd, count 1.
            let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
            if rc >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Writes the whole outbound buffer, blocking (polling in non-blocking mode).
    pub(crate) fn flush_blocking(&mut self) -> Result<(), Error> {
        if self.closed {
            return Err(Error::Closed);
        }
        loop {
            match self.flush() {
                Ok(true) => return Ok(()),
                Ok(false) => self.wait_or_timeout(libc::POLLOUT)?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait_or_timeout(libc::POLLOUT)?
                }
                Err(e) => return Err(self.lost(e)),
            }
        }
    }

    /// Next message, blocking until one is complete.
    pub(crate) fn read_message_blocking(&mut self) -> Result<Message, Error> {
        loop {
            if let Some(m) = self.reader.next_message()? {
                return Ok(m);
            }
            if self.closed {
                return Err(Error::Closed);
            }
            match self.fill() {
                Ok(0) => {
                    self.closed = true;
                    return Err(Error::Closed);
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait_or_timeout(libc::POLLIN)?
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.lost(e)),
            }
        }
    }

    /// In non-blocking mode: poll until ready. In blocking mode `WouldBlock` means a
    /// socket timeout (start-up's `connect_timeout`, or `set_io_timeout`) expired.
    fn wait_or_timeout(&mut self, events: libc::c_short) -> Result<(), Error> {
        if self.is_nonblocking() {
            self.wait(events, None).map_err(|e| self.lost(e))
        } else {
            Err(self.lost(io::Error::new(io::ErrorKind::TimedOut, "timeout expired")))
        }
    }

    fn lost(&mut self, e: io::Error) -> Error {
        self.closed = true;
        Error::io(e)
    }

    /// Sends Terminate (and TLS close_notify) and closes the socket, without blocking;
    /// errors are ignored (the server may be gone). Dropping does the same.
    pub fn close(self) {
        drop(self)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if !self.closed {
            self.stream.say_goodbye();
        }
    }
}

/// libpq's PQserverVersion arithmetic: "17.2" → 170002, "9.6.24" → 90624, "18devel" → 180000.
pub fn parse_server_version(v: &str) -> u32 {
    let mut nums = v
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    let Some(major) = v
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|s| s.parse::<u32>().ok())
    else {
        return 0;
    };
    let _ = nums.next();
    let a = nums.next().unwrap_or(0);
    if major >= 10 {
        major * 10000 + a
    } else {
        let b = nums.next().unwrap_or(0);
        major * 10000 + a * 100 + b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_version_numbers() {
        assert_eq!(
            parse_server_version("17.2 (Debian 17.2-1.pgdg120+1)"),
            170002
        );
        assert_eq!(parse_server_version("16.0"), 160000);
        assert_eq!(parse_server_version("18devel"), 180000);
        assert_eq!(parse_server_version("9.6.24"), 90624);
        assert_eq!(parse_server_version(""), 0);
        assert_eq!(parse_server_version("x"), 0);
    }
}
