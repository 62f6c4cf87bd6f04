//! What diagnose leaves in a server's log, read from a private server that logs every
//! statement with its `application_name` (`log_statement = all`, `%a` in the prefix), while
//! two sessions queue on a row another holds: as a `pg_monitor`-only role it leaves no ERROR
//! (nothing it may not run is run) and none of its transactions counts as the user's; as a
//! superuser its key read is a plain prepared `SELECT … WHERE ctid OPERATOR(pg_catalog.=) $1`
//! on the named table;
//! every statement either role ran is one of those docs/diagnosis.md lists.

use std::time::{Duration, Instant};

use hotbench_diagnose::{diagnose, Options};
use hotbench_pgserver::{testing, ConnInfo};
use hotbench_wire::{Config, ConnectParams, Connection, Connector};

fn params(db: &ConnInfo, user: &str) -> ConnectParams {
    let mut p = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    p.user = user.to_string();
    p.application_name = Some("app".into());
    p
}

fn connect(db: &ConnInfo) -> Connection {
    Connector::new(params(db, &db.user))
        .connect()
        .expect("connect")
}

/// The statements docs/diagnosis.md lists under "What diagnose executes" (one a line in the
/// section's first fenced block; `«…»` stands for a name or value read at run time).
fn documented() -> Vec<String> {
    let doc = include_str!("../../../docs/diagnosis.md");
    let section = doc
        .split("\n## What diagnose executes")
        .nth(1)
        .expect("docs/diagnosis.md has a \"What diagnose executes\" section");
    let block = section.split("```").nth(1).expect("a fenced block");
    block
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `stmt` is `pattern` with each `«…»` standing for any text.
fn matches(pattern: &str, stmt: &str) -> bool {
    let mut parts: Vec<&str> = Vec::new();
    let mut rest = pattern;
    while let Some(i) = rest.find('«') {
        let Some(j) = rest[i..].find('»') else { break };
        parts.push(&rest[..i]);
        rest = &rest[i + j + '»'.len_utf8()..];
    }
    parts.push(rest);
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return stmt == pattern;
    }
    let Some(mut s) = stmt.strip_prefix(first) else {
        return false;
    };
    for p in &parts[1..parts.len() - 1] {
        match s.find(p) {
            Some(i) => s = &s[i + p.len()..],
            None => return false,
        }
    }
    s.len() >= last.len() && s.ends_with(last)
}

/// A logged statement as the docs write it: the probe's tag dropped, whitespace collapsed.
fn normalized(s: &str) -> String {
    let s = s.trim_start_matches("<unnamed>: ");
    let s = s.replace("/* hotbench-probe */ ", "");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn diagnose_leaves_no_error_and_runs_only_the_documented_statements() {
    let mut cluster = testing::test_cluster_options();
    cluster.settings.extend([
        ("log_statement".to_string(), "all".to_string()),
        ("log_line_prefix".to_string(), "%m [%p] %a: ".to_string()),
    ]);
    let server = testing::private(cluster);
    let db = server.create_database("app").expect("database");
    let mon = "diag_monitor";
    server
        .psql(&format!("create role {mon} login in role pg_monitor;"))
        .expect("role");
    hotbench_pgserver::server::psql(
        server.binaries(),
        &db,
        "create extension if not exists pg_stat_statements;
         create table acct (id int primary key, v int not null);
         insert into acct select g, 0 from generate_series(1, 10) g;",
    )
    .expect("setup");
    // A row held by a session idle in its transaction, two updates queued behind it.
    let mut holder = connect(&db);
    holder
        .simple_query("begin; select * from acct where id = 3 for update;")
        .expect("hold");
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let mut c = connect(&db);
            std::thread::spawn(move || {
                let _ = c.simple_query("update acct set v = v + 1 where id = 3");
                c.close();
            })
        })
        .collect();
    let mut watch = connect(&db);
    let t0 = Instant::now();
    while !watch
        .simple_query("select count(*) = 2 from pg_stat_activity where wait_event_type = 'Lock'")
        .ok()
        .and_then(|r| r.first().and_then(|q| q.get(0, 0)).map(|v| v == "t"))
        .unwrap_or(false)
    {
        assert!(t0.elapsed() < Duration::from_secs(60), "no lock waiters");
        std::thread::sleep(Duration::from_millis(20));
    }
    let log_from = std::fs::metadata(server.log_file()).map_or(0, |m| m.len());
    let mut opts = Options::new(Duration::from_millis(1500));
    opts.interval = Duration::from_millis(20);
    let as_monitor = diagnose(&params(&db, mon), &opts, &|| false).expect("diagnose as monitor");
    let as_superuser =
        diagnose(&params(&db, &db.user), &opts, &|| false).expect("diagnose as superuser");
    holder.simple_query("commit").expect("commit");
    for w in waiters {
        w.join().expect("waiter");
    }
    let log = std::fs::read(server.log_file()).expect("server log");
    let log = String::from_utf8_lossy(&log[log_from as usize..]).into_owned();
    if std::env::var_os("HOTBENCH_SHOW_LOG").is_some() {
        eprintln!("{log}");
    }
    let ours: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once("] hotbench diagnose: ").map(|(_, r)| r))
        .collect();
    let errors: Vec<&&str> = ours
        .iter()
        .filter(|l| l.starts_with("ERROR:") || l.starts_with("FATAL:"))
        .collect();
    assert!(
        errors.is_empty(),
        "diagnose left errors in the log: {errors:#?}"
    );

    // Its own transactions are not the user's: nothing committed or rolled back meanwhile.
    for (who, d) in [("monitor", &as_monitor), ("superuser", &as_superuser)] {
        let db_delta = d.probe.server.database.clone().expect("database deltas");
        assert_eq!(db_delta.rollbacks, 0, "{who}: {db_delta:?}");
        eprintln!("{who}: {db_delta:?} notes {:?}", d.notes);
    }
    assert!(
        as_superuser.notes.iter().any(|n| n.contains("pg_monitor")),
        "{:?}",
        as_superuser.notes
    );
    assert_eq!(
        as_superuser.probe.hot_rows.first().map(|r| r.key.as_str()),
        Some("id=3")
    );

    let statements: Vec<String> = ours
        .iter()
        .filter_map(|l| {
            l.strip_prefix("LOG:  statement: ")
                .or_else(|| l.strip_prefix("LOG:  execute "))
        })
        .map(normalized)
        .collect();
    // The key read, visible as what it is.
    assert!(
        statements
            .iter()
            .any(|s| s
                == "select \"id\" from \"public\".\"acct\" where ctid operator(pg_catalog.=) $1"),
        "{statements:#?}"
    );
    if std::env::var_os("HOTBENCH_SHOW_LOG").is_some() {
        let mut seen = std::collections::BTreeSet::new();
        for s in &statements {
            if seen.insert(s) {
                eprintln!("STMT {s}");
            }
        }
    }
    let doc = documented();
    let undocumented: Vec<&String> = statements
        .iter()
        .filter(|s| !doc.iter().any(|d| matches(d, s)))
        .collect();
    assert!(
        undocumented.is_empty(),
        "statements docs/diagnosis.md does not list: {undocumented:#?}"
    );
}
