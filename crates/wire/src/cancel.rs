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
        let timeout = self.timeout.unwrap_or(Duration::from_secs(10));
        let mut s = self.send(timeout).map_err(Error::Io)?;
        s.set_timeout(timeout).map_err(Error::Io)?;
        let mut b = [0u8; 16];
        // Wait for EOF (or anything) from the server.
        let _ = s.read(&mut b);
        Ok(())
    }
}

/// Sends every token's CancelRequest, then waits for the servers' closes, all within
/// `budget` in all: a stalled server (a stopped PgBouncer or postmaster still accepts the
/// connection and never answers) costs the caller `budget` once, not `timeout` per query
/// (the end of a run cancels every client's query at once). Requests not yet sent when the
/// budget is spent are dropped. Returns how many requests the servers acknowledged.
pub fn cancel_all(tokens: &[CancelToken], budget: Duration) -> usize {
    let deadline = std::time::Instant::now() + budget;
    let left = || deadline.saturating_duration_since(std::time::Instant::now());
    let mut sent: Vec<Box<dyn Sink>> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let wait = left();
        if wait.is_zero() {
            break;
        }
        if let Ok(s) = t.send(wait.min(t.timeout.unwrap_or(wait))) {
            sent.push(s);
        }
    }
    let mut acknowledged = 0;
    for mut s in sent {
        let wait = left();
        if wait.is_zero() || s.set_timeout(wait).is_err() {
            break;
        }
        let mut b = [0u8; 16];
        // EOF (or anything) means the server read the request.
        if s.read(&mut b).is_ok() {
            acknowledged += 1;
        }
    }
    acknowledged
}

/// An open cancel socket whose read timeout can be set.
trait Sink: Read {
    fn set_timeout(&self, d: Duration) -> io::Result<()>;
}

impl Sink for TcpStream {
    fn set_timeout(&self, d: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(d))
    }
}

impl Sink for UnixStream {
    fn set_timeout(&self, d: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(d))
    }
}

impl CancelToken {
    /// Opens a socket to the server and writes the CancelRequest (`timeout` bounds the
    /// TCP connect and the write), without waiting for the answer.
    fn send(&self, timeout: Duration) -> io::Result<Box<dyn Sink>> {
        let mut msg = BytesMut::with_capacity(16);
        postgres_protocol::message::frontend::cancel_request(
            self.process_id,
            self.secret_key,
            &mut msg,
        );
        match &self.addr {
            CancelAddr::Tcp(a) => {
                let mut s = TcpStream::connect_timeout(a, timeout)?;
                s.set_write_timeout(Some(timeout))?;
                let _ = s.set_nodelay(true);
                s.write_all(&msg)?;
                Ok(Box::new(s))
            }
            CancelAddr::Unix(p) => {
                let mut s = UnixStream::connect(p)?;
                s.set_write_timeout(Some(timeout))?;
                s.write_all(&msg)?;
                Ok(Box::new(s))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;
    use std::time::Instant;

    fn token(path: &std::path::Path) -> CancelToken {
        CancelToken {
            addr: CancelAddr::Unix(path.to_path_buf()),
            process_id: 1,
            secret_key: 2,
            timeout: Some(Duration::from_secs(10)),
        }
    }

    fn socket(tag: &str) -> (PathBuf, UnixListener) {
        let dir =
            std::env::temp_dir().join(format!("hotbench-cancel-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".s.PGSQL.5432");
        let l = UnixListener::bind(&path).unwrap();
        (path, l)
    }

    /// A stalled server (listening, never answering, as a SIGSTOPped postmaster or
    /// PgBouncer) costs the budget once for all requests, not each token's 10 s.
    #[test]
    fn cancel_all_is_bounded_by_its_budget_when_the_server_never_answers() {
        let (path, _listener) = socket("stalled");
        let tokens = vec![token(&path); 5];
        let t0 = Instant::now();
        let acked = cancel_all(&tokens, Duration::from_millis(300));
        let took = t0.elapsed();
        assert_eq!(acked, 0);
        assert!(took < Duration::from_secs(2), "{took:?}");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn cancel_all_counts_the_requests_the_server_read() {
        let (path, listener) = socket("answering");
        let server = std::thread::spawn(move || {
            let mut got = Vec::new();
            for _ in 0..3 {
                let (mut s, _) = listener.accept().unwrap();
                let mut b = [0u8; 16];
                s.read_exact(&mut b).unwrap();
                got.push(b);
            }
            got
        });
        let acked = cancel_all(&vec![token(&path); 3], Duration::from_secs(10));
        assert_eq!(acked, 3);
        let got = server.join().unwrap();
        // Length 16, the cancel request code 80877102, pid 1, key 2.
        assert_eq!(&got[0][..8], &[0, 0, 0, 16, 4, 210, 22, 46]);
        assert_eq!(&got[0][8..], &[0, 0, 0, 1, 0, 0, 0, 2]);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
