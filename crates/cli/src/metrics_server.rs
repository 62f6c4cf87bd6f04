//! `run --prometheus [HOST]:PORT`: a tiny HTTP endpoint serving live metrics in Prometheus'
//! text format (`hotbench_report::text::prometheus`), for Grafana during long runs. std's
//! `TcpListener`, one request per connection, each connection on its own thread with a
//! 2-second deadline, at most [`MAX_CONNECTIONS`] at once (more are turned away at once): an
//! idle or slow client can no longer hold up a scrape. It lives as long as the process.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hotbench_report::text::prometheus::{exposition, LiveMetrics, CONTENT_TYPE};

use crate::fail::{Fail, Result};

/// Connections served at once; beyond it a new one is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;

/// The longest a connection may take to send its request and read the answer.
const DEADLINE: Duration = Duration::from_secs(2);

pub struct MetricsServer {
    state: Arc<Mutex<LiveMetrics>>,
    pub addr: SocketAddr,
}

/// `:9187` (all interfaces), `127.0.0.1:9187`, `[::1]:9187`.
pub(crate) fn parse_addr(spec: &str) -> Result<SocketAddr> {
    let full = if spec.starts_with(':') {
        format!("0.0.0.0{spec}")
    } else {
        spec.to_string()
    };
    full.parse().map_err(|_| {
        Fail::input(format!(
            "invalid --prometheus \"{spec}\": expected [HOST]:PORT such as :9187 or 127.0.0.1:9187"
        ))
    })
}

impl MetricsServer {
    /// Binds and starts serving `initial` (updated with [`MetricsServer::update`]).
    pub fn start(spec: &str, initial: LiveMetrics) -> Result<MetricsServer> {
        let addr = parse_addr(spec)?;
        let listener = TcpListener::bind(addr).map_err(|e| {
            Fail::input(format!("could not listen on {addr} for --prometheus: {e}"))
        })?;
        let addr = listener.local_addr().unwrap_or(addr);
        let state = Arc::new(Mutex::new(initial));
        let shared = Arc::clone(&state);
        std::thread::Builder::new()
            .name("hotbench-prometheus".into())
            .spawn(move || {
                let active = Arc::new(AtomicUsize::new(0));
                for stream in listener.incoming().flatten() {
                    if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                        active.fetch_sub(1, Ordering::SeqCst);
                        let _ = turn_away(stream);
                        continue;
                    }
                    let (state, count) = (Arc::clone(&shared), Arc::clone(&active));
                    let spawned = std::thread::Builder::new()
                        .name("hotbench-prometheus-conn".into())
                        .spawn(move || {
                            let _ = serve(stream, &state);
                            count.fetch_sub(1, Ordering::SeqCst);
                        });
                    if spawned.is_err() {
                        active.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })
            .map_err(|e| Fail::run(format!("could not start the metrics thread: {e}")))?;
        Ok(MetricsServer { state, addr })
    }

    pub fn update(&self, f: impl FnOnce(&mut LiveMetrics)) {
        match self.state.lock() {
            Ok(mut m) => f(&mut m),
            Err(p) => f(&mut p.into_inner()),
        }
    }
}

/// Too many connections: a short 503; what the client already sent is drained (briefly) so
/// that closing does not reset the connection before it reads the answer.
fn turn_away(mut s: TcpStream) -> std::io::Result<()> {
    let brief = Some(Duration::from_millis(50));
    s.set_write_timeout(brief)?;
    s.set_read_timeout(brief)?;
    s.write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )?;
    s.shutdown(std::net::Shutdown::Write)?;
    let _ = s.read(&mut [0u8; 4096]);
    Ok(())
}

/// Answers one request: the metrics for `GET /metrics` (and `/`), 404 otherwise. The
/// request must arrive within [`DEADLINE`] in all, however slowly it trickles.
fn serve(mut s: TcpStream, state: &Mutex<LiveMetrics>) -> std::io::Result<()> {
    let deadline = Instant::now() + DEADLINE;
    s.set_write_timeout(Some(DEADLINE))?;
    let mut buf = [0u8; 4096];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") && got.len() < 16 * 1024 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(left))?;
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let body = match state.lock() {
        Ok(m) => exposition(&m),
        Err(p) => exposition(&p.into_inner()),
    };
    let body = body.as_str();
    let line = String::from_utf8_lossy(&got);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let (status, ctype, text) = if path == "/metrics" || path == "/" {
        ("200 OK", CONTENT_TYPE, body)
    } else {
        (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: try /metrics\n",
        )
    };
    write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    s.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_live_metrics() {
        let srv = MetricsServer::start(
            "127.0.0.1:0",
            LiveMetrics {
                clients: 3,
                ..Default::default()
            },
        )
        .unwrap();
        let first = get(srv.addr, "/metrics");
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
        assert!(first.contains("hotbench_clients 3\n"));
        srv.update(|m| {
            m.add_interval(
                1.0,
                &hotbench_results::IntervalStats {
                    cnt: 42,
                    tps: 42.0,
                    ..Default::default()
                },
            )
        });
        let second = get(srv.addr, "/metrics");
        assert!(
            second.contains("hotbench_transactions_total 42\n"),
            "{second}"
        );
        assert!(get(srv.addr, "/other").starts_with("HTTP/1.1 404"));
    }

    /// Issue 13, item 13: idle and trickling connections do not hold up a scrape.
    #[test]
    fn idle_and_slow_clients_do_not_delay_scrapes() {
        let srv = MetricsServer::start("127.0.0.1:0", LiveMetrics::default()).unwrap();
        let idle: Vec<TcpStream> = (0..50)
            .map(|_| TcpStream::connect(srv.addr).unwrap())
            .collect();
        let mut slow: Vec<TcpStream> = (0..5)
            .map(|_| TcpStream::connect(srv.addr).unwrap())
            .collect();
        for s in &mut slow {
            s.write_all(b"GET /met").unwrap();
        }
        // One idle connection used to cost a scrape 2 s: 55 would cost 110 s.
        let started = Instant::now();
        for _ in 0..3 {
            assert!(get(srv.addr, "/metrics").starts_with("HTTP/1.1 200 OK"));
        }
        assert!(
            started.elapsed() < Duration::from_millis(1900),
            "scrapes took {:?} beside idle connections",
            started.elapsed()
        );
        // A trickling client is cut off at the deadline instead of holding its thread.
        let mut s = TcpStream::connect(srv.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let t = Instant::now();
        s.write_all(b"GET /").unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        drop((idle, slow));
    }

    #[test]
    fn connections_beyond_the_bound_are_turned_away() {
        let srv = MetricsServer::start("127.0.0.1:0", LiveMetrics::default()).unwrap();
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| TcpStream::connect(srv.addr).unwrap())
            .collect();
        // Poll: the accept thread counts them as they arrive.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let answer = get(srv.addr, "/metrics");
            if answer.starts_with("HTTP/1.1 503") {
                break;
            }
            assert!(Instant::now() < deadline, "never turned away: {answer}");
        }
        drop(held);
    }

    #[test]
    fn bad_addresses_are_input_errors() {
        assert!(parse_addr(":9187").is_ok());
        assert!(parse_addr("[::1]:9187").is_ok());
        let e = parse_addr("nine").unwrap_err();
        assert_eq!(e.code, 1);
        assert!(e.message.contains("invalid --prometheus \"nine\""));
    }
}
