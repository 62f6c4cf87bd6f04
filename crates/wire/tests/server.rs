//! Against a real PostgreSQL from `hotbench_pgserver::testing`: start-up over Unix socket
//! and TCP, every auth method, TLS modes, SQLSTATE errors, COPY, cancel, non-blocking I/O.

use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use hotbench_pgserver::testing::{private, shared, test_cluster_options};
use hotbench_pgserver::{AuthMethod, ClusterOptions, ConnInfo, Server, TlsMode};
use hotbench_wire::{encode, Config, Connection, Environment, Error, Message, SqlState, TxStatus};

/// An environment without `PG*` variables, pgpass or root.crt, so tests see only their
/// own options.
fn clean_env() -> Environment {
    Environment {
        os_user: Some("postgres".into()),
        probe_socket_dirs: false,
        ..Environment::default()
    }
}

fn connect(conninfo: &str) -> Result<Connection, Error> {
    let params = Config::parse(conninfo)?.resolve_in(&clean_env())?;
    Connection::connect(&params)
}

fn tcp(ci: &ConnInfo, extra: &str) -> String {
    let mut s = format!(
        "host=127.0.0.1 port={} user={} dbname={}",
        ci.port, ci.user, ci.dbname
    );
    if let Some(p) = &ci.password {
        s.push_str(&format!(" password={p}"));
    }
    format!("{s} {extra}")
}

fn unix(ci: &ConnInfo, extra: &str) -> String {
    let mut s = format!(
        "host={} port={} user={} dbname={}",
        ci.socket_dir.display(),
        ci.port,
        ci.user,
        ci.dbname
    );
    if let Some(p) = &ci.password {
        s.push_str(&format!(" password={p}"));
    }
    format!("{s} {extra}")
}

fn one(conn: &mut Connection, sql: &str) -> Option<String> {
    let r = conn.simple_query(sql).expect(sql);
    r.last()?.rows.first()?.first()?.clone()
}

/// Polls from a session of its own until `sql` (a count) answers `want`, failing after a
/// minute: tests wait for what they need to happen, never for a fixed time.
fn poll_count(conninfo: &str, sql: &str, want: &str) {
    let mut watcher = connect(conninfo).unwrap();
    let t0 = Instant::now();
    while one(&mut watcher, sql).as_deref() != Some(want) {
        assert!(t0.elapsed() < Duration::from_secs(60), "timed out: {sql}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until backend `pid` is inside `pg_sleep`: a cancel sent before its query starts
/// would find nothing to cancel.
fn wait_until_sleeping(conninfo: &str, pid: i32) {
    let sql = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE pid = {pid} AND wait_event = 'PgSleep'"
    );
    poll_count(conninfo, &sql, "1");
}

#[test]
fn connect_unix_and_tcp() {
    let pg = shared();
    for ci in [
        unix(pg.conninfo(), ""),
        tcp(pg.conninfo(), "sslmode=disable"),
    ] {
        let mut c = connect(&ci).unwrap_or_else(|e| panic!("{ci}: {e}"));
        assert!(c.backend_pid() > 0);
        assert!(c.server_version_num() >= 100000, "{}", c.server_version());
        assert!(c.parameter("server_encoding").is_some());
        assert!(!c.is_tls());
        assert_eq!(c.tx_status(), TxStatus::Idle);
        assert_eq!(one(&mut c, "SELECT 1 + 1").as_deref(), Some("2"));
        let pid = one(&mut c, "SELECT pg_backend_pid()").unwrap();
        assert_eq!(pid, c.backend_pid().to_string());
        c.close();
    }
}

#[test]
fn url_and_application_name_and_options() {
    let pg = shared();
    let ci = pg.conninfo();
    let url = format!(
        "postgresql://{}:{}@127.0.0.1:{}/{}?application_name=wire%20test&options=-c%20work_mem%3D7MB",
        ci.user,
        ci.password.as_deref().unwrap_or(""),
        ci.port,
        ci.dbname
    );
    let mut c = connect(&url).unwrap();
    assert_eq!(
        one(&mut c, "SHOW application_name").as_deref(),
        Some("wire test")
    );
    assert_eq!(one(&mut c, "SHOW work_mem").as_deref(), Some("7MB"));
}

#[test]
fn simple_query_results() {
    let pg = shared();
    let mut c = connect(&unix(pg.conninfo(), "")).unwrap();
    let r = c
        .simple_query(
            "CREATE TEMP TABLE t(a int, b text); INSERT INTO t VALUES (1, 'x'), (2, NULL); \
             SELECT a, b FROM t ORDER BY a; ; UPDATE t SET a = a + 1",
        )
        .unwrap();
    // Empty statements inside a multi-statement string produce nothing.
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].command_tag, "CREATE TABLE");
    assert_eq!(r[1].rows_affected(), Some(2));
    assert_eq!(r[2].columns, vec!["a", "b"]);
    assert_eq!(
        r[2].rows,
        vec![
            vec![Some("1".to_string()), Some("x".to_string())],
            vec![Some("2".to_string()), None]
        ]
    );
    assert_eq!(r[2].command_tag, "SELECT 2");
    assert_eq!(r[3].rows_affected(), Some(2));
    let r = c.simple_query("").unwrap();
    assert_eq!(
        r,
        vec![hotbench_wire::QueryResult::default()],
        "empty query"
    );
    assert_eq!(c.execute("DELETE FROM t").unwrap(), 2);

    let r = c
        .query_params(
            "SELECT $1::int + 1, $2::text IS NULL, $3",
            &[Some("41"), None, Some("é")],
        )
        .unwrap();
    assert_eq!(
        r.rows,
        vec![vec![
            Some("42".to_string()),
            Some("t".to_string()),
            Some("é".to_string())
        ]]
    );
    assert_eq!(r.command_tag, "SELECT 1");
}

#[test]
fn errors_carry_sqlstate_and_keep_connection() {
    let pg = shared();
    let mut c = connect(&unix(pg.conninfo(), "")).unwrap();
    let e = c.simple_query("SELECT 1/0").unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::DIVISION_BY_ZERO));
    assert!(!e.is_connection_lost());
    assert_eq!(e.to_string(), "ERROR:  division by zero");
    let e = c
        .query_params("SELECT 1/$1::int", &[Some("0")])
        .unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::DIVISION_BY_ZERO));
    let e = c.simple_query("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::UNDEFINED_TABLE));
    let db = e.db_error().unwrap();
    assert_eq!(db.position, Some(15));
    // Inside a transaction block: failed state, then rollback.
    c.execute("BEGIN").unwrap();
    assert_eq!(c.tx_status(), TxStatus::InTransaction);
    assert!(c.execute("SELECT 1/0").is_err());
    assert_eq!(c.tx_status(), TxStatus::Failed);
    let e = c.execute("SELECT 1").unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::IN_FAILED_SQL_TRANSACTION));
    c.execute("ROLLBACK").unwrap();
    assert_eq!(c.tx_status(), TxStatus::Idle);
    // Errors with detail and hint print psql-style.
    let e = c
        .simple_query("DO $$ BEGIN RAISE EXCEPTION 'boom' USING DETAIL = 'd', HINT = 'h', ERRCODE = '40001'; END $$")
        .unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::SERIALIZATION_FAILURE));
    assert!(
        e.to_string()
            .starts_with("ERROR:  boom\nDETAIL:  d\nHINT:  h\nCONTEXT:  "),
        "{e}"
    );
    assert_eq!(
        one(&mut c, "SELECT 'still usable'").as_deref(),
        Some("still usable")
    );
}

#[test]
fn notices_collected_or_handled() {
    let pg = shared();
    let mut c = connect(&unix(pg.conninfo(), "")).unwrap();
    c.execute("DO $$ BEGIN RAISE NOTICE 'hello %', 42; END $$")
        .unwrap();
    let n = c.take_notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].message, "hello 42");
    assert_eq!(n[0].severity, "NOTICE");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    c.set_notice_handler(Some(Box::new(move |n| {
        s2.lock().unwrap().push(n.message.clone())
    })));
    c.execute("DO $$ BEGIN RAISE WARNING 'careful'; END $$")
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec!["careful".to_string()]);
    assert!(c.take_notices().is_empty());
}

#[test]
fn copy_in_rows_and_errors() {
    let pg = shared();
    let mut c = connect(&unix(pg.conninfo(), "")).unwrap();
    c.execute("CREATE TEMP TABLE acc(aid int primary key, abalance int, filler text)")
        .unwrap();
    let mut chunks = Vec::new();
    for i in 1..=1000 {
        chunks.push(format!("{i}\t0\t\\N\n"));
    }
    // Rows split across chunk boundaries are fine.
    let data = chunks.concat();
    let (a, b) = data.as_bytes().split_at(777);
    let n = c.copy_in("COPY acc FROM STDIN", [a, b]).unwrap();
    assert_eq!(n, 1000);
    assert_eq!(
        one(&mut c, "SELECT count(*) FROM acc").as_deref(),
        Some("1000")
    );
    let e = c
        .copy_in("COPY acc FROM STDIN", ["oops\t1\t\\N\n"])
        .unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::INVALID_TEXT_REPRESENTATION));
    assert_eq!(
        one(&mut c, "SELECT count(*) FROM acc").as_deref(),
        Some("1000")
    );
    // Not a COPY statement.
    assert!(matches!(c.copy_in_start("SELECT 1"), Err(Error::Usage(_))));
    // Aborted COPY.
    let mut copy = c.copy_in_start("COPY acc FROM STDIN").unwrap();
    copy.write(b"5000\t0\t\\N\n").unwrap();
    copy.abort("changed my mind").unwrap();
    {
        let mut copy = c.copy_in_start("COPY acc FROM STDIN").unwrap();
        copy.write(b"6000\t0\t\\N\n").unwrap();
        // dropped: aborted
    }
    assert_eq!(
        one(&mut c, "SELECT count(*) FROM acc").as_deref(),
        Some("1000")
    );
    // COPY through simple_query is refused cleanly.
    assert!(c.simple_query("COPY acc FROM STDIN").is_err());
    assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
}

#[test]
fn cancel_request_cancels_sleep() {
    let pg = shared();
    for ci in [
        unix(pg.conninfo(), ""),
        tcp(pg.conninfo(), "sslmode=disable"),
    ] {
        let mut c = connect(&ci).unwrap();
        let token = c.cancel_token();
        let pid = c.backend_pid();
        let watch = ci.clone();
        let t = std::thread::spawn(move || {
            wait_until_sleeping(&watch, pid);
            token.cancel()
        });
        let start = Instant::now();
        let e = c.simple_query("SELECT pg_sleep(10)").unwrap_err();
        t.join().unwrap().unwrap();
        assert_eq!(e.sqlstate(), Some(SqlState::QUERY_CANCELED), "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
    }
}

#[test]
fn io_timeout_bounds_blocking_calls() {
    let pg = shared();
    let mut c = connect(&unix(pg.conninfo(), "")).unwrap();
    c.set_io_timeout(Some(Duration::from_millis(300))).unwrap();
    let start = Instant::now();
    let e = c.simple_query("SELECT pg_sleep(5)").unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(e.is_connection_lost(), "{e:?}");
    assert!(c.is_closed());
    assert!(matches!(c.simple_query("SELECT 1"), Err(Error::Closed)));
}

#[test]
fn terminated_backend_is_connection_lost() {
    let pg = shared();
    let mut victim = connect(&unix(pg.conninfo(), "")).unwrap();
    let mut killer = connect(&unix(pg.conninfo(), "")).unwrap();
    killer
        .query_params(
            "SELECT pg_terminate_backend($1::int)",
            &[Some(&victim.backend_pid().to_string())],
        )
        .unwrap();
    // Gone once its backend has exited.
    let gone = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE pid = {}",
        victim.backend_pid()
    );
    poll_count(&unix(pg.conninfo(), ""), &gone, "0");
    let e = victim.simple_query("SELECT 1").unwrap_err();
    assert!(e.is_connection_lost(), "{e:?}");
    // Either the FATAL 57P01 was read, or the socket was already closed.
    if let Some(code) = e.sqlstate() {
        assert_eq!(code, SqlState::ADMIN_SHUTDOWN);
    }
    let e2 = victim.simple_query("SELECT 1").unwrap_err();
    assert!(e2.is_connection_lost());
}

/// Writes `sql` and reads until ReadyForQuery with the socket in non-blocking mode,
/// waiting with poll(2) like a level-triggered event loop. Returns the command tags.
fn nonblocking_round_trip(c: &mut Connection, batch: impl Fn(&mut Connection)) -> Vec<String> {
    c.set_nonblocking(true).unwrap();
    batch(c);
    let fd = c.as_raw_fd();
    let poll = |events: libc::c_short| {
        let mut p = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut p, 1, 5000) };
        assert!(rc > 0, "poll timed out or failed");
    };
    while !c.flush().unwrap() {
        poll(libc::POLLOUT);
    }
    assert!(!c.wants_write());
    let mut tags = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline);
        while let Some(m) = c.next_message().unwrap() {
            match m {
                Message::CommandComplete(b) => tags.push(b.tag().unwrap().to_string()),
                Message::ReadyForQuery(b) => {
                    c.note_ready_for_query(b.status());
                    assert!(!c.has_buffered_input());
                    c.set_nonblocking(false).unwrap();
                    return tags;
                }
                Message::ErrorResponse(_) => panic!("unexpected error"),
                _ => {}
            }
        }
        poll(libc::POLLIN);
        match c.fill() {
            Ok(0) => panic!("server closed"),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
    }
}

fn nonblocking_checks(c: &mut Connection) {
    // Spurious readability: nothing to read yet.
    c.set_nonblocking(true).unwrap();
    assert!(c.is_nonblocking());
    let e = c.fill().unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    let tags = nonblocking_round_trip(c, |c| {
        encode::query(c.out_buf(), "SELECT 1; SELECT generate_series(1, 3)").unwrap();
    });
    assert_eq!(tags, vec!["SELECT 1", "SELECT 3"]);
    let tags = nonblocking_round_trip(c, |c| {
        let out = c.out_buf();
        encode::parse(out, "s1", "SELECT $1::int * 2", &[]).unwrap();
        for v in ["1", "2", "3"] {
            encode::bind(out, "", "s1", [Some(v.as_bytes())]).unwrap();
            encode::execute(out, "", 0).unwrap();
        }
        encode::sync(out);
    });
    assert_eq!(tags, vec!["SELECT 1", "SELECT 1", "SELECT 1"]);
    // A large result exercises partial messages across reads (and TLS records).
    let tags = nonblocking_round_trip(c, |c| {
        encode::query(
            c.out_buf(),
            "SELECT repeat('x', 100000), g FROM generate_series(1, 50) g",
        )
        .unwrap();
    });
    assert_eq!(tags, vec!["SELECT 50"]);
    // The blocking API still works afterwards (and in non-blocking mode too).
    c.set_nonblocking(true).unwrap();
    assert_eq!(one(c, "SELECT 'nb'").as_deref(), Some("nb"));
    c.set_nonblocking(false).unwrap();
}

#[test]
fn nonblocking_round_trip_plain() {
    let pg = shared();
    let mut c = connect(&unix(pg.conninfo(), "")).unwrap();
    nonblocking_checks(&mut c);
    let mut c = connect(&tcp(pg.conninfo(), "sslmode=disable")).unwrap();
    nonblocking_checks(&mut c);
}

#[test]
fn start_up_errors_like_libpq() {
    let pg = shared();
    let ci = pg.conninfo();
    // Unknown database: 3D000, libpq wording.
    let e = connect(&tcp(&ci.with_dbname("no_such_db"), "sslmode=disable")).unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::INVALID_CATALOG_NAME));
    assert_eq!(
        e.to_string(),
        format!(
            "connection to server at \"127.0.0.1\", port {} failed: FATAL:  database \"no_such_db\" does not exist",
            ci.port
        )
    );
    // Missing socket.
    let e = connect("host=/nonexistent-dir port=5432").unwrap_err();
    assert_eq!(
        e.to_string(),
        "connection to server on socket \"/nonexistent-dir/.s.PGSQL.5432\" failed: No such file or directory\n\tIs the server running locally and accepting connections on that socket?"
    );
    // Refused TCP port: bind a listener, note its port, close it.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = connect(&format!("host=127.0.0.1 port={port} sslmode=disable")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("connection to server at \"127.0.0.1\", port {port} failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?")
    );
    assert!(!e.is_connection_lost());
    // Multi-host: the dead one first, then the live one.
    let mut c = connect(&format!(
        "host=127.0.0.1,127.0.0.1 port={port},{} user={} dbname={} sslmode=disable password={}",
        ci.port,
        ci.user,
        ci.dbname,
        ci.password.as_deref().unwrap_or("")
    ))
    .unwrap();
    assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
    // Both dead: both reported.
    let e = connect(&format!(
        "host=127.0.0.1,/nonexistent-dir port={port} sslmode=disable"
    ))
    .unwrap_err();
    assert_eq!(e.to_string().matches("failed:").count(), 2, "{e}");
    // Timeout against a listener that never answers.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let start = Instant::now();
    let e = connect(&format!(
        "host=127.0.0.1 port={port} sslmode=disable connect_timeout=2"
    ))
    .unwrap_err();
    assert!(e.to_string().ends_with("failed: timeout expired"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
    drop(l);
}

#[test]
fn target_session_attrs_on_primary() {
    let pg = shared();
    let ci = pg.conninfo();
    let mut c = connect(&unix(ci, "target_session_attrs=read-write")).unwrap();
    assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
    assert!(connect(&unix(ci, "target_session_attrs=primary")).is_ok());
    let e = connect(&unix(ci, "target_session_attrs=standby")).unwrap_err();
    assert!(
        e.to_string().ends_with("server is not in hot standby mode"),
        "{e}"
    );
    let e = connect(&unix(ci, "target_session_attrs=read-only")).unwrap_err();
    assert!(e.to_string().ends_with("session is not read-only"), "{e}");
    assert!(connect(&unix(ci, "target_session_attrs=prefer-standby")).is_ok());
}

fn auth_server(auth: AuthMethod, tls: TlsMode) -> Server {
    private(ClusterOptions {
        auth,
        tls,
        ..test_cluster_options()
    })
}

fn check_password_auth(pg: &Server) {
    let ci = pg.conninfo();
    for s in [unix(ci, ""), tcp(ci, "sslmode=disable")] {
        let mut c = connect(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
    }
    let bad = ci.with_user(&ci.user, Some("wrong"));
    let e = connect(&tcp(&bad, "sslmode=disable")).unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::INVALID_PASSWORD));
    assert_eq!(
        e.to_string(),
        format!(
            "connection to server at \"127.0.0.1\", port {} failed: FATAL:  password authentication failed for user \"{}\"",
            ci.port, ci.user
        )
    );
    let e = connect(&unix(&bad, "")).unwrap_err();
    assert_eq!(e.sqlstate(), Some(SqlState::INVALID_PASSWORD));
    let none = ci.with_user(&ci.user, None);
    let e = connect(&tcp(&none, "sslmode=disable")).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("failed: fe_sendauth: no password supplied"),
        "{e}"
    );
}

#[test]
fn auth_cleartext_password() {
    let pg = auth_server(AuthMethod::Password, TlsMode::Off);
    check_password_auth(&pg);
}

#[test]
fn auth_md5_and_pgpass() {
    let pg = auth_server(AuthMethod::Md5, TlsMode::Off);
    check_password_auth(&pg);
    let e = connect(&unix(pg.conninfo(), "channel_binding=require")).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "channel binding required but not supported by server's authentication request"
        ),
        "{e}"
    );
    // The password from a pgpass file found through HOME.
    use std::os::unix::fs::PermissionsExt;
    let ci = pg.conninfo();
    let home = tempfile::tempdir().unwrap();
    let pf = home.path().join(".pgpass");
    std::fs::write(
        &pf,
        format!(
            "127.0.0.1:{}:*:{}:{}\n",
            ci.port,
            ci.user,
            ci.password.clone().unwrap()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pf, std::fs::Permissions::from_mode(0o600)).unwrap();
    let env = Environment {
        home: Some(home.path().to_path_buf()),
        ..clean_env()
    };
    let params = Config::parse(&tcp(&ci.with_user(&ci.user, None), "sslmode=disable"))
        .unwrap()
        .resolve_in(&env)
        .unwrap();
    let mut c = Connection::connect(&params).unwrap();
    assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
}

#[test]
fn auth_scram_and_tls() {
    let pg = auth_server(AuthMethod::ScramSha256, TlsMode::On);
    check_password_auth(&pg);
    let ci = pg.conninfo();
    let root: PathBuf = ci
        .ssl_root_cert
        .clone()
        .expect("TLS server has a certificate");
    let root = root.display();

    // prefer (the default) and require: TLS, any certificate.
    for mode in ["", "sslmode=prefer", "sslmode=require"] {
        let mut c = connect(&tcp(ci, mode)).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert!(c.is_tls(), "{mode}");
        assert!(c.tls_info().is_some());
        assert_eq!(
            one(
                &mut c,
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
            )
            .as_deref(),
            Some("t")
        );
    }
    // SCRAM-SHA-256-PLUS with tls-server-end-point (the server checks the binding).
    for mode in [
        "sslmode=require channel_binding=require",
        "sslmode=require channel_binding=disable",
    ] {
        let c = connect(&tcp(ci, mode)).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert!(c.is_tls());
    }
    let e = connect(&unix(ci, "channel_binding=require")).unwrap_err();
    assert!(
        e.to_string().ends_with("channel binding is required, but server did not offer an authentication method that supports channel binding"),
        "{e}"
    );
    // allow and disable: plain.
    for mode in ["sslmode=allow", "sslmode=disable"] {
        let mut c = connect(&tcp(ci, mode)).unwrap();
        assert!(!c.is_tls(), "{mode}");
        assert_eq!(one(&mut c, "SELECT 1").as_deref(), Some("1"));
    }
    // Never TLS over a Unix socket, even with require (as libpq).
    assert!(!connect(&unix(ci, "sslmode=require")).unwrap().is_tls());

    // verify-ca / verify-full with the server's self-signed certificate as root.
    for s in [
        tcp(ci, &format!("sslmode=verify-ca sslrootcert={root}")),
        tcp(ci, &format!("sslmode=verify-full sslrootcert={root}")),
        format!(
            "host=localhost hostaddr=127.0.0.1 port={} user={} password={} sslmode=verify-full sslrootcert={root}",
            ci.port,
            ci.user,
            ci.password.clone().unwrap()
        ),
        // verify-ca ignores the name.
        format!(
            "host=wrong.example hostaddr=127.0.0.1 port={} user={} password={} sslmode=verify-ca sslrootcert={root}",
            ci.port,
            ci.user,
            ci.password.clone().unwrap()
        ),
    ] {
        let c = connect(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert!(c.is_tls());
    }
    // verify-full: a name not in the certificate fails.
    let e = connect(&format!(
        "host=wrong.example hostaddr=127.0.0.1 port={} user={} password={} sslmode=verify-full sslrootcert={root}",
        ci.port,
        ci.user,
        ci.password.clone().unwrap()
    ))
    .unwrap_err();
    assert!(e.to_string().contains("SSL error"), "{e}");
    assert!(e.to_string().contains("not valid for name"), "{e}");
    // verify-full/verify-ca against the system roots: the self-signed certificate fails.
    for mode in [
        "sslmode=verify-full sslrootcert=system",
        "sslmode=verify-ca sslrootcert=system",
    ] {
        match connect(&tcp(ci, mode)) {
            Ok(_) => panic!("{mode}: self-signed certificate accepted"),
            Err(e) => assert!(e.to_string().contains("SSL error"), "{mode}: {e}"),
        }
    }
    // require + explicit sslrootcert behaves as verify-ca: a wrong root fails.
    let other = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(other.path(), b"not a certificate").unwrap();
    let e = connect(&tcp(
        ci,
        &format!("sslmode=require sslrootcert={}", other.path().display()),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("SSL error"), "{e}");

    // A client certificate and key load (the server does not ask for one); a key
    // readable by others is refused as libpq does.
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (crt, key) = (dir.path().join("c.crt"), dir.path().join("c.key"));
        std::fs::copy(pg.data_dir().join("server.crt"), &crt).unwrap();
        std::fs::copy(pg.data_dir().join("server.key"), &key).unwrap();
        let mode = format!(
            "sslmode=require sslcert={} sslkey={}",
            crt.display(),
            key.display()
        );
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = connect(&tcp(ci, &mode)).unwrap_err();
        assert!(e.to_string().contains("has group or world access"), "{e}");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(connect(&tcp(ci, &mode)).unwrap().is_tls());
    }

    // Non-blocking I/O over TLS, cancel over a TLS connection.
    let mut c = connect(&tcp(ci, "sslmode=require")).unwrap();
    nonblocking_checks(&mut c);
    let token = c.cancel_token();
    let pid = c.backend_pid();
    let watch = tcp(ci, "sslmode=require");
    let t = std::thread::spawn(move || {
        wait_until_sleeping(&watch, pid);
        token.cancel()
    });
    let e = c.simple_query("SELECT pg_sleep(10)").unwrap_err();
    t.join().unwrap().unwrap();
    assert_eq!(e.sqlstate(), Some(SqlState::QUERY_CANCELED));
    // COPY over TLS.
    c.execute("CREATE TEMP TABLE x(a int)").unwrap();
    let rows: Vec<String> = (0..20000).map(|i| format!("{i}\n")).collect();
    assert_eq!(c.copy_in("COPY x FROM STDIN", &rows).unwrap(), 20000);
}

#[test]
fn tls_required_server_rejects_plain() {
    let pg = auth_server(AuthMethod::Trust, TlsMode::Required);
    let ci = pg.conninfo();
    let e = connect(&tcp(ci, "sslmode=disable")).unwrap_err();
    assert_eq!(
        e.sqlstate(),
        Some(SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    );
    assert!(e.to_string().contains("pg_hba.conf"), "{e}");
    // allow: plain rejected, then retried with TLS.
    let c = connect(&tcp(ci, "sslmode=allow")).unwrap();
    assert!(c.is_tls());
}
