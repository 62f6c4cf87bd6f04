//! 1,000 concurrent client connections against a harness server (what `-c 1000` needs).
//! Ignored by default (heavy on a 2-core machine); run with `-- --ignored --nocapture`.

use std::process::Command;
use std::time::Instant;

use hotbench_pgserver::testing::shared;

#[test]
#[ignore = "opens 1,000 connections with pgbench"]
fn thousand_clients_connect() {
    let pg = shared();
    let script = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(script.path(), "SELECT 1;\n").expect("write");
    let t = Instant::now();
    let out = Command::new("pgbench")
        .args(["-n", "-c", "1000", "-j", "2", "-t", "2", "-f"])
        .arg(script.path())
        .envs(pg.conninfo().env())
        .output()
        .expect("pgbench runs");
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("1,000 clients: {:.1} s", t.elapsed().as_secs_f64());
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("number of failed transactions: 0"));
}
