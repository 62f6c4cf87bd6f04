//! Behind a pooler (issue 27), with a real PgBouncer hotbench starts: daily-limit through a
//! transaction pool of 10 at 100 clients passes its checks with the pooler's figures in the
//! JSON; the queue's variants pass through one, but the session-lock variant, refused by its
//! declaration, and caught by its check when forced through; `-M prepared` through PgBouncer
//! 1.18's transaction pool exits 1 with the fix; a PgBouncer killed mid-run leaves the
//! clients disconnected, a valid JSON, exit 2 and nothing running; `sweep --pool-size`
//! prints its table and draws its chart; your own PgBouncer is read with `--pooler-admin`.
//! Short runs on the shared test server.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{command_on, database, hotbench, temp_dir, text, wait_until, write_script};
use hotbench_pgserver::process::processes_in;
use hotbench_results::{LadderFile, RunRecord, RunStatus, SweepAxis, SweepDoc};

fn read<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> T {
    let bytes = std::fs::read(path).expect("read the JSON");
    serde_json::from_slice(&bytes).expect("the JSON reads as its typed record")
}

fn scenario(db: &hotbench_pgserver::ConnInfo, name: &str, args: &[&str]) -> Output {
    command_on(db, &["scenario", "run", name], args)
        .output()
        .expect("run hotbench")
}

#[test]
fn daily_limit_through_a_transaction_pool_of_10_at_100_clients_passes_with_pooler_figures() {
    let db = database("pool_daily");
    let out = temp_dir("pool-daily").join("daily.json");
    let o = scenario(
        &db,
        "daily-limit",
        &[
            "--variants",
            "select-for-update,update-returning",
            "-c",
            "100",
            "-T",
            "2",
            "--pooler",
            "pgbouncer",
            "--pool-size",
            "10",
            "--json",
            out.to_str().expect("path"),
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let file: LadderFile = read(&out);
    let ladder = &file.ladders[0];
    assert_eq!(ladder.variants.len(), 2);
    for v in &ladder.variants {
        assert!(
            !v.checks.is_empty() && v.checks.iter().all(|c| c.ok),
            "{}",
            v.name
        );
        let rec = v.record.as_ref().expect("a record");
        let pooler = rec.pooler.as_ref().expect("the pooler in the record");
        assert_eq!(
            (
                pooler.kind.as_str(),
                pooler.pool_mode.as_str(),
                pooler.pool_size
            ),
            ("pgbouncer", "transaction", Some(10))
        );
        assert!(pooler.started_by_hotbench);
        assert_eq!(rec.bench.clients, 100);
        assert_eq!(
            rec.bench.query_mode, "extended",
            "prepared is not kept by 1.18"
        );
        let figures = rec
            .probes
            .as_ref()
            .and_then(|p| p.pooler.as_ref())
            .expect("pooler figures in the probes");
        assert!(
            figures.samples > 0 && figures.transactions > 0,
            "{figures:?}"
        );
        assert!(figures.servers_max <= 10, "{figures:?}");
        // 100 clients, 10 server connections: most clients queue in the pooler.
        assert!(figures.clients_waiting_max > 10, "{figures:?}");
        assert!(v.notes.iter().any(|n| n.starts_with("query mode extended")));
    }
    assert!(stdout.contains("pooler wait "), "{stdout}");
}

#[test]
fn queue_through_a_transaction_pool_passes_but_refuses_the_session_lock_variant() {
    let db = database("pool_queue");
    let out = temp_dir("pool-queue").join("queue.json");
    let o = scenario(
        &db,
        "queue",
        &[
            "-c",
            "4",
            "-T",
            "1",
            "--param",
            "backlog=200",
            "--param",
            "depth=200",
            "--pooler",
            "pgbouncer:transaction",
            "--pool-size",
            "4",
            "--json",
            out.to_str().expect("path"),
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let file: LadderFile = read(&out);
    let ladder = &file.ladders[0];
    let mut ran = 0;
    for v in &ladder.variants {
        if v.name == "session-lock" {
            let why = v.skipped.as_deref().expect("session-lock is not run");
            assert!(why.contains("needs session state"), "{why}");
            assert!(v.record.is_none() && v.checks.is_empty());
            continue;
        }
        assert!(v.skipped.is_none(), "{} skipped: {:?}", v.name, v.skipped);
        assert!(
            !v.checks.is_empty() && v.checks.iter().all(|c| c.ok),
            "{}: {:?}",
            v.name,
            v.checks
        );
        ran += 1;
    }
    assert!(ran >= 7, "{ran} variants ran");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("session-lock"))
        .expect("a session-lock row");
    assert!(
        row.contains("not run: needs session state") && !row.contains('✔'),
        "{row}"
    );
}

#[test]
fn the_session_lock_variant_forced_through_a_transaction_pool_fails_its_check() {
    let db = database("pool_forced");
    let dir = temp_dir("pool-forced");
    let _ = std::fs::remove_dir_all(dir.join("queue"));
    let o = hotbench()
        .args(["scenario", "export", "queue"])
        .arg(&dir)
        .output()
        .expect("export");
    assert!(o.status.success(), "{:?}", text(&o));
    // Forced: the variant's declaration removed from the exported copy.
    let manifest = dir.join("queue/scenario.toml");
    let toml = std::fs::read_to_string(&manifest).expect("manifest");
    assert!(toml.contains("needs = [\"session\"]"));
    std::fs::write(&manifest, toml.replace("needs = [\"session\"]\n", "")).expect("write");
    let o = scenario(
        &db,
        "queue",
        &[
            "--dir",
            dir.to_str().expect("path"),
            "--variants",
            "session-lock",
            "-c",
            "8",
            "-T",
            "2",
            "--pool-size",
            "4",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("check \"each claimed job ran once\" failed"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("session-lock"))
        .expect("row");
    assert!(row.contains('✘') && !row.contains('✔'), "{row}");
}

#[test]
fn prepared_through_a_pgbouncer_1_18_transaction_pool_exits_1_with_the_fix() {
    let db = database("pool_prepared");
    let dir = temp_dir("pool-prepared");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let o = command_on(
        &db,
        &["run"],
        &[
            "-n",
            "-T",
            "1",
            "-c",
            "2",
            "-M",
            "prepared",
            "--pooler",
            "pgbouncer",
            "-f",
            script.to_str().expect("path"),
        ],
    )
    .output()
    .expect("run");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.starts_with("hotbench: error: -M prepared cannot run through PgBouncer 1.18"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hotbench: hint: use -M extended"),
        "{stderr}"
    );
    assert!(!stdout.contains("tps ="), "no run: {stdout}");
}

/// The embedded server and a PgBouncer, both started by hotbench; PgBouncer killed mid-run.
#[test]
fn a_killed_pgbouncer_leaves_clients_disconnected_a_valid_json_and_nothing_running() {
    let home = temp_dir("pool-killed");
    let xdg = home.join("data");
    let tmp = home.join("tmp");
    for d in [&home, &xdg, &tmp] {
        std::fs::create_dir_all(d).expect("dir");
        let _ = Command::new("chmod").arg("755").arg(d).status();
    }
    let script = write_script(&home, "one.sql", "select 1;\n");
    let json_path = home.join("run.json");
    let env = |c: &mut Command| {
        c.env("XDG_DATA_HOME", &xdg)
            .env("XDG_STATE_HOME", &xdg)
            .env("XDG_RUNTIME_DIR", &xdg)
            .env("TMPDIR", &tmp);
        for v in [
            "PGHOST",
            "PGPORT",
            "PGDATABASE",
            "PGUSER",
            "PGHOSTADDR",
            "PGSERVICE",
        ] {
            c.env_remove(v);
        }
    };
    let mut run = hotbench();
    // Long enough to be killed mid-run; the clients then keep trying until -T ends.
    run.args([
        "run",
        "-n",
        "-T",
        "5",
        "-c",
        "4",
        "--pooler",
        "pgbouncer",
        "-f",
    ])
    .arg(&script)
    .arg("--json")
    .arg(&json_path)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    env(&mut run);
    let child = run.spawn().expect("spawn");
    common::wait_for_transactions(&json_path);
    // PgBouncer runs in its directory under TMPDIR, nothing else of ours does.
    let bouncers = processes_in(&tmp);
    assert_eq!(bouncers.len(), 1, "{bouncers:?}");
    let killed = Command::new("kill")
        .args(["-KILL", &bouncers[0].to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let o = child.wait_with_output().expect("wait");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    // PgBouncer went away, not the server: the message says which.
    assert!(
        stderr.contains("PgBouncer (pid") && stderr.contains("no longer runs"),
        "{stderr}"
    );
    assert!(!stderr.contains("the server went away"), "{stderr}");
    let rec: RunRecord = read(&json_path);
    assert_eq!(rec.status, RunStatus::Disconnected, "{:?}", rec.notes);
    assert_eq!(rec.totals.counters.ended_disconnected, 4);
    assert!(rec.pooler.is_some());
    // Nothing hotbench started is left: no PgBouncer (nor its directory), no PostgreSQL.
    wait_until(
        "the pooler's directory removed",
        Duration::from_secs(30),
        || {
            processes_in(&tmp).is_empty()
                && std::fs::read_dir(&tmp)
                    .map(|d| d.count() == 0)
                    .unwrap_or(true)
        },
    );
    wait_until(
        "the embedded server stopped",
        Duration::from_secs(60),
        || {
            let mut st = hotbench();
            st.args(["server", "status"]);
            env(&mut st);
            let out = st.output().expect("status");
            String::from_utf8_lossy(&out.stdout).starts_with("stopped")
        },
    );
    assert!(processes_in(&xdg).is_empty(), "postgres left running");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_pool_size_sweep_prints_its_table_and_draws_its_chart() {
    let db = database("pool_sweep");
    let dir = temp_dir("pool-sweep");
    let (json_out, html_out) = (dir.join("sweep.json"), dir.join("sweep.html"));
    let o = command_on(
        &db,
        &["sweep"],
        &[
            "--scenario",
            "daily-limit",
            "--variants",
            "update-returning",
            "-c",
            "100",
            "-T",
            "1",
            "--pool-size",
            "4,8,16,32,64",
            "--json",
            json_out.to_str().expect("path"),
            "-o",
            html_out.to_str().expect("path"),
        ],
    )
    .output()
    .expect("sweep");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("pool size        tps  goodput/s     p99 ms  top wait"),
        "{stdout}"
    );
    for size in ["no pooler", "4", "8", "16", "32", "64"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{size} "))),
            "{size}: {stdout}"
        );
    }
    assert!(stdout.contains("best pool size: "), "{stdout}");
    let doc: SweepDoc = read(&json_out);
    assert_eq!(doc.axis, SweepAxis::PoolSize);
    assert_eq!(doc.runs.len(), 6);
    let sizes: Vec<Option<u32>> = doc
        .runs
        .iter()
        .map(|r| r.pooler.as_ref().and_then(|p| p.pool_size))
        .collect();
    assert_eq!(
        sizes,
        [None, Some(4), Some(8), Some(16), Some(32), Some(64)]
    );
    let page = std::fs::read_to_string(&html_out).expect("html");
    assert!(page.contains("Goodput by pool size") && page.contains("p99 latency by pool size"));
}

/// Your own PgBouncer (here one the harness starts in front of the shared server): the
/// clients go to it as the named target, `--pooler-admin` reads its console; `-M prepared`
/// through its transaction pool is refused as through hotbench's, and a ladder is refused.
#[test]
fn your_own_pgbouncer_is_read_through_its_admin_console() {
    use hotbench_pgserver::pgbouncer::PoolMode;
    let db = database("pool_theirs");
    let bouncer = hotbench_pgserver::testing::pgbouncer(PoolMode::Transaction, 4);
    let port = bouncer.port().to_string();
    let admin = format!("postgresql://{}@127.0.0.1:{port}/pgbouncer", db.user);
    let dir = temp_dir("pool-theirs");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let out = dir.join("run.json");
    let target = [
        "-h",
        "127.0.0.1",
        "-p",
        port.as_str(),
        "-U",
        db.user.as_str(),
    ];
    let run = |mode: &str| {
        let mut c = hotbench();
        c.args(["run", "-n", "-T", "1", "-c", "8", "-M", mode, "-f"])
            .arg(&script)
            .args(target)
            .args(["--pooler-admin", admin.as_str(), "--json"])
            .arg(&out)
            .arg(&db.dbname);
        for v in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
            c.env_remove(v);
        }
        // Your PgBouncer wants the server's password, as the harness's does.
        c.envs(db.password.as_ref().map(|p| ("PGPASSWORD", p)));
        c.output().expect("run")
    };
    let o = run("prepared");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("PgBouncer 1.18") && stderr.contains("-M extended"),
        "{stderr}"
    );
    let o = run("extended");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("(yours, read through --pooler-admin)"),
        "{stdout}"
    );
    let rec: RunRecord = read(&out);
    let p = rec.pooler.as_ref().expect("the pooler in the record");
    assert!(!p.started_by_hotbench);
    assert_eq!(
        (p.pool_mode.as_str(), p.pool_size),
        ("transaction", Some(4))
    );
    let figures = rec
        .probes
        .as_ref()
        .and_then(|p| p.pooler.as_ref())
        .expect("figures");
    assert_eq!(figures.pools, vec![format!("{}/{}", db.dbname, db.user)]);
    assert!(
        figures.samples > 0 && figures.transactions > 0,
        "{figures:?}"
    );
    assert!(figures.servers_max <= 4, "{figures:?}");
    let mut c = hotbench();
    c.args(["scenario", "run", "daily-limit", "-T", "1"])
        .args(target)
        .args(["--pooler-admin", admin.as_str()])
        .arg(&db.dbname)
        .envs(db.password.as_ref().map(|p| ("PGPASSWORD", p)));
    let o = c.output().expect("scenario");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("a ladder cannot run through your own PgBouncer"),
        "{stderr}"
    );
}

/// A `--pgbouncer-bin` whose `--version` never returns (a script that sleeps, its child
/// holding the output pipe): hotbench stops it and says so within the probe limit (10 s)
/// instead of hanging (issue 36 row 17).
#[test]
fn a_pgbouncer_bin_whose_version_hangs_is_stopped_with_a_clear_error() {
    let db = database("pool_hang");
    let dir = temp_dir("pool-hang");
    let bin = write_script(&dir, "pgbouncer", "#!/bin/sh\nsleep 100000\n");
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let mut c = command_on(
        &db,
        &["run"],
        &[
            "-n",
            "-t",
            "1",
            "--pooler",
            "pgbouncer",
            "--pgbouncer-bin",
            bin.to_str().expect("utf-8"),
        ],
    );
    let t = std::time::Instant::now();
    let mut child = c.spawn().expect("spawn hotbench");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().ok().flatten().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if child.try_wait().ok().flatten().is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("hotbench still waits on the pgbouncer --version probe after a minute");
    }
    let o = child.wait_with_output().expect("output");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("--version") && err.contains("did not finish within"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(40), "{:?}", t.elapsed());
}
