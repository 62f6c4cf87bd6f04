//! Errors: what the server said (`DbError`, with its SQLSTATE) kept apart from what the
//! transport did (I/O, connection lost) and from bad input (configuration, usage).
//!
//! The engine decides retry/abort by SQLSTATE and by [`Error::is_connection_lost`]; people
//! read the `Display` forms, which follow psql/pgbench (`ERROR:  message\nDETAIL:  …`) and
//! libpq's start-up wording (`connection to server at "h", port 5432 failed: …`).

use std::borrow::Cow;
use std::fmt;
use std::io;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{ErrorFields, ErrorResponseBody, NoticeResponseBody};

use crate::SqlState;

/// An error or notice reported by the server (ErrorResponse / NoticeResponse fields).
///
/// The SQLSTATE is typed; every other field is kept as text, non-UTF-8 bytes replaced, never
/// rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DbError {
    /// Localized severity (`S`): `ERROR`, `FATAL`, `PANIC`, `WARNING`, `NOTICE`, …
    pub severity: String,
    /// Non-localized severity (`V`, PostgreSQL 9.6+), if sent.
    pub severity_nonlocalized: Option<String>,
    /// SQLSTATE (`C`), e.g. `40001`: always sent (the protocol says so); a missing or
    /// malformed one is a protocol error.
    pub code: SqlState,
    /// Primary message (`M`).
    pub message: String,
    /// `D`
    pub detail: Option<String>,
    /// `H`
    pub hint: Option<String>,
    /// `P`: 1-based character position in the query.
    pub position: Option<u32>,
    /// `p`
    pub internal_position: Option<u32>,
    /// `q`
    pub internal_query: Option<String>,
    /// `W`: the context (call stack) the error occurred in.
    pub where_: Option<String>,
    /// `s`
    pub schema: Option<String>,
    /// `t`
    pub table: Option<String>,
    /// `c`
    pub column: Option<String>,
    /// `d`
    pub datatype: Option<String>,
    /// `n`
    pub constraint: Option<String>,
    /// `F`
    pub file: Option<String>,
    /// `L`
    pub line: Option<u32>,
    /// `R`
    pub routine: Option<String>,
}

impl DbError {
    /// An error of the given severity, code and message, the other fields empty (what a
    /// caller that synthesizes a server error, such as a test, needs).
    pub fn new(severity: &str, code: SqlState, message: impl Into<String>) -> DbError {
        DbError {
            severity: severity.to_string(),
            severity_nonlocalized: None,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            internal_position: None,
            internal_query: None,
            where_: None,
            schema: None,
            table: None,
            column: None,
            datatype: None,
            constraint: None,
            file: None,
            line: None,
            routine: None,
        }
    }

    /// Parses the fields of an ErrorResponse.
    pub fn from_error_response(body: &ErrorResponseBody) -> Result<DbError, Error> {
        Self::from_fields(body.fields())
    }

    /// Parses the fields of a NoticeResponse.
    pub fn from_notice_response(body: &NoticeResponseBody) -> Result<DbError, Error> {
        Self::from_fields(body.fields())
    }

    /// Parses ErrorResponse/NoticeResponse fields; malformed input is a protocol error.
    pub fn from_fields(mut fields: ErrorFields<'_>) -> Result<DbError, Error> {
        let mut e = DbError::new("", SqlState::INTERNAL_ERROR, "");
        let mut code = None;
        while let Some(f) = fields
            .next()
            .map_err(|err| Error::Protocol(format!("malformed error fields: {err}")))?
        {
            let v = String::from_utf8_lossy(f.value_bytes()).into_owned();
            match f.type_() {
                b'S' => e.severity = v,
                b'V' => e.severity_nonlocalized = Some(v),
                b'C' => {
                    code =
                        Some(SqlState::parse(&v).map_err(|err| {
                            Error::Protocol(format!("malformed error fields: {err}"))
                        })?)
                }
                b'M' => e.message = v,
                b'D' => e.detail = Some(v),
                b'H' => e.hint = Some(v),
                b'P' => e.position = v.parse().ok(),
                b'p' => e.internal_position = v.parse().ok(),
                b'q' => e.internal_query = Some(v),
                b'W' => e.where_ = Some(v),
                b's' => e.schema = Some(v),
                b't' => e.table = Some(v),
                b'c' => e.column = Some(v),
                b'd' => e.datatype = Some(v),
                b'n' => e.constraint = Some(v),
                b'F' => e.file = Some(v),
                b'L' => e.line = v.parse().ok(),
                b'R' => e.routine = Some(v),
                _ => {}
            }
        }
        e.code = code.ok_or_else(|| {
            Error::Protocol("malformed error fields: no SQLSTATE (field C)".into())
        })?;
        if e.severity.is_empty() {
            if let Some(s) = &e.severity_nonlocalized {
                e.severity = s.clone();
            }
        }
        Ok(e)
    }

    /// The SQLSTATE.
    pub fn code(&self) -> SqlState {
        self.code
    }

    /// The severity that is not translated (falls back to the localized one).
    pub fn severity_code(&self) -> &str {
        self.severity_nonlocalized
            .as_deref()
            .unwrap_or(&self.severity)
    }

    /// FATAL or PANIC: the server ends the session after sending this.
    pub fn is_fatal(&self) -> bool {
        matches!(self.severity_code(), "FATAL" | "PANIC")
    }

    /// The error means the session is gone (FATAL/PANIC, shutdown codes, class 08).
    pub fn is_connection_lost(&self) -> bool {
        self.is_fatal() || self.code.is_connection_lost()
    }
}

impl DbError {
    /// As `Display` writes it, each of the server's texts passed through `field` first (a
    /// terminal printer escapes their control characters: the lines stay the ones shown).
    /// The message goes through whole; the multi-line fields (DETAIL, HINT, QUERY,
    /// CONTEXT) line by line, so their own line breaks stay as libpq prints them.
    pub fn render_with<'a>(&'a self, field: &dyn Fn(&'a str) -> Cow<'a, str>) -> String {
        self.render_at(None, field)
    }

    /// As [`DbError::render_with`], and where the error has a position in `query` (the text
    /// sent), libpq's `LINE n: …` and caret lines after the message, as pgbench prints them.
    pub fn render_at<'a>(
        &'a self,
        query: Option<&str>,
        field: &dyn Fn(&'a str) -> Cow<'a, str>,
    ) -> String {
        let sev = if self.severity.is_empty() {
            "ERROR"
        } else {
            &self.severity
        };
        let mut out = format!("{}:  {}", field(sev), field(&self.message));
        if let (Some(q), Some(p)) = (query, self.position) {
            if let Some(lines) = crate::error_position::lines(q, p) {
                out.push('\n');
                out.push_str(lines.trim_end_matches('\n'));
            }
        }
        // DETAIL, HINT, QUERY and CONTEXT are multi-line by design (a deadlock's processes,
        // a PL/pgSQL call stack): their line breaks are the server's layout and stay, as
        // libpq prints them; each line is passed through `field` apart.
        let mut line = |label: &str, v: &'a str| {
            out.push_str(&format!("\n{label}:  "));
            for (i, l) in v.split('\n').enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&field(l));
            }
        };
        if let Some(d) = &self.detail {
            line("DETAIL", d);
        }
        if let Some(h) = &self.hint {
            line("HINT", h);
        }
        if let Some(q) = &self.internal_query {
            line("QUERY", q);
        }
        if let Some(w) = &self.where_ {
            if matches!(self.severity_code(), "ERROR" | "FATAL" | "PANIC") {
                line("CONTEXT", w);
            }
        }
        out
    }
}

impl fmt::Display for DbError {
    /// psql/libpq default verbosity: `SEVERITY:  message`, then DETAIL, HINT, and CONTEXT
    /// for errors, each on its own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_with(&|s| Cow::Borrowed(s)))
    }
}

impl std::error::Error for DbError {}

/// Bad connection options (conninfo, URL, environment, pgpass).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl ConfigError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        ConfigError(msg.into())
    }
}

/// Why one connection attempt (one host, one address) failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConnectCause {
    /// Socket-level failure (refused, no such file, reset, …).
    Io(io::Error),
    /// The server refused us with an ErrorResponse (bad password 28P01, unknown database
    /// 3D000, starting up 57P03, …).
    Db(Box<DbError>),
    /// TLS negotiation or certificate verification failed.
    Tls(String),
    /// `connect_timeout` expired.
    Timeout,
    /// The server asked for a password and none was configured.
    NoPassword,
    /// Anything else: unsupported auth method, unexpected message, bad SCRAM exchange,
    /// `target_session_attrs` mismatch.
    Other(String),
}

impl fmt::Display for ConnectCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectCause::Io(e) => f.write_str(&io_text(e)),
            ConnectCause::Db(e) => write!(f, "{e}"),
            ConnectCause::Tls(s) => write!(f, "SSL error: {s}"),
            ConnectCause::Timeout => f.write_str("timeout expired"),
            ConnectCause::NoPassword => f.write_str("fe_sendauth: no password supplied"),
            ConnectCause::Other(s) => f.write_str(s),
        }
    }
}

/// One failed attempt: where (libpq's wording) and why.
#[derive(Debug)]
pub struct ConnectAttempt {
    /// `connection to server at "127.0.0.1", port 5432` or
    /// `connection to server on socket "/tmp/.s.PGSQL.5432"`; empty when the failure
    /// precedes any connection (host name lookup).
    pub target: String,
    /// True for a Unix-domain socket (changes the hint line).
    pub unix: bool,
    /// What went wrong.
    pub cause: ConnectCause,
}

impl fmt::Display for ConnectAttempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.target.is_empty() {
            write!(f, "{}", self.cause)?;
        } else {
            write!(f, "{} failed: {}", self.target, self.cause)?;
        }
        if let ConnectCause::Io(e) = &self.cause {
            let refused = matches!(
                e.kind(),
                io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
            );
            if refused && self.unix {
                f.write_str(
                    "\n\tIs the server running locally and accepting connections on that socket?",
                )?;
            } else if refused {
                f.write_str(
                    "\n\tIs the server running on that host and accepting TCP/IP connections?",
                )?;
            }
        }
        Ok(())
    }
}

/// Every attempt failed (one entry per host/address tried, in order).
#[derive(Debug)]
pub struct ConnectError {
    /// Never empty.
    pub attempts: Vec<ConnectAttempt>,
}

impl ConnectError {
    /// The server error of the last attempt that got one, if any.
    pub fn db_error(&self) -> Option<&DbError> {
        self.attempts.iter().rev().find_map(|a| match &a.cause {
            ConnectCause::Db(e) => Some(&**e),
            _ => None,
        })
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.attempts.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{a}")?;
        }
        if self.attempts.is_empty() {
            f.write_str("no host to connect to")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConnectError {}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server rejected a statement. The connection is usable again once
    /// ReadyForQuery arrived, unless [`DbError::is_connection_lost`].
    #[error("{0}")]
    Db(Box<DbError>),
    /// Reading or writing the socket failed: the connection is lost.
    #[error("could not communicate with server: {}", io_text(.0))]
    Io(#[source] io::Error),
    /// The server closed the connection.
    #[error("server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request.")]
    Closed,
    /// The server sent bytes that are not valid protocol.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// TLS failure after start-up.
    #[error("SSL error: {0}")]
    Tls(String),
    /// Could not establish the connection.
    #[error("{0}")]
    Connect(ConnectError),
    /// Invalid connection options.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// Invalid use of the API (e.g. a NUL byte in a query string).
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// The SQLSTATE of a server error (including one received during start-up).
    pub fn sqlstate(&self) -> Option<SqlState> {
        self.db_error().map(DbError::code)
    }

    /// The server error, if this is one (including one received during start-up).
    pub fn db_error(&self) -> Option<&DbError> {
        match self {
            Error::Db(e) => Some(e),
            Error::Connect(c) => c.db_error(),
            _ => None,
        }
    }

    /// The session is gone: I/O failure, EOF, protocol/TLS error, or a FATAL/shutdown
    /// server error. (A plain SQL error leaves the connection usable.)
    pub fn is_connection_lost(&self) -> bool {
        match self {
            Error::Db(e) => e.is_connection_lost(),
            Error::Io(_) | Error::Closed | Error::Protocol(_) | Error::Tls(_) => true,
            Error::Connect(_) | Error::Config(_) | Error::Usage(_) => false,
        }
    }

    pub(crate) fn io(e: io::Error) -> Error {
        if let Some(tls) = e.get_ref().and_then(|r| r.downcast_ref::<rustls::Error>()) {
            return Error::Tls(tls.to_string());
        }
        match e.kind() {
            io::ErrorKind::UnexpectedEof => Error::Closed,
            io::ErrorKind::InvalidData => Error::Protocol(e.to_string()),
            _ => Error::Io(e),
        }
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        Error::Db(Box::new(e))
    }
}

/// `io::Error` text without Rust's ` (os error N)` suffix, like libpq's strerror.
pub(crate) fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(fields: &[(u8, &str)]) -> DbError {
        parse(fields).unwrap()
    }

    /// An ErrorResponse with these fields, as the server sends it, parsed.
    fn parse(fields: &[(u8, &str)]) -> Result<DbError, Error> {
        let mut raw = Vec::new();
        for (t, v) in fields {
            raw.push(*t);
            raw.extend_from_slice(v.as_bytes());
            raw.push(0);
        }
        raw.push(0);
        let mut msg = bytes::BytesMut::new();
        msg.extend_from_slice(b"E");
        msg.extend_from_slice(&((raw.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(&raw);
        match postgres_protocol::message::backend::Message::parse(&mut msg) {
            Ok(Some(postgres_protocol::message::backend::Message::ErrorResponse(b))) => {
                DbError::from_error_response(&b)
            }
            _ => panic!("not an error response"),
        }
    }

    #[test]
    fn a_multi_line_context_keeps_its_lines_and_each_line_goes_through_the_field() {
        let e = err(&[
            (b'S', "ERROR"),
            (b'C', "22P02"),
            (b'M', "bad\nforged"),
            (b'W', "JSON data, line 1: {\nunnamed portal with parameters"),
        ]);
        let shown = e.render_with(&|s| Cow::Owned(s.replace('\n', "\\n")));
        assert_eq!(
            shown,
            "ERROR:  bad\\nforged\nCONTEXT:  JSON data, line 1: {\nunnamed portal with parameters"
        );
    }

    #[test]
    fn display_like_psql() {
        let e = err(&[
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', "23505"),
            (
                b'M',
                "duplicate key value violates unique constraint \"t_pkey\"",
            ),
            (b'D', "Key (id)=(1) already exists."),
            (b'H', "Try again."),
            (b'n', "t_pkey"),
            (b'P', "15"),
        ]);
        assert_eq!(e.code(), SqlState::UNIQUE_VIOLATION);
        assert_eq!(e.constraint.as_deref(), Some("t_pkey"));
        assert_eq!(e.position, Some(15));
        assert_eq!(
            e.to_string(),
            "ERROR:  duplicate key value violates unique constraint \"t_pkey\"\n\
             DETAIL:  Key (id)=(1) already exists.\nHINT:  Try again."
        );
        assert!(!e.is_connection_lost());
    }

    #[test]
    fn a_missing_or_malformed_sqlstate_is_a_protocol_error() {
        for bad in [
            &[(b'S', "ERROR"), (b'M', "no code")][..],
            &[(b'C', "4-001")],
        ] {
            assert!(matches!(parse(bad), Err(Error::Protocol(_))), "{bad:?}");
        }
        let e = parse(&[(b'C', "40p01"), (b'M', "deadlock")]).unwrap();
        assert!(e.code().is_deadlock());
    }

    #[test]
    fn fatal_is_connection_lost() {
        let e = err(&[(b'S', "FATAL"), (b'C', "57P01"), (b'M', "terminating")]);
        assert!(e.is_fatal());
        assert!(Error::from(e).is_connection_lost());
    }

    #[test]
    fn io_text_strips_os_error() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(io_text(&e), "No such file or directory");
    }

    #[test]
    fn lookup_failure_has_no_prefix() {
        let a = ConnectAttempt {
            target: String::new(),
            unix: false,
            cause: ConnectCause::Other(
                "could not translate host name \"x\" to address: Name or service not known".into(),
            ),
        };
        assert_eq!(
            a.to_string(),
            "could not translate host name \"x\" to address: Name or service not known"
        );
    }

    #[test]
    fn connect_error_wording() {
        let e = ConnectError {
            attempts: vec![ConnectAttempt {
                target: "connection to server on socket \"/tmp/.s.PGSQL.5432\"".into(),
                unix: true,
                cause: ConnectCause::Io(io::Error::from_raw_os_error(libc::ENOENT)),
            }],
        };
        assert_eq!(
            e.to_string(),
            "connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file or directory\n\tIs the server running locally and accepting connections on that socket?"
        );
    }
}
