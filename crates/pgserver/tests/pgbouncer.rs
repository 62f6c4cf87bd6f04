//! The throwaway PgBouncer with a real program in front of the shared test server: it
//! pools, carries session settings on a database alias (the `options` start-up parameter it
//! refuses), reloads, and leaves neither process nor directory behind.

use std::process::Command;

use hotbench_pgserver::pgbouncer::PoolMode;
use hotbench_pgserver::process::{alive, processes_in};
use hotbench_pgserver::testing;

/// psql through the pooler on 127.0.0.1 (TCP: it has no socket).
fn psql(port: u16, db: &str, sql: &str) -> Result<String, String> {
    let pg = testing::shared();
    let out = Command::new(pg.binaries().program("psql"))
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGUSER", pg.user())
        .env("PGDATABASE", db)
        .env_remove("PGPASSWORD")
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
