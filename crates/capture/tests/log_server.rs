//! `--log` on logs a real PostgreSQL wrote: a private server logging every statement
//! (`log_min_duration_statement = 0`) to stderr and csvlog at once, a session of ours through
//! the project's wire client (simple and extended protocol: blocks, autocommit, bind values
//! with quotes, NULL and line breaks, a multi-line statement, an error rolling a block back, a
//! check violation, a multi-statement query string), and pgbench's tpcb-like in prepared and
//! extended mode. Both files read into the same transactions, with the shapes we ran.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hotbench_capture::log::{read_all, LogFormat, LogOptions};
use hotbench_capture::observed::ObservedTransaction;
use hotbench_pgserver::{testing, ConnInfo};
use hotbench_wire::{Config, Connection, Connector};

const PREFIX: &str = "%m [%p] %c %x %v %q%u@%d ";

fn connect(db: &ConnInfo) -> Connection {
    let p = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    Connector::new(p).connect().expect("connect")
}

fn under_ci() -> bool {
    std::env::var_os("HOTBENCH_CI").is_some_and(|v| !v.is_empty())
}

fn pgbench(server: &hotbench_pgserver::Server, db: &ConnInfo, args: &[&str]) -> bool {
    let bin = server.binaries().program("pgbench");
    if !bin.is_file() {
        assert!(
            !under_ci(),
            "pgbench not found beside the test server's binaries"
        );
        eprintln!("pgbench not found: its part is left out");
        return false;
    }
    let out = testing::without_libpq_env(&mut std::process::Command::new(bin))
        .args([
            "-h",
            &db.socket_dir.display().to_string(),
            "-p",
            &db.port.to_string(),
            "-U",
            &db.user,
        ])
        .args(args)
        .arg(&db.dbname)
        .output()
        .expect("pgbench runs");
    assert!(
        out.status.success(),
        "pgbench {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// The collector's two files, once both hold `marker` (it writes them apart).
fn log_files(dir: &Path, marker: &str) -> (PathBuf, PathBuf) {
    let (log, csv) = (dir.join("pg.log"), dir.join("pg.csv"));
    let t0 = Instant::now();
    loop {
        let has = |p: &Path| std::fs::read_to_string(p).is_ok_and(|t| t.contains(marker));
        if has(&log) && has(&csv) {
            return (log, csv);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the logs never showed {marker}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn shape(t: &ObservedTransaction) -> Vec<String> {
    t.statements.iter().map(|s| s.sql.clone()).collect()
}

#[test]
fn stderr_and_csvlog_of_a_real_server_read_into_the_transactions_that_ran() {
    let (server, db) = logging_server();
    our_session(&db);
    let ran_pgbench = run_pgbench(&server, &db);
    let (log, csv) = logs_once_done(&server, &db);
    let from_log = read_both_formats_alike(&log, &csv);
    check_our_session(&from_log);
    if ran_pgbench {
        check_pgbench_transactions(&from_log);
    }
}

fn q(c: &mut Connection, sql: &str) {
    c.simple_query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// A private server logging every statement to stderr and csvlog, and its database `app`.
fn logging_server() -> (hotbench_pgserver::Server, ConnInfo) {
    let mut cluster = testing::test_cluster_options();
    cluster.settings.extend(
        [
            ("log_min_duration_statement", "0"),
            ("log_line_prefix", PREFIX),
            ("logging_collector", "on"),
            ("log_destination", "stderr,csvlog"),
            ("log_filename", "pg.log"),
            ("log_connections", "on"),
            ("log_disconnections", "on"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let server = testing::private(cluster);
    let db = server.create_database("app").expect("database");
    (server, db)
}

/// Our session: the simple and extended protocol cases the log must read back.
fn our_session(db: &ConnInfo) {
    let mut c = connect(db);
    q(
        &mut c,
        "create table acct (id int primary key, v int not null check (v >= 0))",
    );
    q(
        &mut c,
        "insert into acct select g, 100 from generate_series(1, 10) g",
    );
    // Read-check-write, with a multi-line statement.
    q(&mut c, "begin");
    q(&mut c, "select v from acct where id = 3 for update");
    q(&mut c, "update acct\n   set v = 95\n where id = 3");
    q(&mut c, "commit");
    // Extended protocol: autocommit, then a block with bind values and an error.
    c.query_params("select v from acct where id = $1", &[Some("4")])
        .expect("select");
    q(&mut c, "begin");
    c.query_params(
        "update acct set v = v - $1 where id = $2 and $3::text is null",
        &[Some("5"), Some("4"), None],
    )
    .expect("update");
    c.query_params("select $1::text", &[Some("it's\n\ta, $2 = 'x'")])
        .expect("text");
    assert!(c.simple_query("select 1/0").is_err());
    assert!(c.simple_query("select 1").is_err());
    q(&mut c, "rollback");
    assert!(c
        .simple_query("update acct set v = -1 where id = 1")
        .is_err());
    q(
        &mut c,
        "begin; update acct set v = v + 1 where id = 5; commit;",
    );
    q(
        &mut c,
        "update acct set v = v + 1 where id = 6; update acct set v = v + 1 where id = 7",
    );
    c.close();
}

/// pgbench's tpcb-like in prepared and extended mode (false when pgbench is not at hand).
fn run_pgbench(server: &hotbench_pgserver::Server, db: &ConnInfo) -> bool {
    pgbench(server, db, &["-i", "-s", "1", "-q"])
        && pgbench(server, db, &["-M", "prepared", "-t", "3", "-c", "2"])
        && pgbench(server, db, &["-M", "extended", "-t", "2", "-c", "1", "-N"])
}

/// The two log files, once a marker statement run last shows in both.
fn logs_once_done(server: &hotbench_pgserver::Server, db: &ConnInfo) -> (PathBuf, PathBuf) {
    let mut c = connect(db);
    q(&mut c, "select 'log test done'");
    c.close();
    let (log, csv) = log_files(&server.data_dir().join("log"), "log test done");
    if std::env::var_os("HOTBENCH_SHOW_LOG").is_some() {
        eprintln!("{}", std::fs::read_to_string(&log).unwrap_or_default());
    }
    (log, csv)
}

/// The stderr log (prefix given and inferred) and the csvlog read into the same
/// transactions; the stderr log's, prefix given.
fn read_both_formats_alike(log: &Path, csv: &Path) -> Vec<ObservedTransaction> {
    let given = LogOptions {
        prefix: Some(PREFIX.into()),
        ..LogOptions::default()
    };
    let (from_log, s_log) = read_all(log, &given).expect("stderr log");
    let (inferred, s_inf) =
        read_all(log, &LogOptions::default()).expect("stderr log, prefix inferred");
    let (from_csv, s_csv) = read_all(csv, &LogOptions::default()).expect("csvlog");
    assert_eq!(
        (s_log.format, s_csv.format),
        (LogFormat::Stderr, LogFormat::Csv)
    );
    assert!(s_inf.prefix_inferred);
    assert_eq!(s_log.skipped_lines, 0, "{:?}", s_log.notes);
    for (name, other) in [("inferred prefix", &inferred), ("csvlog", &from_csv)] {
        assert_eq!(other.len(), from_log.len(), "{name}");
        for (a, b) in from_log.iter().zip(other.iter()) {
            assert_eq!(shape(a), shape(b), "{name}");
            assert_eq!(
                (&a.session, a.rolled_back, a.autocommit, a.complete),
                (&b.session, b.rolled_back, b.autocommit, b.complete),
                "{name}"
            );
            let pa: Vec<_> = a.statements.iter().map(|s| &s.params).collect();
            let pb: Vec<_> = b.statements.iter().map(|s| &s.params).collect();
            assert_eq!(pa, pb, "{name}");
        }
    }
    from_log
}

/// Our session's transactions: their statements, flags, bind values and timing.
fn check_our_session(from_log: &[ObservedTransaction]) {
    // Ours: the session that created acct.
    let ours_session = from_log
        .iter()
        .find(|t| shape(t).iter().any(|s| s.starts_with("create table acct")))
        .map(|t| t.session.clone())
        .expect("our session");
    let ours: Vec<&ObservedTransaction> = from_log
        .iter()
        .filter(|t| t.session == ours_session)
        .collect();
    let shapes: Vec<Vec<String>> = ours.iter().map(|t| shape(t)).collect();
    let want: Vec<Vec<&str>> = vec![
        vec!["create table acct (id int primary key, v int not null check (v >= 0))"],
        vec!["insert into acct select g, 100 from generate_series(1, 10) g"],
        vec![
            "begin",
            "select v from acct where id = 3 for update",
            "update acct\n   set v = 95\n where id = 3",
            "commit",
        ],
        vec!["select v from acct where id = $1"],
        vec![
            "begin",
            "update acct set v = v - $1 where id = $2 and $3::text is null",
            "select $1::text",
            "select 1/0",
            "rollback",
        ],
        vec!["update acct set v = -1 where id = 1"],
        vec!["begin", "update acct set v = v + 1 where id = 5", "commit"],
        vec![
            "update acct set v = v + 1 where id = 6",
            "update acct set v = v + 1 where id = 7",
        ],
    ];
    assert_eq!(shapes, want);
    let flags: Vec<(bool, bool, bool)> = ours
        .iter()
        .map(|t| (t.autocommit, t.rolled_back, t.complete))
        .collect();
    assert_eq!(
        flags,
        [
            (true, false, true),
            (true, false, true),
            (false, false, true),
            (true, false, true),
            (false, true, true),
            (true, true, true),
            (false, false, true),
            (false, false, true),
        ]
    );
    assert_eq!(ours[3].statements[0].params, [Some("4".to_string())]);
    assert_eq!(
        ours[4].statements[1].params,
        [Some("5".into()), Some("4".into()), None]
    );
    assert_eq!(
        ours[4].statements[2].params,
        [Some("it's\n\ta, $2 = 'x'".into())]
    );
    // Think time: statements of a block start in order, each after the one before ended.
    for t in &ours {
        for w in t.statements.windows(2) {
            let end = w[0].started_at_s + w[0].duration_s.unwrap_or(0.0);
            assert!(w[1].started_at_s + 0.0015 >= end, "{t:#?}");
        }
    }
}

/// pgbench's transactions: their count, statements and bind values.
fn check_pgbench_transactions(from_log: &[ObservedTransaction]) {
    let tpcb: Vec<&ObservedTransaction> = from_log
        .iter()
        .filter(|t| {
            shape(t)
                .iter()
                .any(|s| s.starts_with("UPDATE pgbench_accounts"))
        })
        .collect();
    // 2 clients × 3 (prepared) + 1 × 2 (extended, -N: no tellers/branches).
    assert_eq!(tpcb.len(), 8, "{tpcb:#?}");
    let full = tpcb.iter().filter(|t| t.statements.len() == 7).count();
    let simple = tpcb.iter().filter(|t| t.statements.len() == 5).count();
    assert_eq!((full, simple), (6, 2));
    for t in &tpcb {
        let s = shape(t);
        assert_eq!((s[0].as_str(), s[s.len() - 1].as_str()), ("BEGIN", "END"));
        assert!(t.complete && !t.rolled_back && !t.autocommit);
        let upd = &t.statements[1];
        assert_eq!(upd.params.len(), 2, "{upd:?}");
        assert!(upd
            .params
            .iter()
            .all(|p| p.as_deref().is_some_and(|v| v.parse::<i64>().is_ok())));
    }
}
