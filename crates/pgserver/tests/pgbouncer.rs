//! The throwaway PgBouncer with a real program in front of the shared test server: it
//! pools, carries session settings on a database alias (the `options` start-up parameter it
//! refuses), reloads, and leaves neither process nor directory behind.

use std::process::Command;

use hotbench_pgserver::pgbouncer::PoolMode;
use hotbench_pgserver::process::{alive, processes_in};
use hotbench_pgserver::testing;

/// The password clients log in to the harness's PgBouncer with (the shared server's).
fn password() -> String {
    testing::shared()
        .conninfo()
        .password
        .clone()
        .expect("the shared server has a password")
}

/// psql through the pooler on 127.0.0.1 (TCP: it has no socket).
fn psql(port: u16, db: &str, sql: &str) -> Result<String, String> {
    let pg = testing::shared();
    let out = Command::new(pg.binaries().program("psql"))
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGUSER", pg.user())
        .env("PGDATABASE", db)
        .env("PGPASSWORD", password())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

#[test]
fn pools_carries_settings_on_an_alias_and_leaves_nothing_behind() {
    let bouncer = testing::pgbouncer(PoolMode::Transaction, 2);
    let port = bouncer.port();
    let (dir, pid) = (bouncer.dir().to_path_buf(), bouncer.pid());
    assert_eq!(psql(port, "postgres", "select 1").as_deref(), Ok("1"));
    // The `options` start-up parameter is refused, so settings need the alias.
    let refused = Command::new(testing::shared().binaries().program("psql"))
        .args(["-X", "-c", "select 1"])
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGUSER", testing::shared().user())
        .env("PGOPTIONS", "-c search_path=x")
        .env("PGPASSWORD", password())
        .output()
        .expect("psql");
    assert!(!refused.status.success());
    let alias = bouncer
        .replace_alias(&[
            ("search_path".into(), "hb_x, public".into()),
            ("synchronous_commit".into(), "off".into()),
        ])
        .expect("alias");
    psql(port, "pgbouncer", "RELOAD").expect("reload");
    assert_eq!(
        psql(port, &alias, "show search_path").as_deref(),
        Ok("hb_x, public")
    );
    assert_eq!(
        psql(port, &alias, "show synchronous_commit").as_deref(),
        Ok("off")
    );
    let pools = psql(port, "pgbouncer", "show pools").expect("admin console");
    assert!(
        pools.contains(&alias) && pools.contains("transaction"),
        "{pools}"
    );
    // A second alias replaces the first, which the reload removes.
    let next = bouncer
        .replace_alias(&[("search_path".into(), "public".into())])
        .expect("alias");
    psql(port, "pgbouncer", "RELOAD").expect("reload");
    assert_ne!(next, alias);
    let dbs = psql(port, "pgbouncer", "show databases").expect("admin console");
    assert!(
        dbs.contains(&next) && !dbs.contains(&format!("{alias}|")),
        "{dbs}"
    );
    assert!(!processes_in(&dir).is_empty(), "it runs in its directory");
    let ini = std::fs::read_to_string(bouncer.ini_file()).expect("ini");
    assert!(
        ini.contains("auth_file") && !ini.contains("password"),
        "{ini}"
    );
    bouncer.stop();
    assert!(!alive(pid), "PgBouncer stopped");
    assert!(!dir.exists(), "its directory removed");
}

/// In front of a SCRAM server: clients log in to PgBouncer with the server's password (SCRAM
/// again), PgBouncer logs in to the server with the userlist's copy, which is the only place
/// it is written; a wrong password is refused.
#[test]
fn a_password_server_is_reached_with_scram_and_the_password_is_only_in_the_userlist() {
    use hotbench_pgserver::pgbouncer::{PgBouncer, PgBouncerOptions, Upstream};
    use hotbench_pgserver::{AuthMethod, ClusterOptions};
    let pg = testing::private(ClusterOptions {
        auth: AuthMethod::ScramSha256,
        password: Some("s3cret-pw".into()),
        ..testing::test_cluster_options()
    });
    let c = pg.conninfo();
    let mut opts = PgBouncerOptions::new(Upstream {
        host: c.tcp_host.clone(),
        port: c.port,
        dbname: c.dbname.clone(),
        user: c.user.clone(),
        password: c.password.clone(),
        tls: false,
    });
    opts.temp_root = Some(testing::test_temp_root());
    let bouncer = PgBouncer::start(&opts).expect("PgBouncer");
    let login = |pw: &str| {
        Command::new(pg.binaries().program("psql"))
            .args(["-X", "-A", "-t", "-c", "show password_encryption"])
            .env("PGHOST", "127.0.0.1")
            .env("PGPORT", bouncer.port().to_string())
            .env("PGUSER", &c.user)
            .env("PGDATABASE", &c.dbname)
            .env("PGPASSWORD", pw)
            .output()
            .expect("psql")
    };
    let ok = login("s3cret-pw");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "scram-sha-256");
    assert!(
        !login("wrong").status.success(),
        "a wrong password is refused"
    );
    let ini = std::fs::read_to_string(bouncer.ini_file()).expect("ini");
    assert!(ini.contains("auth_type = scram-sha-256") && !ini.contains("s3cret"));
    let log = std::fs::read_to_string(bouncer.log_file()).expect("log");
    assert!(!log.contains("s3cret"), "{log}");
    use std::os::unix::fs::PermissionsExt;
    let users = bouncer.dir().join("userlist.txt");
    let mode = std::fs::metadata(&users)
        .expect("userlist")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "the userlist is private: {mode:o}");
}

/// Issue 36, row 5: a process that took the port first is not taken for PgBouncer (its pid
/// does not hold the listening socket), so no client ever sends it a password: the port race
/// is retried on another port.
#[test]
fn a_port_another_process_listens_on_gets_no_password_and_another_port_is_tried() {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    let pg = testing::shared();
    let c = pg.conninfo();
    let trap = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let taken = trap.local_addr().expect("addr").port();
    // It answers like a server asking for a cleartext password, and keeps what it is sent.
    let received = Arc::new(Mutex::new(Vec::<u8>::new()));
    let kept = Arc::clone(&received);
    std::thread::spawn(move || {
        for mut s in trap.incoming().flatten() {
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let mut asked = false;
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                kept.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend_from_slice(&buf[..n]);
                if !asked {
                    asked = true;
                    let _ = s.write_all(b"R\0\0\0\x08\0\0\0\x03");
                }
            }
        }
    });
    let mut opts = hotbench_pgserver::pgbouncer::PgBouncerOptions::new(
        hotbench_pgserver::pgbouncer::Upstream {
            host: c.socket_dir.to_string_lossy().into_owned(),
            port: c.port,
            dbname: c.dbname.clone(),
            user: c.user.clone(),
            password: c.password.clone(),
            tls: false,
        },
    );
    opts.temp_root = Some(testing::test_temp_root());
    opts.first_port = Some(taken);
    let bouncer = hotbench_pgserver::pgbouncer::PgBouncer::start(&opts).expect("PgBouncer");
    assert_ne!(bouncer.port(), taken, "the port race was retried elsewhere");
    // A client with the password, where hotbench sends its clients.
    assert_eq!(
        psql(bouncer.port(), "postgres", "select 1").as_deref(),
        Ok("1")
    );
    let got = received.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let pw = password();
    assert!(
        !got.windows(pw.len()).any(|w| w == pw.as_bytes()),
        "the other process was sent the password"
    );
}
