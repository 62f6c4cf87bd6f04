//! A target with several hosts, against real servers from the harness: `--load-balance
//! round-robin` spreads the clients evenly, the report and JSON give each host's clients,
//! transactions and latency, and when a host goes away its clients reconnect to another and
//! the moves are counted.

mod common;

use std::time::{Duration, Instant};

use common::*;
use hotbench_pgserver::testing::{private, shared, test_cluster_options};
use hotbench_pgserver::Server;

/// `hotbench run -h A,B,… -p PA,PB,…` against the `postgres` database of `servers`.
fn multi_host_command(servers: &[&Server], args: &[&str]) -> std::process::Command {
    let hosts: Vec<String> = servers
        .iter()
        .map(|s| s.host().display().to_string())
        .collect();
    let ports: Vec<String> = servers.iter().map(|s| s.port().to_string()).collect();
    let mut cmd = hotbench();
    cmd.arg("run")
        .args(["-h", &hosts.join(","), "-p", &ports.join(",")])
        .args(["-U", servers[0].user()])
        .args(args)
        .arg("postgres")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    hotbench_pgserver::testing::without_libpq_env(&mut cmd);
    cmd
}

#[test]
fn round_robin_spreads_clients_and_reports_each_host() {
    let (a, b, c) = (
        shared(),
        private(test_cluster_options()),
        private(test_cluster_options()),
    );
    let dir = temp_dir("multi_host");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let json_path = dir.join("hosts.json");
    let o = multi_host_command(
        &[a, &b, &c],
        &[
            "-n",
            "-c",
            "6",
            "-j",
            "2",
            "-t",
            "20",
            "--load-balance",
            "round-robin",
            "-f",
            script.to_str().unwrap(),
            "--json",
            json_path.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v = json(&json_path);
    let hosts = v["hosts"].as_array().expect("hosts in the JSON");
    assert_eq!(hosts.len(), 3, "{v}");
    for (h, server) in hosts.iter().zip([a, &b, &c]) {
        assert!(
            h["host"]
                .as_str()
                .unwrap()
                .ends_with(&format!(":{}", server.port())),
            "{h}"
        );
        assert_eq!(h["clients"], 2, "{h}");
        assert_eq!(h["totals"]["counters"]["cnt"], 40, "{h}");
        assert_eq!(h["moved_in"], 0);
    }
    assert_eq!(v["totals"]["counters"]["cnt"], 120);
    assert_eq!(v["config"]["load_balance"], "round-robin");
    let host_lines = out.lines().filter(|l| l.starts_with("host ")).count();
    assert_eq!(host_lines, 3, "{out}");

    // The default (pgbench's and libpq's) puts every client on the first host.
    let o = multi_host_command(
        &[a, &b],
        &[
            "-n",
            "-c",
            "4",
            "-t",
            "5",
            "-f",
            script.to_str().unwrap(),
            "--json",
            json_path.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let v = json(&json_path);
    assert_eq!(v["hosts"][0]["clients"], 4);
    assert_eq!(v["hosts"][1]["clients"], 0);

    let o = multi_host_command(&[a, &b], &["-n", "--load-balance", "nearest", "-t", "1"])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("invalid --load-balance \"nearest\""), "{err}");
}

#[test]
fn clients_of_a_host_that_goes_away_move_to_another() {
    let (a, b) = (shared(), private(test_cluster_options()));
    let dir = temp_dir("multi_host_failover");
    let script = write_script(&dir, "one.sql", "select pg_sleep(0.002);\n");
    let json_path = dir.join("failover.json");
    let child = multi_host_command(
        &[a, &b],
        &[
            "-n",
            "-c",
            "4",
            "-T",
            "6",
            "--load-balance",
            "round-robin",
            "-f",
            script.to_str().unwrap(),
            "--json",
            json_path.to_str().unwrap(),
        ],
    )
    .spawn()
    .unwrap();
    // Wait until the benchmark runs (its result file appears after the first interval), then
    // take host b away.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !json_path.exists() {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    b.stop();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v = json(&json_path);
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts[1]["clients"], 2, "{v}");
    assert_eq!(hosts[0]["clients"], 2);
    assert!(
        hosts[0]["moved_in"].as_u64().unwrap() >= 2,
        "b's two clients should have moved to a: {}",
        v["hosts"]
    );
    assert!(hosts[0]["totals"]["counters"]["cnt"].as_u64().unwrap() > 0);
    assert_eq!(v["status"], "completed");
    assert!(v["totals"]["counters"]["reconnects"].as_u64().unwrap() >= 2);
}
