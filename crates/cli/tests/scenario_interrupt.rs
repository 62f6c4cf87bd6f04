//! Ctrl-C during a ladder (issue 13, item 9): a Ctrl-C while a variant's checks run stops
//! the ladder there, and the variants after it are marked "not run", never run for 0 s and
//! shown as passed; a Ctrl-C during the first setup stops cleanly too, with the ladder
//! written. The moment is found by polling the server for the slow statement, never by a
//! fixed sleep.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{conn_args, database, hotbench, json, psql, set_sighup, temp_dir, text};
use hotbench_pgserver::ConnInfo;

/// A three-variant scenario whose setup or checks hold a `pg_sleep` long enough to be seen.
fn write_scenario(root: &Path, name: &str, slow_setup: bool) -> String {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut manifest = String::from(
        "title = \"t\"\ndemonstrates = \"d\"\nclients = 1\nduration = 1\n\
         setup = [\"schema.sql\"]\nchecks = [\"checks.sql\"]\n",
    );
    for (i, v) in ["a", "b", "c"].iter().enumerate() {
        manifest.push_str(&format!(
            "\n[[variants]]\nname = \"{v}\"\nscript = \"w.sql\"\nbaseline = {}\n",
            i == 0
        ));
    }
    std::fs::write(dir.join("scenario.toml"), manifest).unwrap();
    let sleep =
        "select 'slow' as name, true as ok, 'hb_interrupt_marker' as detail from pg_sleep(4);\n";
    std::fs::write(
        dir.join("schema.sql"),
        format!(
            "create table t (x int);\n{}",
            if slow_setup { sleep } else { "" }
        ),
    )
    .unwrap();
    std::fs::write(dir.join("w.sql"), "insert into t values (1);\n").unwrap();
    std::fs::write(
        dir.join("checks.sql"),
        format!(
            "{}select 'rows = commits' as name, count(*) = {{{{committed}}}} as ok, '' as detail from t;\n",
            if slow_setup { "" } else { sleep }
        ),
    )
    .unwrap();
    dir.to_string_lossy().into_owned()
}

/// Runs the scenario, sends SIGINT once the marker statement is running, returns the output.
fn interrupt_at_marker(
    db: &ConnInfo,
    name: &str,
    dir: &str,
    json_path: &Path,
) -> std::process::Output {
    signal_at_marker(db, name, dir, json_path, "-INT")
}

/// As [`interrupt_at_marker`], with `signal` (`-INT`, `-HUP`, …).
fn signal_at_marker(
    db: &ConnInfo,
    name: &str,
    dir: &str,
    json_path: &Path,
    signal: &str,
) -> std::process::Output {
    let mut cmd = hotbench();
    cmd.args([
        "scenario", "run", name, "--dir", dir, "--probe", "off", "--json",
    ])
    .arg(json_path)
    .args(conn_args(db))
    .arg(&db.dbname)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    set_sighup(&mut cmd, false);
    let child = cmd.spawn().expect("spawn hotbench");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let n = psql(
            db,
            // This test's database only: the other test's marker runs at the same time.
            "select count(*) from pg_stat_activity where query like '%hb_interrupt_marker%' \
             and pid <> pg_backend_pid() and datname = current_database()",
        );
        if n.trim() != "0" {
            break;
        }
        assert!(Instant::now() < deadline, "the marker statement never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    child.wait_with_output().expect("wait")
}

#[test]
fn ctrl_c_during_checks_marks_the_remaining_variants_not_run() {
    let db = database("scn_int_checks");
    let root = temp_dir("scn-int-checks");
    let dir = write_scenario(&root, "slowchecks", false);
    let json_path = root.join("l.json");
    let o = interrupt_at_marker(&db, "slowchecks", &dir, &json_path);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    let v = json(&json_path);
    let variants = v["ladders"][0]["variants"].as_array().unwrap().clone();
    assert_eq!(variants.len(), 3, "{v}");
    assert!(variants[0]["record"].is_object(), "a ran: {}", variants[0]);
    for later in &variants[1..] {
        assert_eq!(later["skipped"], "not run: interrupted", "{later}");
        assert!(later["record"].is_null() && later["checks"].as_array().unwrap().is_empty());
    }
    assert_eq!(v["ladders"][0]["interrupted"], true);
    assert!(out.contains("not run: interrupted"), "{out}");
    assert_eq!(out.matches('✔').count(), 1, "only a passed:\n{out}");
    assert!(out.contains("✔ 2/2"), "{out}");
}

#[test]
fn ctrl_c_during_the_first_setup_stops_cleanly_with_the_ladder_written() {
    let db = database("scn_int_setup");
    let root = temp_dir("scn-int-setup");
    let dir = write_scenario(&root, "slowsetup", true);
    let json_path = root.join("l.json");
    let o = interrupt_at_marker(&db, "slowsetup", &dir, &json_path);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    let v = json(&json_path);
    let variants = v["ladders"][0]["variants"].as_array().unwrap().clone();
    assert_eq!(variants.len(), 3, "{v}");
    for each in &variants {
        assert_eq!(each["skipped"], "not run: interrupted", "{each}");
    }
    assert!(!out.contains('✔'), "{out}");
    // The schema was dropped on the way out.
    let left = psql(
        &db,
        "select count(*) from pg_namespace where nspname like 'hb_slowsetup%'",
    );
    assert_eq!(left.trim(), "0");
}

/// Issue 29, row 5: SIGHUP stops a ladder as SIGTERM does: the ladder JSON is written and the
/// schema dropped (it wrote no JSON and left its schema).
#[test]
fn sighup_during_checks_writes_the_ladder_and_drops_the_schema() {
    let db = database("scn_hup");
    let root = temp_dir("scn-hup");
    let dir = write_scenario(&root, "hupchecks", false);
    let json_path = root.join("l.json");
    let o = signal_at_marker(&db, "hupchecks", &dir, &json_path, "-HUP");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    let v = json(&json_path);
    assert_eq!(v["ladders"][0]["interrupted"], true, "{v}");
    assert_eq!(
        v["ladders"][0]["variants"][1]["skipped"],
        "not run: interrupted"
    );
    let left = psql(
        &db,
        "select count(*) from pg_namespace where nspname like 'hb_hupchecks%'",
    );
    assert_eq!(left.trim(), "0", "the schema was left behind");
}
