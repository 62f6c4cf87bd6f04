//! `hotbench capture --log FILE` end to end: a private server logging every statement
//! (`log_min_duration_statement = 0`, stderr and csvlog, session and transaction ids in
//! `log_line_prefix`), a read-check-write run by `hotbench run -M prepared` with a hot key
//! (bound as `$1`, invisible to pg_stat_activity) and a think time, captured from each log:
//! the shape exactly (BEGIN, the two statements in order, COMMIT), the hot key exact with its
//! share, the think time; and bad logs refused with a clear message, exit 1, never a panic.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use hotbench_capture::log::{read_all, LogOptions};
use hotbench_pgserver::{testing, ConnInfo, Server};
use hotbench_results::capture_record::CaptureDoc;

const PREFIX: &str = "%m [%p] %c %x %v ";

/// A private server logging every statement to stderr and csvlog, with the table.
fn logging_server() -> (Server, ConnInfo) {
    let mut cluster = testing::test_cluster_options();
    cluster.settings.extend(
        [
            ("log_min_duration_statement", "0"),
            ("log_line_prefix", PREFIX),
            ("logging_collector", "on"),
            ("log_destination", "stderr,csvlog"),
            ("log_filename", "pg.log"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let server = testing::private(cluster);
    let db = server.create_database("app").expect("database");
    let o = hotbench_pgserver::server::psql(
        server.binaries(),
        &db,
        "create table acct (id int primary key, v bigint not null);
         insert into acct select g, 1000000 from generate_series(1, 1000) g;",
    );
    o.expect("setup");
    (server, db)
}

/// Half the transactions on key 7, the rest spread over 1000 keys; 3 ms of think time
/// between the read and the write.
const SCRIPT: &str = "\\set r random(1, 100)
\\if :r <= 50
\\set k 7
\\else
\\set k random(1, 1000)
\\endif
BEGIN;
SELECT v FROM acct WHERE id = :k FOR UPDATE;
\\sleep 3 ms
UPDATE acct SET v = v - 1 WHERE id = :k;
COMMIT;
";

const TRANSACTIONS: u32 = 200;

fn run_workload(db: &ConnInfo, dir: &Path) {
    let script = write_script(dir, "rcw.sql", SCRIPT);
    let o = run(
        db,
        &[
            "-n",
            "--probe",
            "off",
            "-M",
            "prepared",
            "-c",
            "2",
            "-t",
            &(TRANSACTIONS / 2).to_string(),
            "--random-seed",
            "7",
            "-f",
            script.to_str().expect("utf-8"),
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
}

/// The collector's two files once both hold `marker`: the stderr one copied into `snapshot`.
fn log_files(server: &Server, db: &ConnInfo, marker: &str, snapshot: &Path) -> (PathBuf, PathBuf) {
    hotbench_pgserver::server::psql(server.binaries(), db, &format!("select '{marker}'"))
        .expect("marker");
    let dir = server.data_dir().join("log");
    let (log, csv) = (dir.join("pg.log"), dir.join("pg.csv"));
    let has = |p: &Path| std::fs::read_to_string(p).is_ok_and(|t| t.contains(marker));
    wait_until("both logs hold the marker", Duration::from_secs(30), || {
        has(&log) && has(&csv)
    });
    // The stderr log of the workload alone, as a user hands one over; the csvlog stays the
    // live file, which goes on logging the captures' own sessions (their probe and pg_dump,
    // named by application_name): read as the workload, they would be shapes of their own.
    let to = snapshot.join("pg.log");
    std::fs::copy(&log, &to).expect("copy the log");
    (to, csv)
}

/// `hotbench capture -T 1 --out OUT --log LOG`: its exit code, output and document.
fn capture(db: &ConnInfo, out: &Path, log: &Path) -> (i32, String, Option<CaptureDoc>) {
    let _ = std::fs::remove_dir_all(out);
    let o = command_on(
        db,
        &["capture"],
        &[
            "-T",
            "1",
            "--out",
            out.to_str().expect("utf-8"),
            "--log",
            log.to_str().expect("utf-8"),
        ],
    )
    .output()
    .expect("capture");
    let (stdout, stderr) = text(&o);
    let all = format!("{stdout}\n{stderr}");
    let doc = out
        .join("capture.json")
        .is_file()
        .then(|| read(&out.join("capture.json")));
    (o.status.code().unwrap_or(-1), all, doc)
}

#[test]
fn capture_from_a_real_servers_log_keeps_shape_hot_key_and_think_time() {
    let (server, db) = logging_server();
    let dir = temp_dir("capture-log");
    run_workload(&db, &dir);
    // A statement in another database of the server: not the captured database's workload.
    let other = server.create_database("other").expect("database");
    hotbench_pgserver::server::psql(server.binaries(), &other, "select 'in another database'")
        .expect("other");
    let (log, csv) = log_files(&server, &db, "capture log test: workload done", &dir);
    for (name, file) in [("stderr", &log), ("csvlog", &csv)] {
        let span_s = span_of(file);
        let out = dir.join(format!("twin-{name}"));
        let (code, text, doc) = capture(&db, &out, file);
        eprintln!("--- {name}:\n{text}");
        assert_eq!(code, 0, "{name}: {text}");
        let doc = doc.expect("capture.json");
        check_doc(name, &doc, &out, span_s);
    }
}

/// The span of the log's transactions in database `app` (where the log names databases):
/// its first statement's start to its last one's end.
fn span_of(log: &Path) -> f64 {
    let opts = LogOptions {
        database: Some("app".into()),
        ..LogOptions::default()
    };
    let (txs, _) = read_all(log, &opts).expect("the log reads");
    let (lo, hi) = txs.iter().flat_map(|t| &t.statements).fold(
        (f64::INFINITY, f64::NEG_INFINITY),
        |(lo, hi), s| {
            let end = s.started_at_s + s.duration_s.unwrap_or(0.0);
            (lo.min(s.started_at_s), hi.max(end))
        },
    );
    hi - lo
}

fn check_doc(name: &str, doc: &CaptureDoc, out: &Path, span_s: f64) {
    // The workload's shapes only (its setup, the marker and, where the log does not name
    // databases, the other database's), none of hotbench's.
    let ours = |q: &String| q.contains("hotbench_") || q.contains("pg_catalog");
    assert!(
        doc.shapes.len() <= 5 && !doc.shapes.iter().any(|s| s.statements.iter().any(ours)),
        "{name}: {:#?}",
        doc.shapes
    );
    if name == "csvlog" {
        // The csvlog names each message's application and database.
        for note in [
            "of hotbench's own sessions",
            "of other databases (\"postgres\", \"other\")",
        ] {
            assert!(
                doc.notes.iter().any(|n| n.contains(note)),
                "{name}: {note:?} not in {:?}",
                doc.notes
            );
        }
        let values = serde_json::to_string(&doc.shapes).unwrap_or_default();
        assert!(!values.contains("in another database"), "{name}: {values}");
    }
    let rcw = doc
        .shapes
        .iter()
        .find(|s| s.statements.iter().any(|q| q.contains("for update")))
        .unwrap_or_else(|| panic!("{name}: no read-check-write shape: {:#?}", doc.shapes));
    // The shape exactly: the two statements in order, every transaction seen.
    assert_eq!(
        rcw.statements,
        [
            "select v from acct where id = ? for update",
            "update acct set v = v - ? where id = ?"
        ],
        "{name}"
    );
    assert!(!rcw.autocommit, "{name}");
    assert_eq!(rcw.observed, u64::from(TRANSACTIONS), "{name}");
    // Its rate is the log's: its transactions over the log's span, not the sample's commits.
    let logged = rcw.tps * span_s;
    assert!(
        (logged - f64::from(TRANSACTIONS)).abs() < 1.0,
        "{name}: {} tps over the log's {span_s:.2} s is {logged:.1} transactions, not {TRANSACTIONS}",
        rcw.tps
    );
    // The bound key: 7 exact, with its share (half the draws, seeded).
    let id = rcw
        .parameters
        .iter()
        .find(|p| p.statement == 0)
        .expect("the SELECT's key");
    let hot = id.hot.first().expect("a hot value");
    assert_eq!((hot.value.as_str(), hot.rank), ("7", 1), "{name}: {id:?}");
    assert!((0.4..=0.62).contains(&hot.share), "{name}: {id:?}");
    // The bound delta: 1 in every transaction.
    let delta = rcw
        .parameters
        .iter()
        .find(|p| p.statement == 1 && p.position == 0);
    assert_eq!(delta.and_then(|p| p.value.as_deref()), Some("1"), "{name}");
    // Think time: the 3 ms slept between the read and the write.
    let gap = rcw.gaps_ms.first().copied().flatten().expect("a gap");
    assert!((3.0..200.0).contains(&gap), "{name}: gap {gap} ms");
    // The twin runs the two clients the log shows, prepared, BEGIN … COMMIT in order.
    let toml = std::fs::read_to_string(out.join("scenario.toml")).expect("scenario.toml");
    assert!(toml.contains("\nclients = 2\n"), "{name}: {toml}");
    assert!(
        toml.contains("\nquery_mode = \"prepared\"\n"),
        "{name}: {toml}"
    );
    let script = std::fs::read_to_string(out.join(&rcw.script)).expect("script");
    // The gap inside the transaction, slept (the script may also sleep the idle time
    // between transactions, before BEGIN).
    const GAP_SLEPT: &str = "between the statements (mean gap seen): slept\n\\sleep ";
    let at = |what: &str| {
        script
            .find(what)
            .unwrap_or_else(|| panic!("{name}: {what:?} not in {script}"))
    };
    assert!(
        at("BEGIN;") < at("SELECT v FROM acct WHERE id = :id FOR UPDATE")
            && at("FOR UPDATE") < at(GAP_SLEPT)
            && at(GAP_SLEPT) < at("UPDATE acct SET v = v - 1 WHERE id = :id")
            && at("WHERE id = :id\n") < at("COMMIT;"),
        "{name}: {script}"
    );
    assert!(
        script.contains(" seen in the server log."),
        "{name}: {script}"
    );
}

/// Bad logs are refused before anything is sampled: a clear message naming the file (and
/// the line, or what its prefix lacks), exit 1, no panic, nothing written.
#[test]
fn bad_logs_are_refused_with_a_clear_message() {
    let db = database("caplog");
    let dir = temp_dir("capture-log-bad");
    let no_session = write_script(
        &dir,
        "no-session.log",
        &"2026-01-01 10:00:00.123 UTC LOG:  duration: 0.050 ms  statement: select 1\n".repeat(20),
    );
    let bad_duration = write_script(
        &dir,
        "bad-duration.log",
        "2026-01-01 10:00:00.123 UTC [42] LOG:  duration: 0.050 ms  statement: select 1\n\
         2026-01-01 10:00:00.124 UTC [42] LOG:  duration: x ms  statement: select 2\n",
    );
    let not_a_log = write_script(&dir, "notes.txt", "hello\nworld\n");
    // A csvlog of database "app": the captured database is another.
    let other_db = write_script(
        &dir,
        "other.csv",
        "2026-11-28 08:02:28.257 UTC,\"postgres\",\"app\",18557,\"[local]\",6b.1,1,\"UPDATE\",\
         2026-11-28 08:02:28 UTC,3/6,0,LOG,00000,\"duration: 0.1 ms  statement: update t set v = 1\",\
         ,,,,,,,,\"psql\",\"client backend\",,0\n",
    );
    let missing = dir.join("missing.log");
    let cases: [(&str, &Path, &[&str]); 6] = [
        ("missing", &missing, &["missing.log", "No such file"]),
        ("directory", &dir, &["directory"]),
        ("no session", &no_session, &["no-session.log", "session"]),
        ("bad duration", &bad_duration, &["bad-duration.log:2:"]),
        ("not a log", &not_a_log, &["notes.txt", "log_line_prefix"]),
        (
            "another database",
            &other_db,
            &["other.csv", "no statement of database", "\"app\""],
        ),
    ];
    for (name, log, want) in cases {
        let out = dir.join("out");
        let (code, text, doc) = capture(&db, &out, log);
        eprintln!("--- {name}: {text}");
        assert_eq!(code, 1, "{name}: {text}");
        assert!(!text.contains("panicked"), "{name}: {text}");
        for w in want {
            assert!(text.contains(w), "{name}: {w:?} not in {text}");
        }
        assert!(doc.is_none(), "{name}: a capture was written");
    }
}
