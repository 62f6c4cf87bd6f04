//! pgbench's `GetTableInfo`, run before a benchmark with builtin scripts: the scale is
//! `count(*)` of `pgbench_branches`, and the partitioning of the first `pgbench_accounts`
//! in `search_path` comes from the catalog (method and number of partitions, both shown in
//! the report). Missing tables give pgbench's error and its "Perhaps you need to do
//! initialization" hint (naming `hotbench run -i`).

use hotbench_wire::{Connection, SqlState};

use crate::error::InitError;
use crate::libpq;
use crate::options::PartitionMethod;

/// The scale query.
pub const COUNT_BRANCHES: &str = "select count(*) from pgbench_branches";

/// pgbench 15's partition query (one row for the first `pgbench_accounts` in
/// `search_path`; `partstrat` NULL when not partitioned).
pub const PARTITION_INFO: &str = "select o.n, p.partstrat, pg_catalog.count(i.inhparent) \
from pg_catalog.pg_class as c \
join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) \
cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) \
left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) \
left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) \
where c.relname = 'pgbench_accounts' and o.n is not null \
group by 1, 2 \
order by 1 asc \
limit 1";

/// What the report needs to know about the initialized tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// `count(*)` of `pgbench_branches`.
    pub scale: i32,
    /// `None` when `pgbench_accounts` is not partitioned.
    pub partition_method: Option<PartitionMethod>,
    /// Partitions attached to `pgbench_accounts` (0 when not partitioned).
    pub partitions: i32,
    /// pgbench's warning, to print as `warning: …`: with `-s` given, pgbench 15 always says
    /// `scale option ignored, using count from pgbench_branches table (N)`.
    pub warning: Option<String>,
}

fn current_database(conn: &mut Connection) -> Option<String> {
    let r = conn
        .simple_query("select pg_catalog.current_database()")
        .ok()?;
    r.first()?.get(0, 0).map(str::to_string)
}

/// pgbench's `GetTableInfo`. `scale_given`: the user passed `-s`.
///
/// Deviation: pgbench 15 accepts a count of 0 (the run then aborts with "empty range given
/// to random"); here 0 is `invalid count(*) from pgbench_branches: "0"` up front.
pub fn get_table_info(conn: &mut Connection, scale_given: bool) -> Result<TableInfo, InitError> {
    let count = match conn.simple_query(COUNT_BRANCHES) {
        Ok(r) => r
            .first()
            .and_then(|r| r.get(0, 0))
            .unwrap_or("")
            .to_string(),
        Err(e) => {
            let message = libpq::error_message(&e, COUNT_BRANCHES);
            let database = if e.sqlstate() == Some(SqlState::UNDEFINED_TABLE) {
                current_database(conn)
            } else {
                None
            };
            return Err(InitError::CountBranches {
                message,
                database,
                source: e,
            });
        }
    };
    let scale = match count.trim().parse::<i32>() {
        Ok(n) if n > 0 => n,
        _ => return Err(InitError::InvalidCount(count)),
    };
    let warning = scale_given.then(|| {
        format!("scale option ignored, using count from pgbench_branches table ({scale})")
    });

    // Any failure here: assume no partitioning (pgbench does, for old servers).
    let (partition_method, partitions) = match conn.simple_query(PARTITION_INFO) {
        Err(_) => (None, 0),
        Ok(results) => {
            let Some(r) = results.first().filter(|r| !r.rows.is_empty()) else {
                return Err(InitError::NoAccountsTable {
                    database: current_database(conn).unwrap_or_default(),
                });
            };
            let method = match r.get(0, 1) {
                None => None,
                Some("r") => Some(PartitionMethod::Range),
                Some("h") => Some(PartitionMethod::Hash),
                Some(other) => return Err(InitError::UnexpectedPartitionMethod(other.into())),
            };
            let parts = r.get(0, 2).and_then(|v| v.parse().ok()).unwrap_or(0);
            (method, parts)
        }
    };
    Ok(TableInfo {
        scale,
        partition_method,
        partitions,
        warning,
    })
}
