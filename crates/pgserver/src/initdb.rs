//! Running initdb and single-user statements as the cluster's owner, logged and bounded in
//! time: what a new cluster (`cluster.rs`) and a template cluster (`template.rs`) are both
//! made with.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::account::RunAs;
use crate::binaries::PgBinaries;
use crate::error::{Error, Result};
use crate::process;

/// Run initdb (trust auth, UTF8, C locale) into `data` as `user`.
pub fn initdb(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    superuser: &str,
    no_sync: bool,
    log: &Path,
) -> Result<()> {
    let mut cmd = Command::new(bins.program("initdb"));
    cmd.arg("-D").arg(data).arg("-U").arg(superuser).args([
        "--auth=trust",
        "--encoding=UTF8",
        "--locale=C",
        "--no-instructions",
    ]);
    if no_sync {
        cmd.arg("--no-sync");
    }
    run_logged(cmd, user, log, None, "initdb", data)
}

/// Run SQL in single-user mode (server stopped).
pub fn single_user(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    dbname: &str,
    sql: &str,
    log: &Path,
) -> Result<()> {
    let mut cmd = Command::new(bins.program("postgres"));
    cmd.arg("--single").arg("-D").arg(data).args([
        "-c",
        "shared_preload_libraries=",
        "-c",
        "exit_on_error=on",
        dbname,
    ]);
    let what = format!(
        "postgres --single {dbname} ({})",
        sql.lines().next().unwrap_or("").trim()
    );
    run_logged(cmd, user, log, Some(sql), &what, data)
}

/// initdb, then `CREATE EXTENSION pg_stat_statements` in `template1` and `postgres` when the
/// extension is installed (so every database, including ones made later, has the view).
pub fn initdb_with_extensions(
    bins: &PgBinaries,
    user: &RunAs,
    data: &Path,
    superuser: &str,
    no_sync: bool,
    log: &Path,
) -> Result<()> {
    initdb(bins, user, data, superuser, no_sync, log)?;
    if bins.has_pg_stat_statements() {
        for db in ["template1", "postgres"] {
            single_user(
                bins,
                user,
                data,
                db,
                "CREATE EXTENSION IF NOT EXISTS pg_stat_statements;\n",
                log,
            )?;
        }
    }
    Ok(())
}

fn run_logged(
    mut cmd: Command,
    user: &RunAs,
    log: &Path,
    stdin: Option<&str>,
    what: &str,
    data: &Path,
) -> Result<()> {
    let from = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
    let out = process::log_handle(log)?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io("cannot open log file", log, e))?;
    cmd.stdout(out).stderr(err).stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    user.apply(&mut cmd);
    process::die_with_parent(&mut cmd);
    crate::child::own_group(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::io(format!("cannot run {what}"), data, e))?;
    if let (Some(sql), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // If the child died early its log says why; the write error adds nothing.
        let _ = pipe.write_all(sql.as_bytes());
    }
    // initdb or a single-user statement: minutes on the slowest disk, never forever.
    let status = crate::child::wait_within(&mut child, std::time::Duration::from_secs(600))
        .map_err(|e| Error::io(format!("cannot wait for {what}"), data, e))?;
    let tail = process::log_tail(log, from, 15);
    if !status.success() || tail.contains("ERROR:") || tail.contains("FATAL:") {
        return Err(process::classify_failure(&tail, 0, data, what));
    }
    Ok(())
}
