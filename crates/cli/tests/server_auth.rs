//! The embedded server's password through the binary (issue 36, row 4): `server start`,
//! `status` and `url` never print it, the URL they print names its file so `psql` and
//! hotbench itself get in over TCP with it, and a run through hotbench's own PgBouncer on
//! the embedded server still connects (the pooler gets a password of its own).

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{hotbench, private_home, text, write_script};

struct Home(PathBuf);

impl Home {
    fn new() -> Home {
        let dir = hotbench_pgserver::testing::test_temp_root()
            .join(format!("hotbench-auth-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in [dir.clone(), dir.join("data")] {
            std::fs::create_dir_all(&d).expect("dir");
            // The server's own account must reach its data directory when we are root.
            std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .expect("chmod");
        }
        Home(dir)
    }

    fn output(&self, args: &[&str]) -> Output {
        let mut c = hotbench();
        c.args(args).current_dir(&self.0);
        private_home(&mut c, &self.0.join("data"));
        c.output().expect("run hotbench")
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = self.output(&["server", "stop", "--force"]);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_password_is_never_printed_and_the_printed_url_gets_in() {
    let home = Home::new();
    let o = home.output(&["server", "start"]);
    let (url, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let url = url.trim().to_string();
    let passfile = url
        .split_once("?passfile=")
        .map(|(_, p)| PathBuf::from(p))
        .unwrap_or_else(|| panic!("no passfile in {url}"));
    let pw = hotbench_pgserver::secret::read(&passfile).expect("the password file");
    let status = home.output(&["server", "status"]);
    let shown = home.output(&["server", "url"]);
    for o in [&o, &status, &shown] {
        let (out, err) = text(o);
        assert!(o.status.success(), "{err}");
        assert!(
            !out.contains(&pw) && !err.contains(&pw),
            "the password is printed:\n{out}{err}"
        );
    }
    assert_eq!(text(&shown).0.trim(), url);
    // psql, and hotbench itself, with that URL (TCP: the password from the file).
    let mut psql = Command::new("psql");
    hotbench_pgserver::testing::without_libpq_env(&mut psql);
    let p = psql
        .args(["-X", "-A", "-t", "-w", "-c", "select 1", &url])
        .output()
        .expect("psql");
    assert!(p.status.success(), "{}", text(&p).1);
    let dir = home.0.join("scripts");
    std::fs::create_dir_all(&dir).expect("dir");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let script = script.to_string_lossy();
    let run = home.output(&["run", "-n", "-t", "5", "-f", &script, &url]);
    let (out, err) = text(&run);
    assert!(run.status.success(), "{out}{err}");
    assert!(!out.contains(&pw) && !err.contains(&pw), "{out}{err}");
    // Without the password file, TCP is refused.
    let bare = url.split_once('?').map(|(u, _)| u).unwrap_or(&url);
    let run = home.output(&["run", "-n", "-t", "5", "-f", &script, bare]);
    assert_ne!(run.status.code(), Some(0), "{:?}", text(&run));
    // The embedded server (no target named) through hotbench's PgBouncer.
    let pooled = home.output(&[
        "run",
        "-n",
        "-t",
        "5",
        "-c",
        "4",
        "-f",
        &script,
        "--pooler",
        "pgbouncer",
    ]);
    let (out, err) = text(&pooled);
    assert!(pooled.status.success(), "{out}{err}");
    assert!(!out.contains(&pw) && !err.contains(&pw), "{out}{err}");
}
