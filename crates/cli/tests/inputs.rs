//! Inputs are read with bounded memory (issue 13, item 3) and result files of unknown
//! format versions are refused (item 14): devices that never end, directories
//! and oversized files are refused with one line (exit 1) instead of being read until the
//! OOM killer steps in. No server needed: inputs are checked before connecting.

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
