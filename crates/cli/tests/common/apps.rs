//! The real Python libraries the diagnose tests drive (Django, SQLAlchemy, psycopg), installed
//! by `.ci/install-pyapps` into a cached virtual environment (pinned in `tests/apps/`), and a
//! way to start their workload scripts against a test database.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hotbench_pgserver::ConnInfo;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The virtual environment's python: `HOTBENCH_APPS_PYTHON`, else what `.ci/install-pyapps`
/// prints (it installs the pins once, from PyPI). `None` when that fails (PyPI unreachable):
/// the caller skips, except under CI where it panics.
pub fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOTBENCH_APPS_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let o = Command::new("bash")
        .arg(repo().join(".ci/install-pyapps"))
        .stdin(Stdio::null())
        .output();
    let why = match o {
        Ok(o) if o.status.success() => {
            let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            if p.is_file() {
                return Some(p);
            }
            format!("install-pyapps printed no python: {}", p.display())
        }
        Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
        Err(e) => e.to_string(),
    };
    assert!(
        !super::under_ci(),
        "the Python libraries could not be installed: {why}"
    );
    println!("SKIPPED: the Python libraries could not be installed (PyPI unreachable?): {why}");
    None
}

/// `python tests/apps/SCRIPT --host … --port … --user … --dbname … ARGS…`.
pub fn app(python: &Path, script: &str, db: &ConnInfo, args: &[&str]) -> Command {
    let mut c = Command::new(python);
    c.arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/apps")
            .join(script),
    )
    .arg("--host")
    .arg(&db.socket_dir)
    .args(["--port", &db.port.to_string(), "--user", &db.user])
    .args(["--dbname", &db.dbname])
    .args(args);
    hotbench_pgserver::testing::without_libpq_env(&mut c);
    c
}

/// Runs `SCRIPT --setup` (its tables and rows).
pub fn setup(python: &Path, script: &str, db: &ConnInfo, args: &[&str]) {
    let o = app(python, script, db, &[&["--setup"], args].concat())
        .output()
        .expect("run the app's setup");
    assert!(
        o.status.success(),
        "{script} --setup: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An app's load, stopped with SIGTERM when dropped (its last line is its tps).
pub struct AppLoad(Option<Child>);

impl AppLoad {
    pub fn start(python: &Path, script: &str, db: &ConnInfo, args: &[&str]) -> AppLoad {
        let child = app(python, script, db, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the app");
        AppLoad(Some(child))
    }

    /// Stops it (SIGTERM: a test started in the background inherits SIGINT ignored) and
    /// returns its output.
    pub fn stop(mut self) -> String {
        let mut out = String::new();
        if let Some(mut c) = self.0.take() {
            terminate(&c);
            if let Some(mut s) = c.stdout.take() {
                let _ = std::io::Read::read_to_string(&mut s, &mut out);
            }
            if let Some(mut s) = c.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut s, &mut out);
            }
            let _ = c.wait();
        }
        out
    }
}

impl Drop for AppLoad {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            terminate(&c);
            let _ = c.wait();
        }
    }
}

fn terminate(c: &Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &c.id().to_string()])
        .status();
}
