//! pgbench's `executeStatement` over `hotbench-wire`'s blocking API: run one statement,
//! print the server's NOTICEs the way libpq's default notice processor does
//! (`NOTICE:  table "pgbench_accounts" does not exist, skipping`), and turn a failure into
//! pgbench's `query failed: …` error.

use std::io::Write;

use hotbench_wire::{Connection, TxStatus};

use crate::error::InitError;
use crate::libpq;

/// Prints the notices the connection kept (in arrival order), each on its own line.
pub fn print_notices(
    conn: &mut Connection,
    query: &str,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for n in conn.take_notices() {
        writeln!(out, "{}", libpq::db_error_message(&n, Some(query)))?;
    }
    Ok(())
}

/// Runs `sql` (one statement, or several separated by `;`), printing its notices.
pub fn exec(conn: &mut Connection, sql: &str, out: &mut dyn Write) -> Result<(), InitError> {
    let r = conn.simple_query(sql);
    print_notices(conn, sql, out)?;
    match r {
        Ok(_) => Ok(()),
        Err(e) => Err(InitError::Query {
            query: sql.to_string(),
            message: libpq::error_message(&e, sql),
            source: e,
        }),
    }
}

/// After a failure inside `begin … commit`: leave the connection usable (best effort; the
/// original error is what matters).
pub fn rollback_if_needed(conn: &mut Connection) {
    if conn.tx_status() != TxStatus::Idle {
        let _ = conn.simple_query("rollback");
        let _ = conn.take_notices();
    }
}
