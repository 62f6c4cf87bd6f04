//! `hotbench capture` against loads the tests start on the shared harness server: pgbench's
//! tpcb-like at 50 clients becomes one five-statement shape in pgbench's order, weighted as
//! it ran, whose scenario directory `scenario run --dir` runs unchanged on a fresh database
//! with its checks passing; a Zipf-skewed `SELECT … FOR UPDATE` + `UPDATE` keeps its hottest
//! key (rank and share) and gets the update-returning fix (and `diagnose --capture` writes
//! the same directory beside its diagnosis); bad flags and a directory that is
//! not ours are refused before anything is sampled. Captures are short (a few seconds).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use common::*;
use hotbench_pgserver::ConnInfo;
use hotbench_results::capture_record::CaptureDoc;

/// A load started by the test, stopped (SIGINT) when dropped.
struct Load {
    child: Child,
}

impl Load {
    fn start(db: &ConnInfo, tag: &str, args: &[&str]) -> Load {
        let dir = temp_dir(&format!("capture-{tag}"));
        let json = dir.join("load.json");
        let _ = std::fs::remove_file(&json);
        let mut all = vec!["-n", "--probe", "off", "-T", "120", "-j", "2", "--json"];
        let json_s = json.to_str().expect("utf-8").to_string();
        all.push(&json_s);
        all.extend_from_slice(args);
        let child = run_command(db, &all)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn load");
        let load = Load { child };
        wait_for_transactions(&json);
        load
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// A fresh directory path (not created) named `name` under a test temp dir.
fn out_dir(tag: &str, name: &str) -> PathBuf {
    let d = temp_dir(&format!("capture-{tag}"));
    let out = d.join(name);
    let _ = std::fs::remove_dir_all(&out);
    out
}

/// `hotbench capture -T 8 --out OUT` on `db`; returns the document.
fn capture(db: &ConnInfo, out: &Path, extra: &[&str]) -> CaptureDoc {
    let mut args = vec!["-T", "8", "--out", out.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    let o = command_on(db, &["capture"], &args)
        .output()
        .expect("capture");
    let (stdout, stderr) = text(&o);
    eprintln!("--- capture:\n{stdout}\n{stderr}");
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    read(&out.join("capture.json"))
}

fn scenario_run(db: &ConnInfo, dir: &Path, extra: &[&str]) -> (i32, String) {
    let name = dir.file_name().and_then(|n| n.to_str()).expect("name");
    let mut args = vec![
        name,
        "--dir",
        dir.to_str().expect("utf-8"),
        "-T",
        "3",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let o = command_on(db, &["scenario", "run"], &args)
        .output()
        .expect("scenario run");
    let (out, err) = text(&o);
    (o.status.code().unwrap_or(-1), format!("{out}\n{err}"))
}

const TPCB: [&str; 5] = [
    "update pgbench_accounts set abalance = abalance + ? where aid = ?",
    "select abalance from pgbench_accounts where aid = ?",
    "update pgbench_tellers set tbalance = tbalance + ? where tid = ?",
    "update pgbench_branches set bbalance = bbalance + ? where bid = ?",
    "insert into pgbench_history (tid, bid, aid, delta, mtime) values (?, ?, ?, ?, current_timestamp)",
];

#[test]
fn tpcb_like_at_50_clients_is_one_shape_whose_twin_runs_unchanged() {
    let db = database("capture_tpcb");
    let o = run(&db, &["-i", "-s", "1", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let load = Load::start(&db, "tpcb", &["-c", "50"]);
    let out = out_dir("tpcb", "tpcb_twin");
    // Every --interval (no server-time budget): at the default budget a fresh-clone CI run's
    // 8 s under load held 234 samples, and the counter the fixes log became the accounts'
    // (a sparsely sampled draw took pgbench_accounts for hot) where the tellers' queue is;
    // what this test checks is the shape and its twin, the budget's fidelity is
    // bench/capture-fidelity's over 60 s captures.
    let doc = capture(&db, &out, &["--sample-budget", "0"]);
    drop(load);
    // One shape: pgbench's five statements in pgbench's order, every transaction.
    let main = &doc.shapes[0];
    assert!(main.weight > 0.97, "{:?}", doc.shapes);
    assert_eq!(main.statements, TPCB, "{main:?}");
    assert!(!main.autocommit);
    for per in &main.per_transaction {
        assert!((per - 1.0).abs() < 0.05, "{main:?}");
    }
    // The mix: BEGIN, the five statements and END, a seventh of the calls each.
    let shares: Vec<f64> = doc.statements.iter().map(|s| s.calls_share).collect();
    assert_eq!(doc.statements.len(), 7, "{:?}", doc.statements);
    assert!(
        shares.iter().all(|s| (s - 1.0 / 7.0).abs() < 0.02),
        "{shares:?}"
    );
    assert!(
        doc.sessions.seen >= 45 && doc.sessions.seen <= 50,
        "{:?}",
        doc.sessions
    );
    assert!(!doc.sessions.open_arrivals);
    assert!(doc.tps > 0.0);
    // The same aid in the UPDATE, the SELECT and the INSERT; one delta throughout.
    // A loaded machine slows pgbench's own turns between statements into gaps the script
    // sleeps (a comment and a \sleep line): those may stand between the two.
    let script = std::fs::read_to_string(out.join(&main.script)).expect("script");
    let statements: String = script
        .lines()
        .filter(|l| !l.starts_with("--") && !l.starts_with("\\sleep"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        statements
            .contains("WHERE aid = :aid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid"),
        "{script}"
    );
    assert_eq!(
        doc.waits.first().map(|w| w.event.starts_with("Lock:")),
        Some(true),
        "{:?}",
        doc.waits
    );
    // The directory is a scenario: it runs unchanged on a fresh database, checks passing.
    let twin = database("capture_tpcb_twin");
    let (code, output) = scenario_run(&twin, &out, &["--variants", "captured"]);
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("captured (baseline)"), "{output}");
}

#[test]
fn a_zipf_skewed_read_check_write_keeps_its_hottest_key_and_gets_its_fix() {
    let db = database("capture_zipf");
    psql(
        &db,
        "create table acct (id int primary key, balance bigint not null check (balance >= 0)); \
         insert into acct select g, 1000000000 from generate_series(1, 1000) g; analyze acct;",
    );
    let dir = temp_dir("capture-zipf");
    let script = write_script(
        &dir,
        "zipf.sql",
        "\\set id random_zipfian(1, 1000, 1.2)\n\\set amount random(1, 5)\nBEGIN;\n\
         SELECT balance FROM acct WHERE id = :id FOR UPDATE;\n\
         UPDATE acct SET balance = balance - :amount WHERE id = :id;\nCOMMIT;\n",
    );
    let load = Load::start(
        &db,
        "zipf",
        &["-c", "16", "-f", script.to_str().expect("utf-8")],
    );
    let out = out_dir("zipf", "zipf_twin");
    let doc = capture(&db, &out, &[]);
    // diagnose --capture writes the same kind of directory beside its diagnosis.
    let beside = out_dir("zipf", "zipf_diagnosed");
    let o = command_on(
        &db,
        &["diagnose"],
        // 6 s: a loaded machine takes few lock-wait samples (every 100 ms), and in 3 s
        // id=3 once outranked id=1.
        &["-T", "6", "--capture", beside.to_str().expect("utf-8")],
    )
    .output()
    .expect("diagnose");
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).0.contains("hot row"), "{:?}", text(&o));
    let diagnosed: CaptureDoc = read(&beside.join("capture.json"));
    assert_eq!(
        diagnosed.hot_keys.first().map(|k| k.key.as_str()),
        Some("id=1")
    );
    assert!(beside.join("scenario.toml").is_file());
    drop(load);
    // The row waited on most is id=1 (or, on a machine loaded enough that a queue on a row
    // drawn a third as often outlasted several pg_locks reads, one tied with id=1 within the
    // sampling error fidelity's own tie test allows over the capture's effective reads),
    // and the key drawn most is id=1, with its share.
    let first = doc.hot_keys.first().expect("a row waited on");
    if first.key != "id=1" {
        let one = doc.hot_keys.iter().find(|k| k.key == "id=1");
        let tie = hotbench_capture::ties::share_tie(
            (&first.key, first.share),
            ("id=1", one.map_or(0.0, |k| k.share)),
            doc.sampling.lock_reads_effective,
            "pg_locks reads".into(),
        );
        assert!(tie.tied, "{tie:?} {:?} {:?}", doc.hot_keys, doc.sampling);
    }
    let shape = &doc.shapes[0];
    let id = shape
        .parameters
        .iter()
        .find(|p| p.column.as_deref() == Some("id") && p.model != "same")
        .expect("the id's draw");
    eprintln!("{id:?}");
    // random_zipfian(1, 1000, 1.2) draws 1 in 23% of transactions. (A machine loaded enough
    // to leave under a hundred values in a 4 s sample may not show it: only then it may miss.)
    match id.hot.first() {
        Some(top) => {
            assert_eq!((top.value.as_str(), top.rank), ("1", 1), "{id:?}");
            assert!(top.share > 0.12 && top.share < 0.45, "{id:?}");
        }
        None => assert!(id.observations < 100, "{id:?}"),
    }
    // The read-check-write's fix, with the CHECK constraint's floor.
    let manifest = std::fs::read_to_string(out.join("scenario.toml")).expect("manifest");
    assert!(manifest.contains("update-returning"), "{manifest}");
    let twin = database("capture_zipf_twin");
    let (code, output) = scenario_run(&twin, &out, &[]);
    assert_eq!(code, 0, "{output}");
}

#[test]
fn bad_flags_and_directories_not_ours_are_refused_before_sampling() {
    let db = database("capture_flags");
    let o = command_on(&db, &["capture"], &["-T", "2"])
        .output()
        .expect("capture");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("--out DIR"), "{:?}", text(&o));
    let o = command_on(&db, &["capture"], &["--bogus"])
        .output()
        .expect("capture");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("unrecognized option '--bogus'"),
        "{:?}",
        text(&o)
    );
    // A directory holding someone else's file is not ours to fill.
    let d = temp_dir("capture-notours").join("theirs");
    std::fs::create_dir_all(&d).expect("dir");
    std::fs::write(d.join("notes.txt"), "mine").expect("file");
    let o = command_on(
        &db,
        &["capture"],
        &["-T", "2", "--out", d.to_str().expect("utf-8")],
    )
    .output()
    .expect("capture");
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    assert!(text(&o).1.contains("not ours"), "{:?}", text(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).expect("kept"),
        "mine"
    );
    for bad in [["-T", "0"], ["--interval", "0ms"], ["--scale", "-1"]] {
        let mut args = vec!["--out", "/nonexistent-parent/x"];
        args.extend_from_slice(&bad);
        let o = command_on(&db, &["capture"], &args)
            .output()
            .expect("capture");
        assert_eq!(o.status.code(), Some(1), "{bad:?}: {:?}", text(&o));
    }
}

/// 5,000 distinct statements in pg_stat_statements (its default maximum) beside a small
/// load: the capture reads them all (only what ran during the sample counts in the mix),
/// finishes, and the load's shape is what it writes.
#[test]
fn five_thousand_statements_in_pg_stat_statements_are_read_and_left_out_of_the_mix() {
    let db = database("capture_pgss");
    let cols: Vec<String> = (0..13).map(|i| format!("c{i} int")).collect();
    psql(
        &db,
        &format!(
            "create table wide ({}); insert into wide values ({});",
            cols.join(", "),
            ["1"; 13].join(", ")
        ),
    );
    // Each subset of the 13 columns is a statement of its own to pg_stat_statements.
    // (in batches: one command-line argument holds at most 128 kB)
    for first in (1..=5000u32).step_by(500) {
        let mut batch = String::new();
        for mask in first..first + 500 {
            let picked: Vec<String> = (0..13)
                .filter(|b| mask & (1 << b) != 0)
                .map(|b| format!("c{b}"))
                .collect();
            batch.push_str(&format!("select {} from wide;\n", picked.join(", ")));
        }
        psql(&db, &batch);
    }
    let entries: u64 = psql(
        &db,
        "select count(*) from pg_stat_statements where query like 'select c% from wide'",
    )
    .trim()
    .parse()
    .expect("a count");
    assert!(entries >= 4000, "only {entries} entries");
    let dir = temp_dir("capture-pgss");
    let script = write_script(&dir, "bump.sql", "update wide set c0 = c0 + 1;\n");
    let load = Load::start(
        &db,
        "pgss",
        &["-c", "4", "-f", script.to_str().expect("utf-8")],
    );
    let out = out_dir("pgss", "pgss_twin");
    let doc = capture(&db, &out, &[]);
    drop(load);
    let statements: Vec<&String> = doc.shapes.iter().flat_map(|s| &s.statements).collect();
    assert!(
        statements.iter().any(|s| s.starts_with("update wide")),
        "{statements:?}"
    );
    assert!(
        !statements.iter().any(|s| s.contains("from wide")),
        "statements that ran before the sample are not in its shapes: {statements:?}"
    );
}

const KOMBU_LOOKUP: &str = "SELECT kombu_queue.id AS kombu_queue_id, kombu_queue.name AS kombu_queue_name FROM kombu_queue WHERE kombu_queue.name = 'jobs' LIMIT 1;\n";

/// kombu's SQLAlchemy transport's SQL as it sends it (kombu/transport/sqlalchemy): publish and
/// get both begin with the queue lookup; publish inserts with `nextval('message_id_sequence')`
/// (no column default names the sequence), get claims the oldest visible message with
/// `… LIMIT 1 FOR UPDATE` under ORM aliases, then marks it invisible by the claimed id.
/// Captured, it is two shapes sharing the lookup, its claim gets the skip-locked fixes, and
/// the whole directory (sequence, claim follow-up, checks) runs on a fresh database with
/// every check passing (each claimed row claimed once). Its publish lasts about 0.1 ms, so
/// sampling rarely sees its lookup and INSERT in one transaction: the INSERT seen alone is
/// joined to the lookup by their calls (`capture::shape_join`), not left a shape of its own.
#[test]
fn a_kombu_like_queue_is_two_shapes_and_its_claim_fixes_pass_their_checks() {
    let db = database("capture_kombu");
    psql(
        &db,
        "create sequence queue_id_sequence; create sequence message_id_sequence; \
         create table kombu_queue (id int primary key, name varchar(200) unique); \
         create table kombu_message (id int primary key, visible boolean, \
           \"timestamp\" timestamp, payload text not null, version smallint not null, \
           queue_id int references kombu_queue (id)); \
         create index on kombu_message (\"timestamp\", id); create index on kombu_message (visible); \
         insert into kombu_queue values (nextval('queue_id_sequence'), 'jobs'); \
         insert into kombu_message select nextval('message_id_sequence'), true, null, 'x', 1, 1 \
           from generate_series(1, 3000); analyze;",
    );
    let dir = temp_dir("capture-kombu");
    let publish = write_script(
        &dir,
        "publish.sql",
        &format!(
            "BEGIN;\n{KOMBU_LOOKUP}INSERT INTO kombu_message (id, visible, timestamp, payload, version, queue_id) \
             VALUES (nextval('message_id_sequence'), true, NULL, '{{\"body\": \"eyJ9\"}}', 1, 1) RETURNING kombu_message.id;\nCOMMIT;\n"
        ),
    );
    let get = write_script(
        &dir,
        "get.sql",
        &format!(
            "BEGIN;\n{KOMBU_LOOKUP}SELECT kombu_message.id AS kombu_message_id, kombu_message.visible AS kombu_message_visible, \
             kombu_message.timestamp AS kombu_message_timestamp, kombu_message.version AS kombu_message_version \
             FROM kombu_message WHERE kombu_message.queue_id = 1 AND kombu_message.visible != false \
             ORDER BY kombu_message.timestamp, kombu_message.id LIMIT 1 FOR UPDATE \\gset\n\
             UPDATE kombu_message SET visible=false, timestamp='2024-05-01T10:00:00.5'::timestamp, version=2 \
             WHERE kombu_message.id = :kombu_message_id AND kombu_message.version = 1;\nCOMMIT;\n"
        ),
    );
    let (p, g) = (
        format!("{}@3", publish.to_str().expect("utf-8")),
        format!("{}@1", get.to_str().expect("utf-8")),
    );
    let load = Load::start(&db, "kombu", &["-c", "8", "-f", &p, "-f", &g]);
    let out = out_dir("kombu", "kombu_twin");
    let mut args = vec!["-T", "4", "--out", out.to_str().expect("utf-8")];
    args.push("--no-keys");
    // At the default budget: a 4 s capture reads every --interval (`budget::MIN_READS`),
    // where the budget alone held 61 samples of the UPDATE in a fresh-clone CI run under
    // load, too few to join it to its shape (it was a shape of its own).
    let o = command_on(&db, &["capture"], &args)
        .output()
        .expect("capture");
    drop(load);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let doc: CaptureDoc = read(&out.join("capture.json"));
    // Two shapes, each beginning with the lookup they share.
    let lookup = "select kombu_queue.id as kombu_queue_id, kombu_queue.name as kombu_queue_name from kombu_queue where kombu_queue.name = ? limit ?";
    assert_eq!(doc.shapes.len(), 2, "{:?}", doc.shapes);
    for s in &doc.shapes {
        assert_eq!(
            s.statements.first().map(String::as_str),
            Some(lookup),
            "{s:?}"
        );
    }
    assert!(
        doc.shapes[0].weight > 0.6,
        "publish ran 3 times as often: {:?}",
        doc.shapes
    );
    let schema = std::fs::read_to_string(out.join("schema.sql")).expect("schema");
    assert!(schema.contains("message_id_sequence"), "{schema}");
    let manifest = std::fs::read_to_string(out.join("scenario.toml")).expect("manifest");
    assert!(manifest.contains("skip-locked-batch"), "{manifest}");
    // The directory runs on a fresh database: every variant's checks pass.
    let twin = database("capture_kombu_twin");
    let o = command_on(
        &twin,
        &["scenario", "run"],
        &[
            "kombu_twin",
            "--dir",
            out.to_str().expect("utf-8"),
            "-T",
            "1",
            "--quiet",
        ],
    )
    .output()
    .expect("scenario run");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("skip-locked"), "{stdout}");
}
