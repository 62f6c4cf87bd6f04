//! `run --prometheus [HOST]:PORT`: a tiny HTTP endpoint serving live metrics in Prometheus'
//! text format (`hotbench_report::prometheus`), for Grafana during long runs. One thread,
//! std's `TcpListener`, one request per connection; it lives as long as the process.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hotbench_report::prometheus::{exposition, LiveMetrics};

use crate::fail::{Fail, Result};

pub struct MetricsServer {
    state: Arc<Mutex<LiveMetrics>>,
    pub addr: SocketAddr,
}

/// `:9187` (all interfaces), `127.0.0.1:9187`, `[::1]:9187`.
fn parse_addr(spec: &str) -> Result<SocketAddr> {
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
                for stream in listener.incoming().flatten() {
                    let body = match shared.lock() {
                        Ok(m) => exposition(&m),
                        Err(p) => exposition(&p.into_inner()),
                    };
                    let _ = serve(stream, &body);
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

/// Answers one request: the metrics for `GET /metrics` (and `/`), 404 otherwise.
fn serve(mut s: TcpStream, body: &str) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    s.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = [0u8; 4096];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") && got.len() < 16 * 1024 {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&got);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let (status, ctype, text) = if path == "/metrics" || path == "/" {
        ("200 OK", "text/plain; version=0.0.4; charset=utf-8", body)
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
                &hotbench_stats::IntervalStats {
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

    #[test]
    fn bad_addresses_are_input_errors() {
        assert!(parse_addr(":9187").is_ok());
        assert!(parse_addr("[::1]:9187").is_ok());
        let e = parse_addr("nine").unwrap_err();
        assert_eq!(e.code, 1);
        assert!(e.message.contains("invalid --prometheus \"nine\""));
    }
}
