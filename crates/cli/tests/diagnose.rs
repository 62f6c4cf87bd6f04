//! `hotbench diagnose` against real loads the tests start (`hotbench run` on the shared
//! harness server, or the queue scenario itself): a customer drawn 4× as often is the first
//! finding, a `daily-limit` hot row with that customer's key, read as a pg_monitor role under
//! `default_transaction_read_only` whose logged statements hold no write (and, without SELECT
//! on the table, with ctids instead of keys); counter increments on 4 rows are `counters`; the
//! queue's FOR UPDATE consumers are a `queue`, and a snapshot held meanwhile names its pid;
//! uniform reads find nothing (exit 0, without pg_stat_statements); a server stopped
//! mid-sample exits 2 with a valid partial JSON. Samples are short (-T 3, waits every 20 ms).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use common::browser::{chromium, headless};
use common::*;
use hotbench_pgserver::{testing, ConnInfo};
use serde_json::Value;

/// A load started by the test: `hotbench run` for up to a minute, stopped (SIGINT) when
/// dropped.
struct Load {
    child: Child,
}

impl Load {
    /// Starts `script` on `db` with `args` and returns once it has committed transactions.
    fn start(db: &ConnInfo, tag: &str, script: &str, args: &[&str]) -> Load {
        let dir = temp_dir(&format!("diag-{tag}"));
        let path = write_script(&dir, &format!("{tag}.sql"), script);
        let json = dir.join(format!("{tag}-load.json"));
        let _ = std::fs::remove_file(&json);
        let mut all = vec![
            "-n",
            "--probe",
            "off",
            "-T",
            "60",
            "-j",
            "2",
            "-f",
            path.to_str().expect("utf-8"),
            "--json",
            json.to_str().expect("utf-8"),
        ];
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
        interrupt(&mut self.child);
    }
}

/// Waits until at least `n` of `db`'s sessions wait on a lock at once: the contention is
/// established before the sample starts (a loaded machine can take a while to get there).
fn wait_for_lock_waiters(db: &ConnInfo, n: u32) {
    let sql = format!(
        "select count(*) >= {n} from pg_stat_activity \
         where datname = current_database() and wait_event_type = 'Lock'"
    );
    wait_until("lock waiters", Duration::from_secs(60), || {
        psql(db, &sql).trim() == "t"
    });
}

/// SIGINT (a graceful stop), then waits.
fn interrupt(child: &mut Child) {
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// `hotbench diagnose -T 3 --interval 20ms --json DIR/TAG.json EXTRA… DB` as `user`.
fn diagnose(db: &ConnInfo, user: &str, tag: &str, extra: &[&str]) -> (Output, Value) {
    let dir = temp_dir(&format!("diag-{tag}"));
    let json = dir.join(format!("{tag}.json"));
    let o = diagnose_command(db, user, &json, extra)
        .output()
        .expect("run diagnose");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{tag}:\n{out}\n{err}");
    eprintln!("--- {tag}:\n{out}");
    (o, json_of(&json))
}

fn diagnose_command(
    db: &ConnInfo,
    user: &str,
    json: &Path,
    extra: &[&str],
) -> std::process::Command {
    diagnose_for(db, user, "3", json, extra)
}

/// `hotbench diagnose -T TIME …`.
fn diagnose_for(
    db: &ConnInfo,
    user: &str,
    time: &str,
    json: &Path,
    extra: &[&str],
) -> std::process::Command {
    let mut c = hotbench();
    c.args(["diagnose", "-h"])
        .arg(&db.socket_dir)
        .args(["-p", &db.port.to_string(), "-U", user])
        .args(["-T", time, "--interval", "20ms", "--json"])
        .arg(json)
        .args(extra)
        .arg(&db.dbname)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
        c.env_remove(v);
    }
    c
}

fn json_of(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("diagnosis written");
    let v: Value = serde_json::from_str(&text).expect("diagnosis is JSON");
    assert_eq!(v["format"], "hotbench-diagnosis/1");
    v
}

fn findings(v: &Value) -> &Vec<Value> {
    v["findings"].as_array().expect("findings")
}

/// The statements logged (`log_statement = all`, set for one role only) after byte `from`.
fn logged_statements(from: u64) -> Vec<String> {
    let log = std::fs::read(testing::shared().log_file()).expect("server log");
    let text = String::from_utf8_lossy(&log[from as usize..]).into_owned();
    text.lines()
        .filter_map(|l| {
            l.split_once("LOG:  statement: ")
                .or_else(|| l.split_once("LOG:  execute "))
                .map(|(_, s)| s.to_string())
        })
        .collect()
}

/// Whether a logged statement only reads: select/with, SET/SHOW, PREPARE of a select, EXECUTE,
/// a read-only BEGIN and its COMMIT.
fn reads_only(stmt: &str) -> bool {
    let s = stmt
        .trim_start_matches("<unnamed>: ")
        .trim_start_matches("/* hotbench-probe */ ")
        .trim()
        .to_ascii_lowercase();
    let first = s.split_whitespace().next().unwrap_or("");
    let body = s
        .split_once(" as ")
        .map(|(_, b)| b.trim_start())
        .unwrap_or("");
    match first {
        "select" | "with" | "set" | "show" => {
            !s.contains(" for update") && !s.contains(" for share")
        }
        "execute" | "commit" | "rollback" => true,
        // The hot-row key read's snapshot.
        "begin" => s.ends_with(" read only"),
        "prepare" => body.starts_with("select") || body.starts_with("with"),
        _ => false,
    }
}

/// Opens `html` in headless Chromium: every chart drawn, no console error. Skips (with a
/// message) without Chromium.
fn check_in_browser(dir: &Path, html: &Path) {
    let Some(browser) = chromium() else {
        println!("SKIPPED the browser half: chromium not found (or set HOTBENCH_CHROMIUM)");
        return;
    };
    let page = std::fs::read_to_string(html).expect("html written");
    let charts = page.matches("data-chart=").count();
    assert!(
        charts >= 2,
        "expected the wait timeline charts, found {charts}"
    );
    let (dom, log) = headless(&browser, dir, html, &["--dump-dom".to_string()]);
    let status = dom
        .split("<pre id=\"status\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or("(no status element)");
    assert!(
        status.starts_with(&format!(
            "ready charts={charts} drawn={charts} empty=0 errors=0"
        )),
        "page status: {status}\n{log}"
    );
    for line in log.lines() {
        let l = line.to_ascii_lowercase();
        assert!(
            !(l.contains("console") && (l.contains("error") || l.contains("uncaught"))),
            "console error: {line}"
        );
    }
}

const PAY: &str = "\\set r random(1, 11)
\\set customer case when :r <= 4 then 1 else :r - 3 end
\\set amount random(1, 10)
begin;
select remaining from daily_limit where customer_id = :customer and day = current_date for update
\\gset
\\set remaining :remaining - :amount
update daily_limit set remaining = :remaining, last_update = now()
 where customer_id = :customer and day = current_date;
insert into ledger (customer_id, day, amount) values (:customer, current_date, :amount);
commit;
";

#[test]
fn a_customer_drawn_four_times_as_often_is_a_daily_limit_hot_row_seen_read_only() {
    let db = database("diag_limit");
    let n = std::process::id();
    let (mon, bare) = (format!("diag_mon_{n}"), format!("diag_bare_{n}"));
    psql(
        &db,
        &format!(
            "create table daily_limit (customer_id bigint not null, day date not null,
               remaining bigint not null, last_update timestamptz, primary key (customer_id, day));
             insert into daily_limit select c, current_date, 1000000000 from generate_series(1, 8) c;
             create table ledger (id bigint generated always as identity primary key,
               customer_id bigint not null, day date not null, amount bigint not null);
             create role {mon} login in role pg_monitor;
             create role {bare} login in role pg_monitor;
             grant select on daily_limit to {mon};
             alter role {mon} set default_transaction_read_only = on;
             alter role {mon} set log_statement = 'all';
             alter role {bare} set default_transaction_read_only = on;"
        ),
    );
    let _load = Load::start(&db, "limit", PAY, &["-c", "16", "--rtt", "1ms"]);
    wait_for_lock_waiters(&db, 4);
    let log_from = std::fs::metadata(testing::shared().log_file()).map_or(0, |m| m.len());
    let dir = temp_dir("diag-limit");
    let html = dir.join("limit.html");
    // The pg_monitor role with SELECT on the table, and one without, at once.
    let without_select = diagnose_command(&db, &bare, &dir.join("bare.json"), &[])
        .spawn()
        .expect("spawn diagnose");
    let (o, v) = diagnose(
        &db,
        &mon,
        "limit",
        &["--html", html.to_str().expect("utf-8")],
    );
    let bare_out = without_select.wait_with_output().expect("bare diagnose");
    let (out, _) = text(&o);

    let f = &findings(&v)[0];
    assert_eq!(f["kind"], "hot_row", "{out}");
    assert_eq!(f["relation"], "daily_limit", "{out}");
    let key = f["keys"][0]["key"].as_str().unwrap_or("");
    assert!(key.starts_with("customer_id=1, day="), "{key}\n{out}");
    assert_eq!(f["scenario"], "daily-limit");
    let cmd = f["command"].as_str().unwrap_or("");
    assert!(
        cmd.starts_with("hotbench scenario run daily-limit -c "),
        "{cmd}"
    );
    assert!(f["share"].as_f64().unwrap_or(0.0) > 0.3, "{}", f["share"]);
    assert!(out.contains("\n1. [hot_row] "), "{out}");
    assert!(out.contains(&format!("   run: {cmd}\n")), "{out}");
    assert_eq!(v["role"], mon.as_str());
    assert!(
        f["statements"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["role"] == "waiting"
                && s["query"]
                    .as_str()
                    .is_some_and(|q| q.contains("for update")))),
        "{}",
        f["statements"]
    );

    // Everything the read-only role's sessions logged (only its sessions log statements)
    // is a read.
    let logged = logged_statements(log_from);
    assert!(logged.len() > 20, "too few statements logged: {logged:?}");
    let writes: Vec<&String> = logged.iter().filter(|s| !reads_only(s)).collect();
    assert!(writes.is_empty(), "diagnose wrote: {writes:?}");
    assert!(logged
        .iter()
        .any(|s| s.contains("default_transaction_read_only")));

    // Without SELECT on the table: the same finding, rows named by ctid, and a note why.
    let (bare_text, bare_err) = text(&bare_out);
    assert_eq!(bare_out.status.code(), Some(0), "{bare_text}\n{bare_err}");
    let b = json_of(&dir.join("bare.json"));
    let bf = &findings(&b)[0];
    assert_eq!(
        (&bf["kind"], &bf["relation"]),
        (&Value::from("hot_row"), &Value::from("daily_limit")),
        "{bare_text}"
    );
    assert!(
        bf["keys"][0]["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("ctid=(")),
        "{bare_text}"
    );
    assert!(
        b["notes"].to_string().contains("GRANT SELECT"),
        "{}",
        b["notes"]
    );
    // The hot-row count is not dropped from the command: at most the table's 8 rows.
    let bcmd = bf["command"].as_str().unwrap_or("");
    let customers: u32 = bcmd
        .split("--param customers=")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no --param customers: {bcmd}\n{bare_text}"));
    assert!((1..=8).contains(&customers), "{bcmd}");

    check_in_browser(&dir, &html);
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("data-kind=\"hot_row\"") && page.contains("<table class=\"hot-rows\">"));
}

/// The counters test's `diagnose --run`, every libpq variable naming the diagnosed server.
fn counters_diagnose(
    db: &ConnInfo,
    home: &Path,
    dir: &Path,
    json: &Path,
) -> std::process::Command {
    let mut c = diagnose_command(db, &db.user, json, &["--run", "--run-time", "1s"]);
    for v in ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"] {
        c.env(v, home);
    }
    // Every libpq variable names the diagnosed server (or something of it): --run still
    // runs its ladder on the embedded server.
    let port = db.port.to_string();
    let service = write_script(
        dir,
        "pg_service.conf",
        &format!(
            "[diagnosed]\nhost={}\nport={port}\ndbname={}\nuser={}\n",
            db.socket_dir.display(),
            db.dbname,
            db.user
        ),
    );
    let socket_dir = db.socket_dir.to_string_lossy().into_owned();
    for (k, v) in [
        ("PGHOST", socket_dir.as_str()),
        ("PGPORT", &port),
        ("PGDATABASE", &db.dbname),
        ("PGUSER", &db.user),
        ("PGPASSWORD", "not-the-embedded-servers"),
        ("PGSERVICE", "diagnosed"),
        ("PGSERVICEFILE", service.to_str().expect("utf-8")),
        ("PGOPTIONS", "-c work_mem=5MB"),
        ("PGSSLMODE", "disable"),
        ("PGAPPNAME", "diagnosed-app"),
        ("PGCONNECT_TIMEOUT", "30"),
        ("PGTARGETSESSIONATTRS", "any"),
    ] {
        c.env(k, v);
    }
    c
}

#[test]
fn counter_increments_on_four_rows_are_a_counters_hot_row() {
    let db = database("diag_counters");
    psql(
        &db,
        "create table post (id bigint primary key, views_count bigint not null default 0);
         insert into post (id) select generate_series(1, 4);",
    );
    let _load = Load::start(
        &db,
        "counters",
        "\\set p random(1, 4)\nbegin;\nupdate post set views_count = views_count + 1 where id = :p;\ncommit;\n",
        &["-c", "12", "--rtt", "1ms"],
    );
    wait_for_lock_waiters(&db, 3);
    // --run: the suggested ladder on the embedded server of a fresh data home, 1 s a variant.
    let home = hotbench_pgserver::testing::test_temp_root()
        .join(format!("hotbench-diag-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).expect("data home");
    let _ = std::process::Command::new("chmod")
        .arg("755")
        .arg(&home)
        .status();
    let dir = temp_dir("diag-counters");
    let json = dir.join("counters.json");
    // Any DDL on the diagnosed database is recorded: the ladder must create nothing there.
    psql(
        &db,
        "create table ddl_seen (tag text);
         create function note_ddl() returns event_trigger language plpgsql as
           $$ begin insert into ddl_seen values (tg_tag); end $$;
         create event trigger note_ddl on ddl_command_start execute function note_ddl();",
    );
    // Three seconds hold two or three `pg_locks` reads: on a loaded machine they can all fall
    // where no waiter holds a tuple lock, and no row is placed (no finding, so no ladder
    // runs); the finding and its ladder are what this test is about, so such a sample is
    // taken again (three at most).
    let mut o = None;
    for _ in 0..3 {
        let _ = std::fs::remove_file(&json);
        let r = counters_diagnose(&db, &home, &dir, &json)
            .output()
            .expect("run diagnose --run");
        let placed = std::fs::read(&json)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| !findings(&v).is_empty());
        o = Some(r);
        if placed {
            break;
        }
    }
    let o = o.expect("diagnosed");
    let _ = std::fs::remove_dir_all(&home);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let ddl = psql(
        &db,
        "drop event trigger note_ddl; select string_agg(tag, ',') from ddl_seen",
    );
    assert_eq!(
        ddl.trim(),
        "",
        "the ladder ran DDL on the diagnosed database:\n{out}"
    );
    assert_eq!(
        out.matches("diagnosis written to").count(),
        1,
        "said once, after the lab:\n{out}"
    );
    let v = json_of(&json);
    let f = findings(&v)
        .first()
        .unwrap_or_else(|| panic!("no finding in three samples:\n{out}\n{err}"));
    assert_eq!(
        (&f["kind"], &f["relation"], &f["scenario"]),
        (
            &Value::from("hot_row"),
            &Value::from("post"),
            &Value::from("counters")
        ),
        "{out}"
    );
    // The ladder ran as printed, and its ranking joined the diagnosis.
    let lab = &v["lab"];
    assert_eq!(lab["command"], f["command"]);
    assert_eq!(lab["scenario"], "counters");
    let names: Vec<&str> = lab["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["direct", "slotted", "events-rollup"], "{lab}");
    assert_eq!(lab["ranking"][0]["baseline"], true);
    assert!(lab["ranking"]
        .as_array()
        .is_some_and(|r| r
            .iter()
            .all(|v| v["per_s"].as_f64().unwrap_or(0.0) > 0.0 && v["checks_ok"] == true)));
    assert!(
        out.contains("\n--run: hotbench scenario run counters "),
        "{out}"
    );
}

/// No byte a terminal acts on but a line break: no ESC, BEL, CR, C1 control.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && c.is_control())
        .collect();
    assert!(
        bad.is_empty(),
        "{what} holds raw control characters {bad:?}:\n{text}"
    );
}

/// A table named with `ESC ]0;…BEL` (window title), `ESC [2J` (clear screen) and a newline
/// that would forge a report line, contended: diagnose names it, escaped.
#[test]
fn a_table_named_with_terminal_escapes_is_shown_escaped() {
    let db = database("diag_escapes");
    let name = "acct\u{1b}]0;owned\u{7}\u{1b}[2J\nfindings: none";
    let quoted = format!("\"{name}\"");
    psql(
        &db,
        &format!(
            "create table {quoted} (id bigint primary key, n bigint not null default 0);
             insert into {quoted} (id) select generate_series(1, 2);"
        ),
    );
    let _load = Load::start(
        &db,
        "escapes",
        &format!(
            "\\set p random(1, 2)\nbegin;\nupdate {quoted} set n = n + 1 where id = :p;\ncommit;\n"
        ),
        &["-c", "8", "--rtt", "1ms"],
    );
    wait_for_lock_waiters(&db, 3);
    let dir = temp_dir("diag-escapes");
    // Two seconds hold one or two `pg_locks` reads: on a loaded machine they can all fall
    // where no waiter holds a tuple lock (none on rows); the name is what this test is about,
    // so a sample that placed no row is taken again (three at most).
    let mut o = None;
    for _ in 0..3 {
        let r = diagnose_for(&db, &db.user, "2", &dir.join("escapes.json"), &[])
            .output()
            .expect("run diagnose");
        let placed = !String::from_utf8_lossy(&r.stdout).contains("; none on rows");
        o = Some(r);
        if placed {
            break;
        }
    }
    let o = o.expect("diagnosed");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert_terminal_safe("stdout", &o.stdout);
    assert_terminal_safe("stderr", &o.stderr);
    assert!(
        out.contains("acct\\x1b]0;owned\\x07\\x1b[2J\\nfindings: none"),
        "the name is shown, escaped:\n{out}"
    );
    assert!(
        !out.lines().any(|l| l.starts_with("findings: none")),
        "{out}"
    );
    // The JSON keeps the true name.
    let v = json_of(&dir.join("escapes.json")).to_string();
    let true_name = serde_json::to_string(name).expect("JSON string");
    assert!(v.contains(true_name.trim_matches('"')), "{v}");
}

#[test]
fn queue_consumers_are_a_queue_and_a_snapshot_held_meanwhile_names_its_pid() {
    let db = database("diag_queue");
    let mut ladder = hotbench()
        .args([
            "scenario",
            "run",
            "queue",
            "--variants",
            "for-update",
            "-c",
            "8",
            "-T",
            "60",
        ])
        .args(["--probe", "off", "--quiet"])
        .args(conn_args(&db))
        .arg(&db.dbname)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn queue ladder");
    wait_until(
        "the queue's consumers at work",
        Duration::from_secs(60),
        || {
            psql(
            &db,
            "select count(*) > 0 from pg_tables where schemaname = 'hb_queue' and tablename = 'job_done'",
        )
        .trim()
            == "t"
            && psql(&db, "select count(*) > 100 from hb_queue.job_done").trim() == "t"
        },
    );
    wait_for_lock_waiters(&db, 3);
    let (o, v) = diagnose(&db, &db.user, "queue", &[]);
    let f = &findings(&v)[0];
    assert_eq!(f["kind"], "queue", "{}", text(&o).0);
    assert!(
        f["relation"]
            .as_str()
            .is_some_and(|r| r.ends_with("job_queue")),
        "{}",
        f["relation"]
    );
    assert!(f["command"]
        .as_str()
        .is_some_and(|c| c.contains("scenario run queue")));

    // A repeatable-read snapshot left idle in its transaction.
    let params = hotbench_wire::Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    let mut holder = hotbench_wire::Connector::new(params)
        .connect()
        .expect("holder");
    holder
        .simple_query("begin isolation level repeatable read; select count(*) from pg_class;")
        .expect("hold a snapshot");
    let pid = holder.backend_pid().to_string();
    let (o, v) = diagnose(&db, &db.user, "queue-xmin", &[]);
    holder.close();
    interrupt(&mut ladder);
    let x = findings(&v)
        .iter()
        .find(|f| f["kind"] == "xmin_horizon")
        .unwrap_or_else(|| panic!("no xmin_horizon finding:\n{}", text(&o).0));
    assert_eq!(x["holder"]["id"], pid.as_str(), "{x}");
    assert!(x["title"]
        .as_str()
        .is_some_and(|t| t.contains(&format!("session {pid} "))));
}

#[test]
fn uniform_reads_find_nothing_and_exit_0_without_pg_stat_statements() {
    let db = database("diag_quiet");
    psql(
        &db,
        "drop extension if exists pg_stat_statements;
         create table acc (id int primary key, v int not null);
         insert into acc select g, 0 from generate_series(1, 10000) g;",
    );
    let _load = Load::start(
        &db,
        "quiet",
        "\\set a random(1, 10000)\nselect v from acc where id = :a;\n",
        &["-c", "2"],
    );
    let (o, v) = diagnose(&db, &db.user, "quiet", &[]);
    let (out, _) = text(&o);
    assert!(findings(&v).is_empty(), "{out}");
    assert!(out.contains("\nno contention found: "), "{out}");
    assert!(out.contains("\nlooked at:\n"), "{out}");
    assert!(
        v["notes"]
            .to_string()
            .contains("CREATE EXTENSION pg_stat_statements"),
        "{}",
        v["notes"]
    );
    // The statements came from pg_stat_activity instead.
    let stmts = v["probe"]["sessions"]["statements"].to_string();
    assert!(stmts.contains("select v from acc where id = ?"), "{stmts}");
}

/// A database nobody uses: the note says no session was seen, not that no backend with
/// application_name "" was (diagnose samples every session, it has no name to look for).
#[test]
fn an_idle_database_is_said_idle_without_an_empty_application_name() {
    let db = database("diag_idle");
    let dir = temp_dir("diag-idle");
    let o = diagnose_for(&db, &db.user, "1", &dir.join("idle.json"), &[])
        .output()
        .expect("run diagnose");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(!out.contains("application_name \"\""), "{out}");
    assert!(
        out.contains("no session of the database was active while sampling"),
        "{out}"
    );
}

#[test]
fn a_server_stopped_mid_sample_exits_2_with_a_partial_json() {
    let pg = testing::private(testing::test_cluster_options());
    let db = pg.conninfo().clone();
    let dir = temp_dir("diag-lost");
    let json: PathBuf = dir.join("lost.json");
    let _ = std::fs::remove_file(&json);
    let child = diagnose_for(&db, &db.user, "60", &json, &[])
        .spawn()
        .expect("spawn diagnose");
    let seen = || {
        hotbench_pgserver::server::psql(
            pg.binaries(),
            &db,
            "select count(*) from pg_stat_activity where application_name = 'hotbench diagnose' \
             and query like '%hotbench_probe_%'",
        )
        .is_ok_and(|n| n.trim() == "1")
    };
    wait_until("diagnose sampling", Duration::from_secs(30), seen);
    pg.stop();
    let o = child.wait_with_output().expect("diagnose ends");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    let v = json_of(&json);
    assert_eq!(v["status"], "server_lost", "{v}");
    assert!(err.contains("the server went away"), "{err}");
    // Bad input and no connection are exit 1, one line each.
    for (time, want) in [
        ("0", "invalid -T/--time \"0\": sample at least 1 second"),
        (
            "3x",
            "-T/--time: invalid duration \"3x\": unknown unit \"x\" (use us, ms, s, m or h)",
        ),
    ] {
        let o = diagnose_for(&db, &db.user, time, &json, &[])
            .output()
            .expect("run");
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{time}: {err}");
        assert_eq!(err.trim(), format!("hotbench: error: {want}"));
    }
    let o = diagnose_command(&db, &db.user, &json, &[])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    assert!(
        text(&o).1.starts_with("hotbench: error: could not connect"),
        "{:?}",
        text(&o)
    );
}
