//! Scenario inputs that used to pass silently (issue 13, items 10 and 7): an empty `--variants`,
//! checks that return no rows (`✔ 0/0`), a non-UTF-8 file, and a `--dir` that does not hold
//! the requested scenario (the built-in one was run instead) are all errors, exit 1. A
//! `--dir` holding exactly one scenario (a capture's) runs it without a NAME.

mod common;

use std::path::{Path, PathBuf};

use common::{conn_args, database, hotbench, temp_dir, text};
use hotbench_pgserver::ConnInfo;

fn scenario(db: Option<&ConnInfo>, args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = hotbench();
    cmd.arg("scenario").args(args);
    match db {
        Some(db) => {
            cmd.args(conn_args(db)).arg(&db.dbname);
        }
        None => {
            cmd.env("PGHOST", "/nonexistent-hotbench-socket-dir");
        }
    }
    let o = cmd.output().expect("run hotbench");
    let (out, err) = text(&o);
    (o.status.code(), out, err)
}

/// A one-variant scenario `name` in `root/name` with the given checks.
fn write_scenario(root: &Path, name: &str, checks: &[u8]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("scenario.toml"),
        "title = \"t\"\ndemonstrates = \"d\"\nclients = 1\nduration = 1\n\
         setup = [\"schema.sql\"]\nchecks = [\"checks.sql\"]\n\n\
         [[variants]]\nname = \"a\"\nbaseline = true\nscript = \"a.sql\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("schema.sql"), "create table t (x int);\n").unwrap();
    std::fs::write(dir.join("a.sql"), "insert into t values (1);\n").unwrap();
    std::fs::write(dir.join("checks.sql"), checks).unwrap();
    dir
}

#[test]
fn empty_variant_selections_are_refused() {
    for v in ["", ",", " , "] {
        let (code, out, err) = scenario(None, &["run", "queue", "--variants", v]);
        assert_eq!(code, Some(1), "{v:?}\n{out}\n{err}");
        // Refused as an empty entry by the list parser every list option shares (073754d).
        assert!(
            err.contains("invalid variant name") && err.contains("in --variants"),
            "{v:?}: {err}"
        );
    }
}

#[test]
fn a_dir_without_the_requested_scenario_does_not_fall_back_to_the_built_in() {
    let root = temp_dir("scn-fallback");
    let own = write_scenario(
        &root,
        "mine",
        b"select 'x' as name, true as ok, '' as detail;\n",
    );
    write_scenario(
        &root,
        "other",
        b"select 'x' as name, true as ok, '' as detail;\n",
    );
    for dir in [&own, &root] {
        let d = dir.to_string_lossy().into_owned();
        for name in ["daily-limit", "queue"] {
            let (code, out, err) = scenario(None, &["run", name, "--dir", &d]);
            assert_eq!(code, Some(1), "{name} {d}\n{out}\n{err}");
            assert!(
                err.contains(&format!("no scenario \"{name}\" in --dir")),
                "{err}"
            );
            assert!(!out.contains("vs baseline"), "{out}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn non_utf8_scenario_files_are_bad_input() {
    let root = temp_dir("scn-utf8");
    let dir = write_scenario(
        &root,
        "latin1",
        b"select 'caf\xe9' as name, true as ok, '' as detail;\n",
    );
    let d = dir.to_string_lossy().into_owned();
    let (code, _, err) = scenario(None, &["run", "latin1", "--dir", &d]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("UTF-8"), "{err}");
    std::fs::write(dir.join("checks.sql"), "select 1;\n").unwrap();
    std::fs::write(dir.join("scenario.toml"), b"title = \"\xff\"\n").unwrap();
    let (code, _, err) = scenario(None, &["run", "latin1", "--dir", &d]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("UTF-8"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn checks_that_return_no_rows_are_errors_not_passes() {
    let db = database("scn_norows");
    let root = temp_dir("scn-norows");
    for (name, checks) in [
        (
            "vanishing",
            &b"select 'x' as name, true as ok, '' as detail from t where false;\n"[..],
        ),
        ("ddl-only", &b"create temp table scratch (x int);\n"[..]),
    ] {
        let dir = write_scenario(&root, name, checks);
        let d = dir.to_string_lossy().into_owned();
        let (code, out, err) = scenario(Some(&db), &["run", name, "--dir", &d]);
        assert_eq!(code, Some(1), "{name}\n{out}\n{err}");
        assert!(
            err.contains("returned no rows") || err.contains("checked nothing"),
            "{name}: {err}"
        );
        assert!(!out.contains("✔ 0/0"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// Item 7: two scenarios whose names differ only after PostgreSQL's 63-character limit (or
/// only by `-` against `_`) get schemas of their own: run at the same time, both pass.
#[test]
fn scenarios_with_colliding_looking_names_run_side_by_side() {
    let db = database("scn_names");
    let root = temp_dir("scn-names");
    let long = "l".repeat(64);
    let checks = b"select 'rows' as name, count(*) > 0 as ok, '' as detail from t;\n";
    for pair in [
        [format!("{long}-one"), format!("{long}-two")],
        ["twin-name".to_string(), "twin_name".to_string()],
    ] {
        let children: Vec<_> = pair
            .iter()
            .map(|name| {
                let dir = write_scenario(&root, name, checks);
                hotbench()
                    .args(["scenario", "run", name, "--dir"])
                    .arg(&dir)
                    .args(["--probe", "off", "--keep-schema", "-h"])
                    .arg(&db.socket_dir)
                    .arg("-p")
                    .arg(db.port.to_string())
                    .arg("-U")
                    .arg(&db.user)
                    .arg(&db.dbname)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn hotbench")
            })
            .collect();
        for (name, child) in pair.iter().zip(children) {
            let o = child.wait_with_output().unwrap();
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(0), "{name}\n{out}\n{err}");
        }
    }
    let schemas = common::psql(
        &db,
        "select count(distinct nspname) from pg_namespace where nspname like 'hb%'",
    );
    assert_eq!(
        schemas.trim(),
        "4",
        "each scenario keeps a schema of its own"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Issue 29: a session setting the server does not know (or a value it refuses) is bad
/// input, found before the first variant runs (exit 1, was 2 when the clients connected).
#[test]
fn an_unknown_manifest_setting_is_bad_input_before_anything_runs() {
    let db = database("scn_settings");
    let root = temp_dir("scn-settings");
    for (name, setting) in [
        ("bogus-name", "no_such_setting_hb = 1"),
        ("bogus-value", "lock_timeout = \"soon\""),
    ] {
        let dir = write_scenario(
            &root,
            name,
            b"select 'x' as name, true as ok, '' as detail;\n",
        );
        let manifest = std::fs::read_to_string(dir.join("scenario.toml")).unwrap();
        let manifest = manifest.replace(
            "[[variants]]",
            &format!("[settings]\n{setting}\n\n[[variants]]"),
        );
        std::fs::write(dir.join("scenario.toml"), manifest).unwrap();
        let d = dir.to_string_lossy().into_owned();
        let (code, out, err) = scenario(Some(&db), &["run", name, "--dir", &d, "--probe", "off"]);
        assert_eq!(code, Some(1), "{name}\n{out}\n{err}");
        assert!(err.contains("setting"), "{name}: {err}");
        assert!(!out.contains("vs baseline"), "{name}: a variant ran\n{out}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// Issue 29: a `[work]` query that answers NULL or a negative number measured nothing: the
/// variant fails a check and shows no rate (it showed the committed rate, or "-2 rows/s");
/// monitors that fail or answer no number are named in the variant's notes (they were
/// dropped in silence).
#[test]
fn unmeasured_work_fails_a_check_and_silent_monitors_are_named() {
    let db = database("scn_work");
    let root = temp_dir("scn-work");
    for (name, work) in [
        ("work-null", "select null::int"),
        ("work-negative", "select -2"),
    ] {
        let dir = write_scenario(
            &root,
            name,
            b"select 'x' as name, true as ok, '' as detail;\n",
        );
        let manifest = std::fs::read_to_string(dir.join("scenario.toml")).unwrap();
        let manifest = manifest.replace(
            "[[variants]]",
            &format!(
                "[work]\nsql = \"{work}\"\nunit = \"rows\"\n\n\
                 [[monitors]]\nname = \"broken\"\nsql = \"select 1/0\"\n\n\
                 [[monitors]]\nname = \"silent\"\nsql = \"select null::int\"\n\n[[variants]]"
            ),
        );
        std::fs::write(dir.join("scenario.toml"), manifest).unwrap();
        let d = dir.to_string_lossy().into_owned();
        let json_path = root.join(format!("{name}.json"));
        let (code, out, err) = scenario(
            Some(&db),
            &[
                "run",
                name,
                "--dir",
                &d,
                "--probe",
                "off",
                "--quiet",
                "--json",
                json_path.to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(2), "{name}\n{out}\n{err}");
        let v = common::json(&json_path);
        let variant = &v["ladders"][0]["variants"][0];
        let checks = variant["checks"].as_array().unwrap();
        let work = checks
            .iter()
            .find(|c| c["name"] == "[work] measured the work done")
            .unwrap_or_else(|| panic!("{name}: no work check in {checks:?}"));
        assert_eq!(work["ok"], false, "{name}");
        assert!(
            !out.contains("-2 rows"),
            "{name}: a negative rate shown\n{out}"
        );
        let row = out.lines().find(|l| l.starts_with("a (baseline)")).unwrap();
        let rate = row.split_whitespace().nth(3).unwrap();
        assert_eq!(rate, "–", "{name}: the rows/s column shows a number\n{out}");
        let notes = variant["notes"].to_string();
        assert!(
            notes.contains("monitor \\\"broken\\\" failed"),
            "{name}: {notes}"
        );
        assert!(
            notes.contains("monitor \\\"silent\\\" returned no number"),
            "{name}: {notes}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `scenario run --dir DIR` with no NAME runs the one scenario DIR holds (the database named
/// by -h/-p/-U and PGDATABASE: a positional is the NAME); with two, exit 1 and the usage line.
#[test]
fn a_dir_with_one_scenario_runs_without_a_name() {
    let db = database("scn_noname");
    let root = temp_dir("scn-noname");
    let checks = b"select 'rows' as name, count(*) > 0 as ok, '' as detail from t;\n";
    let dir = write_scenario(&root, "solo", checks);
    let run = |d: &Path| {
        let o = hotbench()
            .args(["scenario", "run", "--dir"])
            .arg(d)
            .args(conn_args(&db))
            .env("PGDATABASE", &db.dbname)
            .output()
            .expect("run hotbench");
        let (out, err) = text(&o);
        (o.status.code(), out, err)
    };
    let (code, out, err) = run(&dir);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("solo"), "{out}");
    write_scenario(&root, "duo", checks);
    let (code, out, err) = run(&root);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(
        err.contains("holds 2 scenarios (duo, solo)")
            && err.contains("usage: hotbench scenario run"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
