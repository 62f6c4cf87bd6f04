//! What a first-time user meets before any measurement: a database name that turns the
//! embedded server off says so, bad `--variants` are refused before a server starts, and a
//! scenario's error is the first line of its stderr block (no blank line before it).

mod common;

use std::path::Path;

use common::{conn_args, database, hotbench, temp_dir, text};
use hotbench_pgserver::testing::without_libpq_env;

#[test]
fn a_failed_connection_to_a_named_database_says_the_embedded_server_is_off() {
    let dir = temp_dir("named_hint");
    let sock = dir.to_string_lossy().into_owned();
    for args in [
        vec!["run", "-i", "-h", &sock, "-p", "1", "mydb"],
        vec!["scenario", "run", "queue", "-h", &sock, "-p", "1", "mydb"],
    ] {
        let o = without_libpq_env(hotbench().args(&args))
            .output()
            .expect("run hotbench");
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        let hints: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("hotbench: hint:"))
            .collect();
        assert_eq!(hints.len(), 1, "{args:?}: {stderr}");
        assert!(
            hints[0].contains("-h selects a server you run")
                && hints[0].contains("embedded server was not started"),
            "{stderr}"
        );
    }
}

#[test]
fn unknown_variants_are_refused_before_a_server_starts() {
    // --pg-bin points nowhere: had the server been started first, that would be the error.
    let o = without_libpq_env(
        hotbench()
            .args(["scenario", "run", "queue", "--variants", "escrw"])
            .args(["--pg-bin", "/nonexistent/hotbench-bin"]),
    )
    .output()
    .expect("run hotbench");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("hotbench: error: scenario \"queue\" has no variant \"escrw\""),
        "{stderr}"
    );
}

#[test]
fn a_scenario_error_is_not_preceded_by_a_blank_line() {
    let db = database("blank_err");
    let dir = temp_dir("blank_err").join("broken");
    std::fs::create_dir_all(&dir).expect("dir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenario/tests/fixtures/lost-update");
    for e in std::fs::read_dir(&fixture).expect("fixture") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), dir.join(e.file_name())).expect("copy");
    }
    std::fs::write(dir.join("schema.sql"), "create table t(;\n").expect("write");
    let o = hotbench()
        .args(["scenario", "run", "broken", "--dir"])
        .arg(dir.parent().expect("parent"))
        .args(conn_args(&db))
        .arg(&db.dbname)
        .output()
        .expect("run hotbench");
    let (_, stderr) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{stderr}");
    let at = stderr.find("hotbench: error:").expect("an error line");
    assert!(
        !stderr[..at].ends_with("\n\n") && !stderr.starts_with('\n'),
        "blank line before the error:\n{stderr:?}"
    );
    assert!(stderr[at..].contains("schema.sql:1:"), "{stderr}");
}

#[test]
fn scenario_texts_show_parameter_values_not_placeholders() {
    for name in ["counters", "daily-limit", "queue", "tpcb-hotspot", "ycsb"] {
        let o = hotbench()
            .args(["scenario", "show", name])
            .output()
            .expect("run hotbench");
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        assert!(!stdout.contains("{{"), "{name}:\n{stdout}");
    }
    let db = database("about");
    let dir = temp_dir("about");
    let (j, h) = (dir.join("q.json"), dir.join("q.html"));
    let o = hotbench()
        .args([
            "scenario",
            "run",
            "queue",
            "--variants",
            "skip-locked-batch",
        ])
        .args([
            "-T",
            "1",
            "-c",
            "2",
            "--param",
            "backlog=2000",
            "--param",
            "batch=7",
        ])
        .arg("--json")
        .arg(&j)
        .arg("--html")
        .arg(&h)
        .args(conn_args(&db))
        .arg(&db.dbname)
        .output()
        .expect("run hotbench");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let v = common::json(&j);
    let about = v["ladders"][0]["variants"][0]["about"]
        .as_str()
        .unwrap_or("");
    assert!(about.contains("up to 7 jobs"), "{about}");
    let html = std::fs::read_to_string(&h).expect("html");
    assert!(html.contains("up to 7 jobs"), "about missing from the HTML");
    assert!(!html.contains("{{batch}}"), "placeholder in the HTML");
}

#[test]
fn run_takes_t_with_units_and_reports_seconds() {
    let db = database("t_units");
    let o = common::run(&db, &["-i", "-q"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = common::run(&db, &["-n", "-S", "-c", "1", "-T", "1s"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("\nduration: 1 s\n"), "{stdout}");
    for (bad, why) in [
        ("1500ms", "whole number of seconds"),
        ("500ms", "at least 1 second"),
    ] {
        let o = common::run(&db, &["-n", "-S", "-T", bad]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
    }
    // The same rule for scenario ladders, checked before any server starts.
    let o = hotbench()
        .args(["scenario", "run", "queue", "-T", "1500ms"])
        .output()
        .expect("run hotbench");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).1.contains("whole number of seconds"),
        "{}",
        text(&o).1
    );
}

#[test]
fn report_writes_beside_its_first_input_by_default() {
    let dir = temp_dir("report_default");
    let json = dir.join("before.json");
    let db = database("report_default");
    assert!(common::run(&db, &["-i", "-q"]).status.success());
    let o = common::run(
        &db,
        &["-n", "-S", "-t", "5", "--json", json.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let html = dir.join("before.html");
    let _ = std::fs::remove_file(&html);
    let o = hotbench().arg("report").arg(&json).output().expect("run");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!("report written to {}", html.display())),
        "{stdout}"
    );
    assert!(std::fs::read_to_string(&html)
        .expect("html")
        .contains("<html"));
}

#[test]
fn scenario_export_writes_an_editable_copy_once() {
    let dir = temp_dir("export").join("mine");
    let _ = std::fs::remove_dir_all(&dir);
    let o = hotbench()
        .args(["scenario", "export", "queue"])
        .arg(&dir)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("--dir"), "{stdout}");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/queue");
    for f in ["scenario.toml", "dequeue_batch.sql", "checks.sql"] {
        assert_eq!(
            std::fs::read_to_string(dir.join("queue").join(f)).expect("exported"),
            std::fs::read_to_string(shipped.join(f)).expect("shipped"),
            "{f}"
        );
    }
    // The copy is what `--dir` finds.
    let o = hotbench()
        .args(["scenario", "list", "--dir"])
        .arg(&dir)
        .output()
        .expect("run");
    assert!(text(&o)
        .0
        .contains(&dir.join("queue").display().to_string()));
    // Never over an existing copy.
    let o = hotbench()
        .args(["scenario", "export", "queue"])
        .arg(&dir)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("already exists"), "{}", text(&o).1);
}

#[test]
fn server_url_of_a_stopped_server_says_how_to_start_it() {
    let dir = temp_dir("url_stopped").join("pg");
    let o = hotbench()
        .args(["server", "url", "--dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("hotbench server start"), "{stderr}");
}
