//! Connection options, case by case: conninfo strings, URLs, CLI precedence, environment,
//! defaults, pgpass, and masking (in the style of rust-postgres `tests/test/parse.rs`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use hotbench_wire::{Config, Environment, Form, Host, SslMode, TargetSessionAttrs};

fn check(s: &str, expected: &[(&str, &str)]) {
    let c = Config::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    let got: Vec<(&str, String)> = c.pairs();
    let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(got, expected, "parsing {s:?}");
}

fn check_err(s: &str, expected: &str) {
    match Config::parse(s) {
        Ok(c) => panic!("{s:?} parsed as {c:?}, expected error {expected:?}"),
        Err(e) => assert_eq!(e.to_string(), expected, "parsing {s:?}"),
    }
}

#[test]
fn conninfo_basic() {
    check("", &[]);
    check("   ", &[]);
    check(
        "host=localhost port=5433",
        &[("host", "localhost"), ("port", "5433")],
    );
    check(
        "host = localhost  user=bob dbname=db",
        &[("host", "localhost"), ("user", "bob"), ("dbname", "db")],
    );
    check("dbname=", &[("dbname", "")]);
}

#[test]
fn conninfo_quoting() {
    check("password='a b'", &[("password", "a b")]);
    check(r"password='it\'s'", &[("password", "it's")]);
    check(r"password='back\\slash'", &[("password", r"back\slash")]);
    check(r"password=a\ b", &[("password", "a b")]);
    check("password=''", &[("password", "")]);
    check(
        "options='-c statement_timeout=5s -c work_mem=64MB' application_name=x",
        &[
            ("application_name", "x"),
            ("options", "-c statement_timeout=5s -c work_mem=64MB"),
        ],
    );
}

#[test]
fn conninfo_errors() {
    check_err(
        "host",
        "missing \"=\" after \"host\" in connection info string",
    );
    check_err(
        "host=a port",
        "missing \"=\" after \"port\" in connection info string",
    );
    check_err(
        "password='abc",
        "unterminated quoted string in connection info string",
    );
    check_err("hots=localhost", "invalid connection option \"hots\"");
    check_err("sslmode=maybe", "invalid sslmode value: \"maybe\"");
    check_err(
        "connect_timeout=soon",
        "invalid integer value \"soon\" for connection option \"connect_timeout\"",
    );
    check_err(
        "target_session_attrs=fast",
        "invalid target_session_attrs value: \"fast\"",
    );
    check_err(
        "channel_binding=maybe",
        "invalid channel_binding value: \"maybe\"",
    );
}

#[test]
fn conninfo_typed_and_ignored_options() {
    let c =
        Config::parse("sslmode=verify-full target_session_attrs=read-write keepalives=1").unwrap();
    assert_eq!(c.sslmode, Some(SslMode::VerifyFull));
    assert_eq!(c.target_session_attrs, Some(TargetSessionAttrs::ReadWrite));
    assert_eq!(c.form, Form::Conninfo);
}

#[test]
fn url_basic() {
    check("postgresql://", &[]);
    check("postgres://", &[]);
    check("postgresql://localhost", &[("host", "localhost")]);
    check(
        "postgresql://localhost:5433/mydb",
        &[("host", "localhost"), ("port", "5433"), ("dbname", "mydb")],
    );
    check(
        "postgresql://user:secret@localhost/mydb",
        &[
            ("host", "localhost"),
            ("user", "user"),
            ("password", "secret"),
            ("dbname", "mydb"),
        ],
    );
    check(
        "postgresql://user@/db",
        &[("user", "user"), ("dbname", "db")],
    );
    check("postgresql:///db", &[("dbname", "db")]);
    check("postgresql://:5433", &[("port", "5433")]);
    assert_eq!(Config::parse("postgresql://h").unwrap().form, Form::Url);
}

#[test]
fn url_percent_decoding() {
    check(
        "postgresql://us%40er:p%3Ass%2Fw@h/d%20b",
        &[
            ("host", "h"),
            ("user", "us@er"),
            ("password", "p:ss/w"),
            ("dbname", "d b"),
        ],
    );
    check(
        "postgresql://%2Ftmp%2Fsock/db",
        &[("host", "/tmp/sock"), ("dbname", "db")],
    );
    check_err(
        "postgresql://h/d%zz",
        "invalid percent-encoded token: \"d%zz\"",
    );
    check_err(
        "postgresql://h/d%2",
        "invalid percent-encoded token: \"d%2\"",
    );
    check_err(
        "postgresql://h/d%00",
        "forbidden value %00 in percent-encoded value: \"d%00\"",
    );
}

#[test]
fn url_multiple_hosts_and_ipv6() {
    check(
        "postgresql://h1:5432,h2:5433/db",
        &[("host", "h1,h2"), ("port", "5432,5433"), ("dbname", "db")],
    );
    check(
        "postgresql://h1,h2:5433",
        &[("host", "h1,h2"), ("port", ",5433")],
    );
    check(
        "postgresql://[::1]:5433/db",
        &[("host", "::1"), ("port", "5433"), ("dbname", "db")],
    );
    check(
        "postgresql://[2001:db8::1],h2",
        &[("host", "2001:db8::1,h2")],
    );
    assert!(Config::parse("postgresql://[::1/db").is_err());
    assert!(Config::parse("postgresql://[]/db").is_err());
}

#[test]
fn url_query_parameters() {
    check(
        "postgresql:///db?host=/var/run/postgresql&port=5444&sslmode=disable&application_name=my%20app",
        &[
            ("host", "/var/run/postgresql"),
            ("port", "5444"),
            ("dbname", "db"),
            ("sslmode", "disable"),
            ("application_name", "my app"),
        ],
    );
    check(
        "postgresql://h/db?ssl=true",
        &[("host", "h"), ("dbname", "db"), ("sslmode", "require")],
    );
    check_err(
        "postgresql://h/db?foo=bar",
        "invalid URI query parameter: \"foo\"",
    );
    check_err(
        "postgresql://h/db?sslmode",
        "missing key/value separator \"=\" in URI query parameter: \"sslmode\"",
    );
}

#[test]
fn masked_never_shows_password() {
    let c = Config::parse("host=h user=u password='s3cr3t pw' dbname=d").unwrap();
    let m = c.masked();
    assert_eq!(m, "host=h user=u password=******** dbname=d");
    assert!(!format!("{c:?}").contains("s3cr3t"));
    assert!(!c.to_string().contains("s3cr3t"));

    let c = Config::parse("postgresql://u:s3cr3t@h:5433/d?sslmode=require").unwrap();
    assert_eq!(
        c.masked(),
        "postgresql://u:********@h:5433/d?sslmode=require"
    );
    assert_eq!(
        c.masked_conninfo(),
        "host=h port=5433 user=u password=******** dbname=d sslmode=require"
    );
    let c = Config::parse("postgresql://u@h1:1,h2:2/d").unwrap();
    assert_eq!(c.masked(), "postgresql://u@h1:1,h2:2/d");
    let c = Config::parse("host=/tmp port=5 password=x").unwrap();
    assert_eq!(c.masked_url(), "postgresql://:********@?host=/tmp&port=5");
}

#[test]
fn conninfo_round_trip() {
    let s = "host=h port=1 user='a b' password='it\\'s' dbname=d options='-c x=1'";
    let c = Config::parse(s).unwrap();
    assert_eq!(Config::parse(&c.to_conninfo_string()).unwrap(), c);
    let url = "postgresql://u%20x:p%40@h1:1,[::1]:2/d%2F?sslmode=require";
    let c = Config::parse(url).unwrap();
    let back = Config::parse(&c.to_url_string()).unwrap();
    assert_eq!(back, c);
}

#[test]
fn cli_precedence_like_pgbench() {
    // -h/-p/-U then a plain dbname.
    let c = Config::from_cli(Some("h"), Some("5433"), Some("u"), Some("db")).unwrap();
    assert_eq!(c.host.as_deref(), Some("h"));
    assert_eq!(c.port.as_deref(), Some("5433"));
    assert_eq!(c.user.as_deref(), Some("u"));
    assert_eq!(c.dbname.as_deref(), Some("db"));
    // A conninfo dbname is expanded and wins over -h (libpq expand_dbname).
    let c = Config::from_cli(Some("h"), None, Some("u"), Some("host=other dbname=x")).unwrap();
    assert_eq!(c.host.as_deref(), Some("other"));
    assert_eq!(c.user.as_deref(), Some("u"));
    assert_eq!(c.dbname.as_deref(), Some("x"));
    let c = Config::from_cli(None, Some("1"), None, Some("postgresql://a:2/b")).unwrap();
    assert_eq!(c.port.as_deref(), Some("2"));
    assert_eq!(c.form, Form::Url);
    assert!(Config::looks_like_conninfo("dbname=x"));
    assert!(!Config::looks_like_conninfo("bench"));
    assert!(Config::from_cli(None, None, None, Some("nokey")).is_ok());
}

fn env(vars: &[(&str, &str)]) -> Environment {
    Environment {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<HashMap<_, _>>(),
        os_user: Some("osuser".into()),
        home: Some(PathBuf::from("/nonexistent-home")),
        probe_socket_dirs: false,
    }
}

#[test]
fn defaults_like_libpq() {
    let p = Config::new().resolve_in(&env(&[])).unwrap();
    assert_eq!(p.user, "osuser");
    assert_eq!(p.dbname, "osuser");
    assert_eq!(p.sslmode, SslMode::Prefer);
    assert_eq!(p.connect_timeout, None);
    let hosts: Vec<&Host> = p.targets.iter().map(|t| &t.host).collect();
    assert_eq!(
        hosts,
        vec![
            &Host::Unix("/var/run/postgresql".into()),
            &Host::Unix("/tmp".into())
        ]
    );
    assert!(p
        .targets
        .iter()
        .all(|t| t.port == 5432 && t.password.is_none()));
    assert_eq!(
        p.targets[1].socket_path(),
        Some(PathBuf::from("/tmp/.s.PGSQL.5432"))
    );
}

#[test]
fn environment_fills_gaps_options_win() {
    let e = env(&[
        ("PGHOST", "envhost"),
        ("PGPORT", "6000"),
        ("PGUSER", "envuser"),
        ("PGPASSWORD", "envpw"),
        ("PGDATABASE", "envdb"),
        ("PGSSLMODE", "require"),
        ("PGAPPNAME", "envapp"),
        ("PGCONNECT_TIMEOUT", "1"),
        ("PGOPTIONS", "-c work_mem=1MB"),
        ("PGSSLROOTCERT", "/x/root.crt"),
    ]);
    let p = Config::new().resolve_in(&e).unwrap();
    assert_eq!(p.targets[0].host, Host::Tcp("envhost".into()));
    assert_eq!(p.targets[0].port, 6000);
    assert_eq!(p.targets[0].password.as_deref(), Some("envpw"));
    assert_eq!(p.user, "envuser");
    assert_eq!(p.dbname, "envdb");
    assert_eq!(p.sslmode, SslMode::Require);
    assert_eq!(p.application_name.as_deref(), Some("envapp"));
    assert_eq!(
        p.connect_timeout,
        Some(Duration::from_secs(2)),
        "1 s counts as 2"
    );
    assert_eq!(p.options.as_deref(), Some("-c work_mem=1MB"));
    assert_eq!(p.sslrootcert.as_deref(), Some("/x/root.crt"));
    assert!(p.sslrootcert_explicit);

    let c = Config::from_cli(Some("clihost"), None, Some("cliuser"), Some("clidb")).unwrap();
    let p = c.resolve_in(&e).unwrap();
    assert_eq!(p.targets[0].host, Host::Tcp("clihost".into()));
    assert_eq!(p.targets[0].port, 6000);
    assert_eq!(p.user, "cliuser");
    assert_eq!(p.dbname, "clidb");

    // Invalid environment values are reported with their variable.
    let err = Config::new()
        .resolve_in(&env(&[("PGSSLMODE", "bogus")]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid sslmode value: \"bogus\" (from PGSSLMODE)"
    );
}

#[test]
fn hostaddr_and_socket_dirs() {
    let e = env(&[]);
    let p = Config::parse("host=/run/pg port=5999")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    assert_eq!(p.targets[0].host, Host::Unix("/run/pg".into()));
    assert_eq!(
        p.targets[0].socket_path(),
        Some("/run/pg/.s.PGSQL.5999".into())
    );
    let p = Config::parse("host=db.example hostaddr=10.0.0.1")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    assert_eq!(p.targets[0].host, Host::Tcp("db.example".into()));
    assert_eq!(p.targets[0].hostaddr, Some("10.0.0.1".parse().unwrap()));
    assert_eq!(
        p.targets[0].describe(None),
        "connection to server at \"db.example\" (10.0.0.1), port 5432"
    );
    let p = Config::parse("hostaddr=127.0.0.1")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    assert_eq!(
        p.targets[0].describe(None),
        "connection to server at \"127.0.0.1\", port 5432"
    );
    let err = Config::parse("hostaddr=nope")
        .unwrap()
        .resolve_in(&e)
        .unwrap_err();
    assert_eq!(err.to_string(), "could not parse network address \"nope\"");
}

#[test]
fn multi_host_port_lists() {
    let e = env(&[]);
    let p = Config::parse("postgresql://a:1,b:2,c/db")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    let got: Vec<(String, u16)> = p
        .targets
        .iter()
        .map(|t| (t.host_name().to_string(), t.port))
        .collect();
    assert_eq!(
        got,
        vec![("a".into(), 1), ("b".into(), 2), ("c".into(), 5432)]
    );
    let p = Config::parse("host=a,b port=7")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    assert!(p.targets.iter().all(|t| t.port == 7));
    let err = Config::parse("host=a,b,c port=1,2")
        .unwrap()
        .resolve_in(&e)
        .unwrap_err();
    assert_eq!(err.to_string(), "could not match 2 port numbers to 3 hosts");
    let err = Config::parse("port=99999")
        .unwrap()
        .resolve_in(&e)
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid port number: \"99999\"");
    let err = Config::parse("port=x").unwrap().resolve_in(&e).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid integer value \"x\" for connection option \"port\""
    );
    let err = Config::parse("host=a,b hostaddr=1.1.1.1")
        .unwrap()
        .resolve_in(&e)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "could not match 2 host names to 1 hostaddr values"
    );
}

#[test]
fn application_name_fallback() {
    let e = env(&[]);
    let mut c = Config::new();
    c.set("fallback_application_name", "pgbench").unwrap();
    assert_eq!(
        c.resolve_in(&e).unwrap().application_name.as_deref(),
        Some("pgbench")
    );
    let p = c.resolve_in(&env(&[("PGAPPNAME", "mine")])).unwrap();
    assert_eq!(p.application_name.as_deref(), Some("mine"));
}

#[test]
fn pgpass_per_host() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let pf = dir.path().join(".pgpass");
    std::fs::write(
        &pf,
        "a:5432:db:u:pw-a\nlocalhost:5432:*:u:pw-local\n*:*:*:u:pw-any\n",
    )
    .unwrap();
    std::fs::set_permissions(&pf, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut e = env(&[]);
    e.home = Some(dir.path().to_path_buf());
    let p = Config::parse("host=a,b,/tmp user=u dbname=db")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    let pws: Vec<Option<&str>> = p.targets.iter().map(|t| t.password.as_deref()).collect();
    assert_eq!(pws, vec![Some("pw-a"), Some("pw-any"), Some("pw-local")]);
    // An explicit password wins over pgpass.
    let p = Config::parse("host=a user=u dbname=db password=given")
        .unwrap()
        .resolve_in(&e)
        .unwrap();
    assert_eq!(p.targets[0].password.as_deref(), Some("given"));
    // PGPASSFILE points elsewhere; world-readable files are ignored with a warning.
    let other = dir.path().join("other");
    std::fs::write(&other, "*:*:*:*:other-pw\n").unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut e2 = e.clone();
    e2.vars
        .insert("PGPASSFILE".into(), other.to_string_lossy().into_owned());
    let p = Config::parse("host=a user=u")
        .unwrap()
        .resolve_in(&e2)
        .unwrap();
    assert_eq!(p.targets[0].password, None);
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].contains("has group or world access"));
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o600)).unwrap();
    let p = Config::parse("host=a user=u")
        .unwrap()
        .resolve_in(&e2)
        .unwrap();
    assert_eq!(p.targets[0].password.as_deref(), Some("other-pw"));
}

#[test]
fn debug_of_params_hides_password() {
    let p = Config::parse("host=a password=topsecret")
        .unwrap()
        .resolve_in(&env(&[]))
        .unwrap();
    assert!(!format!("{p:?}").contains("topsecret"));
}

#[test]
fn thread_safety() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<hotbench_wire::Connection>();
    send::<hotbench_wire::Connector>();
    sync::<hotbench_wire::Connector>();
    send::<hotbench_wire::CancelToken>();
    sync::<hotbench_wire::CancelToken>();
    send::<hotbench_wire::Error>();
    sync::<hotbench_wire::Error>();
}
