//! Inputs are read with bounded memory (issue 13, item 3) and result files of unknown
//! format versions are refused (item 14): devices that never end, directories
//! and oversized files are refused with one line (exit 1) instead of being read until the
//! OOM killer steps in; a pipe (`<(…)`, `/dev/stdin`) is read once, however often the
//! command reads it. No server needed: inputs are checked before connecting.

mod common;

use common::*;

fn hotbench_output(args: &[&str]) -> std::process::Output {
    hotbench()
        .args(args)
        .env("PGHOST", "/nonexistent-hotbench-socket-dir")
        .output()
        .expect("run hotbench")
}

#[test]
fn endless_or_non_regular_inputs_are_refused_with_one_line() {
    for args in [
        vec!["run", "-f", "/dev/zero"],
        vec!["run", "-f", "/dev/urandom"],
        vec!["run", "-f", "/"],
        vec!["report", "/dev/zero", "-o", "/dev/null"],
        vec!["compare", "/dev/urandom", "/dev/zero"],
        vec!["merge", "/tmp", "/dev/zero", "-o", "/dev/null"],
    ] {
        let o = hotbench_output(&args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}\n{out}\n{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("not a regular file") || err.contains("directory"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn oversized_inputs_are_refused_with_one_line() {
    let dir = temp_dir("inputs-big");
    // Sparse files: huge to read, free to make.
    let script = dir.join("big.sql");
    let result = dir.join("big.json");
    for p in [&script, &result] {
        std::fs::File::create(p).unwrap().set_len(2 << 30).unwrap();
    }
    for args in [
        vec!["run", "-f", script.to_str().unwrap()],
        vec!["report", result.to_str().unwrap(), "-o", "/dev/null"],
    ] {
        let o = hotbench_output(&args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}\n{out}\n{err}");
        assert!(err.contains("larger than"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_format_versions_are_refused_by_every_reader() {
    let dir = temp_dir("inputs-formats");
    let docs = [
        (
            "r2.json",
            serde_json::json!({"format": "hotbench-result/2"}),
        ),
        (
            "l2.json",
            serde_json::json!({"format": "hotbench-ladder/2", "ladders": []}),
        ),
        (
            "s9.json",
            serde_json::json!({"format": "hotbench-sweep/9", "runs": []}),
        ),
    ];
    for (name, doc) in &docs {
        let p = dir.join(name);
        std::fs::write(&p, doc.to_string()).unwrap();
        let path = p.to_str().unwrap();
        for args in [
            vec!["report", path, "-o", "/dev/null"],
            vec!["compare", path, path],
            vec!["merge", path, path, "-o", "/dev/null"],
            vec!["usl", path],
        ] {
            let o = hotbench_output(&args);
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(1), "{args:?}\n{out}\n{err}");
            assert!(err.contains("unknown result format"), "{args:?}: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `compare` read each file twice (once to tell ladders from runs): the second read of a
/// pipe found it empty ("/dev/fd/63: not JSON"). Every input is now read once, and a pipe
/// read twice by one command gives the same text both times.
#[test]
fn a_pipe_is_read_once_however_often_the_command_reads_it() {
    let dir = temp_dir("pipes-once");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, started) in [("a.json", 1.0e9), ("b.json", 1.0e9 + 5.0)] {
        let rec = hotbench_results::testdata::record("s.sql", started, 3, 300, 2.0);
        std::fs::write(dir.join(name), serde_json::to_vec(&rec).unwrap()).unwrap();
    }
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg("exec \"$0\" compare a.json <(cat b.json)")
        .arg(env!("CARGO_BIN_EXE_hotbench"))
        .current_dir(&dir)
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("B: /dev/fd/"), "{out}");
    // The same pipe named twice is one text: merge sees the one run twice and says so.
    let o = hotbench()
        .args(["merge", "/dev/stdin", "/dev/stdin", "-o", "m.json"])
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            let bytes = std::fs::read(dir.join("a.json")).unwrap();
            c.stdin.take().unwrap().write_all(&bytes)?;
            c.wait_with_output()
        })
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("are the same run"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
