//! What the pgbench oracle tests (`oracle.rs` for expressions, `sql_oracle.rs` for SQL
//! splitting) share: the testdata files, the stored expectations (`=== case` blocks), the
//! mismatch report, and checking or rewriting the expectations against real pgbench.

#![allow(dead_code)]

use std::path::PathBuf;

pub fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// The stored expectations: one list of lines per `=== ` block of `file`.
pub fn load_expected(file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(testdata(file)).unwrap_or_default();
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("=== ") {
            out.push(Vec::new());
        } else if let Some(last) = out.last_mut() {
            last.push(line.to_string());
        }
    }
    out
}

/// Fails the test listing every case whose output differs from pgbench's.
pub fn assert_no_mismatches(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `HOTBENCH_PGBENCH_ORACLE` (`1` checks, `write` rewrites); the ignored real-pgbench tests
/// fail without it rather than pass having compared nothing.
pub fn oracle_mode() -> String {
    let mode = std::env::var("HOTBENCH_PGBENCH_ORACLE").unwrap_or_default();
    if mode.is_empty() {
        panic!("set HOTBENCH_PGBENCH_ORACLE=1 (and PGHOST/PGPORT) to compare with real pgbench");
    }
    mode
}

/// Checks `file` against what real pgbench printed (`rendered`), or rewrites it in `write`
/// mode.
pub fn check_or_write(mode: &str, file: &str, rendered: String) {
    if mode == "write" {
        std::fs::write(testdata(file), rendered).expect("write expectations");
        return;
    }
    let stored = std::fs::read_to_string(testdata(file)).unwrap_or_default();
    assert_eq!(
        stored, rendered,
        "pgbench output differs from testdata/{file}"
    );
}
