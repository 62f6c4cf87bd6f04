//! Output files end to end (issue 13, items 1 and 2): results go to regular files or
//! *through* FIFOs and devices, never over them; symlinks stay links; an output that cannot
//! be written is refused before the run (exit 1), and a final write that fails is an error
//! (exit 2) that leaves no temporary file behind.

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use common::*;

fn init(db: &hotbench_pgserver::ConnInfo) {
    let o = run(db, &["-i", "-q"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "init failed:\n{out}\n{err}");
}

/// A character device node in `dir` (a copy made with mknod as root; the original
/// `/dev` node otherwise, which the test then must not damage either).
fn device(dir: &Path, name: &str, minor: u32, original: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    let made = std::process::Command::new("mknod")
        .arg(&p)
        .args(["c", "1", &minor.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        p
    } else {
        original.into()
    }
}

fn file_type(p: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(p)
        .expect("output node")
        .file_type()
}

fn temp_files(dir: &Path) -> Vec<String> {
    hotbench_results::output_path::temp_siblings_in(dir)
}

#[test]
fn outputs_never_replace_devices_fifos_or_symlinks() {
    let db = database("outnodes");
    init(&db);
    let dir = temp_dir("outnodes");
    let full = device(&dir, "full", 7, "/dev/full");
    let null = device(&dir, "null", 3, "/dev/null");

    // A full device: the run happens, the write fails loudly (exit 2), the node stays.
    for flag in ["--json", "--html"] {
        let o = run(&db, &["-n", "-t", "3", flag, full.to_str().unwrap()]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{flag}\n{out}\n{err}");
        assert!(err.contains("could not write"), "{err}");
        assert!(!out.contains("written to"), "{out}");
        assert!(
            file_type(&full).is_char_device(),
            "{flag} replaced {full:?}"
        );
    }
    // A sink device is written through and stays a device.
    let o = run(&db, &["-n", "-t", "3", "--json", null.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(file_type(&null).is_char_device());

    // A FIFO gets exactly one complete document (no snapshots), and stays a FIFO.
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).expect("read fifo"))
    };
    let o = run(&db, &["-n", "-T", "2", "--json", fifo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let bytes = reader.join().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&bytes).expect("one JSON document");
    assert_eq!(doc["status"], "completed");
    assert!(file_type(&fifo).is_fifo());

    // Symlinks (absolute and relative) stay links; their targets get the results.
    let real = dir.join("real.json");
    std::fs::write(&real, "old").unwrap();
    let abs_link = dir.join("abs.json");
    std::os::unix::fs::symlink(&real, &abs_link).unwrap();
    let real_html = dir.join("real.html");
    let rel_link = dir.join("rel.html");
    std::os::unix::fs::symlink("real.html", &rel_link).unwrap();
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "3",
            "--json",
            abs_link.to_str().unwrap(),
            "--html",
            rel_link.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(file_type(&abs_link).is_symlink() && file_type(&rel_link).is_symlink());
    assert_eq!(json(&real)["status"], "completed");
    assert!(std::fs::read_to_string(&real_html)
        .unwrap()
        .contains("<html"));
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unwritable_outputs_are_refused_before_the_run_and_failed_writes_exit_2() {
    let db = database("outfail");
    init(&db);
    let dir = temp_dir("outfail");
    let a_file = dir.join("plain");
    std::fs::write(&a_file, "x").unwrap();
    for (flag, path) in [
        ("--json", "/nonexistent-hotbench-dir/r.json".to_string()),
        ("--html", format!("{}/r.html", a_file.display())),
        ("--json", dir.display().to_string()),
    ] {
        let started = std::time::Instant::now();
        // -T 30: a refusal must come before the run, not after it.
        let o = run(&db, &["-n", "-T", "30", flag, &path]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{flag} {path}\n{out}\n{err}");
        assert!(
            err.contains("could not write") && err.contains(&path),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(started.elapsed().as_secs() < 20, "the run happened first");
    }
    // A write that fails at the end (file size limit standing in for a full disk): exit 2,
    // an error, and no temporary file left behind.
    let out = dir.join("r.json");
    let mut args = vec!["run".to_string()];
    args.extend(conn_args(&db));
    args.extend(
        [
            "-n",
            "-t",
            "20",
            "--json",
            out.to_str().unwrap(),
            &db.dbname,
        ]
        .map(String::from),
    );
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -f 4; trap '' XFSZ; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_hotbench"))
        .args(&args)
        .env_remove("PGPASSWORD")
        .output()
        .expect("run hotbench");
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{err}");
    assert!(err.contains("could not write"), "{err}");
    assert!(!stdout.contains("result written"), "{stdout}");
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}
