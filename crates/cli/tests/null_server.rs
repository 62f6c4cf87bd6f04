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
