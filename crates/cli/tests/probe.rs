//! Server probes end to end (`hotbench run` against the harness server): the hot-row pattern
//! waits on locks and the one-statement fix much less; a queue with an xmin holder shows dead
//! tuples growing on the JSON timeline; a role without pg_read_all_stats and a database
//! without pg_stat_statements degrade to one-line notes while the run succeeds.

mod common;

use common::*;
use hotbench_pgserver::ConnInfo;
use serde_json::Value;

fn probes(json: &Value) -> &Value {
    json.get("probes").expect("result has probes")
}

fn lock_pct(p: &Value) -> f64 {
    p["waits"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|w| w["event"].as_str().is_some_and(|e| e.starts_with("Lock:")))
                .filter_map(|w| w["pct"].as_f64())
                .sum()
        })
        .unwrap_or(0.0)
}

fn waits_text(p: &Value) -> String {
    p["waits"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|w| format!("{} {:.1}%", w["event"], w["pct"].as_f64().unwrap_or(0.0)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// One short run of `script` with `clients` clients; returns stdout and the result JSON.
fn run_script(db: &ConnInfo, tag: &str, script: &str, extra: &[&str]) -> (String, Value) {
    let dir = temp_dir(&format!("probe-{tag}"));
    let path = write_script(&dir, &format!("{tag}.sql"), script);
    let json_path = dir.join(format!("{tag}.json"));
    let mut args = vec![
        "-n",
        "-f",
        path.to_str().expect("utf-8 path"),
        "--json",
        json_path.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    let o = run(db, &args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    (out, json(&json_path))
}

#[test]
fn hot_rows_wait_on_locks_and_the_single_statement_less() {
    let db = database("probe_limit");
    psql(
        &db,
        "create extension if not exists pg_stat_statements;
         create table daily_limit(id int primary key, remaining bigint not null);
         insert into daily_limit select g, 1000000000 from generate_series(1, 4) g;
         create table ledger(id bigserial primary key, account int not null, amount int not null);",
    );
    let common = ["-T", "3", "-c", "50", "-j", "2", "--rtt", "1ms"];
    let (out_a, a) = run_script(
        &db,
        "for_update",
        "\\set id random(1, 4)\n\\set amt random(1, 10)\nbegin;\n\
         select remaining from daily_limit where id = :id for update;\n\
         update daily_limit set remaining = remaining - :amt where id = :id;\n\
         insert into ledger(account, amount) values (:id, :amt);\nend;\n",
        &common,
    );
    let (out_b, b) = run_script(
        &db,
        "returning",
        "\\set id random(1, 4)\n\\set amt random(1, 10)\n\
         with u as (update daily_limit set remaining = remaining - :amt \
         where id = :id and remaining >= :amt returning id) \
         insert into ledger(account, amount) select id, :amt from u;\n",
        &common,
    );
    let (pa, pb) = (probes(&a), probes(&b));
    let top_a = pa["waits"][0]["event"].as_str().unwrap_or("");
    eprintln!(
        "select-for-update: {}\nupdate-returning: {}",
        waits_text(pa),
        waits_text(pb)
    );
    eprintln!(
        "tps: {} vs {}; locks: {} / {}",
        a["totals"]["tps"], b["totals"]["tps"], pa["locks"], pb["locks"]
    );
    assert!(top_a.starts_with("Lock:"), "top wait {top_a}: {pa}");
    assert!(
        lock_pct(pb) < lock_pct(pa),
        "lock share {} (returning) vs {} (for update)",
        lock_pct(pb),
        lock_pct(pa)
    );
    // The hot spot is visible, and the text report says it in one line each.
    assert!(pa["locks"]["max_waiting"].as_u64().unwrap_or(0) > 1, "{pa}");
    assert!(
        pa["locks"]["hot_relation"]["relation"] == "daily_limit"
            || pa["locks"]["hot_tuple"]["relation"] == "daily_limit",
        "{}",
        pa["locks"]
    );
    assert!(out_a.contains("\ntop waits: Lock:"), "{out_a}");
    assert!(out_b.contains("\ntop waits: "), "{out_b}");
    assert!(out_a.contains("\nlock waits: up to "), "{out_a}");
    // Statements: the hot UPDATE is among the top statements, with calls and blocks/call.
    let stmts = pa["statements"].as_array().expect("statements");
    assert!(
        stmts.iter().any(|s| s["query"]
            .as_str()
            .is_some_and(|q| q.contains("update daily_limit"))
            && s["calls"].as_i64().unwrap_or(0) > 0),
        "{stmts:?}"
    );
    assert!(
        !stmts.iter().any(|s| s["query"]
            .as_str()
            .is_some_and(|q| q.contains("hotbench-probe"))),
        "the probe's own statements are left out: {stmts:?}"
    );
    // Timeline intervals on the run's axis.
    let tl = pa["timeline"].as_array().expect("timeline");
    assert!(tl.len() >= 3, "{tl:?}");
    let last_t = tl.last().and_then(|i| i["t"].as_f64()).unwrap_or(0.0);
    // On the run's axis (seconds since its start, not Unix time): -T 3, plus at most the 2 s
    // given to transactions still running at the end, plus slack for a loaded machine.
    assert!((2.5..7.0).contains(&last_t), "last t {last_t}");
    assert!(tl
        .iter()
        .any(|i| i["statements"].as_array().is_some_and(|s| !s.is_empty())));
}

#[test]
fn queue_with_xmin_holder_shows_dead_tuples_growing() {
    let db = database("probe_queue");
    psql(
        &db,
        "create table jobs(id bigserial primary key, payload text not null);
         insert into jobs(payload) select 'job ' || g from generate_series(1, 20000) g;",
    );
    psql(&db, "vacuum analyze jobs");
    // A repeatable-read transaction open during the whole run: nothing can be cleaned.
    let params = hotbench_wire::Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    let mut holder = hotbench_wire::Connector::new(params)
        .connect()
        .expect("connect holder");
    holder
        .simple_query("begin isolation level repeatable read; select count(*) from jobs;")
        .expect("hold snapshot");
    let (out, rec) = run_script(
        &db,
        "queue",
        "insert into jobs(payload) values ('new');\n\
         delete from jobs where id = (select id from jobs order by id limit 1 for update skip locked);\n",
        &["-T", "4", "-c", "4", "-j", "2"],
    );
    holder.close();
    let p = probes(&rec);
    let tl = p["timeline"].as_array().expect("timeline");
    let dead: Vec<i64> = tl
        .iter()
        .filter_map(|iv| {
            iv["tables"]
                .as_array()?
                .iter()
                .find(|t| t["name"] == "jobs")?["dead_tuples"]
                .as_i64()
        })
        .collect();
    eprintln!(
        "dead tuples per interval: {dead:?}; xmin age max {}",
        p["max_xmin_age"]
    );
    assert!(dead.len() >= 3, "{tl:?}");
    assert!(
        dead.last() > dead.first() && dead.last().copied().unwrap_or(0) > 1000,
        "{dead:?}"
    );
    // Increasing over the run (stats reach the server about once a second).
    let rising = dead.windows(2).filter(|w| w[1] > w[0]).count();
    assert!(rising >= 2, "{dead:?}");
    assert!(p["max_xmin_age"].as_i64().unwrap_or(0) > 100, "{p}");
    let t = &p["tables"][0];
    assert_eq!(t["name"], "jobs", "{}", p["tables"]);
    assert!(t["deletes"].as_i64().unwrap_or(0) > 0);
    let line = line_value(&out, "dead tuples at end:").unwrap_or("");
    assert!(line.starts_with("jobs "), "{out}");
}

#[test]
fn without_privileges_or_pg_stat_statements_the_run_degrades_with_notes() {
    let db = database("probe_role");
    psql(
        &db,
        &format!(
            "create role probe_plain login password 'plain-pw';
             grant all on database \"{}\" to probe_plain;
             grant all on schema public to probe_plain;",
            db.dbname
        ),
    );
    // The harness's databases may come with pg_stat_statements; this one must not.
    psql(&db, "drop extension if exists pg_stat_statements");
    let user_db = db.with_user("probe_plain", Some("plain-pw"));
    psql(
        &user_db,
        "create table counter(id int primary key, n bigint not null);
         insert into counter values (1, 0);",
    );
    let dir = temp_dir("probe-role");
    let script = write_script(
        &dir,
        "inc.sql",
        // The sleep keeps each backend active whatever the client's share of a loaded
        // machine, so the wait sampler cannot find both sessions idle at every sample.
        "update counter set n = n + 1 where id = 1;\nselect pg_sleep(0.02);\n",
    );
    let json_path = dir.join("role.json");
    let mut cmd = hotbench();
    hotbench_pgserver::testing::without_libpq_env(&mut cmd);
    let o = cmd
        .args(["run", "-h"])
        .arg(&db.socket_dir)
        .args([
            "-p",
            &db.port.to_string(),
            "-U",
            "probe_plain",
            "-n",
            "-T",
            "2",
            "-c",
            "2",
        ])
        .arg("-f")
        .arg(&script)
        .arg("--json")
        .arg(&json_path)
        .arg(&db.dbname)
        .env("PGPASSWORD", "plain-pw")
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let notes: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("note: probe: "))
        .collect();
    eprintln!("{notes:#?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("role \"probe_plain\" lacks pg_read_all_stats")),
        "{out}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("pg_stat_statements is not installed")),
        "{out}"
    );
    // The run's own sessions are still sampled (same role).
    assert!(out.contains("\ntop waits: "), "{out}");
    let rec = json(&json_path);
    assert!(rec["probes"]["statements"]
        .as_array()
        .is_some_and(|s| s.is_empty()));

    // Probes off: no probe record, no probe lines.
    let o = run(
        &db,
        &[
            "-n",
            "-T",
            "1",
            "-f",
            script.to_str().expect("utf-8"),
            "--probe",
            "off",
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(!out.contains("top waits"), "{out}");
    let o = run(&db, &["-n", "-T", "1", "--probe", "maybe"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("invalid --probe \"maybe\""));
}
