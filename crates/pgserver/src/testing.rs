//! The test harness every crate uses: [`shared`] gives one fast throwaway server per test
//! process (started on first use, shared by all tests in it), [`private`] starts a dedicated
//! one with its own auth method, TLS or settings. Cleanup needs nothing from the test: the
//! guardian (see [`crate::guardian`]) stops the server and removes its directory when the test
//! process exits, panics or is killed.
//!
//! Environment: `HOTBENCH_TEST_PG_BIN=DIR` picks binaries, `HOTBENCH_TEST_PG_VERSION=N` a major
//! (downloaded if needed; without it tests never download), `HOTBENCH_TEST_TMPDIR=DIR` where
//! clusters go (default `/dev/shm` when roomy, see [`test_temp_root`]).
//!
//! Test servers are created as every cluster hotbench makes ([`crate::config::AuthMethod`]'s
//! default): the unix socket (0700 directory) is trusted, TCP wants the generated password,
//! which every [`crate::ConnInfo`] the harness hands out carries (`url()`, `tcp_conninfo()`,
//! `env()`'s `PGPASSWORD`); a connection string built by hand for TCP needs it too.
//!
//! ```no_run
//! let pg = hotbench_pgserver::testing::shared();
//! let url = pg.url(); // postgresql://postgres:PASSWORD@127.0.0.1:PORT/postgres
//! let db = hotbench_pgserver::testing::fresh_database("my_test"); // my_test_0, my_test_1, …
//! println!("{} / {}", db.socket_conninfo(), db.url());
//! ```

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::account::RunAs;

use crate::binaries::BinOptions;
use crate::config::ClusterOptions;
use crate::error::Result;
use crate::server::{Server, ServerOptions};

/// Cluster options for tests: durability off (`fast`), small shared_buffers, 1,200
/// connections, max_wal_size 512MB, copied from a cached template cluster. Start from this
/// and change what a test needs (keep `..test_cluster_options()` last).
pub fn test_cluster_options() -> ClusterOptions {
    ClusterOptions {
        fast: true,
        shared_buffers_mb: Some(128),
        from_template: true,
        // Clusters live in memory (/dev/shm): keep WAL from growing to the benchmark default.
        settings: vec![("max_wal_size".into(), "512MB".into())],
        ..ClusterOptions::default()
    }
}

/// Binary selection for tests, from `HOTBENCH_TEST_PG_BIN` / `HOTBENCH_TEST_PG_VERSION`.
pub fn test_bin_options() -> BinOptions {
    let pg_bin = std::env::var_os("HOTBENCH_TEST_PG_BIN").map(Into::into);
    let pg_version = std::env::var("HOTBENCH_TEST_PG_VERSION")
        .ok()
        .and_then(|v| v.trim().parse().ok());
    BinOptions {
        pg_bin,
        no_download: pg_version.is_none(),
        pg_version,
    }
}

/// Where test clusters live: `HOTBENCH_TEST_TMPDIR`, else `/dev/shm` when it is a tmpfs with
/// at least 2 GiB free (test clusters are throwaway and run with fsync off; memory is several
/// times faster than a loaded virtual disk), else the usual temp dir.
pub fn test_temp_root() -> PathBuf {
    if let Some(d) = std::env::var_os("HOTBENCH_TEST_TMPDIR") {
        return PathBuf::from(d);
    }
    let shm = Path::new("/dev/shm");
    let roomy = crate::cluster::free_bytes(shm)
        .map(|b| b >= 2 << 30)
        .unwrap_or(false);
    let usable = RunAs::get().map(|u| u.can_traverse(shm)).unwrap_or(false);
    if shm.is_dir() && roomy && usable && is_writable(shm) {
        shm.to_path_buf()
    } else {
        crate::paths::temp_root()
    }
}

fn is_writable(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Once per process: remove test clusters abandoned by earlier runs whose guardian died too.
fn sweep_once(root: &Path) {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        crate::server::sweep_abandoned(root);
    });
}

/// Options for a private test server with `cluster` settings.
pub fn test_server_options(cluster: ClusterOptions) -> ServerOptions {
    let root = test_temp_root();
    sweep_once(&root);
    ServerOptions {
        bins: test_bin_options(),
        cluster,
        temp_root: Some(root),
        ..ServerOptions::default()
    }
}

/// The server shared by all tests of this process, or why it could not start.
pub fn try_shared() -> std::result::Result<&'static Server, String> {
    static SHARED: OnceLock<std::result::Result<Server, String>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            crate::limits::raise_nofile_limit().ok();
            Server::start(&test_server_options(test_cluster_options())).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| format!("cannot start the shared test PostgreSQL: {e}"))
}

/// The server shared by all tests of this process. Panics (failing the test) if it cannot
/// start. Never stop it: other tests use it; it goes away with the process.
pub fn shared() -> &'static Server {
    match try_shared() {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The libpq environment variables that pick a server, a database, credentials or session
/// options: a test's child process must not inherit them from whoever runs the tests.
pub const LIBPQ_ENV: [&str; 12] = [
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGDATABASE",
    "PGUSER",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGOPTIONS",
    "PGSSLMODE",
    "PGTARGETSESSIONATTRS",
];

/// `cmd` without [`LIBPQ_ENV`], so it connects only where its arguments say (the test's
/// server, or the embedded default one when they name none).
pub fn without_libpq_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for v in LIBPQ_ENV {
        cmd.env_remove(v);
    }
    cmd
}

/// A new, empty database on the shared server, named `<prefix>_<n>` (unique in this process),
/// so tests running in parallel don't see each other's tables. Panics on failure.
pub fn fresh_database(prefix: &str) -> crate::conninfo::ConnInfo {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let clean = prefix
        .to_ascii_lowercase()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    let name = format!("{clean}_{}", N.fetch_add(1, Ordering::Relaxed));
    match shared().create_database(&name) {
        Ok(c) => c,
        Err(e) => panic!("cannot create test database {name}: {e}"),
    }
}

/// A dedicated server with `cluster` options (auth method, password, TLS, settings). Stopped
/// and removed when dropped (or when the process dies).
pub fn try_private(cluster: ClusterOptions) -> Result<Server> {
    Server::start(&test_server_options(cluster))
}

/// As [`try_private`], panicking with the reason on failure.
pub fn private(cluster: ClusterOptions) -> Server {
    match try_private(cluster) {
        Ok(s) => s,
        Err(e) => panic!("cannot start a private test PostgreSQL: {e}"),
    }
}

/// A PgBouncer (found as `--pgbouncer-bin`-less hotbench finds it) in front of the shared
/// server, `mode` pooling with `pool_size` server connections; any database of the shared
/// server is reachable through it by its name. Stopped when dropped (or when the process
/// dies). Panics when PgBouncer is not installed (`.ci/run` installs it).
pub fn pgbouncer(mode: crate::pgbouncer::PoolMode, pool_size: u32) -> crate::pgbouncer::PgBouncer {
    let pg = shared().conninfo();
    let upstream = crate::pgbouncer::Upstream {
        host: pg.socket_dir.to_string_lossy().into_owned(),
        port: pg.port,
        dbname: pg.dbname.clone(),
        user: pg.user.clone(),
        password: pg.password.clone(),
        tls: false,
    };
    let mut opts = crate::pgbouncer::PgBouncerOptions::new(upstream);
    opts.mode = mode;
    opts.pool_size = pool_size;
    opts.temp_root = Some(test_temp_root());
    match crate::pgbouncer::PgBouncer::start(&opts) {
        Ok(b) => b,
        Err(e) => panic!("cannot start a test PgBouncer: {e}"),
    }
}

/// Polls `ready` until it holds, failing the test with `what` after `timeout`: tests wait
/// for a condition, never for a fixed time (a loaded machine makes fixed sleeps flaky).
pub fn wait_until(what: &str, timeout: std::time::Duration, mut ready: impl FnMut() -> bool) {
    let t0 = std::time::Instant::now();
    while !ready() {
        assert!(
            t0.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
