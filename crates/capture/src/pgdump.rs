//! `schema.sql` from `pg_dump --schema-only` (placeholder: written in a later commit).

use std::path::Path;
use std::time::Duration;

use hotbench_wire::ConnectParams;

use crate::model::Model;

pub fn dump(
    _model: &Model,
    _params: &ConnectParams,
    _bin_dir: Option<&Path>,
    _timeout: Duration,
) -> Result<(String, String), String> {
    Err("pg_dump is not wired up yet".into())
}
