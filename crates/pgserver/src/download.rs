//! Downloading PostgreSQL binaries (being written).

use std::path::PathBuf;

use crate::binaries::PgBinaries;
use crate::error::{Error, Result};

/// Download (or reuse from the cache) binaries for major `major`.
pub fn fetch(major: u32) -> Result<PgBinaries> {
    Err(Error::Download {
        version: major.to_string(),
        reason: "not implemented yet".into(),
    })
}

/// Bin directories of bundles already in the cache.
pub fn cached_bin_dirs() -> Vec<PathBuf> {
    Vec::new()
}
