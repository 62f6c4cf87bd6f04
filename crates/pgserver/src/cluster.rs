//! Creating a cluster: check disk space, run `initdb` as the run-as user, hook our
//! `hotbench.conf` into `postgresql.conf`, write `pg_hba.conf`, set the superuser password in
//! single-user mode, and generate a self-signed TLS certificate when asked.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::account::RunAs;
use crate::binaries::PgBinaries;
use crate::config::{self, ClusterOptions, TlsMode};
use crate::error::{Error, Result};

pub use crate::initdb::{initdb, initdb_with_extensions, single_user};

/// Bytes we want free before running initdb (a fresh cluster is ~40 MB plus a WAL segment).
pub const MIN_FREE_BYTES: u64 = 96 << 20;

/// Name of our settings file inside the data directory.
pub const SETTINGS_FILE: &str = "hotbench.conf";

/// Free bytes on the file system holding `path` (or its nearest existing ancestor).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let mut p = Some(path);
    while let Some(cur) = p {
        if cur.exists() {
            let c = std::ffi::CString::new(cur.as_os_str().as_encoded_bytes()).ok()?;
            // SAFETY: statvfs is plain data; c is a valid NUL-terminated path.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            // SAFETY: pointers valid for the call.
            if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
                return None;
            }
            return Some(st.f_bavail as u64 * st.f_frsize as u64);
        }
        p = cur.parent();
    }
    None
}

/// Refuse early with [`Error::DiskFull`] when `dir` has less than [`MIN_FREE_BYTES`] free.
pub fn check_space(dir: &Path) -> Result<()> {
    match free_bytes(dir) {
        Some(free) if free < MIN_FREE_BYTES => Err(Error::DiskFull {
            path: dir.to_path_buf(),
            detail: format!(
                "{} MiB free, a new cluster needs about {} MiB",
                free >> 20,
                MIN_FREE_BYTES >> 20
            ),
        }),
        _ => Ok(()),
    }
}

/// Run initdb into `data` (which must not exist or be empty) and configure it per `opts`.
pub fn init(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    opts: &ClusterOptions,
    log: &Path,
) -> Result<()> {
    let parent = data.parent().unwrap_or(data);
    check_space(parent)?;
    let copied = opts.from_template
        && opts.user == config::DEFAULT_USER
        && crate::template::copy_into(bins, user, data, log).is_ok();
    if !copied {
        initdb_with_extensions(bins, user, data, &opts.user, opts.fast, log)?;
    }
    let conf = data.join("postgresql.conf");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&conf)
        .map_err(|e| Error::io("cannot open postgresql.conf", &conf, e))?;
    writeln!(
        f,
        "\n# hotbench settings (rewritten at each start)\ninclude_if_exists = '{SETTINGS_FILE}'"
    )
    .map_err(|e| Error::io("cannot write postgresql.conf", &conf, e))?;
    write_hba(user, data, opts)?;
    if let Some(pw) = opts.effective_password() {
        set_password(bins, user, data, opts, &pw, log)?;
    }
    if opts.tls != TlsMode::Off {
        write_tls(user, data)?;
    }
    Ok(())
}

/// Write `hotbench.conf` for this start (port and socket directory may change between starts).
pub fn write_settings(user: &RunAs, data: &Path, text: &str) -> Result<()> {
    write_file(user, &data.join(SETTINGS_FILE), text, 0o600)
}

/// Write `pg_hba.conf` for `opts` (at creation and at each start).
pub fn write_hba(user: &RunAs, data: &Path, opts: &ClusterOptions) -> Result<()> {
    write_file(
        user,
        &data.join("pg_hba.conf"),
        &config::render_hba(opts),
        0o600,
    )
}

/// Set the superuser's password in single-user mode (server stopped), stored as `opts`'
/// auth method wants it.
pub fn set_password(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    opts: &ClusterOptions,
    password: &str,
    log: &Path,
) -> Result<()> {
    // Should it fail, the statement (the password in it) must not reach the log, and from
    // there an error message: the log says only what went wrong.
    let sql = format!(
        "SET log_min_error_statement = panic;\nSET password_encryption = {};\nALTER ROLE {} PASSWORD {};\n",
        config::sql_literal(opts.auth_encryption()),
        quote_ident(&opts.user),
        config::sql_literal(password)
    );
    single_user(bins, user, data, "postgres", &sql, log)
}

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Write a file owned by the run-as user with `mode`.
pub fn write_file(user: &RunAs, path: &Path, text: &str, mode: u32) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io("cannot write", path, e))?;
    crate::paths::set_mode(path, mode)?;
    user.chown(path)
}

/// Generate `server.crt`/`server.key` (self-signed, for localhost and 127.0.0.1) in `data`.
pub fn write_tls(user: &RunAs, data: &Path) -> Result<PathBuf> {
    let names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    let ck = rcgen::generate_simple_self_signed(names).map_err(|e| {
        Error::Invalid(format!(
            "cannot generate a self-signed TLS certificate: {e}"
        ))
    })?;
    let crt = data.join("server.crt");
    write_file(user, &crt, &ck.cert.pem(), 0o644)?;
    write_file(
        user,
        &data.join("server.key"),
        &ck.key_pair.serialize_pem(),
        0o600,
    )?;
    Ok(crt)
}
