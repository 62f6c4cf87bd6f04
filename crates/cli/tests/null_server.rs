//! `hotbench null-server` answers what both clients need: hotbench run and pgbench connect
//! and run the built-in scripts in every query mode against it.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The null server on a free port, killed on drop.
struct NullServer {
    child: Child,
    port: String,
}

impl NullServer {
    fn start() -> NullServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hotbench"))
            .args(["null-server", "--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start null-server");
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        BufReader::new(out)
            .read_line(&mut line)
            .expect("first line");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .expect("listening on ADDR:PORT")
            .to_string();
        assert!(line.starts_with("listening on 127.0.0.1:"), "{line}");
        NullServer { child, port }
    }

    fn conn(&self) -> Vec<String> {
        ["-h", "127.0.0.1", "-p", &self.port, "-U", "bench"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
}

impl Drop for NullServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn processed(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.split('/').next()?.trim().parse().ok())
}

fn check(mut cmd: Command, what: &str) {
    let out = cmd.output().expect(what);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
    assert_eq!(processed(&stdout), Some(200), "{what}: {stdout}\n{stderr}");
}

#[test]
fn hotbench_runs_the_builtin_scripts_in_every_mode() {
    let server = NullServer::start();
    for mode in ["simple", "extended", "prepared"] {
        for script in [
            ["-b", "select-only"],
            ["-b", "tpcb-like"],
            ["-b", "simple-update"],
        ] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_hotbench"));
            cmd.arg("run")
                .args(server.conn())
                .args([
                    "-n", "-c", "4", "-j", "2", "-t", "50", "-M", mode, "--probe", "off",
                ])
                .args(script)
                .arg("bench");
            check(cmd, &format!("hotbench -M {mode} {}", script[1]));
        }
    }
}

/// pgbench 18 where `.ci/run` unpacked it, else the installed one (which comes with the
/// server binaries the tests need anyway).
#[test]
fn pgbench_runs_against_it() {
    let pgbench = common::oracle::pg18_bin()
        .map(|d| d.join("pgbench"))
        .or_else(common::oracle::pgbench)
        .expect(common::oracle::NO_PGBENCH);
    let server = NullServer::start();
    for mode in ["simple", "extended", "prepared"] {
        let mut cmd = Command::new(&pgbench);
        cmd.args(server.conn())
            .args([
                "-c",
                "4",
                "-j",
                "2",
                "-t",
                "50",
                "-M",
                mode,
                "-b",
                "tpcb-like",
            ])
            .arg("bench");
        check(cmd, &format!("pgbench -M {mode}"));
    }
}

/// Waits up to a minute for `child` to exit; a null server still serving is killed and the
/// test fails (it took the socket it was given).
fn exit_of(mut child: Child, what: &str) -> std::process::Output {
    let t = std::time::Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if t.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "{what}: still serving after a minute:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// `--socket-dir` of a live PostgreSQL (the test server's, same port number on another
/// loopback address): refused, its socket kept, the server still answers on it (issue 36
/// row 7). A file there that is not a socket is refused and kept too.
#[test]
fn a_socket_another_server_listens_on_is_never_taken() {
    let pg = hotbench_pgserver::testing::shared();
    let conn = pg.conninfo();
    let socket = conn.socket_dir.join(format!(".s.PGSQL.{}", conn.port));
    assert!(socket.exists());
    let child = Command::new(env!("CARGO_BIN_EXE_hotbench"))
        .args(["null-server", "--host", "127.0.0.2", "--port"])
        .arg(conn.port.to_string())
        .arg("--socket-dir")
        .arg(&conn.socket_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start null-server");
    let out = exit_of(child, "null-server on a live socket");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("belongs to a running server"), "{err}");
    assert!(socket.exists());
    assert_eq!(
        pg.psql("select 1").expect("server still reachable").trim(),
        "1"
    );

    let dir = common::temp_dir("null-socket-file");
    let file = dir.join(".s.PGSQL.54329");
    std::fs::write(&file, "mine").expect("write");
    let child = Command::new(env!("CARGO_BIN_EXE_hotbench"))
        .args(["null-server", "--port", "54329", "--socket-dir"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start null-server");
    let out = exit_of(child, "null-server on a regular file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).ok().as_deref(), Some("mine"));
}

/// More event loops than a machine can start: a usage error (exit 1), no panic (row 18).
#[test]
fn too_many_threads_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_hotbench"))
        .args(["null-server", "--port", "0", "--threads", "100000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map(|c| exit_of(c, "null-server --threads 100000"))
        .expect("start null-server");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--threads") && !err.contains("panicked"),
        "{err}"
    );
}
