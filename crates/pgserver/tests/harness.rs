//! The test harness against real PostgreSQL processes: shared and private servers, auth
//! methods, TLS, and cleanup when the test process panics or is killed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hotbench_pgserver::process::processes_in;
use hotbench_pgserver::testing::{private, shared, test_cluster_options};
use hotbench_pgserver::{AuthMethod, ClusterOptions, TlsMode};

fn psql_tcp(conninfo: &str, sql: &str) -> std::process::Output {
    Command::new("psql")
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            conninfo,
            "-c",
            sql,
        ])
        .env_remove("PGPASSWORD")
        .output()
        .expect("psql runs")
}

/// Poll until no process runs in `dir` and `dir` is gone.
fn wait_clean(dir: &Path, secs: u64) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let procs = processes_in(dir);
        if procs.is_empty() && !dir.exists() {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(secs) {
            return Err(format!(
                "after {secs}s: processes {procs:?} in {}, exists: {}",
                dir.display(),
                dir.exists()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn shared_server_answers_and_is_tuned() {
    let pg = shared();
    assert!(pg.host().is_dir());
    assert!(pg.port() > 0);
    assert_eq!(pg.user(), "postgres");
    assert_eq!(pg.dbname(), "postgres");
    assert_eq!(pg.psql("select 1").expect("select 1").trim(), "1");
    let mc: u32 = pg
        .psql("show max_connections")
        .expect("show")
        .trim()
        .parse()
        .expect("number");
    assert!(mc >= 1100, "max_connections {mc}");
    assert_eq!(pg.psql("show fsync").expect("show").trim(), "off");
    assert!(pg.is_fast());
    if pg.binaries().has_pg_stat_statements() {
        let spl = pg.psql("show shared_preload_libraries").expect("show");
        assert!(spl.contains("pg_stat_statements"), "{spl}");
    }
    // TCP works too.
    let out = psql_tcp(&pg.conninfo().tcp_conninfo(), "select 2");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Same process, same server.
    assert_eq!(shared().pid(), pg.pid());
}

#[test]
fn shared_server_makes_databases() {
    let db = shared()
        .create_database("harness_db")
        .expect("create database");
    let out = psql_tcp(&db.tcp_conninfo(), "select current_database()");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "harness_db");
    let a = hotbench_pgserver::testing::fresh_database("Fresh-DB");
    let b = hotbench_pgserver::testing::fresh_database("Fresh-DB");
    assert_ne!(a.dbname, b.dbname);
    assert!(a.dbname.starts_with("fresh_db_"));
    let out = psql_tcp(&b.tcp_conninfo(), "select current_database()");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), b.dbname);
    if shared().binaries().has_pg_stat_statements() {
        let out = psql_tcp(
            &b.tcp_conninfo(),
            "select count(*) >= 0 from pg_stat_statements",
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "t",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn check_password_auth(auth: AuthMethod, stored_prefix: &str) {
    let pg = private(ClusterOptions {
        auth,
        password: Some("s3cret".into()),
        ..test_cluster_options()
    });
    let good = pg.conninfo().tcp_conninfo();
    assert!(good.contains("password=s3cret"));
    let out = psql_tcp(
        &good,
        "select rolpassword from pg_authid where rolname = 'postgres'",
    );
    assert!(
        out.status.success(),
        "{auth:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with(stored_prefix),
        "{auth:?}"
    );
    let bad = pg
        .conninfo()
        .with_user("postgres", Some("wrong"))
        .tcp_conninfo();
    let out = psql_tcp(&bad, "select 1");
    assert!(!out.status.success(), "{auth:?}: wrong password accepted");
    let dir = pg.base_dir().to_path_buf();
    drop(pg);
    wait_clean(&dir, 1).expect("dropped private server is cleaned at once");
}

#[test]
fn private_scram_md5_password() {
    check_password_auth(AuthMethod::ScramSha256, "SCRAM-SHA-256$");
    check_password_auth(AuthMethod::Md5, "md5");
    check_password_auth(AuthMethod::Password, "SCRAM-SHA-256$");
}

#[test]
fn private_tls_required() {
    let pg = private(ClusterOptions {
        tls: TlsMode::Required,
        ..test_cluster_options()
    });
    let cert = pg.conninfo().ssl_root_cert.clone().expect("cert path");
    assert!(cert.is_file());
    let tls = format!("{} sslmode=verify-full", pg.conninfo().tcp_conninfo());
    let out = psql_tcp(
        &tls,
        "select ssl from pg_stat_ssl where pid = pg_backend_pid()",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "t");
    let plain = format!("{} sslmode=disable", pg.conninfo().tcp_conninfo());
    assert!(
        !psql_tcp(&plain, "select 1").status.success(),
        "plain TCP must be rejected"
    );
    pg.stop();
    pg.stop(); // idempotent
    assert!(!pg.base_dir().exists());
}

#[test]
fn private_extra_settings_and_fsync_default() {
    let opts = ClusterOptions {
        fast: false,
        shared_buffers_mb: Some(128),
        settings: vec![("work_mem".into(), "7MB".into())],
        ..ClusterOptions::default()
    };
    let pg = private(opts);
    assert_eq!(pg.psql("show work_mem").expect("show").trim(), "7MB");
    assert_eq!(pg.psql("show fsync").expect("show").trim(), "on");
    assert!(!pg.is_fast());
}

const CHILD_MODE: &str = "HB_HARNESS_CHILD_MODE";
const CHILD_INFO: &str = "HB_HARNESS_CHILD_INFO";

/// Not a test: the body of the child process the cleanup tests below start (with
/// `--ignored`), then kill or let panic.
#[test]
#[ignore = "entry point of a child process that the cleanup tests start"]
fn child_entry() {
    let mode = std::env::var(CHILD_MODE)
        .expect("child_entry runs as run_child's child process, with HB_HARNESS_CHILD_MODE");
    let info = PathBuf::from(std::env::var_os(CHILD_INFO).expect("info path"));
    let pg = shared();
    let _private = private(test_cluster_options());
    let text = format!(
        "{}\n{}\n{}\n",
        pg.base_dir().display(),
        _private.base_dir().display(),
        pg.pid()
    );
    std::fs::write(&info, text).expect("write info");
    match mode.as_str() {
        "panic" => panic!("child test panics on purpose"),
        // Held until the parent kills this process.
        _ => loop {
            std::thread::park();
        },
    }
}

fn run_child(mode: &str) -> Vec<PathBuf> {
    let info = std::env::temp_dir().join(format!("hb-child-info-{}-{mode}", std::process::id()));
    let _ = std::fs::remove_file(&info);
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "child_entry",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_MODE, mode)
        .env(CHILD_INFO, &info)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn child test");
    let start = Instant::now();
    while !std::fs::read_to_string(&info)
        .map(|s| s.lines().count() == 3)
        .unwrap_or(false)
    {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("child exited early: {st}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "child did not start its servers"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    if mode == "kill" {
        child.kill().expect("SIGKILL child");
    }
    let status = child.wait().expect("wait child");
    assert!(!status.success(), "child should fail ({mode})");
    let text = std::fs::read_to_string(&info).expect("info");
    let _ = std::fs::remove_file(&info);
    let lines: Vec<&str> = text.lines().collect();
    let dirs = vec![PathBuf::from(lines[0]), PathBuf::from(lines[1])];
    for d in &dirs {
        assert!(
            d.starts_with(hotbench_pgserver::testing::test_temp_root()),
            "{}",
            d.display()
        );
    }
    dirs
}

#[test]
fn cleanup_after_child_panics() {
    for d in run_child("panic") {
        wait_clean(&d, 15).expect("no postgres and no directory after a panicking test process");
    }
}

#[test]
fn cleanup_after_child_is_killed() {
    for d in run_child("kill") {
        wait_clean(&d, 15).expect("no postgres and no directory after SIGKILL of the test process");
    }
}

#[test]
fn abandoned_clusters_are_swept() {
    // A server whose guardian is killed together with its owner leaves a directory and a
    // postmaster; the next test process sweeps them.
    let pg = private(test_cluster_options());
    let dir = pg.base_dir().to_path_buf();
    let gpid: i32 = std::fs::read_to_string(dir.join(hotbench_pgserver::server::GUARDIAN_PID))
        .expect("guardian.pid")
        .trim()
        .parse()
        .expect("pid");
    // SAFETY: plain kill of the guardian we just read.
    unsafe { libc::kill(gpid, libc::SIGKILL) };
    let start = Instant::now();
    while hotbench_pgserver::process::alive(gpid as u32) {
        assert!(start.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(20));
    }
    let root = dir.parent().expect("root").to_path_buf();
    let swept = hotbench_pgserver::server::sweep_abandoned(&root);
    assert!(swept.contains(&dir), "{swept:?}");
    wait_clean(&dir, 5).expect("swept");
    // Live servers are left alone.
    assert!(shared().host().exists());
    assert_eq!(shared().psql("select 1").expect("shared alive").trim(), "1");
    std::mem::forget(pg); // its processes and directory are gone already
}

#[test]
fn long_temp_dir_keeps_socket_path_short() {
    let long = std::env::temp_dir().join("x".repeat(100));
    let opts = hotbench_pgserver::ServerOptions {
        temp_root: Some(long),
        ..hotbench_pgserver::testing::test_server_options(test_cluster_options())
    };
    let pg = hotbench_pgserver::Server::start(&opts).expect("start");
    assert!(
        pg.base_dir().starts_with("/tmp"),
        "{}",
        pg.base_dir().display()
    );
    assert_eq!(pg.psql("select 1").expect("select").trim(), "1");
}
