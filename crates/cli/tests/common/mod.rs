//! Helpers for the binary's integration tests: a database of its own on the shared harness
//! server per test, and a way to run the `hotbench` binary against it.

#![allow(dead_code)]

pub mod apps;
pub mod browser;
pub mod case;
pub mod oracle;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use hotbench_pgserver::{testing, ConnInfo};

/// Running under CI (`.ci/run` exports `HOTBENCH_CI=1`): what CI installs must be there, so
/// a test that would skip for want of it fails instead.
pub fn under_ci() -> bool {
    std::env::var_os("HOTBENCH_CI").is_some_and(|v| !v.is_empty())
}

pub fn hotbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hotbench"))
}

/// A fresh database on the shared test server.
pub fn database(tag: &str) -> ConnInfo {
    static N: AtomicUsize = AtomicUsize::new(0);
    let pg = testing::shared();
    let name = format!(
        "t_{tag}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    pg.create_database(&name).expect("create test database")
}

/// `-h SOCKETDIR -p PORT -U USER`, as pgbench and hotbench take them.
pub fn conn_args(db: &ConnInfo) -> Vec<String> {
    vec![
        "-h".into(),
        db.socket_dir.to_string_lossy().into_owned(),
        "-p".into(),
        db.port.to_string(),
        "-U".into(),
        db.user.clone(),
    ]
}

/// `hotbench SUBCOMMAND… -h -p -U ARGS… DBNAME` against `db` (no `PG*` variable of the
/// environment), not yet started, output piped.
pub fn command_on(db: &ConnInfo, subcommand: &[&str], args: &[&str]) -> Command {
    let mut cmd = hotbench();
    cmd.args(subcommand)
        .args(conn_args(db))
        .args(args)
        .arg(&db.dbname)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    testing::without_libpq_env(&mut cmd);
    cmd
}

/// `cmd` with its own embedded default server: XDG data, state and runtime homes in `dir`
/// (so no other test's server is involved) and no libpq variable from the environment.
pub fn private_home<'a>(cmd: &'a mut Command, dir: &std::path::Path) -> &'a mut Command {
    cmd.env("XDG_DATA_HOME", dir)
        .env("XDG_STATE_HOME", dir)
        .env("XDG_RUNTIME_DIR", dir);
    testing::without_libpq_env(cmd)
}

/// `hotbench run` against `db` with `args`, not yet started, output piped.
pub fn run_command(db: &ConnInfo, args: &[&str]) -> Command {
    command_on(db, &["run"], args)
}

/// `hotbench run` against `db` with `args`; returns the output.
pub fn run(db: &ConnInfo, args: &[&str]) -> Output {
    run_command(db, args).output().expect("run hotbench")
}

/// Sets SIGHUP's disposition in `cmd`'s child as a terminal (`ignored = false`) or `nohup`
/// (`true`) leaves it, whatever this test process inherited: CI may itself run under nohup,
/// and an ignored SIGHUP survives exec.
pub fn set_sighup(cmd: &mut Command, ignored: bool) {
    use std::os::unix::process::CommandExt;
    extern "C" {
        fn signal(sig: i32, handler: usize) -> usize;
    }
    const SIGHUP: i32 = 1;
    let handler = usize::from(ignored); // SIG_IGN is 1, SIG_DFL 0
                                        // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(move || {
            signal(SIGHUP, handler);
            Ok(())
        });
    }
}

/// `hotbench run` against `db` in the background.
pub fn spawn_run(db: &ConnInfo, args: &[&str]) -> std::process::Child {
    run_command(db, args).spawn().expect("spawn hotbench")
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs SQL on `db` with the harness's psql.
pub fn psql(db: &ConnInfo, sql: &str) -> String {
    let pg = testing::shared();
    hotbench_pgserver::server::psql(pg.binaries(), db, sql).expect("psql")
}

pub fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotbench-test-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

pub fn write_script(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write script");
    p
}

/// The value after `prefix` on the line starting with it.
pub fn line_value<'a>(out: &'a str, prefix: &str) -> Option<&'a str> {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .map(|l| l[prefix.len()..].trim())
}

/// [`hotbench_pgserver::testing::wait_until`]: polls `ready`, failing after `timeout`.
pub fn wait_until(what: &str, timeout: std::time::Duration, ready: impl FnMut() -> bool) {
    hotbench_pgserver::testing::wait_until(what, timeout, ready);
}

/// Waits until the run writing `path` has committed transactions (its JSON snapshot, first
/// written after the first timeline interval, says so).
pub fn wait_for_transactions(path: &std::path::Path) {
    wait_until(
        "the run's first committed transactions",
        std::time::Duration::from_secs(60),
        || {
            std::fs::read(path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| v["totals"]["counters"]["cnt"].as_u64())
                .is_some_and(|n| n > 0)
        },
    );
}

/// A document the binary wrote, read as its type (`RunRecord`, `LadderFile`, `SweepDoc`,
/// `ComparisonDoc`, `UslDoc`): what a user's program deserializing it would get.
pub fn read<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> T {
    let bytes = std::fs::read(path).expect("read json");
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A result file as a `RunRecord`.
pub fn record(path: &std::path::Path) -> hotbench_results::RunRecord {
    read(path)
}

/// The raw JSON, for what a type cannot show (that a field is left out, say).
pub fn json(path: &std::path::Path) -> serde_json::Value {
    let bytes = std::fs::read(path).expect("read json");
    serde_json::from_slice(&bytes).expect("result JSON parses")
}
