//! Who may reach the servers hotbench creates (issue 36, row 4): they run as a dedicated
//! account (never the shared `postgres` one), trust only their 0700 socket directory, and
//! want over TCP a generated password kept in a 0600 file of the user who runs hotbench,
//! which hotbench's own clients are given and people reach through `passfile=` in the URL
//! it shows (never the password itself).

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hotbench_pgserver::account::{self, RunAs};
use hotbench_pgserver::default_server::{server_start, server_stop, server_url, DefaultOptions};
use hotbench_pgserver::process::processes_in;
use hotbench_pgserver::{secret, testing, ConnInfo};

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// psql over TCP to `conn` with `password` (none: no password at all, no pgpass file either).
fn psql_tcp(conn: &ConnInfo, password: Option<&str>, as_uid: Option<(u32, u32)>) -> Output {
    let mut c = Command::new("psql");
    testing::without_libpq_env(&mut c);
    c.args(["-X", "-A", "-t", "-w", "-c", "select 1"])
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", conn.port.to_string())
        .env("PGUSER", &conn.user)
        .env("PGDATABASE", &conn.dbname)
        .env("PGSSLMODE", "disable")
        .env("PGPASSFILE", "/nonexistent")
        .current_dir("/");
    if let Some(pw) = password {
        c.env("PGPASSWORD", pw);
    }
    if let Some((uid, gid)) = as_uid {
        c.uid(uid).gid(gid).env("HOME", "/nonexistent");
    }
    c.output().expect("run psql")
}

fn refused(o: &Output) -> bool {
    !o.status.success()
}

/// The uid PostgreSQL process `pid` runs as.
fn uid_of(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .expect("Uid line")
}

fn check_private_file(path: &Path) {
    let md = std::fs::symlink_metadata(path).expect("password file");
    assert!(md.file_type().is_file());
    assert_eq!(md.mode() & 0o777, 0o600, "{}", path.display());
    assert_eq!(md.uid(), euid(), "owned by the user who runs hotbench");
}

fn check_runs_as_its_own_account(pid: u32) {
    let user = RunAs::get().expect("run-as account");
    assert_eq!(uid_of(pid), user.uid);
    if euid() == 0 {
        assert_eq!(user.name, account::CREATED_USER);
        if let Some((postgres, _)) = account::lookup_name("postgres") {
            assert_ne!(uid_of(pid), postgres, "never the shared postgres account");
        }
    }
}

/// The default server: no TCP login without the password or with a wrong one; the password
/// is in a 0600 file of ours, never in what `server status` / `server url` print; `psql` with
/// the printed URL gets in; the socket directory is 0700; it runs as its own account.
#[test]
fn the_default_server_wants_its_generated_password_over_tcp() {
    let tmp = tempfile::Builder::new()
        .prefix("hba-")
        .tempdir_in(testing::test_temp_root())
        .expect("tempdir");
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let o = DefaultOptions {
        dir: Some(tmp.path().join("pg")),
        quiet: true,
        bins: testing::test_bin_options(),
        ..DefaultOptions::default()
    };
    let st = server_start(&o).expect("server start");
    let r = st.running.clone().expect("running");
    let passfile: PathBuf = tmp.path().join("pg").join(secret::PASSFILE);
    check_private_file(&passfile);
    let pw = secret::read(&passfile).expect("a password in the file");
    assert_eq!(r.conn.password.as_deref(), Some(pw.as_str()));
    let url = server_url(&o).expect("url");
    for shown in [format!("{st}"), url.clone()] {
        assert!(!shown.contains(&pw), "the password is printed: {shown}");
    }
    assert!(url.contains("passfile="), "{url}");

    assert!(refused(&psql_tcp(&r.conn, None, None)), "no password");
    assert!(
        refused(&psql_tcp(&r.conn, Some("wrong"), None)),
        "wrong one"
    );
    let ok = psql_tcp(&r.conn, Some(&pw), None);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // The documented way in: psql with the URL `server url` prints.
    let mut c = Command::new("psql");
    testing::without_libpq_env(&mut c);
    let by_url = c
        .args(["-X", "-A", "-t", "-w", "-c", "select 1", &url])
        .output()
        .expect("psql");
    assert!(
        by_url.status.success(),
        "{}",
        String::from_utf8_lossy(&by_url.stderr)
    );

    let sock = std::fs::metadata(&r.conn.socket_dir).expect("socket dir");
    assert_eq!(sock.mode() & 0o777, 0o700);
    assert_eq!(sock.uid(), RunAs::get().expect("account").uid);
    check_runs_as_its_own_account(r.pid);
    assert!(server_stop(&o).expect("stop"));
    let t0 = std::time::Instant::now();
    while !processes_in(tmp.path()).is_empty() {
        assert!(t0.elapsed().as_secs() < 30, "server left running");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A default cluster an older hotbench made (TCP trusted, no password file; as root, owned
/// by the shared `postgres` account) is given to our own account and a password at its next
/// start.
#[test]
fn a_cluster_an_older_hotbench_made_gets_our_account_and_a_password() {
    let tmp = tempfile::Builder::new()
        .prefix("hbo-")
        .tempdir_in(testing::test_temp_root())
        .expect("tempdir");
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let base = tmp.path().join("pg");
    let o = DefaultOptions {
        dir: Some(base.clone()),
        quiet: true,
        bins: testing::test_bin_options(),
        ..DefaultOptions::default()
    };
    server_start(&o).expect("first start");
    assert!(server_stop(&o).expect("stop"));
    // A password that fails to be set is in neither the error nor the log.
    let bins = hotbench_pgserver::binaries::find(&testing::test_bin_options()).expect("bins");
    let log = base.join("postgres.log");
    let no_role = hotbench_pgserver::ClusterOptions {
        user: "no_such_role".into(),
        ..Default::default()
    };
    let e = hotbench_pgserver::cluster::set_password(
        &bins,
        RunAs::get().expect("account"),
        &base.join("data"),
        &no_role,
        "Zq9-marker-pw",
        &log,
    )
    .expect_err("no such role");
    assert!(!e.to_string().contains("Zq9"), "{e}");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("no_such_role"), "{text}");
    assert!(!text.contains("Zq9"), "{text}");
    assert_eq!(std::fs::metadata(&log).expect("log").mode() & 0o777, 0o600);
    // What an older hotbench left: trust everywhere, no password file, `postgres`'s files.
    let data = base.join("data");
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all trust\nhost all all 127.0.0.1/32 trust\n",
    )
    .expect("hba");
    std::fs::remove_file(base.join(secret::PASSFILE)).expect("no password file");
    let postgres = account::lookup_name("postgres").filter(|_| euid() == 0);
    if let Some((uid, gid)) = postgres {
        let chown = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{gid}"))
            .arg(&data)
            .status()
            .expect("chown");
        assert!(chown.success());
    }
    let st = server_start(&o).expect("start of the old cluster");
    let r = st.running.expect("running");
    let pw = secret::read(&base.join(secret::PASSFILE)).expect("a password now");
    assert!(refused(&psql_tcp(&r.conn, None, None)), "TCP still trusted");
    assert!(psql_tcp(&r.conn, Some(&pw), None).status.success());
    check_runs_as_its_own_account(r.pid);
    let owner = std::fs::metadata(&data).expect("data").uid();
    assert_eq!(owner, RunAs::get().expect("account").uid);
    assert!(server_stop(&o).expect("stop"));
    let t0 = std::time::Instant::now();
    while !processes_in(tmp.path()).is_empty() {
        assert!(t0.elapsed().as_secs() < 30, "server left running");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The test harness's servers are created the same way, and its connection info carries the
/// password, so every test's clients get in.
#[test]
fn test_servers_want_the_password_too_and_hand_it_to_their_clients() {
    let pg = testing::shared();
    let c = pg.conninfo();
    let pw = c.password.clone().expect("a generated password");
    assert!(refused(&psql_tcp(c, None, None)));
    assert!(refused(&psql_tcp(c, Some("wrong"), None)));
    assert!(psql_tcp(c, Some(&pw), None).status.success());
    check_private_file(c.passfile.as_deref().expect("password file"));
    assert_eq!(
        secret::read(c.passfile.as_deref().expect("file")),
        Some(pw.clone())
    );
    check_runs_as_its_own_account(pg.pid());
    assert_eq!(pg.psql("select 1").expect("socket").trim(), "1");
}

/// Another local user gets nothing: TCP without the password is refused, and the socket
/// directory cannot even be entered.
#[test]
#[ignore = "needs root: runs psql as another local user, `nobody` (CI runs it with --ignored)"]
fn another_local_user_cannot_connect() {
    assert_eq!(euid(), 0, "needs root");
    let (uid, gid) = account::lookup_name("nobody").expect("a `nobody` account");
    let pg = testing::shared();
    let c = pg.conninfo();
    let pw = c.password.clone().expect("password");
    let o = psql_tcp(c, None, Some((uid, gid)));
    assert!(refused(&o), "{}", String::from_utf8_lossy(&o.stdout));
    let o = psql_tcp(c, Some("wrong"), Some((uid, gid)));
    assert!(refused(&o));
    // With the password it gets in: what refused it above was authentication.
    let o = psql_tcp(c, Some(&pw), Some((uid, gid)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The trusted socket: its directory is closed to it.
    let mut s = Command::new("psql");
    testing::without_libpq_env(&mut s);
    let o = s
        .args(["-X", "-A", "-t", "-w", "-c", "select 1"])
        .env("PGHOST", &c.socket_dir)
        .env("PGPORT", c.port.to_string())
        .env("PGUSER", &c.user)
        .env("PGDATABASE", &c.dbname)
        .env("HOME", "/nonexistent")
        .current_dir("/")
        .uid(uid)
        .gid(gid)
        .output()
        .expect("psql");
    assert!(refused(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Permission denied"), "{err}");
    // Nor can it read the password file.
    let passfile = c.passfile.clone().expect("password file");
    let o = Command::new("cat")
        .arg(&passfile)
        .uid(uid)
        .gid(gid)
        .output()
        .expect("cat");
    assert!(refused(&o));
}
