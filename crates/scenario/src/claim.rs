//! One ladder per scenario and database at a time: a ladder claims its schema with a
//! session advisory lock on its admin connection, so a second `scenario run` of the same
//! scenario stops at once instead of dropping the first one's tables mid-run.

use hotbench_wire::Connection;

use crate::error::{Result, ScenarioError};

/// Releases the claim synchronously: closing the connection alone releases it only when the
/// server gets round to the Terminate, too late for a ladder started right after (`sweep`).
pub fn release_schema(admin: &mut Connection, schema: &str) {
    let _ = admin.simple_query(&format!(
        "select pg_advisory_unlock(hashtext('hotbench:{schema}'))"
    ));
}

/// One ladder per scenario and database at a time: two would drop each other's schema
/// mid-run. A session advisory lock on the admin connection (released when it closes);
/// engines without advisory locks go unguarded.
pub fn claim_schema(admin: &mut Connection, schema: &str, name: &str) -> Result<()> {
    let sql = format!("select pg_try_advisory_lock(hashtext('hotbench:{schema}'))");
    // A ladder that is just ending may still hold it for a moment: ask a few times.
    let mut attempt = 0;
    let result = loop {
        let r = admin.simple_query(&sql);
        let taken = matches!(&r, Ok(q) if q.first()
            .and_then(|q| q.rows.first())
            .and_then(|row| row.first().cloned().flatten())
            .as_deref() == Some("f"));
        if !taken || attempt >= 20 {
            break r;
        }
        attempt += 1;
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    match result {
        Ok(r) => {
            let got = r
                .first()
                .and_then(|q| q.rows.first())
                .and_then(|row| row.first().cloned().flatten());
            if got.as_deref() == Some("f") {
                return Err(ScenarioError::Input(format!(
                    "scenario \"{name}\" is already running on this database (another hotbench \
                     is using schema {schema}); wait for it to finish or use another database"
                )));
            }
            Ok(())
        }
        Err(_) => {
            let _ = admin.simple_query("rollback");
            Ok(())
        }
    }
}
