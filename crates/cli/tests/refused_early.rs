//! Careless or hostile input refused before anything runs (issue 29): an output that would
//! replace one of the command's inputs or another output (however spelled), counts and
//! parameters that cannot run, each with one line and exit 1, and the input left as it
//! was. No server: every refusal comes before connecting (`PGHOST` points nowhere, so a
//! command that got past its checks fails differently and the test says so).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;

/// `hotbench ARGS` in `dir` with no reachable server.
fn in_dir(dir: &Path, args: &[&str]) -> Output {
    hotbench()
        .args(args)
        .current_dir(dir)
        .env("PGHOST", "/nonexistent-hotbench-socket-dir")
        .env_remove("PGPORT")
        .output()
        .expect("run hotbench")
}

/// Asserts exit 1 with one error line containing `want`.
fn refused(o: &Output, want: &str, what: &str) -> String {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(1), "{what}\n{out}\n{err}");
    assert!(err.contains(want), "{what}: expected {want:?} in\n{err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    err
}

/// A valid run result, as `--json` writes one.
fn result_file(dir: &Path, name: &str, started_at: f64) -> PathBuf {
    let rec = hotbench_results::testdata::record("s.sql", started_at, 3, 300, 2.0);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(&rec).unwrap()).unwrap();
    p
}

fn fresh_dir(tag: &str) -> PathBuf {
    let d = temp_dir(tag);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn an_output_never_replaces_an_input_of_its_command() {
    let dir = fresh_dir("out-is-input");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    result_file(&dir, "a.json", 1.0e9);
    result_file(&dir, "b.json", 1.0e9);
    std::fs::write(dir.join("u.csv"), "clients,tps\n1,100\n2,190\n4,350\n").unwrap();
    let o = in_dir(&dir, &["scenario", "export", "counters", "d"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    std::os::unix::fs::symlink("a.json", dir.join("link.json")).unwrap();
    std::fs::hard_link(dir.join("b.json"), dir.join("hard.json")).unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> = [
        "s.sql",
        "a.json",
        "b.json",
        "u.csv",
        "d/counters/scenario.toml",
    ]
    .iter()
    .map(|f| (dir.join(f), std::fs::read(dir.join(f)).unwrap()))
    .collect();
    for args in [
        vec!["run", "-f", "s.sql", "--json", "s.sql"],
        vec!["run", "-f", "s.sql@2", "--html", "./s.sql"],
        vec!["sweep", "-c", "1,2", "-f", "s.sql", "--json", "s.sql"],
        vec!["report", "a.json", "-o", "a.json"],
        vec!["report", "a.json", "b.json", "-o", "link.json"],
        vec!["compare", "a.json", "b.json", "-o", "b.json"],
        vec!["compare", "a.json", "b.json", "--json", "hard.json"],
        vec!["usl", "u.csv", "--json", "u.csv"],
        vec!["merge", "a.json", "b.json", "-o", "a.json"],
        vec![
            "scenario",
            "run",
            "counters",
            "--dir",
            "d",
            "--json",
            "d/counters/scenario.toml",
        ],
        vec![
            "scenario",
            "run",
            "counters",
            "--dir",
            "d",
            "--html",
            "d/../d/counters/schema.sql",
        ],
    ] {
        refused(&in_dir(&dir, &args), "is the input", &args.join(" "));
    }
    for (p, bytes) in before {
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "{p:?} was changed");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_file_under_two_spellings_is_refused_as_two_outputs() {
    let dir = fresh_dir("two-spellings");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    result_file(&dir, "a.json", 1.0e9);
    result_file(&dir, "b.json", 1.0e9);
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink("x.json", dir.join("alias.json")).unwrap();
    for args in [
        vec![
            "run", "-f", "s.sql", "--json", "x.json", "--html", "./x.json",
        ],
        vec![
            "run",
            "-f",
            "s.sql",
            "--json",
            "sub/../x.json",
            "--html",
            "x.json",
        ],
        vec![
            "run",
            "-f",
            "s.sql",
            "--json",
            "alias.json",
            "--html",
            "x.json",
        ],
        vec![
            "compare", "a.json", "b.json", "--json", "x.json", "-o", "./x.json",
        ],
    ] {
        refused(&in_dir(&dir, &args), "same file", &args.join(" "));
    }
    assert!(!dir.join("x.json").exists());
    // sweep's `-o` and `--html` are one report: both given, one was dropped unwritten.
    let args = [
        "sweep", "-c", "1", "-f", "s.sql", "-o", "a.html", "--html", "b.html",
    ];
    refused(
        &in_dir(&dir, &args),
        "both name the sweep's HTML report",
        &args.join(" "),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_report_of_a_pipe_needs_its_name_given_and_takes_html_as_run_does() {
    let dir = fresh_dir("report-pipe");
    let a = result_file(&dir, "a.json", 1.0e9);
    let stdin_run = |args: &[&str]| {
        hotbench()
            .args(args)
            .current_dir(&dir)
            .stdin(std::fs::File::open(&a).unwrap())
            .output()
            .expect("run hotbench")
    };
    let err = refused(
        &stdin_run(&["report", "/dev/stdin"]),
        "--html",
        "report /dev/stdin",
    );
    assert!(err.contains("not a regular file"), "{err}");
    // Named, a pipe reads like a file; `--html FILE` works as on `run`.
    let o = stdin_run(&["report", "/dev/stdin", "--html", "from-pipe.html"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(dir.join("from-pipe.html").is_file());
    let o = in_dir(&dir, &["report", "a.json", "--html", "named.html"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(std::fs::read_to_string(dir.join("named.html"))
        .unwrap()
        .contains("<html"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenario_export_onto_a_file_is_bad_input() {
    let dir = fresh_dir("export-file");
    std::fs::write(dir.join("taken"), "mine").unwrap();
    let o = in_dir(&dir, &["scenario", "export", "queue", "taken"]);
    refused(&o, "not a directory", "export onto a file");
    assert_eq!(std::fs::read(dir.join("taken")).unwrap(), b"mine");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hotbench sweep -c COUNTS` in `dir`: no run may start; exit 1 naming `want`.
fn sweep_refused(dir: &Path, counts: &str, want: &str) {
    let o = in_dir(dir, &["sweep", "-c", counts, "-f", "s.sql", "-T", "1"]);
    let (out, err) = text(&o);
    assert!(
        !out.contains("=== sweep"),
        "-c {counts}: a run started\n{out}"
    );
    assert_eq!(o.status.code(), Some(1), "-c {counts}\n{out}\n{err}");
    assert!(err.contains(want), "-c {counts}: {err}");
}

#[test]
fn sweep_checks_every_count_before_the_first_run() {
    let dir = fresh_dir("sweep-counts");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    sweep_refused(&dir, "1,2,100000000", "open files");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_refuses_an_empty_client_count() {
    let dir = fresh_dir("sweep-empty");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    for typo in ["1,,2", "1,2,", ",1"] {
        sweep_refused(&dir, typo, "invalid client count");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_list_option_refuses_an_empty_entry() {
    let dir = fresh_dir("list-typos");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    for (args, want) in [
        (
            vec!["sweep", "-c", "4", "--pool-size", "2,,8", "-f", "s.sql"],
            "invalid pool size \"\" in --pool-size \"2,,8\"",
        ),
        (
            vec!["run", "-f", "s.sql", "--retry-on", "40001,,55P03"],
            "invalid SQLSTATE \"\" in --retry-on",
        ),
        (
            vec!["scenario", "run", "queue", "--variants", "skip-locked,"],
            "invalid variant name \"\" in --variants",
        ),
    ] {
        refused(&in_dir(&dir, &args), want, &args.join(" "));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scenario `t` in `root/t`: `head` (top-level keys), then one baseline variant `a` running
/// `a.sql`, then `tail` (more tables).
fn scenario_dir(root: &Path, head: &str, variant: &str, tail: &str) -> PathBuf {
    let dir = root.join("t");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("scenario.toml"),
        format!(
            "title = \"t\"\ndemonstrates = \"d\"\nduration = 1\n{head}\n\n\
             [[variants]]\nname = \"a\"\nbaseline = true\n{variant}\n\n{tail}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("a.sql"), "select 1;\n").unwrap();
    dir
}

/// `hotbench scenario run t --dir ROOT ARGS` with no server, under a 2 GiB address-space
/// limit: a check that fails to bound what it builds fails the test instead of the machine.
fn scenario_run(root: &Path, args: &[&str]) -> Output {
    std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_hotbench"))
        .args(["scenario", "run", "t", "--dir"])
        .arg(root)
        .args(args)
        .env("PGHOST", "/nonexistent-hotbench-socket-dir")
        .output()
        .expect("run hotbench")
}

#[test]
fn manifest_clients_are_checked_against_the_open_files_limit() {
    for (head, variant, tag) in [
        ("clients = 100000000", "script = \"a.sql\"", "scenario"),
        (
            "",
            "[[variants.groups]]\nname = \"g\"\nscript = \"a.sql\"\nclients = 100000000",
            "group",
        ),
    ] {
        let root = fresh_dir(&format!("manifest-clients-{tag}"));
        scenario_dir(&root, head, variant, "");
        let o = scenario_run(&root, &[]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{tag}\n{out}\n{err}");
        assert!(err.contains("open files"), "{tag}: {err}");
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[test]
fn nested_parameter_expansion_stops_at_a_size_limit() {
    // Five parameters, each expanding to 64 copies of the next: 64^5 bytes from a few lines.
    let mut params = String::new();
    for i in 0..5 {
        let next = if i == 4 {
            "x".to_string()
        } else {
            format!("{{{{e{}}}}}", i + 1)
        };
        params.push_str(&format!(
            "[params.e{i}]\ndefault = \"v\"\ntype = \"enum\"\nvalues = {{ v = \"{}\" }}\n",
            next.repeat(64)
        ));
    }
    let root = fresh_dir("nested-params");
    let dir = scenario_dir(&root, "", "script = \"a.sql\"", &params);
    std::fs::write(dir.join("a.sql"), "select '{{e0}}';\n").unwrap();
    let started = std::time::Instant::now();
    let o = scenario_run(&root, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("larger than 16 MiB"), "{err}");
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn ceiling_parameters_are_checked_before_anything_runs() {
    let root = fresh_dir("ceiling-params");
    scenario_dir(
        &root,
        "",
        "script = \"a.sql\"",
        "[params.n]\ndefault = 4\n\n[ceiling]\nvariant = \"a\"\nparams = { n = \"many\" }\n",
    );
    let o = scenario_run(&root, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("[ceiling]") && err.contains("\"many\""),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_manifest_script_weight_of_zero_is_refused_as_with_f() {
    let root = fresh_dir("weight-zero");
    scenario_dir(&root, "", "scripts = [\"a.sql@0\"]", "");
    let o = scenario_run(&root, &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("total script weight must not be zero"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_bad_prometheus_address_is_refused_before_connecting() {
    let dir = fresh_dir("prometheus-addr");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    let o = in_dir(&dir, &["run", "-f", "s.sql", "--prometheus", "nonsense"]);
    refused(
        &o,
        "invalid --prometheus \"nonsense\"",
        "--prometheus nonsense",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn server_start_refuses_port_0_and_a_file_as_its_directory() {
    let dir = fresh_dir("server-args");
    std::fs::write(dir.join("afile"), "x").unwrap();
    let o = in_dir(&dir, &["server", "start", "--port", "0", "--dir", "srv"]);
    refused(&o, "invalid --port \"0\"", "--port 0");
    assert!(!dir.join("srv").exists(), "a cluster was created");
    let o = in_dir(&dir, &["server", "start", "--dir", "afile"]);
    refused(&o, "\"afile\" is not a directory", "--dir FILE");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hotbench merge FILES… -o m.json` in `dir`: refused with `want`, nothing written.
fn merge_refused(dir: &Path, files: &[&str], want: &str) {
    let mut args = vec!["merge"];
    args.extend(files);
    args.extend(["-o", "m.json"]);
    refused(&in_dir(dir, &args), want, &args.join(" "));
    assert!(!dir.join("m.json").exists());
}

#[test]
fn merge_refuses_one_run_given_twice() {
    let dir = fresh_dir("merge-twice");
    let a = result_file(&dir, "a.json", 1.0e9);
    std::fs::copy(&a, dir.join("copy.json")).unwrap();
    merge_refused(&dir, &["a.json", "a.json"], "are the same run");
    merge_refused(&dir, &["a.json", "./copy.json"], "are the same run");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_counts_that_overflow() {
    let dir = fresh_dir("merge-overflow");
    let mut rec = hotbench_results::testdata::record("s.sql", 1.0e9, 3, 300, 2.0);
    rec.totals.counters.cnt = u64::MAX - 10;
    std::fs::write(dir.join("huge.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
    result_file(&dir, "b.json", 1.0e9 + 1.0);
    merge_refused(&dir, &["huge.json", "b.json"], "cnt overflows");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_different_timeline_intervals() {
    let dir = fresh_dir("merge-interval");
    result_file(&dir, "a.json", 1.0e9);
    let mut rec = hotbench_results::testdata::record("s.sql", 1.0e9 + 1.0, 3, 300, 2.0);
    rec.config.settings.interval_us = 100_000;
    std::fs::write(dir.join("fine.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
    merge_refused(
        &dir,
        &["a.json", "fine.json"],
        "timeline interval (--interval)",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_of_a_ladder_says_what_merge_takes() {
    let dir = fresh_dir("merge-ladder");
    result_file(&dir, "r.json", 1.0e9);
    let ladder = hotbench_results::LadderFile::new(Vec::new());
    std::fs::write(dir.join("lad.json"), serde_json::to_vec(&ladder).unwrap()).unwrap();
    let o = in_dir(&dir, &["merge", "lad.json", "r.json", "-o", "m.json"]);
    let err = refused(&o, "merge combines run results", "merge lad.json r.json");
    assert!(!err.contains("compare"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn start_at_without_a_zone_is_refused() {
    let dir = fresh_dir("start-at-zone");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(600);
    let utc = humantime::format_rfc3339_seconds(soon).to_string();
    let bare = utc.trim_end_matches('Z');
    let o = in_dir(&dir, &["run", "-f", "s.sql", "--start-at", bare]);
    refused(&o, "no time zone", "--start-at without a zone");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_url_never_prints_its_password() {
    let dir = fresh_dir("url-password");
    std::fs::write(dir.join("s.sql"), "select 1;\n").unwrap();
    for url in [
        "postgresql://u:pw5ecret@[::1:5432/db",
        "postgresql://u:pw5ecret@[]",
        "postgresql://u:pw5ecret@[::1]x",
        "postgresql://h/db?password=pw5ecret%zz",
    ] {
        for args in [
            vec!["run", "-f", "s.sql", url],
            vec!["scenario", "run", "queue", url],
        ] {
            let o = in_dir(&dir, &args);
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(1), "{url}\n{out}\n{err}");
            assert!(
                !err.contains("pw5ecret") && !out.contains("pw5ecret"),
                "{url}: {err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
