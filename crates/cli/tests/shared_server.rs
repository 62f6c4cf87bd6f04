//! Two `hotbench run`s on the one default embedded server halve each other: both are told.
//! The one that joins warns at once; the one already running says so at its end. Each run
//! gets a fresh data home (`XDG_DATA_HOME`) so no other test's server is involved.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{hotbench, private_home, text};

struct Home(PathBuf);

impl Home {
    fn new() -> Home {
        let dir = hotbench_pgserver::testing::test_temp_root()
            .join(format!("hotbench-shared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in [dir.clone(), dir.join("data")] {
            std::fs::create_dir_all(&d).expect("dir");
            let _ = Command::new("chmod").arg("755").arg(&d).status();
        }
        Home(dir)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let data = self.0.join("data");
        let mut c = hotbench();
        c.args(args).current_dir(&self.0);
        private_home(&mut c, &data);
        c
    }

    fn output(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run hotbench")
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = self.output(&["server", "stop"]);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn two_runs_on_the_default_server_are_both_told() {
    let home = Home::new();
    let o = home.output(&["run", "-i", "-q"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let first = home
        .cmd(&["run", "-n", "-S", "-c", "2", "-T", "6", "-P", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn first run");
    // Wait until the first run's server is up (its own, started for it).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = text(&home.output(&["server", "status"])).0;
        if s.starts_with("running") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "first run's server never came up: {s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let second = home.output(&["run", "-n", "-S", "-c", "1", "-T", "1"]);
    let (_, err2) = text(&second);
    assert!(second.status.success(), "{err2}");
    assert!(
        err2.contains("another hotbench command is using the default server"),
        "the joining run was not warned:\n{err2}"
    );
    let first = first.wait_with_output().expect("first run");
    let (out1, err1) = text(&first);
    assert!(first.status.success(), "{err1}");
    assert!(
        err1.contains("another hotbench command joined the embedded server during this run"),
        "the first run was not told:\n{err1}"
    );
    assert!(
        out1.contains("note: another hotbench command joined"),
        "{out1}"
    );
}
