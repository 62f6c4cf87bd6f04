//! `hotbench capture` is read-only: on a private server that logs every statement with its
//! session's `application_name` (`log_statement = all`), while the user's sessions run a
//! read-check-write, a queue claim and a counter increment, every statement the capture's
//! own sessions ran is read back from the log (with `capture::log`, the `--log` reader) and
//! none writes (no INSERT/UPDATE/DELETE/MERGE, no row lock, no sequence move, no DDL,
//! VACUUM, ANALYZE, COPY FROM, LOCK or call of a user's code) and none failed.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use hotbench_capture::log::{read_log_from, LogOptions};
use hotbench_diagnose::shape::{touches, Access};
use hotbench_pgserver::{testing, ConnInfo};
use hotbench_wire::{Config, Connection, Connector};

const PREFIX: &str = "%m [%p] %a: ";

fn connect(db: &ConnInfo, app: &str) -> Connection {
    let mut p = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    p.application_name = Some(app.into());
    Connector::new(p).connect().expect("connect")
}

/// First words that change something (or may: a call runs a user's code).
const WRITES: [&str; 30] = [
    "insert",
    "update",
    "delete",
    "merge",
    "truncate",
    "create",
    "alter",
    "drop",
    "grant",
    "revoke",
    "comment",
    "vacuum",
    "analyze",
    "analyse",
    "cluster",
    "reindex",
    "refresh",
    "lock",
    "call",
    "do",
    "copy",
    "import",
    "security",
    "reassign",
    "notify",
    "listen",
    "prepare transaction",
    "checkpoint",
    "load",
    "discard sequences",
];

/// What pg_dump (the schema's source when one fits the server) runs in its own read-only
/// transaction besides reads: its session's settings (`search_path` emptied,
/// `restrict_nonsystem_relation_kind`) and an ACCESS SHARE lock on each table it dumps, taken
/// with `--lock-wait-timeout` so it never waits on a user's lock (it conflicts only with an
/// ACCESS EXCLUSIVE one). Anything else pg_dump ran would still be flagged.
fn pg_dump_reads(sql: &str) -> bool {
    let lower = sql.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let session_setting = words.first() == Some(&"select")
        && (lower.contains("set_config('search_path', '', false)")
            || lower.contains("'restrict_nonsystem_relation_kind'"));
    let share_lock = words.first() == Some(&"lock")
        && words.get(1) == Some(&"table")
        && lower
            .trim_end_matches(';')
            .ends_with(" in access share mode");
    session_setting || share_lock
}

/// Why `sql` writes or changes the schema, or `None`.
fn writes(sql: &str) -> Option<String> {
    let lower = sql.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let first = words.first().copied().unwrap_or("");
    let two = words.iter().take(2).copied().collect::<Vec<_>>().join(" ");
    if WRITES.contains(&first) || WRITES.contains(&two.as_str()) {
        return Some(format!("starts with {first}"));
    }
    if lower.contains(" into ") && first == "select" {
        return Some("select … into".into());
    }
    for f in [
        "nextval(",
        "setval(",
        "pg_advisory_lock(",
        "pg_terminate_backend(",
        "pg_cancel_backend(",
        "set_config(",
    ] {
        if lower.contains(f) {
            return Some(format!("calls {f}…)"));
        }
    }
    touches(sql)
        .into_iter()
        .find(|t| !matches!(t.access, Access::Read))
        .map(|t| format!("{:?} on {}", t.access, t.relation))
}

#[test]
fn capture_runs_no_write_and_no_ddl() {
    let (server, db) = server_with_tables();
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..6)
        .map(|i| {
            let mut c = connect(&db, "app");
            let (stop, done) = (stop.clone(), done.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let k = 1 + (n % 4);
                    let sql = match i % 3 {
                        0 => format!("begin; select balance from acct where id = {k} for update; update acct set balance = balance - 1 where id = {k}; commit;"),
                        1 => "begin; update job set state = 'done' where id = (select id from job where state = 'new' order by id limit 1 for update); commit;".to_string(),
                        _ => format!("update post set views = views + 1 where id = {k}"),
                    };
                    let _ = c.simple_query(&sql);
                    n += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                c.close();
            })
        })
        .collect();
    wait_until(
        "the workload's first transactions",
        Duration::from_secs(30),
        || done.load(Ordering::Relaxed) > 50,
    );
    let log_from = std::fs::metadata(server.log_file()).map_or(0, |m| m.len());
    let out_dir = temp_dir("capture-readonly").join("captured");
    let _ = std::fs::remove_dir_all(&out_dir);
    let out = command_on(
        &db,
        &["capture"],
        &["-T", "3", "--out", out_dir.to_str().expect("utf-8")],
    )
    .output()
    .expect("hotbench capture runs");
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().expect("worker");
    }
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "capture failed: {stdout}\n{stderr}");
    assert!(
        out_dir.join("scenario.toml").is_file(),
        "{stdout}\n{stderr}"
    );

    let log = std::fs::read(server.log_file()).expect("server log");
    let log = &log[log_from as usize..];
    // The capture's sessions: every session in the log but the workload's (application
    // "app"; the setup ended before the capture began).
    let text_log = String::from_utf8_lossy(log);
    let (ours, apps) = capture_sessions(&text_log);
    assert!(
        !ours.is_empty(),
        "no capture session in the log:\n{text_log}"
    );
    let mut statements = 0usize;
    let mut bad: Vec<String> = Vec::new();
    // The capture's own sessions are what this test reads: kept.
    let opts = LogOptions {
        prefix: Some(PREFIX.into()),
        keep_own_sessions: true,
        ..LogOptions::default()
    };
    read_log_from(log, "postgres.log", &opts, &mut |t| {
        if !ours.contains(&t.session) {
            return;
        }
        if t.rolled_back
            && !t
                .statements
                .iter()
                .any(|s| s.sql.eq_ignore_ascii_case("rollback"))
        {
            bad.push(format!(
                "a transaction failed: {:?}",
                t.statements.iter().map(|s| &s.sql).collect::<Vec<_>>()
            ));
        }
        for s in &t.statements {
            statements += 1;
            if let Some(why) = writes(&s.sql).filter(|_| !pg_dump_reads(&s.sql)) {
                bad.push(format!("{why}: {}", s.sql));
            }
        }
    })
    .expect("the server log reads");
    let errors: Vec<&str> = text_log
        .lines()
        .filter(|l| {
            (l.contains(" ERROR:  ") || l.contains(" FATAL:  "))
                && l.split_once("] ")
                    .is_some_and(|(h, _)| h.rsplit('[').next().is_some_and(|p| ours.contains(p)))
        })
        .collect();
    assert!(
        errors.is_empty(),
        "the capture's sessions left errors: {errors:#?}"
    );
    assert!(
        statements > 10,
        "only {statements} statements from the capture ({apps:?})"
    );
    assert!(
        bad.is_empty(),
        "the capture ({apps:?}) wrote or changed the schema:\n{}",
        bad.join("\n")
    );
    eprintln!("capture sessions {apps:?}: {statements} statements, none writes");
}

/// A private server logging every statement, with the tables the workload runs on.
fn server_with_tables() -> (hotbench_pgserver::Server, ConnInfo) {
    let mut cluster = testing::test_cluster_options();
    cluster.settings.extend([
        ("log_statement".to_string(), "all".to_string()),
        ("log_line_prefix".to_string(), PREFIX.to_string()),
    ]);
    let server = testing::private(cluster);
    let db = server.create_database("app").expect("database");
    let mut setup = connect(&db, "setup");
    setup
        .simple_query(
            "create extension if not exists pg_stat_statements;
             create table acct (id int primary key, balance bigint not null check (balance >= 0));
             insert into acct select g, 1000000 from generate_series(1, 4) g;
             create table job (id bigserial primary key, state text not null default 'new');
             insert into job (state) select 'new' from generate_series(1, 100000);
             create table post (id int primary key, views bigint not null default 0);
             insert into post select g from generate_series(1, 10) g;",
        )
        .expect("setup");
    setup.close();
    (server, db)
}

/// The pids of the sessions in `text_log` that ran statements and were not the workload's
/// (application "app"), and their application names.
fn capture_sessions(text_log: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut users: BTreeSet<String> = BTreeSet::new();
    let mut ours: BTreeSet<String> = BTreeSet::new();
    let mut apps: BTreeSet<String> = BTreeSet::new();
    for line in text_log.lines().filter(|l| !l.starts_with('\t')) {
        let Some((pid_part, rest)) = line.split_once("] ") else {
            continue;
        };
        let Some(pid) = pid_part.rsplit('[').next() else {
            continue;
        };
        let Some((app, _)) = rest.split_once(": ") else {
            continue;
        };
        if app == "app" {
            users.insert(pid.to_string());
        } else if rest.contains("statement: ") || rest.contains("execute ") {
            ours.insert(pid.to_string());
            apps.insert(app.to_string());
        }
    }
    ours.retain(|p| !users.contains(p));
    (ours, apps)
}
