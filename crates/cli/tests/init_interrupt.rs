//! Ctrl-C during `hotbench run -i` (issue 13, item 9): the initialization stops cleanly,
//! client-side (COPY aborted) or server-side (the long statement cancelled on the server),
//! with one line and exit 2 instead of dying on the signal. The moment is found by polling
//! the server for the generating statement, never by a fixed sleep.

mod common;

use std::time::{Duration, Instant};

use common::{database, psql, run_command, text};

fn interrupt_init(steps: &str, statement_like: &str) {
    let db = database(&format!("init_int_{}", steps.to_ascii_lowercase()));
    let child = run_command(&db, &["-i", "-I", steps, "-s", "40", "-q"])
        .spawn()
        .expect("spawn hotbench");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let n = psql(
            &db,
            &format!(
                "select count(*) from pg_stat_activity where query ilike '{statement_like}' \
                 and pid <> pg_backend_pid()"
            ),
        );
        if n.trim() != "0" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{steps}: data generation never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let o = child.wait_with_output().expect("wait");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{steps}\n{out}\n{err}");
    assert!(
        err.contains("initialization was interrupted"),
        "{steps}: {err}"
    );
    assert!(!err.contains("done in"), "{steps}: {err}");
}

#[test]
fn ctrl_c_during_client_side_generation_stops_cleanly() {
    interrupt_init("dtg", "copy pgbench_accounts%");
}

#[test]
fn ctrl_c_during_server_side_generation_cancels_the_statement() {
    interrupt_init("dtG", "insert into pgbench_accounts%");
}
