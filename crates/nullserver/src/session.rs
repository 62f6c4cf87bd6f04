//! One client session of the null server, without I/O: bytes in, reply bytes out. It takes
//! the start-up packet (refusing SSL and GSS encryption, trusting everyone), then simple
//! queries and the extended protocol (Parse, Bind, Describe, Execute, Close, Sync, Flush),
//! answering each statement with its canned reply (`canned.rs`). The socket loop in
//! `serve.rs` feeds it; unit tests feed it bytes.

use std::collections::HashMap;
use std::rc::Rc;

use crate::canned::{message, reply, Canned};

/// What the socket loop must do after `Session::handle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Send the output and wait for more input.
    Continue,
    /// Send the output, then close the connection (Terminate, CancelRequest, bad input).
    Close,
}

const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;
const CANCEL_REQUEST: u32 = 80_877_102;

/// Parameters reported after authentication, as a PostgreSQL 18 server with pgbench's
/// expectations (UTF-8, ISO dates, standard strings).
const PARAMETERS: &[(&str, &str)] = &[
    ("server_version", "18.0 (hotbench null server)"),
    ("server_encoding", "UTF8"),
    ("client_encoding", "UTF8"),
    ("DateStyle", "ISO, MDY"),
    ("integer_datetimes", "on"),
    ("IntervalStyle", "postgres"),
    ("standard_conforming_strings", "on"),
    ("TimeZone", "UTC"),
    ("is_superuser", "on"),
    ("in_hot_standby", "off"),
];

pub struct Session {
    started: bool,
    /// Transaction status for ReadyForQuery.
    tx: u8,
    /// An extended-protocol error happened: ignore messages until Sync.
    skipping: bool,
    statements: HashMap<Vec<u8>, Rc<Canned>>,
    portals: HashMap<Vec<u8>, Rc<Canned>>,
    /// The unnamed portal (the common case: no hashing).
    unnamed: Option<Rc<Canned>>,
    pid: u32,
}

impl Session {
    pub fn new(pid: u32) -> Self {
        Session {
            started: false,
            tx: b'I',
            skipping: false,
            statements: HashMap::new(),
            portals: HashMap::new(),
            unnamed: None,
            pid,
        }
    }

    /// Handles every complete message at the start of `input`, appending the replies to
    /// `out`; returns how many bytes were consumed and what to do next.
    pub fn handle(&mut self, input: &[u8], out: &mut Vec<u8>) -> (usize, Flow) {
        let mut used = 0;
        loop {
            let rest = &input[used..];
            let (n, flow) = if self.started {
                if rest.len() < 5 {
                    return (used, Flow::Continue);
                }
                let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
                if len < 4 {
                    return (used, Flow::Close);
                }
                if rest.len() < len + 1 {
                    return (used, Flow::Continue);
                }
                (len + 1, self.message(rest[0], &rest[5..len + 1], out))
            } else {
                if rest.len() < 8 {
                    return (used, Flow::Continue);
                }
                let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
                if !(8..=10_000).contains(&len) {
                    return (used, Flow::Close);
                }
                if rest.len() < len {
                    return (used, Flow::Continue);
                }
                let code = u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]);
                (len, self.startup(code, out))
            };
            used += n;
            if flow == Flow::Close {
                return (used, flow);
            }
        }
    }

    fn startup(&mut self, code: u32, out: &mut Vec<u8>) -> Flow {
        match code {
            SSL_REQUEST | GSSENC_REQUEST => {
                out.push(b'N');
                Flow::Continue
            }
            CANCEL_REQUEST => Flow::Close,
            c if c >> 16 == 3 => {
                self.started = true;
                message(out, b'R', &0u32.to_be_bytes());
                for (name, value) in PARAMETERS {
                    let mut b = Vec::with_capacity(name.len() + value.len() + 2);
                    b.extend_from_slice(name.as_bytes());
                    b.push(0);
                    b.extend_from_slice(value.as_bytes());
                    b.push(0);
                    message(out, b'S', &b);
                }
                let mut key = self.pid.to_be_bytes().to_vec();
                key.extend_from_slice(&0x5eed_u32.to_be_bytes());
                message(out, b'K', &key);
                self.ready(out);
                Flow::Continue
            }
            _ => {
                error(out, "08P01", "unsupported frontend protocol");
                Flow::Close
            }
        }
    }

    fn ready(&self, out: &mut Vec<u8>) {
        message(out, b'Z', &[self.tx]);
    }

    fn message(&mut self, tag: u8, body: &[u8], out: &mut Vec<u8>) -> Flow {
        if self.skipping && tag != b'S' && tag != b'X' {
            return Flow::Continue;
        }
        match tag {
            b'Q' => self.simple_query(cstr(body).0, out),
            b'P' => {
                let (name, rest) = cstr(body);
                let (sql, _) = cstr(rest);
                let canned = Rc::new(reply(&String::from_utf8_lossy(sql)));
                if name.is_empty() || !self.statements.contains_key(name) {
                    self.statements.insert(name.to_vec(), canned);
                    message(out, b'1', &[]);
                } else {
                    self.fail(out, "42P05", "prepared statement already exists");
                }
            }
            b'B' => {
                let (portal, rest) = cstr(body);
                let (stmt, _) = cstr(rest);
                match self.statements.get(stmt) {
                    Some(c) => {
                        let c = c.clone();
                        if portal.is_empty() {
                            self.unnamed = Some(c);
                        } else {
                            self.portals.insert(portal.to_vec(), c);
                        }
                        message(out, b'2', &[]);
                    }
                    None => self.fail(out, "26000", "prepared statement does not exist"),
                }
            }
            b'D' => {
                let kind = body.first().copied().unwrap_or(b'P');
                let (name, _) = cstr(body.get(1..).unwrap_or(&[]));
                let found = if kind == b'S' {
                    self.statements.get(name).cloned()
                } else {
                    self.portal(name)
                };
                match found {
                    Some(c) => {
                        if kind == b'S' {
                            let mut b = c.params.to_be_bytes().to_vec();
                            for _ in 0..c.params {
                                b.extend_from_slice(&25u32.to_be_bytes());
                            }
                            message(out, b't', &b);
                        }
                        out.extend_from_slice(&c.describe);
                    }
                    None => self.fail(out, "26000", "statement or portal does not exist"),
                }
            }
            b'E' => {
                let (portal, _) = cstr(body);
                match self.portal(portal) {
                    Some(c) => {
                        out.extend_from_slice(&c.execute);
                        if let Some(t) = c.tx {
                            self.tx = t;
                        }
                    }
                    None => self.fail(out, "34000", "portal does not exist"),
                }
            }
            b'C' => {
                let kind = body.first().copied().unwrap_or(b'S');
                let (name, _) = cstr(body.get(1..).unwrap_or(&[]));
                if kind == b'S' {
                    self.statements.remove(name);
                } else if name.is_empty() {
                    self.unnamed = None;
                } else {
                    self.portals.remove(name);
                }
                message(out, b'3', &[]);
            }
            b'S' => {
                self.skipping = false;
                self.ready(out);
            }
            b'H' => {}
            b'X' => return Flow::Close,
            _ => {
                error(out, "08P01", "unsupported message");
                return Flow::Close;
            }
        }
        Flow::Continue
    }

    fn portal(&self, name: &[u8]) -> Option<Rc<Canned>> {
        if name.is_empty() {
            self.unnamed.clone()
        } else {
            self.portals.get(name).cloned()
        }
    }

    /// An extended-protocol error: report it, ignore the rest until Sync.
    fn fail(&mut self, out: &mut Vec<u8>, code: &str, text: &str) {
        error(out, code, text);
        self.skipping = true;
        if self.tx == b'T' {
            self.tx = b'E';
        }
    }

    fn simple_query(&mut self, sql: &[u8], out: &mut Vec<u8>) {
        let text = String::from_utf8_lossy(sql);
        let mut any = false;
        for stmt in text.split(';').filter(|s| !s.trim().is_empty()) {
            any = true;
            let c = reply(stmt);
            if c.describe.first() == Some(&b'T') {
                out.extend_from_slice(&c.describe);
            }
            out.extend_from_slice(&c.execute);
            if let Some(t) = c.tx {
                self.tx = t;
            }
        }
        if !any {
            message(out, b'I', &[]);
        }
        self.ready(out);
    }
}

/// A NUL-terminated string at the start of `b` and what follows it.
fn cstr(b: &[u8]) -> (&[u8], &[u8]) {
    match b.iter().position(|&c| c == 0) {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &[]),
    }
}

fn error(out: &mut Vec<u8>, code: &str, text: &str) {
    let mut b = Vec::new();
    for (field, value) in [(b'S', "ERROR"), (b'V', "ERROR"), (b'C', code), (b'M', text)] {
        b.push(field);
        b.extend_from_slice(value.as_bytes());
        b.push(0);
    }
    b.push(0);
    message(out, b'E', &b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn startup() -> Vec<u8> {
        let mut body = 196_608u32.to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0u\0database\0d\0\0");
        let mut m = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        m.extend(body);
        m
    }

    fn frontend(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        message(&mut m, tag, body);
        m
    }

    /// The tags of the backend messages in `out`.
    fn tags(out: &[u8]) -> String {
        let mut i = 0;
        let mut s = String::new();
        while i + 5 <= out.len() {
            s.push(out[i] as char);
            i += 1 + u32::from_be_bytes([out[i + 1], out[i + 2], out[i + 3], out[i + 4]]) as usize;
        }
        s
    }

    fn started() -> Session {
        let mut s = Session::new(7);
        let mut out = Vec::new();
        let input = startup();
        assert_eq!(s.handle(&input, &mut out), (input.len(), Flow::Continue));
        assert!(tags(&out).starts_with("RS") && tags(&out).ends_with("KZ"));
        s
    }

    #[test]
    fn ssl_is_refused_then_startup_succeeds() {
        let mut s = Session::new(1);
        let mut input = vec![0, 0, 0, 8];
        input.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        let mut out = Vec::new();
        assert_eq!(s.handle(&input, &mut out), (8, Flow::Continue));
        assert_eq!(out, b"N");
        let su = startup();
        // A partial start-up packet waits for the rest.
        assert_eq!(s.handle(&su[..10], &mut out), (0, Flow::Continue));
        out.clear();
        assert_eq!(s.handle(&su, &mut out).0, su.len());
        assert_eq!(&out[..9], &[b'R', 0, 0, 0, 8, 0, 0, 0, 0]);
    }

    #[test]
    fn prepared_statement_round_trip() {
        let mut s = started();
        let mut input = frontend(b'P', b"P0_0_1\0SELECT abalance FROM t WHERE aid = $1\0\0\0");
        let mut bind = b"\0P0_0_1\0".to_vec();
        bind.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, b'7', 0, 0]);
        input.extend(frontend(b'B', &bind));
        input.extend(frontend(b'E', b"\0\0\0\0\0"));
        input.extend(frontend(b'S', b""));
        let mut out = Vec::new();
        assert_eq!(s.handle(&input, &mut out), (input.len(), Flow::Continue));
        assert_eq!(tags(&out), "12DCZ");
        // Again without the Parse; half a message waits.
        let mut again = frontend(b'B', &bind);
        again.extend(frontend(b'E', b"\0\0\0\0\0"));
        again.extend(frontend(b'S', b""));
        out.clear();
        let cut = again.len() - 2;
        assert_eq!(s.handle(&again[..cut], &mut out).0, cut - 3);
        assert_eq!(tags(&out), "2DC");
    }

    #[test]
    fn transaction_status_follows_begin_and_end() {
        let mut s = started();
        let mut out = Vec::new();
        s.handle(&frontend(b'Q', b"BEGIN;\0"), &mut out);
        assert_eq!(out[out.len() - 1], b'T');
        out.clear();
        s.handle(&frontend(b'Q', b"END;\0"), &mut out);
        assert_eq!(out[out.len() - 1], b'I');
        out.clear();
        s.handle(
            &frontend(b'Q', b"select count(*) from pgbench_branches\0"),
            &mut out,
        );
        assert_eq!(tags(&out), "TDCZ");
    }

    #[test]
    fn an_unknown_statement_fails_until_sync() {
        let mut s = started();
        let mut input = frontend(b'B', b"\0nope\0\0\0\0\0\0\0");
        input.extend(frontend(b'E', b"\0\0\0\0\0"));
        input.extend(frontend(b'S', b""));
        let mut out = Vec::new();
        s.handle(&input, &mut out);
        assert_eq!(tags(&out), "EZ");
    }

    #[test]
    fn describe_and_terminate() {
        let mut s = started();
        let mut input = frontend(b'P', b"\0update t set a = $1 where b = $2\0\0\0");
        input.extend(frontend(b'D', b"S\0"));
        input.extend(frontend(b'S', b""));
        input.extend(frontend(b'X', b""));
        let mut out = Vec::new();
        assert_eq!(s.handle(&input, &mut out).1, Flow::Close);
        assert_eq!(tags(&out), "1tnZ");
    }
}
