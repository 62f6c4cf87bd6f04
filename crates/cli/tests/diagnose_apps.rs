//! `hotbench diagnose` on workloads whose SQL nobody here wrote: pgbench's own tpcb-like
//! (real `pgbench -i -s N` data and real pgbench clients). The first finding must name the
//! experiment that runs the user's workload: `tpcb-hotspot` at the user's scale (the branches'
//! row count, not the ten tellers' rows waited on at scale 1), with advice for aggregates, not
//! for payments. Django's `F() + 1` is a counter, procrastinate's claim inside a PL/pgSQL
//! function and pgqueuer's NOTIFY commit lock are seen (the libraries installed by
//! `.ci/install-pyapps`, their workloads in `tests/apps/`), pgqueuer's claim inside a
//! CTE/LATERAL too, and SQLAlchemy's payments stay `daily-limit` on a database without
//! pg_stat_statements. Samples are short (-T 3 to 5, waits every 20 ms).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::oracle::{pgbench, NO_PGBENCH};
use common::*;
use hotbench_pgserver::{testing, ConnInfo};
use serde_json::Value;

/// The installed pgbench, or `None` (the test then skips, failing under CI).
fn pgbench_or_skip() -> Option<PathBuf> {
    let p = pgbench();
    if p.is_none() {
        assert!(!under_ci(), "{NO_PGBENCH}");
        println!("SKIPPED: {NO_PGBENCH}");
    }
    p
}

/// `pgbench ARGS… -h -p -U DB` with no libpq variable from the environment.
fn pgbench_on(bin: &Path, db: &ConnInfo, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args).args(conn_args(db)).arg(&db.dbname);
    testing::without_libpq_env(&mut c);
    c
}

/// A real pgbench load, stopped (SIGTERM) when dropped: a test started in the background
/// inherits SIGINT ignored, and pgbench then ran out its -T 120 (4 minutes for one test).
struct Pgbench(Child);

impl Pgbench {
    /// `pgbench -n -c CLIENTS -j 2 -T 120` (tpcb-like), returned once `n` sessions wait on a
    /// lock at once.
    fn start(bin: &Path, db: &ConnInfo, clients: u32, n: u32) -> Pgbench {
        let child = pgbench_on(
            bin,
            db,
            &["-n", "-c", &clients.to_string(), "-j", "2", "-T", "120"],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pgbench");
        let load = Pgbench(child);
        let sql = format!(
            "select count(*) >= {n} from pg_stat_activity \
             where datname = current_database() and wait_event_type = 'Lock'"
        );
        wait_until("lock waiters", Duration::from_secs(60), || {
            psql(db, &sql).trim() == "t"
        });
        load
    }
}

impl Drop for Pgbench {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

/// `pgbench -i -q -s SCALE` on a fresh database.
fn pgbench_database(bin: &Path, tag: &str, scale: u32) -> ConnInfo {
    let db = database(tag);
    let o = pgbench_on(bin, &db, &["-i", "-q", "-s", &scale.to_string()])
        .output()
        .expect("pgbench -i");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    db
}

/// `hotbench diagnose -T TIME --interval 20ms --json DIR/TAG.json EXTRA… DB`.
fn diagnose_command(db: &ConnInfo, tag: &str, time: &str, extra: &[&str]) -> (Command, PathBuf) {
    let json = temp_dir(&format!("diag-{tag}")).join(format!("{tag}.json"));
    let _ = std::fs::remove_file(&json);
    let mut c = command_on(
        db,
        &["diagnose"],
        &[
            &["-T", time, "--interval", "20ms", "--json", path(&json)],
            extra,
        ]
        .concat(),
    );
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    (c, json)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn json_of(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("diagnosis written");
    serde_json::from_str(&text).expect("diagnosis is JSON")
}

/// pgbench at scale 1 waits on its ten tellers' rows (and the one branch), at scale 3 on three
/// branches and 30 tellers: either way the suggested ladder runs pgbench's own workload at the
/// user's scale.
#[test]
fn pgbench_tpcb_like_is_tpcb_hotspot_at_the_users_scale() {
    let Some(bin) = pgbench_or_skip() else { return };
    for scale in [1u32, 3] {
        let tag = format!("pgbench_s{scale}");
        let db = pgbench_database(&bin, &tag, scale);
        let load = Pgbench::start(&bin, &db, 8, 2);
        let (mut c, json) = diagnose_command(&db, &tag, "3", &[]);
        let o = c.output().expect("run diagnose");
        drop(load);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
        let v = json_of(&json);
        let f = v["findings"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["kind"] == "hot_row"))
            .unwrap_or_else(|| panic!("no hot row at scale {scale}:\n{out}"));
        assert_eq!(f["scenario"], "tpcb-hotspot", "{out}");
        let cmd = f["command"].as_str().unwrap_or("");
        assert!(
            cmd.contains(&format!("--param scale={scale}")),
            "scale {scale}: {cmd}\n{out}"
        );
        let advice = f["advice"].as_str().unwrap_or("");
        assert!(
            !advice.contains("RETURNING") && advice.contains("bucketed"),
            "{advice}"
        );
    }
}

/// The file of a shipped scenario.
fn scenario_file(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// tpcb-hotspot's balance checks hold for pgbench's own tpcb-like at every scale: pgbench
/// draws the teller independently of the branch, so above scale 1 a branch is not the sum of
/// its own tellers (the check that said so failed at scale 3 and 10).
#[test]
fn tpcb_checks_hold_for_real_pgbench_at_scales_1_3_and_10() {
    let Some(bin) = pgbench_or_skip() else { return };
    let totals = scenario_file("tpcb-hotspot/totals.sql");
    let checks = scenario_file("tpcb-hotspot/checks_branches.sql");
    for scale in [1u32, 3, 10] {
        let db = pgbench_database(&bin, &format!("tpcb_checks_s{scale}"), scale);
        psql(&db, &totals);
        let o = pgbench_on(&bin, &db, &["-n", "-c", "4", "-j", "2", "-t", "150"])
            .output()
            .expect("pgbench");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut seen = 0;
        for q in checks.split(";\n").filter(|q| q.contains("select")) {
            let row = psql(&db, q);
            let cols: Vec<&str> = row.trim().splitn(3, '|').collect();
            assert_eq!(cols.get(1), Some(&"t"), "scale {scale}: {row}");
            seen += 1;
        }
        assert!(seen >= 2, "{checks}");
    }
}

/// Waits until at least `n` of `db`'s sessions wait on a lock at once.
fn wait_for_lock_waiters(db: &ConnInfo, n: u32) {
    let sql = format!(
        "select count(*) >= {n} from pg_stat_activity \
         where datname = current_database() and wait_event_type = 'Lock'"
    );
    wait_until("lock waiters", Duration::from_secs(60), || {
        psql(db, &sql).trim() == "t"
    });
}

/// The hot-row finding of a diagnosis, with the text report for messages.
fn hot_row(v: &Value, out: &str) -> Value {
    v["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["kind"] == "hot_row"))
        .cloned()
        .unwrap_or_else(|| panic!("no hot row:\n{out}"))
}

/// Django's `F("views") + 1` is `SET "views" = ("site_page"."views" + $1)`: an increment, so
/// the hot pages are `counters` (it was read as an assignment: `daily-limit`), with counter
/// advice.
#[test]
fn a_django_f_counter_is_counters() {
    let Some(py) = common::apps::python() else {
        return;
    };
    let db = database("django");
    common::apps::setup(&py, "django_counter.py", &db, &[]);
    let load = common::apps::AppLoad::start(&py, "django_counter.py", &db, &["--clients", "8"]);
    wait_for_lock_waiters(&db, 2);
    let (mut c, json) = diagnose_command(&db, "django", "5", &[]);
    let o = c.output().expect("run diagnose");
    let tps = load.stop();
    let (out, err) = text(&o);
    eprintln!("{out}\n{tps}");
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let f = hot_row(&json_of(&json), &out);
    assert_eq!(f["relation"], "site_page", "{out}");
    assert_eq!(f["scenario"], "counters", "{out}");
    assert!(
        f["statements"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["query"]
                .as_str()
                .is_some_and(|q| q.contains("(\"site_page\".\"views\" +")))),
        "{out}"
    );
    let advice = f["advice"].as_str().unwrap_or("");
    assert!(!advice.contains("RETURNING"), "{advice}");
    // Its view holds the row across a read inside transaction.atomic(): the ladder's first
    // variant has that shape (the autocommit `direct` ran at 21× the observed rate).
    assert_eq!(f["variants"][0], "direct-in-transaction", "{out}");
}

/// Waits until a session of `db` runs a statement containing `text`.
fn wait_for_statement(db: &ConnInfo, text: &str) {
    let sql = format!(
        "select exists (select 1 from pg_stat_activity where datname = current_database() \
         and state <> 'idle' and position('{text}' in query) > 0)"
    );
    wait_until(text, Duration::from_secs(60), || {
        psql(db, &sql).trim() == "t"
    });
}

/// The `looked_at` check named `what`, as "VALUE" (empty when absent).
fn check_value(v: &Value, what: &str) -> String {
    v["looked_at"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["what"] == what)
        .filter_map(|c| c["value"].as_str())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// procrastinate claims its jobs inside `procrastinate_fetch_job_v2(…)` (PL/pgSQL): the
/// statement seen is a bare function call, so the claim was never seen ("no claims seen").
/// Its body is read from pg_proc as text and its claim on procrastinate_jobs found.
#[test]
fn procrastinates_claim_inside_a_plpgsql_function_is_seen() {
    let Some(py) = common::apps::python() else {
        return;
    };
    let db = database("procrastinate");
    common::apps::setup(&py, "procrastinate_queue.py", &db, &[]);
    let load =
        common::apps::AppLoad::start(&py, "procrastinate_queue.py", &db, &["--clients", "8"]);
    wait_for_statement(&db, "procrastinate_fetch_job_v2");
    // The worker churns (jobs claimed, done and deleted) before the sample starts: its
    // start-up is slow on a loaded machine.
    wait_until("procrastinate jobs done", Duration::from_secs(60), || {
        psql(
            &db,
            "select coalesce(sum(n_tup_del), 0) >= 50 from pg_stat_user_tables \
             where relname = 'procrastinate_jobs'",
        )
        .trim()
            == "t"
    });
    let (mut c, json) = diagnose_command(&db, "procrastinate", "5", &[]);
    let o = c.output().expect("run diagnose");
    let rate = load.stop();
    let (out, err) = text(&o);
    eprintln!("{out}\n{rate}");
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let v = json_of(&json);
    let called = check_value(&v, "functions called");
    assert!(
        called.contains("bodies read") && called.contains("procrastinate_fetch_job_v2"),
        "{out}"
    );
    assert!(
        !check_value(&v, "queue tables").contains("no claims"),
        "{out}"
    );
    let queue_finding = v["findings"].as_array().is_some_and(|f| {
        f.iter()
            .any(|f| f["kind"] == "queue" && f["relation"] == "procrastinate_jobs")
    });
    assert!(
        queue_finding
            || check_value(&v, "queue table")
                .starts_with("procrastinate_jobs: claims with SKIP LOCKED"),
        "{out}"
    );
}

/// pgqueuer's trigger NOTIFYs on every change of its queue table, so its producers' and
/// consumers' commits queue on the notification lock (`Lock:object`), and its claim is in a
/// CTE/LATERAL. Diagnose names the lock (it said "heavyweight lock waits, none on rows") and
/// sees the claims on the queue table.
#[test]
fn pgqueuers_notify_lock_and_cte_claims_are_seen() {
    let Some(py) = common::apps::python() else {
        return;
    };
    let db = database("pgqueuer");
    common::apps::setup(&py, "pgqueuer_queue.py", &db, &[]);
    let load = common::apps::AppLoad::start(&py, "pgqueuer_queue.py", &db, &["--clients", "4"]);
    wait_for_statement(&db, "pgqueuer");
    // The contention is there before the sample starts (on a loaded machine it can take a
    // while): a commit waits on the notification lock.
    wait_until("Lock:object waits", Duration::from_secs(60), || {
        psql(
            &db,
            "select count(*) > 0 from pg_stat_activity \
             where datname = current_database() and wait_event = 'object'",
        )
        .trim()
            == "t"
    });
    // The notification lock's share of the active time varies with how busy the machine is
    // (9% in one fresh-clone CI run, 6% twice in another, under the finding's bar): the same
    // load is sampled again before the assertions while none named it (three at most).
    let names_lock = |v: &Value| {
        v["findings"].as_array().is_some_and(|f| {
            f.iter().any(|f| {
                f["kind"] == "lock_wait"
                    && f["title"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("Lock:object"))
            })
        })
    };
    let (mut c, json) = diagnose_command(&db, "pgqueuer", "3", &[]);
    // The share of Lock:object a diagnosis shows in its checks (0 when it names none).
    let object_share = |v: &Value| -> f64 {
        check_value(v, "other heavyweight locks")
            .split("Lock:object ")
            .nth(1)
            .and_then(|r| r.split('%').next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0.0)
    };
    // Up to three samples of the same load, the one where the lock held most kept (a light
    // load's 3 s can show it at 0% on a quiet machine); a finding ends the sampling.
    let mut best: Option<(f64, std::process::Output, Value)> = None;
    for _ in 0..3 {
        let o = c.output().expect("run diagnose");
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
        let v = json_of(&json);
        let share = object_share(&v);
        let found = names_lock(&v);
        eprintln!("a sample, Lock:object {share}%: {out}");
        if best.as_ref().is_none_or(|b| share > b.0) {
            best = Some((share, o, v));
        }
        if found {
            break;
        }
    }
    let rate = load.stop();
    let (share, o, v) = best.expect("sampled");
    let (out, _) = text(&o);
    eprintln!("{out}\n{rate}");
    let locks = check_value(&v, "other heavyweight locks");
    assert!(locks.contains("Lock:object"), "{out}");
    // A finding when the lock holds its share of the active time (2–7% on a quiet 2-core
    // machine in three samples each, 9–14% on loaded ones): below the bar it is named in the
    // checks only, and must not be a finding.
    let bar = hotbench_diagnose::findings::MIN_LOCK_WAIT_SHARE * 100.0;
    // The checks show whole percents: at the bar itself either is right.
    let decided = (share - bar).abs() >= 1.0;
    assert_eq!(
        share >= bar || !decided,
        v["findings"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["kind"] == "lock_wait"
                && f["title"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("Lock:object"))
                && f["scenario"] == "queue"))
            || !decided,
        "Lock:object {share}% against the {bar}% bar: {out}"
    );
    // The claim sits past the first 300 characters of pgqueuer's dequeue statement, inside
    // a CTE's LATERAL subquery: the probe keeps it from the middle of the cut text.
    assert!(
        v["probe"]["sessions"]["statements"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["query"]
                .as_str()
                .is_some_and(|q| q.contains("FROM pgqueuer candidate")
                    && q.contains("FOR UPDATE SKIP LOCKED")))),
        "{out}"
    );
    assert!(
        !check_value(&v, "queue tables").contains("no claims"),
        "{out}"
    );
}

/// A pgbench load for [`measure_row`]: started at once, stopped (killed) when the row's
/// diagnosis is done; pgbench's own output is not kept.
fn pgbench_load(bin: &Path, db: &ConnInfo, args: &[&str]) -> Box<dyn FnOnce() -> String> {
    let child = pgbench_on(bin, db, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pgbench");
    let load = Pgbench(child);
    Box::new(move || {
        drop(load);
        String::new()
    })
}

/// What one workload measured: observed (the diagnosis) against the suggested ladder's first
/// variant run for 5 s on the same server (a database of its own, the load stopped).
fn measure_row(
    name: &str,
    db: &ConnInfo,
    start: &dyn Fn() -> Box<dyn FnOnce() -> String>,
    ready: &dyn Fn(),
) -> String {
    let stop = start();
    ready();
    let (mut c, json) = diagnose_command(db, &format!("m-{}", db.dbname), "5", &[]);
    let o = c.output().expect("run diagnose");
    let load_out = stop();
    let (out, _) = text(&o);
    let v = json_of(&json);
    let dur = v["duration_s"].as_f64().unwrap_or(1.0);
    let commits = v["probe"]["database"]["commits"].as_f64().unwrap_or(0.0);
    let waits = &v["probe"]["waits"];
    let top = format!(
        "{} {:.0}%",
        waits[0]["event"].as_str().unwrap_or("?"),
        waits[0]["pct"].as_f64().unwrap_or(0.0)
    );
    let kinds: Vec<String> = v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            format!(
                "{} {} {:.0}%",
                f["kind"].as_str().unwrap_or("?"),
                f["relation"].as_str().unwrap_or(""),
                f["share"].as_f64().unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    let kinds = if kinds.is_empty() {
        "none".to_string()
    } else {
        kinds.join("; ")
    };
    let Some(f) = v["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["command"].is_string()))
    else {
        return format!(
            "| {name} | {kinds} | – | {top}, {:.0} tps | – |",
            commits / dur
        );
    };
    let args: Vec<String> = f["command_args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    let mut lab: Vec<String> = Vec::new();
    let mut first = String::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--variants" {
            first = it
                .next()
                .and_then(|v| v.split(',').next())
                .unwrap_or("")
                .to_string();
        } else {
            lab.push(a.clone());
        }
    }
    let lab_db = database(&format!("lab_{}", db.dbname.len()));
    let ljson = temp_dir("diag-measure").join(format!("{}.json", lab_db.dbname));
    let sub: Vec<&str> = lab.iter().map(String::as_str).collect();
    let o = command_on(
        &lab_db,
        &sub,
        &["--variants", &first, "-T", "5", "--json", path(&ljson)],
    )
    .output()
    .expect("run the suggested ladder");
    let (lout, lerr) = text(&o);
    let l: hotbench_results::LadderFile = read(&ljson);
    let var = &l.ladders[0].variants[0];
    let rec = var
        .record
        .as_ref()
        .unwrap_or_else(|| panic!("{lout}\n{lerr}"));
    let lab_tps = var.useful_per_s().unwrap_or(0.0);
    format!(
        "| {name} | {kinds} | `{}` ({first}) | {top}, {:.0} tps | {}, {:.0}/s ({:.2}×) |\n<!-- {} | {} -->",
        f["command"].as_str().unwrap_or(""),
        commits / dur,
        rec.top_wait().unwrap_or_default(),
        lab_tps,
        lab_tps / (commits / dur).max(1e-9),
        load_out.lines().last().unwrap_or(""),
        out.lines().next().unwrap_or("")
    )
}

/// Measures, for docs/diagnosis.md's table, each workload's observed tps and top wait against
/// the suggested ladder's first variant on the same server (5 s each): run with `flock
/// /tmp/hotbench-bench.lock cargo test -p hotbench --test diagnose_apps -- --ignored
/// measure --nocapture` and note the load average.
#[test]
#[ignore = "a measurement for docs/diagnosis.md (about eight minutes), not a check"]
fn measure_suggested_ladders_against_observed() {
    let bin = pgbench().expect(NO_PGBENCH);
    let mut rows = Vec::new();
    // pgbench's tpcb-like, scale 1, 8 clients.
    let db = pgbench_database(&bin, "m_pgbench", 1);
    rows.push(measure_row(
        "pgbench tpcb-like, scale 1, -c 8",
        &db,
        &|| pgbench_load(&bin, &db, &["-n", "-c", "8", "-j", "2", "-T", "120"]),
        &|| wait_for_lock_waiters(&db, 2),
    ));
    // The same beside an idle REPEATABLE READ psql session (holding the xmin horizon).
    let db = pgbench_database(&bin, "m_pgbench_rr", 1);
    let mut holder = Command::new(testing::shared().binaries().program("psql"))
        .args(["-X", "-q"])
        .envs(db.env())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("psql");
    if let Some(i) = holder.stdin.as_mut() {
        use std::io::Write;
        let _ = i.write_all(
            b"begin isolation level repeatable read;\nselect count(*) from pgbench_branches;\n",
        );
        let _ = i.flush();
    }
    rows.push(measure_row(
        "pgbench tpcb-like, scale 1, -c 8, beside an idle REPEATABLE READ session",
        &db,
        &|| pgbench_load(&bin, &db, &["-n", "-c", "8", "-j", "2", "-T", "120"]),
        &|| wait_for_lock_waiters(&db, 2),
    ));
    drop(holder.stdin.take());
    let _ = holder.wait();
    // Uniform select-only: nothing to find.
    let db = pgbench_database(&bin, "m_select", 1);
    rows.push(measure_row(
        "pgbench select-only, -c 8",
        &db,
        &|| pgbench_load(&bin, &db, &["-n", "-S", "-c", "8", "-j", "2", "-T", "120"]),
        &|| wait_for_statement(&db, "pgbench_accounts"),
    ));
    if let Some(py) = common::apps::python() {
        let lock = "select count(*) >= 2 from pg_stat_activity where datname = current_database() \
                    and wait_event_type = 'Lock'";
        let object =
            "select count(*) > 0 from pg_stat_activity where datname = current_database() \
                      and wait_event = 'object'";
        let done = "select coalesce(sum(n_tup_del), 0) >= 50 from pg_stat_user_tables \
                    where relname = 'procrastinate_jobs'";
        for (name, script, args, ready, no_pss) in [
            (
                "Django F() counter, 8 threads",
                "django_counter.py",
                vec!["--clients", "8"],
                lock,
                false,
            ),
            (
                "SQLAlchemy with_for_update payments, 8 threads",
                "sqlalchemy_pay.py",
                vec!["--clients", "8"],
                lock,
                false,
            ),
            (
                "the same SQLAlchemy payments without pg_stat_statements",
                "sqlalchemy_pay.py",
                vec!["--clients", "8"],
                lock,
                true,
            ),
            (
                "procrastinate, 8 concurrent jobs",
                "procrastinate_queue.py",
                vec!["--clients", "8"],
                done,
                false,
            ),
            (
                "pgqueuer, 4 workers, 8 producers",
                "pgqueuer_queue.py",
                vec!["--clients", "4"],
                object,
                false,
            ),
        ] {
            let db = database(&format!("m_{}", &script[..5]));
            if no_pss {
                psql(&db, "drop extension if exists pg_stat_statements");
            }
            common::apps::setup(&py, script, &db, &[]);
            let py = py.clone();
            rows.push(measure_row(
                name,
                &db,
                &|| {
                    let load = common::apps::AppLoad::start(&py, script, &db, &args);
                    Box::new(move || load.stop())
                },
                &|| {
                    wait_until(name, Duration::from_secs(60), || {
                        psql(&db, ready).trim() == "t"
                    })
                },
            ));
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average: {load}");
    for r in rows {
        println!("{r}");
    }
}

/// SQLAlchemy 2.0 paying from skewed accounts (`select(...).with_for_update()`, then the
/// unit of work's `UPDATE accounts SET balance=$1`) is a `daily-limit` hot row; its counter
/// (`values(balance=Account.balance + 1)`, sent as `SET balance=(accounts.balance + $1)`) is
/// `counters`. The clients are on the server's host: the time between their statements is
/// suggested as `--think`, never as `--rtt`.
#[test]
fn sqlalchemy_payments_are_daily_limit_and_its_increments_counters() {
    let Some(py) = common::apps::python() else {
        return;
    };
    for (mode, scenario) in [("pay", "daily-limit"), ("counter", "counters")] {
        let db = database(&format!("sqlalchemy_{mode}"));
        common::apps::setup(&py, "sqlalchemy_pay.py", &db, &[]);
        let load = common::apps::AppLoad::start(
            &py,
            "sqlalchemy_pay.py",
            &db,
            &["--clients", "8", "--mode", mode],
        );
        wait_for_lock_waiters(&db, 2);
        let (mut c, json) = diagnose_command(&db, &format!("sqlalchemy-{mode}"), "4", &[]);
        let o = c.output().expect("run diagnose");
        let rate = load.stop();
        let (out, err) = text(&o);
        eprintln!("{out}\n{rate}");
        assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
        let f = hot_row(&json_of(&json), &out);
        assert_eq!(f["relation"], "accounts", "{out}");
        assert_eq!(f["scenario"], scenario, "{out}");
        let cmd = f["command"].as_str().unwrap_or("");
        assert!(!cmd.contains("--rtt"), "{cmd}");
    }
}

/// The same SQLAlchemy payments on a database without pg_stat_statements (issue 37's eighth
/// workload): the hot row is still `daily-limit` with its hot-row count, the statements come
/// from pg_stat_activity, a note names the missing extension, and the think time, then taken
/// from the sampled idle age, says why.
#[test]
fn sqlalchemy_payments_without_pg_stat_statements_are_still_daily_limit() {
    let Some(py) = common::apps::python() else {
        return;
    };
    let db = database("sqlalchemy_nopss");
    psql(&db, "drop extension if exists pg_stat_statements");
    common::apps::setup(&py, "sqlalchemy_pay.py", &db, &[]);
    let load = common::apps::AppLoad::start(&py, "sqlalchemy_pay.py", &db, &["--clients", "8"]);
    wait_for_lock_waiters(&db, 2);
    let (mut c, json) = diagnose_command(&db, "sqlalchemy-nopss", "4", &[]);
    let o = c.output().expect("run diagnose");
    let rate = load.stop();
    let (out, err) = text(&o);
    eprintln!("{out}\n{rate}");
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let v = json_of(&json);
    assert!(
        v["notes"]
            .to_string()
            .contains("CREATE EXTENSION pg_stat_statements"),
        "{out}"
    );
    let f = hot_row(&v, &out);
    assert_eq!(
        (&f["relation"], &f["scenario"]),
        (&Value::from("accounts"), &Value::from("daily-limit")),
        "{out}"
    );
    let cmd = f["command"].as_str().unwrap_or("");
    assert!(
        cmd.contains("--param customers=") && !cmd.contains("--rtt"),
        "{cmd}"
    );
    let think = f["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["what"] == "time between a transaction's statements")
        .filter_map(|e| e["value"].as_str())
        .collect::<String>();
    assert!(think.contains("without pg_stat_statements"), "{out}");
}
