//! The scenario's own blocking connections (setup, checks, background holders, monitors):
//! connecting with the scenario's schema on the search path, detecting the engine from
//! `version()`, and running SQL files statement by statement so that a failure names the
//! file, the line, the statement and the server's message.

use hotbench_wire::{Config, Connection, Connector, QueryResult};

use crate::error::{Result, ScenarioError};
use crate::sqlsplit;

/// The database engine behind the connection, from `version()`.
pub fn detect_engine(version: &str) -> &'static str {
    hotbench_wire::engine_of(version)
}

/// PostgreSQL's identifier limit (NAMEDATALEN - 1): longer names are silently truncated.
const MAX_IDENTIFIER: usize = 63;

/// The schema a scenario's objects live in, distinct for distinct scenario names: two
/// ladders must never share (and drop) one schema. A plain name (`a-z`, `0-9`, `-`) that
/// fits maps readably, `-` to `_` (`hb_daily_limit`); any other name (with `_`, capitals,
/// other characters, or too long for an identifier) gets `hbx_`, a 64-bit hash of the whole
/// name, and as much of the name as fits, so neither truncation nor the `-`/`_` mapping can
/// merge two names.
pub fn schema_name(scenario: &str) -> String {
    let plain = !scenario.is_empty()
        && scenario
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && 3 + scenario.len() <= MAX_IDENTIFIER;
    let readable = scenario
        .to_ascii_lowercase()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    if plain {
        return format!("hb_{readable}");
    }
    let prefix = format!("hbx_{:016x}_", fnv1a64(scenario.as_bytes()));
    let room = MAX_IDENTIFIER - prefix.len();
    format!("{prefix}{}", &readable[..readable.len().min(room)])
}

/// FNV-1a, 64 bits: stable across builds and platforms (the schema name must not change
/// between runs of the same scenario).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Escapes a value for the `options` start-up parameter (spaces and backslashes).
fn escape_option(v: &str) -> String {
    let mut out = String::new();
    for c in v.chars() {
        if c == ' ' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `cfg` with `-c name=value` settings appended to its `options`.
pub fn with_settings(cfg: &Config, settings: &[(String, String)]) -> Result<Config> {
    let mut out = cfg.clone();
    let mut opts = cfg.options.clone().unwrap_or_default();
    for (k, v) in settings {
        if !opts.is_empty() {
            opts.push(' ');
        }
        opts.push_str(&format!("-c {k}={}", escape_option(v)));
    }
    out.set("options", &opts)
        .map_err(|e| ScenarioError::Input(format!("invalid session setting: {e}")))?;
    Ok(out)
}

pub fn connect(cfg: &Config) -> Result<Connection> {
    let params = cfg
        .resolve()
        .map_err(|e| ScenarioError::Connect(e.to_string()))?;
    Connector::new(params)
        .connect()
        .map_err(|e| ScenarioError::Connect(e.to_string()))
}

/// Runs every statement of `sql` (already substituted); `file` names it in errors.
/// Returns each statement's results.
pub fn run_file(conn: &mut Connection, file: &str, sql: &str) -> Result<Vec<QueryResult>> {
    let mut out = Vec::new();
    let statements =
        sqlsplit::split(sql).map_err(|e| ScenarioError::manifest(file, Some(e.line), e.what))?;
    for st in statements {
        match conn.simple_query(&st.text) {
            Ok(r) => out.extend(r),
            Err(e) => {
                let mut statement = st.text.clone();
                if statement.len() > 300 {
                    let mut cut = 300;
                    while !statement.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    statement.truncate(cut);
                    statement.push_str(" …");
                }
                return Err(ScenarioError::Sql {
                    file: file.to_string(),
                    line: st.line,
                    statement,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// The first column of the first row of the last result, as a number.
pub fn scalar(results: &[QueryResult]) -> Option<f64> {
    results
        .iter()
        .rev()
        .find(|r| !r.columns.is_empty())
        .and_then(|r| r.rows.first())
        .and_then(|row| row.first().cloned().flatten())
        .and_then(|v| v.trim().parse().ok())
}

/// What [`scalar`] read, for messages: the value's text, `NULL` or `no row`.
pub fn first_text(results: &[QueryResult]) -> String {
    let row = results
        .iter()
        .rev()
        .find(|r| !r.columns.is_empty())
        .and_then(|r| r.rows.first());
    match row.and_then(|r| r.first()) {
        None => "no row".into(),
        Some(None) => "NULL".into(),
        Some(Some(v)) => format!("\"{v}\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_from_version() {
        assert_eq!(detect_engine("PostgreSQL 16.2 on x86_64"), "postgresql");
        assert_eq!(
            detect_engine("PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64"),
            "yugabytedb"
        );
        assert_eq!(
            detect_engine("CockroachDB CCL v23.1.11 (x86_64)"),
            "cockroachdb"
        );
    }

    #[test]
    fn schema_names_are_identifiers() {
        assert_eq!(schema_name("daily-limit"), "hb_daily_limit");
        assert_eq!(schema_name("lost-update"), "hb_lost_update");
    }

    #[test]
    fn distinct_scenarios_get_distinct_schemas() {
        let long = "a".repeat(70);
        let names = [
            format!("{long}-one"),
            format!("{long}-two"),
            format!("{}x", "b".repeat(60)),
            format!("{}y", "b".repeat(60)),
            "daily-limit".to_string(),
            "daily_limit".to_string(),
            "Daily-Limit".to_string(),
            "daily.limit".to_string(),
            "dailyé-limit".to_string(),
        ];
        let schemas: Vec<String> = names.iter().map(|n| schema_name(n)).collect();
        for (i, s) in schemas.iter().enumerate() {
            assert!(s.len() <= MAX_IDENTIFIER, "{s}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{s}"
            );
            for (j, t) in schemas.iter().enumerate() {
                assert!(i == j || s != t, "{} and {} share {s}", names[i], names[j]);
            }
        }
        // Stable: the same name always gives the same schema.
        assert_eq!(schema_name(&names[0]), schemas[0]);
    }

    #[test]
    fn options_escape_spaces() {
        assert_eq!(escape_option("repeatable read"), "repeatable\\ read");
    }
}
