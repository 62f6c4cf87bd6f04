//! Establishing a session: socket, SSLRequest and TLS, StartupMessage, authentication
//! (trust, cleartext, md5, SCRAM-SHA-256), then ParameterStatus/BackendKeyData up to the
//! first ReadyForQuery; every host of a multi-host list tried in order.
//!
//! Blocking, bounded by `connect_timeout`. Failures keep libpq's wording
//! (`connection to server at "h", port p failed: …`) and the server's SQLSTATE.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::sasl::{
    ChannelBinding, ScramSha256, SCRAM_SHA_256, SCRAM_SHA_256_PLUS,
};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use rustls::ClientConfig;

use crate::binding;
use crate::cancel::{CancelAddr, CancelToken};
use crate::config::{ChannelBindingMode, Config, SslMode, TargetSessionAttrs};
use crate::conn::{Connection, TxStatus};
use crate::error::{ConnectAttempt, ConnectCause, ConnectError, DbError, Error};
use crate::reader::MessageReader;
use crate::resolve::{ConnectParams, Host, Target};
use crate::stream::{Socket, Stream};
use crate::tls;

/// Opens connections for one resolved configuration, caching the TLS setup (root
/// certificates are loaded once, not per connection). Share it across a run's clients.
pub struct Connector {
    params: ConnectParams,
    tls: OnceLock<Result<Option<Arc<ClientConfig>>, String>>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("params", &self.params)
            .finish()
    }
}

enum Failure {
    /// Worth retrying with the other TLS choice (sslmode allow/prefer).
    Retryable(ConnectAttempt),
    Final(ConnectAttempt),
}

impl Connector {
    /// A connector for `params`.
    pub fn new(params: ConnectParams) -> Connector {
        Connector {
            params,
            tls: OnceLock::new(),
        }
    }

    /// The resolved parameters.
    pub fn params(&self) -> &ConnectParams {
        &self.params
    }

    fn tls_config(&self) -> Result<Option<Arc<ClientConfig>>, String> {
        self.tls
            .get_or_init(|| tls::client_config(&self.params))
            .clone()
    }

    /// Connects to the first host that accepts (and matches `target_session_attrs`); with
    /// `load_balance_hosts=random`, starting from a random host.
    pub fn connect(&self) -> Result<Connection, Error> {
        let first = match self.params.load_balance_hosts {
            crate::config::LoadBalanceHosts::Disable => 0,
            crate::config::LoadBalanceHosts::Random => random_index(self.params.targets.len()),
        };
        self.connect_from(first).map(|(conn, _)| conn)
    }

    /// Tries the hosts in order starting at host `first` (modulo their number) and wrapping
    /// around, so clients spread over several hosts still fall back to the others; returns
    /// the connection and the index of the host that took it.
    pub fn connect_from(&self, first: usize) -> Result<(Connection, usize), Error> {
        let n = self.params.targets.len().max(1);
        let order: Vec<usize> = (0..n).map(|k| (first + k) % n).collect();
        let mut attempts = Vec::new();
        let passes: &[TargetSessionAttrs] = match self.params.target_session_attrs {
            TargetSessionAttrs::PreferStandby => {
                &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            _ => std::slice::from_ref(&self.params.target_session_attrs),
        };
        for &attrs in passes {
            for &index in &order {
                let Some(target) = self.params.targets.get(index) else {
                    continue;
                };
                let addrs: Vec<Option<SocketAddr>> = match (&target.host, target.hostaddr) {
                    (Host::Unix(_), _) => vec![None],
                    (Host::Tcp(_), Some(ip)) => vec![Some(SocketAddr::new(ip, target.port))],
                    (Host::Tcp(name), None) => match (name.as_str(), target.port).to_socket_addrs()
                    {
                        Ok(a) => a.map(Some).collect(),
                        Err(e) => {
                            // libpq prints this one without the "connection to" prefix.
                            attempts.push(ConnectAttempt {
                                target: String::new(),
                                unix: false,
                                cause: ConnectCause::Other(format!(
                                    "could not translate host name \"{name}\" to address: {}",
                                    crate::error::io_text(&e)
                                )),
                            });
                            continue;
                        }
                    },
                };
                for addr in addrs {
                    match self.connect_addr(target, addr.as_ref()) {
                        Ok(mut conn) => match check_session_attrs(&mut conn, attrs) {
                            Ok(()) => return Ok((conn, index)),
                            Err(cause) => {
                                attempts.push(ConnectAttempt {
                                    target: target.describe(addr.as_ref()),
                                    unix: addr.is_none(),
                                    cause,
                                });
                                conn.close();
                            }
                        },
                        Err(a) => attempts.push(a),
                    }
                }
            }
        }
        Err(Error::Connect(ConnectError { attempts }))
    }

    /// The number of hosts clients can be spread over.
    pub fn host_count(&self) -> usize {
        self.params.targets.len()
    }

    /// `host:port` (or the socket directory) of host `index`, for reports.
    pub fn host_label(&self, index: usize) -> String {
        self.params
            .targets
            .get(index)
            .map(|t| match &t.host {
                Host::Tcp(h) => format!("{h}:{}", t.port),
                Host::Unix(dir) => format!("{}:{}", dir.display(), t.port),
            })
            .unwrap_or_default()
    }

    /// Connects client `client_id` to the host `spread` picks for it, falling back to the
    /// others in order; returns the connection and the host it went to.
    pub fn connect_client(
        &self,
        client_id: usize,
        spread: Spread,
    ) -> Result<(Connection, usize), Error> {
        let random_hosts =
            self.params.load_balance_hosts == crate::config::LoadBalanceHosts::Random;
        let first = match spread {
            Spread::First if random_hosts => random_index(self.host_count()),
            Spread::First => 0,
            Spread::RoundRobin => client_id,
            Spread::Random => random_index(self.host_count()),
        };
        self.connect_from(first)
    }

    /// One address, with libpq's TLS fallbacks for `allow` and `prefer`.
    fn connect_addr(
        &self,
        target: &Target,
        addr: Option<&SocketAddr>,
    ) -> Result<Connection, ConnectAttempt> {
        let tls_choices: &[bool] = if addr.is_none() {
            &[false] // never TLS over Unix sockets, as libpq
        } else {
            match self.params.sslmode {
                SslMode::Disable => &[false],
                SslMode::Allow => &[false, true],
                SslMode::Prefer => &[true, false],
                _ => &[true],
            }
        };
        let mut last = None;
        for (i, &use_tls) in tls_choices.iter().enumerate() {
            match self.startup(target, addr, use_tls) {
                Ok(c) => return Ok(c),
                Err(Failure::Final(a)) => return Err(a),
                Err(Failure::Retryable(a)) => {
                    last = Some(a);
                    if i + 1 == tls_choices.len() {
                        break;
                    }
                }
            }
        }
        Err(last.unwrap_or_else(|| ConnectAttempt {
            target: target.describe(addr),
            unix: addr.is_none(),
            cause: ConnectCause::Other("no connection attempt made".into()),
        }))
    }

    fn startup(
        &self,
        target: &Target,
        addr: Option<&SocketAddr>,
        use_tls: bool,
    ) -> Result<Connection, Failure> {
        let described = target.describe(addr);
        let unix = addr.is_none();
        let attempt = |cause| ConnectAttempt {
            target: described.clone(),
            unix,
            cause,
        };
        let timeout = self.params.connect_timeout;
        let deadline = timeout.map(|t| Instant::now() + t);

        // Socket.
        let (sock, cancel_addr) = match addr {
            Some(a) => {
                let s = match timeout {
                    Some(t) => TcpStream::connect_timeout(a, t),
                    None => TcpStream::connect(a),
                }
                .map_err(|e| Failure::Final(attempt(io_cause(e))))?;
                let _ = s.set_nodelay(true);
                (Socket::Tcp(s), CancelAddr::Tcp(*a))
            }
            None => {
                let path = target.socket_path().unwrap_or_default();
                let s =
                    UnixStream::connect(&path).map_err(|e| Failure::Final(attempt(io_cause(e))))?;
                (Socket::Unix(s), CancelAddr::Unix(path))
            }
        };
        sock.set_timeouts(timeout)
            .map_err(|e| Failure::Final(attempt(ConnectCause::Io(e))))?;
        let mut stream = Stream::plain(sock);

        // TLS.
        if use_tls {
            let config = match self.tls_config() {
                Ok(Some(c)) => c,
                Ok(None) => {
                    return Err(Failure::Final(attempt(ConnectCause::Other(
                        "TLS disabled".into(),
                    ))))
                }
                Err(e) => return Err(Failure::Final(attempt(ConnectCause::Tls(e)))),
            };
            let mut req = BytesMut::with_capacity(8);
            frontend::ssl_request(&mut req);
            stream
                .sock
                .write_all(&req)
                .map_err(|e| Failure::Final(attempt(io_cause(e))))?;
            let mut answer = [0u8; 1];
            stream
                .sock
                .read_exact(&mut answer)
                .map_err(|e| Failure::Final(attempt(io_cause(e))))?;
            match answer[0] {
                b'S' => {
                    let name = tls::server_name(target.host_name(), addr.map(|a| a.ip()));
                    let conn = rustls::ClientConnection::new(config, name)
                        .map_err(|e| Failure::Final(attempt(ConnectCause::Tls(e.to_string()))))?;
                    stream.tls = Some(Box::new(conn));
                    if let Err(e) = stream.handshake(deadline) {
                        let cause = match Error::io(e) {
                            Error::Tls(s) => ConnectCause::Tls(s),
                            Error::Protocol(s) => ConnectCause::Tls(s),
                            other => cause_of(other),
                        };
                        return Err(self.retry_if_prefer(attempt(cause)));
                    }
                }
                b'N' => {
                    if !matches!(self.params.sslmode, SslMode::Allow | SslMode::Prefer) {
                        return Err(Failure::Final(attempt(ConnectCause::Other(
                            "server does not support SSL, but SSL was required".into(),
                        ))));
                    }
                }
                other => {
                    return Err(Failure::Final(attempt(ConnectCause::Other(format!(
                        "received invalid response to SSL negotiation: {}",
                        char::from(other).escape_default()
                    )))))
                }
            }
        }

        let mut conn = Connection {
            stream,
            reader: MessageReader::new(),
            out: BytesMut::with_capacity(4096),
            params: Vec::new(),
            cancel: CancelToken {
                addr: cancel_addr,
                process_id: 0,
                secret_key: 0,
                timeout,
            },
            notices: VecDeque::new(),
            notice_handler: None,
            tx_status: TxStatus::Idle,
            described: described.clone(),
            closed: false,
        };

        match self.authenticate(&mut conn, target) {
            Ok(()) => {}
            Err(cause) => {
                let retry = matches!(cause, ConnectCause::Db(_));
                let a = attempt(cause);
                return Err(if retry {
                    match (self.params.sslmode, use_tls) {
                        (SslMode::Prefer, true) | (SslMode::Allow, false) => Failure::Retryable(a),
                        _ => Failure::Final(a),
                    }
                } else {
                    Failure::Final(a)
                });
            }
        }
        let _ = conn.stream.sock.set_timeouts(None);
        let _ = deadline;
        Ok(conn)
    }

    fn retry_if_prefer(&self, a: ConnectAttempt) -> Failure {
        if self.params.sslmode == SslMode::Prefer {
            Failure::Retryable(a)
        } else {
            Failure::Final(a)
        }
    }

    /// SCRAM mechanism and channel binding, as libpq: `-PLUS` with `tls-server-end-point`
    /// when TLS is on, the server offers it and `channel_binding` is not `disable`.
    fn choose_binding(
        &self,
        conn: &Connection,
        has_scram: bool,
        has_plus: bool,
    ) -> Result<(&'static str, ChannelBinding), ConnectCause> {
        let mode = self.params.channel_binding;
        let tls = conn.stream.tls.as_ref();
        if mode != ChannelBindingMode::Disable && has_plus {
            if let Some(tls) = tls {
                let hash = tls
                    .peer_certificates()
                    .and_then(|c| c.first())
                    .and_then(|c| binding::server_end_point(c.as_ref()));
                return match hash {
                    Some(h) => Ok((SCRAM_SHA_256_PLUS, ChannelBinding::tls_server_end_point(h))),
                    None if mode == ChannelBindingMode::Require => Err(ConnectCause::Other(
                        "could not compute the channel binding hash of the server certificate"
                            .into(),
                    )),
                    None if has_scram => Ok((SCRAM_SHA_256, ChannelBinding::unsupported())),
                    None => Err(ConnectCause::Other(
                        "none of the server's SASL authentication mechanisms are supported".into(),
                    )),
                };
            }
        }
        if mode == ChannelBindingMode::Require {
            return Err(ConnectCause::Other(
                "channel binding is required, but server did not offer an authentication method that supports channel binding".into(),
            ));
        }
        if !has_scram {
            return Err(ConnectCause::Other(
                "none of the server's SASL authentication mechanisms are supported".into(),
            ));
        }
        // 'y': we could bind but the server did not offer it (downgrade detection).
        if tls.is_some() && mode != ChannelBindingMode::Disable {
            Ok((SCRAM_SHA_256, ChannelBinding::unrequested()))
        } else {
            Ok((SCRAM_SHA_256, ChannelBinding::unsupported()))
        }
    }

    /// StartupMessage, authentication exchange, then start-up messages up to
    /// ReadyForQuery.
    fn authenticate(&self, conn: &mut Connection, target: &Target) -> Result<(), ConnectCause> {
        self.send_startup(conn)?;
        let p = &self.params;
        let password = target.password.as_deref();
        let mut scram: Option<ScramSha256> = None;
        let mut bound = false;
        let require_binding = p.channel_binding == ChannelBindingMode::Require;
        let no_binding = || {
            ConnectCause::Other(
                "channel binding required but not supported by server's authentication request"
                    .into(),
            )
        };
        loop {
            match conn.read_message_blocking().map_err(cause_of)? {
                Message::AuthenticationOk => {
                    if require_binding && !bound {
                        return Err(ConnectCause::Other(
                            "channel binding required, but server authenticated client without channel binding".into(),
                        ));
                    }
                    break;
                }
                Message::AuthenticationCleartextPassword => {
                    if require_binding {
                        return Err(no_binding());
                    }
                    let pw = password.ok_or(ConnectCause::NoPassword)?;
                    frontend::password_message(pw.as_bytes(), &mut conn.out)
                        .map_err(|e| ConnectCause::Other(e.to_string()))?;
                    conn.flush_blocking().map_err(cause_of)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    if require_binding {
                        return Err(no_binding());
                    }
                    let pw = password.ok_or(ConnectCause::NoPassword)?;
                    let hash = postgres_protocol::authentication::md5_hash(
                        p.user.as_bytes(),
                        pw.as_bytes(),
                        body.salt(),
                    );
                    frontend::password_message(hash.as_bytes(), &mut conn.out)
                        .map_err(|e| ConnectCause::Other(e.to_string()))?;
                    conn.flush_blocking().map_err(cause_of)?;
                }
                Message::AuthenticationSasl(body) => {
                    let (mut has_scram, mut has_plus) = (false, false);
                    let mut mechs = body.mechanisms();
                    while let Some(m) = mechs.next().map_err(|e| {
                        ConnectCause::Other(format!("invalid SASL mechanism list: {e}"))
                    })? {
                        has_scram |= m == SCRAM_SHA_256;
                        has_plus |= m == SCRAM_SHA_256_PLUS;
                    }
                    let pw = password.ok_or(ConnectCause::NoPassword)?;
                    let (mech, binding) = self.choose_binding(conn, has_scram, has_plus)?;
                    bound = mech == SCRAM_SHA_256_PLUS;
                    let s = ScramSha256::new(pw.as_bytes(), binding);
                    frontend::sasl_initial_response(mech, s.message(), &mut conn.out)
                        .map_err(|e| ConnectCause::Other(e.to_string()))?;
                    conn.flush_blocking().map_err(cause_of)?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram.as_mut().ok_or_else(|| {
                        ConnectCause::Other("unexpected SASL continue message".into())
                    })?;
                    s.update(body.data())
                        .map_err(|e| ConnectCause::Other(format!("SCRAM exchange failed: {e}")))?;
                    frontend::sasl_response(s.message(), &mut conn.out)
                        .map_err(|e| ConnectCause::Other(e.to_string()))?;
                    conn.flush_blocking().map_err(cause_of)?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram.as_mut().ok_or_else(|| {
                        ConnectCause::Other("unexpected SASL final message".into())
                    })?;
                    s.finish(body.data()).map_err(|e| {
                        ConnectCause::Other(format!("SCRAM server signature invalid: {e}"))
                    })?;
                }
                Message::ErrorResponse(body) => {
                    return Err(ConnectCause::Db(Box::new(
                        DbError::from_error_response(&body)
                            .map_err(|e| ConnectCause::Other(e.to_string()))?,
                    )))
                }
                Message::NoticeResponse(body) => {
                    if let Ok(n) = DbError::from_notice_response(&body) {
                        conn.notice(n);
                    }
                }
                Message::AuthenticationKerberosV5 => return Err(unsupported("Kerberos 5")),
                Message::AuthenticationScmCredential => return Err(unsupported("SCM credential")),
                Message::AuthenticationGss | Message::AuthenticationGssContinue(_) => {
                    return Err(unsupported("GSSAPI"))
                }
                Message::AuthenticationSspi => return Err(unsupported("SSPI")),
                _ => {
                    return Err(ConnectCause::Other(
                        "expected authentication request from server, but received other message"
                            .into(),
                    ))
                }
            }
        }

        await_ready(conn)
    }

    /// The StartupMessage: user, database and the optional start-up parameters.
    fn send_startup(&self, conn: &mut Connection) -> Result<(), ConnectCause> {
        let p = &self.params;
        let mut kv: Vec<(&str, &str)> = vec![("user", &p.user), ("database", &p.dbname)];
        if let Some(a) = &p.application_name {
            kv.push(("application_name", a));
        }
        if let Some(o) = &p.options {
            kv.push(("options", o));
        }
        if let Some(e) = &p.client_encoding {
            kv.push(("client_encoding", e));
        }
        frontend::startup_message(kv, &mut conn.out)
            .map_err(|e| ConnectCause::Other(format!("invalid start-up parameter: {e}")))?;
        conn.flush_blocking().map_err(cause_of)?;
        Ok(())
    }
}

/// The start-up messages after authentication, up to ReadyForQuery: the cancel key, the
/// server's parameters and notices.
fn await_ready(conn: &mut Connection) -> Result<(), ConnectCause> {
    loop {
        match conn.read_message_blocking().map_err(cause_of)? {
            Message::BackendKeyData(b) => {
                conn.cancel.process_id = b.process_id();
                conn.cancel.secret_key = b.secret_key();
            }
            Message::ParameterStatus(b) => {
                if let (Ok(k), Ok(v)) = (b.name(), b.value()) {
                    set_param(&mut conn.params, k, v);
                }
            }
            Message::NoticeResponse(body) => {
                if let Ok(n) = DbError::from_notice_response(&body) {
                    conn.notice(n);
                }
            }
            Message::ErrorResponse(body) => {
                return Err(ConnectCause::Db(Box::new(
                    DbError::from_error_response(&body)
                        .map_err(|e| ConnectCause::Other(e.to_string()))?,
                )))
            }
            Message::ReadyForQuery(b) => {
                conn.tx_status = TxStatus::from_byte(b.status());
                return Ok(());
            }
            _ => {
                return Err(ConnectCause::Other(
                    "unexpected message from server during startup".into(),
                ))
            }
        }
    }
}

pub(crate) fn set_param(params: &mut Vec<(String, String)>, k: &str, v: &str) {
    match params.iter_mut().find(|(n, _)| n == k) {
        Some(e) => e.1 = v.to_string(),
        None => params.push((k.to_string(), v.to_string())),
    }
}

fn unsupported(what: &str) -> ConnectCause {
    ConnectCause::Other(format!("{what} authentication not supported"))
}

fn io_cause(e: io::Error) -> ConnectCause {
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ConnectCause::Timeout,
        io::ErrorKind::UnexpectedEof => cause_of(Error::Closed),
        _ => ConnectCause::Io(e),
    }
}

fn cause_of(e: Error) -> ConnectCause {
    match e {
        Error::Io(e) => io_cause(e),
        Error::Db(d) => ConnectCause::Db(d),
        Error::Tls(s) => ConnectCause::Tls(s),
        Error::Closed => ConnectCause::Other(
            "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request."
                .into(),
        ),
        other => ConnectCause::Other(other.to_string()),
    }
}

/// `target_session_attrs` check right after start-up.
fn check_session_attrs(
    conn: &mut Connection,
    attrs: TargetSessionAttrs,
) -> Result<(), ConnectCause> {
    let want_read_only = match attrs {
        TargetSessionAttrs::Any | TargetSessionAttrs::PreferStandby => return Ok(()),
        TargetSessionAttrs::ReadWrite => Some(false),
        TargetSessionAttrs::ReadOnly => Some(true),
        TargetSessionAttrs::Primary | TargetSessionAttrs::Standby => None,
    };
    let one = |conn: &mut Connection, sql: &str| -> Result<String, ConnectCause> {
        let r = conn.simple_query(sql).map_err(cause_of)?;
        Ok(r.first()
            .and_then(|q| q.rows.first())
            .and_then(|row| row.first().cloned().flatten())
            .unwrap_or_default())
    };
    match want_read_only {
        Some(want) => {
            let ro = match (
                conn.parameter("default_transaction_read_only"),
                conn.parameter("in_hot_standby"),
            ) {
                (Some(d), Some(h)) => d == "on" || h == "on",
                _ => one(conn, "SHOW transaction_read_only")? == "on",
            };
            match (want, ro) {
                (false, true) => Err(ConnectCause::Other("session is read-only".into())),
                (true, false) => Err(ConnectCause::Other("session is not read-only".into())),
                _ => Ok(()),
            }
        }
        None => {
            let standby = match conn.parameter("in_hot_standby") {
                Some(h) => h == "on",
                None => one(conn, "SELECT pg_catalog.pg_is_in_recovery()")? == "t",
            };
            match (attrs, standby) {
                (TargetSessionAttrs::Primary, true) => {
                    Err(ConnectCause::Other("server is in hot standby mode".into()))
                }
                (TargetSessionAttrs::Standby, false) => Err(ConnectCause::Other(
                    "server is not in hot standby mode".into(),
                )),
                _ => Ok(()),
            }
        }
    }
}

impl Connection {
    /// Connects with resolved parameters (builds a one-off [`Connector`]).
    pub fn connect(params: &ConnectParams) -> Result<Connection, Error> {
        Connector::new(params.clone()).connect()
    }

    /// Parses a conninfo string or URL, resolves it against the process environment and
    /// pgpass, and connects. Warnings (pgpass permissions) go to stderr, as libpq does.
    pub fn connect_str(conninfo: &str) -> Result<Connection, Error> {
        let params = Config::parse(conninfo)?.resolve()?;
        for w in &params.warnings {
            eprintln!("{w}");
        }
        Connection::connect(&params)
    }
}

/// How clients are spread over the hosts of a multi-host target (`--load-balance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spread {
    /// Every client prefers the first host that accepts (libpq's and pgbench's default; with
    /// `load_balance_hosts=random` in the target, a random one as libpq does).
    #[default]
    First,
    /// Client i prefers host i mod N.
    RoundRobin,
    /// Each connection prefers a random host (libpq's `load_balance_hosts=random`).
    Random,
}

impl Spread {
    pub fn parse(text: &str) -> Option<Spread> {
        match text {
            "first" => Some(Spread::First),
            "round-robin" => Some(Spread::RoundRobin),
            "random" => Some(Spread::Random),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Spread::First => "first",
            Spread::RoundRobin => "round-robin",
            Spread::Random => "random",
        }
    }
}

/// A random index below `n` (0 when `n` is 0), from the standard library's per-process
/// random hash keys: good enough to spread connections, no dependency.
pub(crate) fn random_index(n: usize) -> usize {
    use std::hash::{BuildHasher, Hasher};
    if n == 0 {
        return 0;
    }
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    (h.finish() % n as u64) as usize
}
