//! `hotbench run` end to end against a real PostgreSQL from the project's harness:
//! initialization, exact -t totals, retries that add up, -R schedule lag, client groups,
//! Ctrl-C leaving valid JSON, 1,000 clients, and clear errors with pgbench's exit codes.

mod common;

use common::case::{Case, Ran};
use common::*;
use hotbench_results::RunStatus;

fn init(db: &hotbench_pgserver::ConnInfo) {
    let o = run(db, &["-i", "-q"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "init failed:\n{out}\n{err}");
    assert!(err.contains("done in"), "{err}");
}

#[test]
fn transactions_per_client_are_exact() {
    let db = database("exact");
    init(&db);
    let o = run(&db, &["-n", "-t", "25", "-c", "4", "-j", "2", "-r"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("100/100"),
        "{out}"
    );
    assert!(out.contains("transaction type: <builtin: TPC-B (sort of)>"));
    assert!(out.contains("number of clients: 4\nnumber of threads: 2\n"));
    assert!(out.contains("statement latencies in milliseconds and failures:"));
    assert!(out.contains("latency percentiles: p50 = "));
    // The database agrees: one history row per committed transaction.
    assert_eq!(
        psql(&db, "select count(*) from pgbench_history").trim(),
        "100"
    );
}

#[test]
fn retries_under_repeatable_read_add_up() {
    let case = Case::new(
        "retry",
        "begin isolation level repeatable read;\nupdate hot set v = v + 1 where id = 1;\nselect pg_sleep(0.001);\ncommit;\n",
    );
    psql(
        &case.db,
        "create table hot(id int primary key, v bigint not null); insert into hot values (1, 0);",
    );
    let out = case
        .run("-n -T 3 -c 6 -j 2 --max-tries 5 --failures-detailed")
        .expect_code(0)
        .out;
    let v = case.record();
    let c = &v.totals.counters;
    let (cnt, ser, retried, retries) = (c.cnt, c.serialization_failures, c.retried, c.retries);
    assert!(cnt > 0, "{out}");
    assert!(
        retries > 0,
        "a hot row under repeatable read must cause retries:\n{out}"
    );
    assert!(
        retried <= cnt + ser,
        "retried {retried} > cnt {cnt} + failed {ser}"
    );
    assert!(retries >= retried);
    // Every committed transaction incremented the row exactly once.
    let value: u64 = psql(&case.db, "select v from hot").trim().parse().unwrap();
    assert_eq!(value, cnt, "row value vs committed transactions");
    // The text report agrees with the JSON.
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some(cnt.to_string().as_str())
    );
    assert_eq!(
        line_value(&out, "total number of retries:"),
        Some(retries.to_string().as_str())
    );
    assert_eq!(v.status, RunStatus::Completed);
}

#[test]
fn rate_limited_latency_includes_schedule_lag() {
    // 40 ms per transaction at 50/s with one client: the schedule falls behind, and the
    // measured latency must include that lag (no coordinated omission).
    let case = Case::new("rate", "select pg_sleep(0.04);\n");
    let out = case.run("-n -T 3 -c 1 -R 50").expect_code(0).out;
    let lat: f64 = line_value(&out, "latency average =")
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("latency average");
    let lag_line = line_value(&out, "rate limit schedule lag: avg").expect("lag line");
    let lag: f64 = lag_line.split_whitespace().next().unwrap().parse().unwrap();
    assert!(lag > 50.0, "schedule lag should build up: {out}");
    assert!(
        lat >= lag + 35.0,
        "latency {lat} must include lag {lag} plus service time"
    );
}

/// Each group's arrivals are Poisson at its own rate: at 20/s over 4 s a CI run drew 26/s
/// (±11% is one sigma there), so the rates are 100 and 400 (±5% and ±2.5%) and the bounds
/// five sigma or more.
#[test]
fn two_groups_keep_their_own_rates() {
    let db = database("groups");
    let dir = temp_dir("groups");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let json_path = dir.join("groups.json");
    let s = script.to_str().unwrap();
    let o = run(
        &db,
        &[
            "-n",
            "-T",
            "4",
            "-j",
            "2",
            "--group",
            &format!("slow:file={s},clients=1,rate=100"),
            "--group",
            &format!("fast:file={s},clients=2,rate=400"),
            "--json",
            json_path.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v = record(&json_path);
    let groups = &v.groups;
    assert_eq!(groups.len(), 2);
    let tps = |i: usize| groups[i].totals.tps;
    assert!((tps(0) - 100.0).abs() < 25.0, "slow group tps {}", tps(0));
    assert!((tps(1) - 400.0).abs() < 80.0, "fast group tps {}", tps(1));
    assert!(out.contains("group slow: 1 clients, rate 100 tps"), "{out}");
    assert!(!v.timeline[0].groups.is_empty());
    assert_eq!(v.config.threads, 2);
    assert_eq!(v.config.groups[1].rate, Some(400.0));
}

#[test]
fn ctrl_c_stops_gracefully_with_valid_json() {
    let case = Case::new("sigint", "select 1;\n");
    let child = case.spawn("-n -T 60 -c 2");
    wait_for_transactions(&case.json);
    // SAFETY: sending SIGINT to our own child.
    unsafe { libc_kill(child.id() as i32, 2) };
    let Ran { out, err, .. } = Ran::wait(child).expect_code(2);
    assert!(
        out.contains("number of transactions actually processed:"),
        "{out}"
    );
    assert!(err.contains("interrupted"), "{err}");
    let v = case.record();
    assert_eq!(v.status, RunStatus::Interrupted);
    assert!(v.totals.counters.cnt > 0);
}

/// Issue 29, row 5: SIGHUP (a closed terminal, `kill -HUP`) stops a run as SIGTERM does:
/// report printed, JSON final (it said `running`, exit 129); under `nohup` (SIGHUP ignored
/// when hotbench started) it stays ignored and the run completes.
#[test]
fn sighup_stops_like_sigterm_unless_ignored_by_nohup() {
    let case = Case::new("sighup", "select 1;\n");
    let child = spawn_with_sighup(&case, "-n -T 60 -c 2", false);
    wait_for_transactions(&case.json);
    // SAFETY: sending SIGHUP to our own child.
    unsafe { libc_kill(child.id() as i32, SIGHUP) };
    let Ran { out, err, .. } = Ran::wait(child).expect_code(2);
    assert!(
        out.contains("number of transactions actually processed:"),
        "{out}"
    );
    assert!(err.contains("interrupted"), "{err}");
    let v = case.record();
    assert_eq!(v.status, RunStatus::Interrupted);
    assert!(v.totals.counters.cnt > 0);

    let _ = std::fs::remove_file(&case.json);
    let child = spawn_with_sighup(&case, "-n -T 2 -c 1 --probe off", true);
    wait_for_transactions(&case.json);
    // SAFETY: as above.
    unsafe { libc_kill(child.id() as i32, SIGHUP) };
    Ran::wait(child).expect_code(0);
    assert_eq!(case.record().status, RunStatus::Completed);
}

const SIGHUP: i32 = 1;

/// Starts the case's run with SIGHUP's disposition as a terminal or `nohup` leaves it.
fn spawn_with_sighup(case: &Case, flags: &str, ignored: bool) -> std::process::Child {
    let mut cmd = case.command(flags);
    set_sighup(&mut cmd, ignored);
    cmd.spawn().expect("spawn hotbench")
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn a_thousand_clients_in_one_process() {
    let case = Case::new("thousand", "select 1;\n");
    let out = case.run("-n -t 2 -c 1000 -j 2").expect_code(0).out;
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("2000/2000"),
        "{out}"
    );
}

#[test]
fn bad_flags_exit_1_with_one_clear_line() {
    let db = database("flags");
    for (args, expected) in [
        (vec!["-c", "zero"], "invalid value \"zero\" for option -c/--clients"),
        (vec!["-M", "fancy"], "invalid query mode (-M): \"fancy\""),
        (vec!["-t", "5", "-T", "5"], "specify either a number of transactions (-t) or a duration (-T), not both"),
        (vec!["--max-tries", "0"], "an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)"),
        (vec!["-i", "-T", "5"], "some of the specified options cannot be used in initialization (-i) mode"),
        (vec!["-b", "nosuch"], "no builtin script found for name \"nosuch\""),
        (vec!["--retry-backoff", "soon"], "invalid back-off \"soon\""),
    ] {
        let o = run(&db, &args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}\n{out}\n{err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = run(&db, &["--no-such-flag"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn missing_tables_suggest_initialization() {
    let db = database("noinit");
    let o = run(&db, &["-n", "-t", "1"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("could not count number of branches"), "{err}");
    assert!(
        err.contains("Perhaps you need to do initialization (\"hotbench run -i\")"),
        "{err}"
    );
}

#[test]
fn refused_connection_is_one_clear_error() {
    let mut cmd = hotbench();
    let o = cmd
        .args([
            "run",
            "-h",
            "127.0.0.1",
            "-p",
            "1",
            "-n",
            "-t",
            "1",
            "-S",
            "postgres",
        ])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("hotbench: error: "), "{err}");
    assert!(
        err.contains("127.0.0.1") && err.contains("refused"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn script_errors_name_file_and_line() {
    let db = database("badscript");
    let dir = temp_dir("badscript");
    let script = write_script(&dir, "bad.sql", "\\set x 1 +\nselect :x;\n");
    let o = run(&db, &["-n", "-t", "1", "-f", script.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.sql:1:"), "{err}");
}

#[test]
fn sql_error_aborts_client_with_exit_2_and_continue_on_error_counts_it() {
    let db = database("sqlerr");
    let dir = temp_dir("sqlerr");
    let script = write_script(&dir, "err.sql", "select 1/0;\n");
    let o = run(&db, &["-n", "-t", "3", "-f", script.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(err.contains("aborted in command 0"), "{err}");
    assert!(err.contains("division by zero"), "{err}");
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "3",
            "--continue-on-error",
            "-f",
            script.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.contains("number of failed transactions: 3 (100.000%)"),
        "{out}"
    );
    assert!(out.contains("errors by SQLSTATE: 22012 = 3"), "{out}");
}

#[test]
fn tls_and_scram_with_a_url_and_the_password_masked() {
    use hotbench_pgserver::{testing, AuthMethod, ClusterOptions, TlsMode};
    let server = testing::try_private(ClusterOptions {
        auth: AuthMethod::ScramSha256,
        password: Some("s3cret-pw".into()),
        tls: TlsMode::Required,
        ..testing::test_cluster_options()
    })
    .expect("private TLS server");
    let url = format!(
        "postgresql://postgres:s3cret-pw@127.0.0.1:{}/postgres?sslmode=require",
        server.port()
    );
    let dir = temp_dir("tls");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let json_path = dir.join("tls.json");
    let o = hotbench()
        .args([
            "run",
            "-n",
            "-t",
            "20",
            "-c",
            "2",
            "-M",
            "extended",
            "-f",
            script.to_str().unwrap(),
        ])
        .args(["--json", json_path.to_str().unwrap(), &url])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("40/40"), "{out}");
    let raw = std::fs::read_to_string(&json_path).unwrap();
    assert!(!raw.contains("s3cret-pw"), "password leaked into the JSON");
    assert!(!out.contains("s3cret-pw") && !err.contains("s3cret-pw"));
    // A wrong password is one clear error, exit 1.
    let bad = url.replace("s3cret-pw", "wrong");
    let o = hotbench()
        .args(["run", "-n", "-t", "1", "-f", script.to_str().unwrap(), &bad])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("wrong"), "{err}");
}

#[test]
fn prepared_statement_whose_parse_failed_fails_on_every_use_as_in_pgbench() {
    let case = Case::new("prepfail", "select * from not_there_yet;\n");
    let err = case
        .run("-n -t 3 -M prepared --continue-on-error")
        .expect_code(0)
        .err;
    // pgbench logs the failed prepare, then counts the statement as prepared: every
    // execution on this connection fails on the missing statement.
    assert!(
        err.contains("relation \"not_there_yet\" does not exist"),
        "{err}"
    );
    let c = case.record().totals.counters;
    let errors = &c.errors_by_sqlstate;
    assert_eq!(errors.get("42P01"), Some(&1), "{errors:?}");
    assert_eq!(errors.get("26000"), Some(&3), "{errors:?}");
    assert_eq!(c.other_failures, 3);
}

#[test]
fn rtt_emulation_adds_a_delay_to_every_round_trip() {
    let db = database("rtt");
    let dir = temp_dir("rtt");
    // Three round trips per transaction.
    let script = write_script(&dir, "three.sql", "begin;\nselect 1;\ncommit;\n");
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "10",
            "-c",
            "2",
            "--rtt",
            "20ms",
            "-f",
            script.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let p50: f64 = out
        .lines()
        .find(|l| l.starts_with("latency percentiles:"))
        .and_then(|l| l.split("p50 = ").nth(1))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("p50");
    assert!(p50 >= 60.0, "3 round trips x 20 ms: p50 {p50} ms\n{out}");
    assert!(p50 < 200.0, "{out}");
    assert!(out.contains("emulated round-trip time: 20.000 ms"), "{out}");
}

#[test]
fn one_connection_per_thread_still_stops_promptly_on_ctrl_c() {
    // -c 2 -j 2: each thread owns one connection and waits with a blocking read; a long
    // statement must not hold up a graceful stop.
    let db = database("blockingstop");
    let dir = temp_dir("blockingstop");
    let script = write_script(&dir, "long.sql", "select pg_sleep(20);\n");
    let child = spawn_run(
        &db,
        &[
            "-n",
            "-T",
            "60",
            "-c",
            "2",
            "-j",
            "2",
            "-f",
            script.to_str().unwrap(),
        ],
    );
    // Both threads are inside their blocking read once the server runs both statements.
    wait_until(
        "both clients inside pg_sleep",
        std::time::Duration::from_secs(60),
        || {
            psql(
                &db,
                "select count(*) from pg_stat_activity \
                 where query like 'select pg_sleep(20)%' and state = 'active' \
                 and datname = current_database()",
            )
            .trim()
                == "2"
        },
    );
    let t0 = std::time::Instant::now();
    unsafe { libc_kill(child.id() as i32, 2) };
    let o = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(3),
        "took {:?}",
        t0.elapsed()
    );
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

/// Issue 29, row 13: `--goodput sum:x` adds fractional values up (they were each cut to 0)
/// and a value of 2^62 and more saturates with a note instead of wrapping the counter.
#[test]
fn goodput_sums_add_fractions_and_saturate_huge_values() {
    let db = database("goodput_sum");
    let dir = temp_dir("goodput_sum");
    for (x, want) in [("0.25", Some(2)), ("4611686018427387904", None)] {
        let script = write_script(&dir, "w.sql", &format!("\\set x {x}\nselect 1;\n"));
        let json_path = dir.join("w.json");
        let o = run(
            &db,
            &[
                "-n",
                "-t",
                "8",
                "--probe",
                "off",
                "--goodput",
                "sum:x",
                "-f",
                script.to_str().unwrap(),
                "--json",
                json_path.to_str().unwrap(),
            ],
        );
        let (out, err) = text(&o);
        assert!(o.status.success(), "x = {x}\n{out}\n{err}");
        let v = json(&json_path);
        let goodput = v["totals"]["counters"]["goodput"].as_u64().unwrap();
        match want {
            Some(n) => assert_eq!(goodput, n, "x = {x}"),
            None => {
                assert_eq!(goodput, u64::MAX, "x = {x}");
                assert!(
                    v["notes"].to_string().contains("saturated"),
                    "{}",
                    v["notes"]
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
