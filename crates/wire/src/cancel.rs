//! CancelRequest: a new socket to the same server carrying the backend pid and secret.
//!
//! The server answers nothing; it closes the socket after acting on the request, so
//! `cancel` waits for that close (as libpq does) to know the request was processed.
//! Sent unencrypted: the server handles cancel requests before any pg_hba.conf check.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use bytes::BytesMut;

use crate::error::Error;

/// Where the original connection went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CancelAddr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Everything needed to cancel the query running on one connection; cheap to clone and
/// usable from any thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelToken {
    pub(crate) addr: CancelAddr,
    pub(crate) process_id: i32,
    pub(crate) secret_key: i32,
    pub(crate) timeout: Option<Duration>,
}

impl CancelToken {
    /// Backend pid of the connection this token cancels.
    pub fn process_id(&self) -> i32 {
        self.process_id
    }

    /// Sends the CancelRequest and waits for the server to close the socket. Success
    /// does not mean a query was running (the server never says).
    pub fn cancel(&self) -> Result<(), Error> {
        let mut msg = BytesMut::with_capacity(16);
        postgres_protocol::message::frontend::cancel_request(
            self.process_id,
            self.secret_key,
            &mut msg,
        );
        let timeout = self.timeout.unwrap_or(Duration::from_secs(10));
        let run = |s: &mut dyn ReadWrite| -> io::Result<()> {
            s.write_all(&msg)?;
            let mut b = [0u8; 16];
            // Wait for EOF (or anything) from the server.
            let _ = s.read(&mut b);
            Ok(())
        };
        match &self.addr {
            CancelAddr::Tcp(a) => {
                let mut s = TcpStream::connect_timeout(a, timeout).map_err(Error::Io)?;
                s.set_read_timeout(Some(timeout)).map_err(Error::Io)?;
                s.set_write_timeout(Some(timeout)).map_err(Error::Io)?;
                let _ = s.set_nodelay(true);
                run(&mut s).map_err(Error::Io)
            }
            CancelAddr::Unix(p) => {
                let mut s = UnixStream::connect(p).map_err(Error::Io)?;
                s.set_read_timeout(Some(timeout)).map_err(Error::Io)?;
                s.set_write_timeout(Some(timeout)).map_err(Error::Io)?;
                run(&mut s).map_err(Error::Io)
            }
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}
