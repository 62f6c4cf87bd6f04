//! The default server's lifecycle with real processes in a temp directory: first-use initdb,
//! command-scoped start/stop, `server start|url|status|stop|reset`, orphan cleanup after
//! SIGKILL, discovery from --pg-bin, and the clear errors (port in use, missing binaries,
//! disk full).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hotbench_pgserver::default_server::{
    ensure_default_server, server_reset, server_start, server_status, server_stop, server_url,
    DefaultOptions, Keeper,
};
use hotbench_pgserver::process::{alive, processes_in};
use hotbench_pgserver::state::State;
use hotbench_pgserver::{binaries, BinOptions, ConnInfo, Error};

/// A temp base directory reachable by the PostgreSQL user; kills anything left in it on drop
/// (so a failing test leaves nothing running).
struct Base {
    tmp: tempfile::TempDir,
}

impl Base {
    fn new() -> Base {
        let tmp = tempfile::Builder::new()
            .prefix("hbl-")
            .tempdir_in(hotbench_pgserver::testing::test_temp_root())
            .expect("tempdir");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        Base { tmp }
    }
    fn dir(&self) -> PathBuf {
        self.tmp.path().join("pg")
    }
    fn opts(&self) -> DefaultOptions {
        DefaultOptions {
            dir: Some(self.dir()),
            quiet: true,
            ..DefaultOptions::default()
        }
    }
}

impl Drop for Base {
    fn drop(&mut self) {
        for pid in processes_in(self.tmp.path()) {
            // SAFETY: plain kill.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

fn psql(conn: &ConnInfo, sql: &str) -> Result<String, String> {
    let out = Command::new("psql")
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .envs(conn.env())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// One lifecycle test at a time: they start, kill and adopt servers and guardian processes,
/// and one test's stop or kill must not meet another's server half-way (a CI run saw a
/// dropped guard's server still running 30 s later while the others ran beside it).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Polls `done` until it holds; fails with `what` after `secs` seconds.
fn wait_for(what: impl Fn() -> String, secs: u64, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(secs), "{}", what());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_no_processes(dir: &Path, secs: u64) {
    wait_for(
        || {
            format!(
                "processes left in {}: {:?}",
                dir.display(),
                processes_in(dir)
            )
        },
        secs,
        || processes_in(dir).is_empty(),
    );
}

#[test]
fn default_server_lifecycle() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let st = server_status(&o).expect("status");
    assert!(!st.initialized && st.running.is_none(), "{st}");

    // A command: first use creates the cluster, starts it, stops it afterwards.
    let g = ensure_default_server(&o).expect("ensure");
    assert!(g.started_here());
    assert!(!g.is_fast());
    psql(
        g.conninfo(),
        "create table kept(x int); insert into kept values (42)",
    )
    .expect("create");
    assert_eq!(psql(g.conninfo(), "show fsync").expect("show"), "on");
    psql(g.conninfo(), "select count(*) from pg_stat_statements").expect("pg_stat_statements view");
    let port = g.conninfo().port;
    drop(g);
    wait_no_processes(&b.dir(), 30);
    let st = server_status(&o).expect("status");
    assert!(st.initialized && st.running.is_none(), "{st}");
    assert!(st.cleaned.is_empty(), "{:?}", st.cleaned);

    // The next command finds the data again, on the same port.
    let g = ensure_default_server(&DefaultOptions {
        fast: true,
        ..o.clone()
    })
    .expect("ensure again");
    assert_eq!(
        psql(g.conninfo(), "select x from kept").expect("select"),
        "42"
    );
    assert_eq!(g.conninfo().port, port);
    assert!(g.is_fast());
    assert_eq!(psql(g.conninfo(), "show fsync").expect("show"), "off");
    // Stopping twice (signal handler, then drop) is fine.
    g.stopper().stop();
    g.stop();
    drop(g);
    wait_no_processes(&b.dir(), 30);

    // `server start` keeps it running across commands.
    let st = server_start(&o).expect("server start");
    let r = st.running.clone().expect("running");
    assert_eq!(r.keeper, Keeper::Kept);
    assert!(format!("{st}").contains("kept running"));
    let url = server_url(&o).expect("url");
    assert_eq!(
        url,
        format!(
            "postgresql://postgres@127.0.0.1:{}/postgres?passfile={}/passfile",
            r.conn.port,
            b.dir().display()
        )
    );
    let g = ensure_default_server(&o).expect("reuse");
    assert!(!g.started_here());
    assert_eq!(g.pid(), r.pid);
    drop(g);
    assert!(alive(r.pid), "a kept-running server survives a command");
    assert_eq!(
        server_status(&o).expect("status").running.map(|x| x.pid),
        Some(r.pid)
    );
    // starting again is a no-op
    assert_eq!(
        server_start(&o).expect("again").running.map(|x| x.pid),
        Some(r.pid)
    );

    assert!(server_stop(&o).expect("stop"));
    wait_no_processes(&b.dir(), 30);
    assert!(!server_stop(&o).expect("stop again"));
    assert!(matches!(server_url(&o), Err(Error::State(_))));

    server_reset(&o).expect("reset");
    let st = server_status(&o).expect("status");
    assert!(!st.initialized, "{st}");
    let g = ensure_default_server(&o).expect("after reset");
    assert!(
        psql(g.conninfo(), "select * from kept").is_err(),
        "reset must drop old data"
    );
    drop(g);
    wait_no_processes(&b.dir(), 30);
}

#[test]
fn command_adopted_by_server_start_keeps_running() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let g = ensure_default_server(&o).expect("ensure");
    let pid = g.pid();
    let st = server_start(&o).expect("adopt");
    assert_eq!(st.running.map(|r| r.keeper), Some(Keeper::Kept));
    drop(g);
    assert!(alive(pid), "adopted server must survive its first command");
    // A kept server with no command using it: the next command is alone on it.
    let next = ensure_default_server(&o).expect("next command");
    assert!(!next.shared_with_another());
    drop(next);
    assert!(server_stop(&o).expect("stop"));
    wait_no_processes(&b.dir(), 30);
}

#[test]
fn last_command_using_it_stops_it() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let first = ensure_default_server(&o).expect("first command");
    let before_join = std::time::SystemTime::now();
    let second = ensure_default_server(&o).expect("second command");
    assert!(first.started_here() && !second.started_here());
    // The second joined while the first used it: it is told so (warning and run note), and
    // the first learns it at its end.
    assert!(!first.shared_with_another() && second.shared_with_another());
    assert!(first.joined_since(before_join) && first.joined_by_another());
    assert!(!second.joined_by_another(), "the joiner was warned at once");
    assert!(!first.joined_since(std::time::SystemTime::now() + Duration::from_secs(5)));
    let pid = first.pid();
    drop(first);
    assert!(alive(pid), "still used by the second command");
    let st = server_status(&o).expect("status");
    assert_eq!(st.running.map(|r| r.keeper), Some(Keeper::LastUser));
    assert_eq!(
        psql(second.conninfo(), "select 1").expect("still answers"),
        "1"
    );
    // A third joins while the second still uses it: also told.
    let third = ensure_default_server(&o).expect("third command");
    assert!(third.shared_with_another(), "the second still uses it");
    drop(second);
    drop(third);
    wait_no_processes(&b.dir(), 30);
    assert!(server_status(&o).expect("status").running.is_none());
}

const CHILD_DIR: &str = "HB_LIFECYCLE_CHILD_DIR";

/// Not a test: a "hotbench command" holding the default server until it is killed, the body
/// of the child process `start_child_command` runs (with `--ignored`).
#[test]
#[ignore = "entry point of a child process that the orphan and guardian tests start and kill"]
fn child_command() {
    let _serial = serial();
    let dir = std::env::var_os(CHILD_DIR).expect(
        "child_command runs as start_child_command's child process, with HB_LIFECYCLE_CHILD_DIR",
    );
    let o = DefaultOptions {
        dir: Some(PathBuf::from(dir)),
        quiet: true,
        ..DefaultOptions::default()
    };
    let g = ensure_default_server(&o).expect("child ensure");
    assert!(g.started_here());
    // Held until the parent kills this process (it reads the state file, not a timer).
    loop {
        std::thread::park();
    }
}

// The caller kills and waits for the returned child.
#[allow(clippy::zombie_processes)]
fn start_child_command(dir: &Path) -> (std::process::Child, State) {
    let child = Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--exact",
            "child_command",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn child");
    let state = dir.join("hotbench.state");
    let mut started = None;
    wait_for(
        || "child did not start the server".into(),
        60,
        || {
            started = State::load(&state).filter(|st| st.owner == child.id());
            started.is_some()
        },
    );
    (child, started.expect("state"))
}

#[test]
fn orphan_after_sigkill_of_command_and_guardian() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let (mut child, st) = start_child_command(&b.dir());
    // kill -9 of the command and its guardian (guardian first, else it sees EOF and cleans up).
    // SAFETY: plain kill of the guardian we read from the state file.
    unsafe { libc::kill(st.guardian as i32, libc::SIGKILL) };
    child.kill().expect("kill");
    child.wait().expect("wait");
    // SIGKILL is delivered asynchronously: wait until the guardian is really gone.
    wait_for(
        || "the guardian survived SIGKILL".into(),
        30,
        || !alive(st.guardian),
    );
    assert!(alive(st.pid), "postmaster survives as an orphan");

    let status = server_status(&o).expect("status");
    assert!(status.running.is_none(), "{status}");
    assert!(
        status
            .cleaned
            .iter()
            .any(|m| m.contains("orphan") && m.contains(&st.pid.to_string())),
        "{:?}",
        status.cleaned
    );
    wait_no_processes(&b.dir(), 30);
    // A new run starts normally.
    let g = ensure_default_server(&o).expect("ensure after orphan");
    assert_eq!(psql(g.conninfo(), "select 1").expect("select"), "1");
    drop(g);
    wait_no_processes(&b.dir(), 30);
}

#[test]
fn guardian_stops_server_after_sigkill_of_command() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let (mut child, st) = start_child_command(&b.dir());
    child.kill().expect("kill");
    child.wait().expect("wait");
    wait_no_processes(&b.dir(), 30);
    let status = server_status(&o).expect("status");
    assert!(status.running.is_none());
    assert!(
        status
            .cleaned
            .iter()
            .any(|m| m.contains("stale state") && m.contains(&st.owner.to_string())),
        "{:?}",
        status.cleaned
    );
    let g = ensure_default_server(&o).expect("ensure after");
    drop(g);
    wait_no_processes(&b.dir(), 30);
}

#[test]
fn stale_postmaster_pid_is_cleaned() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    drop(ensure_default_server(&o).expect("create"));
    wait_no_processes(&b.dir(), 30);
    // A postmaster.pid naming a live process that is no postmaster of ours (pid 1).
    let pid_file = b.dir().join("data/postmaster.pid");
    std::fs::write(
        &pid_file,
        format!(
            "1\n{}\n0\n5432\n/tmp\n127.0.0.1\n0 0\nready\n",
            b.dir().join("data").display()
        ),
    )
    .expect("write stale pid file");
    let st = server_status(&o).expect("status");
    assert!(
        st.cleaned.iter().any(|m| m.contains("postmaster.pid")),
        "{:?}",
        st.cleaned
    );
    assert!(!pid_file.exists());
    let g = ensure_default_server(&o).expect("starts after stale pid file");
    drop(g);
    wait_no_processes(&b.dir(), 30);
}

#[test]
fn interrupted_first_use_is_redone() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    // What a killed first initdb leaves: a half-built side directory.
    std::fs::create_dir_all(b.dir().join("data.initdb/global")).expect("mkdir");
    std::fs::write(b.dir().join("data.initdb/PG_VERSION"), "15\n").expect("write");
    assert!(!server_status(&o).expect("status").initialized);
    let g = ensure_default_server(&o).expect("ensure");
    assert_eq!(psql(g.conninfo(), "select 1").expect("select"), "1");
    drop(g);
    assert!(!b.dir().join("data.initdb").exists());
    wait_no_processes(&b.dir(), 30);
}

#[test]
fn port_in_use_is_one_clear_error() {
    let _serial = serial();
    let b = Base::new();
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let o = DefaultOptions {
        port: Some(port),
        ..b.opts()
    };
    match ensure_default_server(&o) {
        Err(e @ Error::PortInUse { .. }) => {
            assert!(e.to_string().contains(&port.to_string()), "{e}")
        }
        other => panic!("expected port in use, got {other:?}"),
    }
    wait_no_processes(&b.dir(), 30);
    assert!(State::load(&b.dir().join("hotbench.state")).is_none());
}

#[test]
fn discovery_from_pg_bin_and_missing_binaries() {
    let _serial = serial();
    let (found, _) = binaries::installed();
    let first = found
        .first()
        .expect("an installed PostgreSQL for tests")
        .clone();
    let b = binaries::find(&BinOptions {
        pg_bin: Some(first.bin_dir.clone()),
        ..BinOptions::default()
    })
    .expect("find");
    assert_eq!(b.major, first.major);
    assert!(b.share_dir.is_some(), "{b:?}");
    let e = binaries::find(&BinOptions {
        pg_bin: Some("/nonexistent/bin".into()),
        ..BinOptions::default()
    })
    .unwrap_err();
    assert!(matches!(e, Error::MissingProgram { .. }), "{e}");
    let e = binaries::find(&BinOptions {
        pg_version: Some(3),
        no_download: true,
        ..BinOptions::default()
    })
    .unwrap_err();
    assert!(matches!(e, Error::MissingBinaries { .. }), "{e}");
    assert!(e.to_string().contains("--pg-version"), "{e}");
    // A server from the given bin dir.
    let bb = Base::new();
    let o = DefaultOptions {
        bins: BinOptions {
            pg_bin: Some(first.bin_dir.clone()),
            ..BinOptions::default()
        },
        ..bb.opts()
    };
    let g = ensure_default_server(&o).expect("start with --pg-bin");
    assert_eq!(g.version(), first.version);
    let v = psql(g.conninfo(), "show server_version").expect("version");
    assert!(v.starts_with(&first.version), "{v}");
    drop(g);
}

#[test]
#[ignore = "mounts a small tmpfs, which needs root with CAP_SYS_ADMIN: cargo test --test lifecycle -- --ignored disk_full"]
fn disk_full_is_one_clear_error() {
    let _serial = serial();
    let b = Base::new();
    let mnt = b.tmp.path().join("small");
    std::fs::create_dir(&mnt).expect("mkdir");
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs"])
        .arg(&mnt)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)"
    );
    let o = DefaultOptions {
        dir: Some(mnt.join("pg")),
        quiet: true,
        ..DefaultOptions::default()
    };
    let r = ensure_default_server(&o);
    let _ = Command::new("umount").arg(&mnt).status();
    match r {
        Err(e @ Error::DiskFull { .. }) => assert!(e.to_string().contains("no space left"), "{e}"),
        other => panic!("expected disk full, got {other:?}"),
    }
}

/// Issue 13, item 11: `server stop` and `server reset` while a command uses the server would
/// pull it (or its data directory) out from under the run: refused, unless forced.
#[test]
fn stop_and_reset_refuse_while_a_command_uses_the_server() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let g = ensure_default_server(&o).expect("a command uses the server");
    psql(g.conninfo(), "create table kept (x int)").expect("create");
    for (what, r) in [
        ("stop", server_stop(&o).map(|_| ())),
        ("reset", server_reset(&o)),
    ] {
        match r {
            Err(Error::State(m)) => assert!(m.contains("in use"), "{what}: {m}"),
            other => panic!("{what} while in use: {other:?}"),
        }
        assert!(
            alive(g.pid()),
            "{what} stopped the server under the command"
        );
        assert!(psql(g.conninfo(), "select * from kept").is_ok(), "{what}");
    }
    // A kept server (`server start`) used by a command: still refused.
    server_start(&o).expect("adopt");
    assert!(matches!(server_stop(&o), Err(Error::State(_))));
    // --force stops it anyway.
    let forced = DefaultOptions {
        force: true,
        ..b.opts()
    };
    assert!(server_stop(&forced).expect("forced stop"));
    drop(g);
    wait_no_processes(&b.dir(), 30);
    // Nobody uses it any more: a plain reset works.
    server_reset(&o).expect("reset when unused");
}

/// `--dir` at a cluster hotbench did not create (a data directory with PG_VERSION, its
/// postmaster.pid, and a user's file beside it): status adopts and cleans nothing, start
/// and reset refuse, every file stays (issue 36 row 6).
#[test]
fn a_cluster_hotbench_did_not_create_is_never_adopted_started_or_deleted() {
    let _serial = serial();
    let b = Base::new();
    let o = b.opts();
    let data = b.dir().join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let theirs = [
        (data.join("PG_VERSION"), "15\n".to_string()),
        (
            data.join("postmaster.pid"),
            format!(
                "1\n{}\n0\n5432\n/tmp\n127.0.0.1\n0 0\nready\n",
                data.display()
            ),
        ),
        (data.join("their-table"), "rows\n".to_string()),
        (b.dir().join("postgres.log"), "their notes\n".to_string()),
        (b.dir().join("last-port"), "5432\n".to_string()),
    ];
    for (p, text) in &theirs {
        std::fs::write(p, text).expect("write");
    }
    let refused = |what: &str, r: Result<(), Error>| match r {
        Err(e) => assert!(
            e.to_string()
                .contains("not a PostgreSQL cluster hotbench created"),
            "{what}: {e}"
        ),
        Ok(()) => panic!("{what} accepted a cluster hotbench did not create"),
    };
    refused("status", server_status(&o).map(|_| ()));
    refused("stop", server_stop(&o).map(|_| ()));
    refused("reset", server_reset(&o));
    refused("start", server_start(&o).map(|_| ()));
    refused("a command's server", ensure_default_server(&o).map(drop));
    for (p, text) in &theirs {
        assert_eq!(
            std::fs::read_to_string(p).ok().as_deref(),
            Some(text.as_str()),
            "{} was changed",
            p.display()
        );
    }
    assert!(!b.dir().join("hotbench.state").exists());
}
