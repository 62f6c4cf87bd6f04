//! `hotbench capture --log` of a tiny job queue in a hostile-named schema: a worker fetches
//! a job (`fetch_job(…)`, a PL/pgSQL function returning the jobs row) and finishes the id it
//! returned (`finish_job(job_id, …)`, which fails for a job not being worked on), bound
//! server-side (`-M prepared`). Replaying the logged ids would finish each job again; the
//! capture chains the two shapes (the fetch's script keeps the id and runs the finish with
//! it, or skips it when the fetch returned none), and the twin, run on another database,
//! commits its finishes.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use hotbench_pgserver::{testing, ConnInfo, Server};
use hotbench_results::capture_record::{CaptureDoc, Fidelity};

/// A quote, a space, a `;`, a non-ASCII letter and a `:` (pgbench's: the script writer
/// writes it `U&"…\003A…"`, and the mix matches that spelling with the captured one).
const SCHEMA: &str = r#""q ""x"" ü; y:z""#;
/// [`SCHEMA`] as the workload's own pgbench scripts must write it.
const SCRIPT_SCHEMA: &str = r#"U&"q ""x"" ü; y\003Az""#;
const START: &str = "capture chain test: workload starts";

fn setup_sql() -> String {
    let s = SCHEMA;
    format!(
        "create extension if not exists pg_stat_statements;
         create schema {s};
         create table {s}.jobs (id bigserial primary key, status text not null default 'todo', payload text);
         create function {s}.defer_job(p text) returns bigint language sql
           as $$ insert into {s}.jobs (payload) values (p) returning id $$;
         create function {s}.fetch_job(p_worker bigint) returns {s}.jobs language plpgsql as $$
           declare r {s}.jobs;
           begin
             update {s}.jobs set status = 'doing' where id = (select id from {s}.jobs
               where status = 'todo' order by id limit 1 for update skip locked) returning * into r;
             return r;
           end $$;
         create function {s}.finish_job(job_id bigint, end_status text) returns void language plpgsql as $$
           begin
             delete from {s}.jobs where id = job_id and status = 'doing';
             if not found then raise exception 'job % is not being worked on', job_id; end if;
           end $$;
         insert into {s}.jobs (payload) select 'x' from generate_series(1, 5000);
         analyze {s}.jobs;"
    )
}

/// A private server logging every statement (stderr, session ids in the prefix).
fn logging_server() -> (Server, ConnInfo) {
    let mut cluster = testing::test_cluster_options();
    cluster.settings.extend(
        [
            ("log_min_duration_statement", "0"),
            ("log_line_prefix", "%m [%p] %c %x %v "),
            ("logging_collector", "on"),
            ("log_destination", "stderr"),
            ("log_filename", "pg.log"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let server = testing::private(cluster);
    let db = server.create_database("app").expect("database");
    hotbench_pgserver::server::psql(server.binaries(), &db, &setup_sql()).expect("setup");
    (server, db)
}

/// Producers and a worker, two clients, values bound server-side, for `seconds` in the
/// background (the capture samples it while it runs: pg_stat_statements' counts name the
/// tables the functions touch).
fn start_workload(db: &ConnInfo, dir: &Path, seconds: u32) -> std::process::Child {
    let s = SCRIPT_SCHEMA;
    let defer = write_script(dir, "defer.sql", &format!("SELECT {s}.defer_job('p');\n"));
    let work = write_script(
        dir,
        "work.sql",
        &format!(
            "SELECT id, status FROM {s}.fetch_job(1) \\gset\nSELECT {s}.finish_job(:id, 'done');\n"
        ),
    );
    spawn_run(
        db,
        &[
            "-n",
            "--probe",
            "off",
            "-M",
            "prepared",
            "-c",
            "2",
            "-T",
            &seconds.to_string(),
            "--random-seed",
            "7",
            "-f",
            &format!("{}@1", defer.to_str().expect("utf-8")),
            "-f",
            &format!("{}@1", work.to_str().expect("utf-8")),
        ],
    )
}

/// The log once it holds 100 finishes, its lines after [`START`]'s (the workload's, not
/// the setup's) copied into `dir`.
fn log_file(server: &Server, dir: &Path) -> PathBuf {
    let log = server.data_dir().join("log").join("pg.log");
    let finishes = || {
        std::fs::read_to_string(&log)
            .map(|t| t.matches("finish_job").count())
            .unwrap_or(0)
    };
    wait_until(
        "the log holds 100 finishes",
        Duration::from_secs(60),
        || finishes() >= 100,
    );
    let text = std::fs::read_to_string(&log).expect("the log");
    let at = text.find(START).expect("the start marker");
    let from = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
    let to = dir.join("pg.log");
    std::fs::write(&to, &text[from..]).expect("copy the log");
    to
}

#[test]
fn a_fetched_job_id_is_carried_to_its_finish() {
    let (server, db) = logging_server();
    let dir = temp_dir("capture-chain");
    hotbench_pgserver::server::psql(server.binaries(), &db, &format!("select '{START}'"))
        .expect("marker");
    let mut load = start_workload(&db, &dir, 60);
    let log = log_file(&server, &dir);
    let out = dir.join("twin");
    let o = command_on(
        &db,
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
    // Our own child, stopped once captured.
    let _ = load.kill();
    let _ = load.wait();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let doc: CaptureDoc = read(&out.join("capture.json"));
    // The table only the functions' bodies name, in the hostile schema, is captured
    // with its rows (it was "not found" when looked up unqualified on the search path).
    assert!(
        !doc.notes.iter().any(|n| n.contains("not found")),
        "{:?}",
        doc.notes
    );
    let data = std::fs::read_to_string(out.join("data.sql")).expect("data.sql");
    assert!(
        data.contains(&format!("insert into {SCHEMA}.\"jobs\"")),
        "{data}"
    );
    let note = doc.notes.iter().find(|n| n.starts_with("chained: "));
    assert!(note.is_some(), "no chain: {:?}\n{stdout}", doc.notes);
    let fetch = doc
        .shapes
        .iter()
        .find(|s| s.statements.iter().any(|q| q.contains("fetch_job")))
        .expect("the fetch's shape");
    let finish = doc
        .shapes
        .iter()
        .find(|s| s.statements.iter().any(|q| q.contains("finish_job")))
        .expect("the finish's shape");
    assert_eq!(finish.weight, 0.0, "the finish runs in the fetch's script");
    let script = std::fs::read_to_string(out.join(&fetch.script)).expect("script");
    assert!(
        script.contains("\\gset\n") && script.contains("\\if :hotbench_found\n"),
        "{script}"
    );
    assert!(
        script.contains("finish_job(:hotbench_carry, E'done')"),
        "{script}"
    );
    // The twin on another database: its finishes commit (a failed one would fail the
    // captured variant's check, exit 2), and run after the fetches that returned a job
    // (its queue holds only what its producers deferred: an empty fetch skips the finish).
    let twin = server.create_database("twin").expect("database");
    let o = command_on(
        &twin,
        &["capture"],
        &["--verify", out.to_str().expect("utf-8"), "-T", "2"],
    )
    .output()
    .expect("verify");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let f: Fidelity = read(&out.join("verify.json"));
    let share = |what: &str| {
        f.mix
            .iter()
            .find(|m| m.query.contains(what))
            .map_or(0.0, |m| m.twin)
    };
    assert!(share("finish_job") > 0.0, "{stdout}");
    assert!(share("finish_job") <= share("fetch_job") + 0.01, "{stdout}");
}
