//! `schema.sql` from `pg_dump --schema-only -t …` when a pg_dump whose major is at least the
//! server's is at hand (the one given, else the closest installed one, the embedded
//! server's bundle among them): pg_dump writes tables, partitions, identity and serial
//! columns, constraints and indexes exactly as the server has them. It runs as a child
//! with a time limit (`pgserver::child`, killed whole past it), `--lock-wait-timeout` as
//! short as diagnose's `lock_timeout` (it never queues behind a user's lock: it fails, and
//! the catalogs are used), `--no-owner --no-privileges`, the password only in its
//! environment (never on its command line or in a message). Each `-t` pattern quotes its
//! names whole, so `*`, `?`, `.` and `"` in a name match only themselves.
//!
//! What `pg_dump -t` leaves out comes from the catalogs around its output (schemas,
//! extensions, types, functions); what the twin must not get is dropped from it (psql
//! meta-commands, `SET`s, triggers, rules, policies, row-level security, owners).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hotbench_pgserver::child;
use hotbench_wire::{ConnectParams, Host};

use crate::model::Model;
use crate::schema_sql;

/// `pg_dump`'s output made a `schema.sql`, and its `--version` line; `Err` says why
/// pg_dump could not be used.
pub fn dump(
    model: &Model,
    params: &ConnectParams,
    bin_dir: Option<&Path>,
    timeout: Duration,
) -> Result<(String, String), String> {
    if let Some(why) = &model.catalogs_only {
        return Err(format!("pg_dump not used: {why}"));
    }
    let patterns = table_patterns(model);
    // Without a `-t`, pg_dump dumps the whole database: everything the capture never read.
    if patterns.is_empty() {
        return Err("pg_dump not used: no table or sequence to dump".into());
    }
    let server_major = model.server_version_num / 10000;
    let (program, version, major) = find(bin_dir, server_major)?;
    let target = params
        .targets
        .first()
        .ok_or_else(|| "no host to connect to".to_string())?;
    let mut cmd = Command::new(&program);
    // Nothing from this process's environment picks another server, role or option.
    cmd.env_clear();
    for keep in ["HOME", "PATH", "LANG", "TZ"] {
        if let Some(v) = std::env::var_os(keep) {
            cmd.env(keep, v);
        }
    }
    if let Some(pw) = &target.password {
        cmd.env("PGPASSWORD", pw);
    }
    for (var, v) in [
        ("PGSSLROOTCERT", &params.sslrootcert),
        ("PGSSLCERT", &params.sslcert),
        ("PGSSLKEY", &params.sslkey),
    ] {
        if let Some(v) = v {
            cmd.env(var, v);
        }
    }
    let lock_ms = hotbench_diagnose::session::LOCK_TIMEOUT.as_millis().max(1);
    cmd.arg("--schema-only")
        .arg("--no-owner")
        .arg("--no-privileges")
        .arg("--no-tablespaces")
        .arg("--no-security-labels")
        .arg("--no-publications")
        .arg("--no-subscriptions")
        .arg(format!("--lock-wait-timeout={lock_ms}"));
    if major >= 11 {
        cmd.arg("--no-comments");
    }
    for p in patterns {
        cmd.arg("-t").arg(p);
    }
    cmd.arg("--dbname").arg(conninfo(params, target));
    let out = child::output_within(&mut cmd, timeout)
        .map_err(|e| format!("{} could not run: {e}", program.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        // --lock-wait-timeout is a statement_timeout around pg_dump's LOCK TABLE.
        let hint = if first.contains("timeout") {
            " (another session held a lock it needed; not waited for)"
        } else {
            ""
        };
        return Err(format!("pg_dump failed: {first}{hint}"));
    }
    let text = String::from_utf8(out.stdout)
        .map_err(|_| "pg_dump wrote text that is not UTF-8".to_string())?;
    let body = filter(&text)?;
    let mut sql = format!("-- hotbench capture: the touched schema, from {version}\n");
    sql.push_str(&schema_sql::prelude(model, false));
    sql.push_str(&body);
    sql.push_str(&schema_sql::late_functions(model));
    Ok((sql, version))
}

/// pg_dump's `-t` patterns: the captured tables and the sequences no identity column owns.
fn table_patterns(model: &Model) -> Vec<String> {
    let tables = model.relations.iter().map(|r| pattern(&r.schema, &r.name));
    let seqs = model.sequences.iter().filter(|s| !s.identity);
    tables
        .chain(seqs.map(|s| pattern(&s.schema, &s.name)))
        .collect()
}

/// The `pg_dump` to use: `bin_dir`'s, else the installed one of the smallest major at least
/// `server_major`; with its `--version` line and major.
fn find(bin_dir: Option<&Path>, server_major: u32) -> Result<(PathBuf, String, u32), String> {
    let candidates: Vec<PathBuf> = match bin_dir {
        Some(d) => vec![d.join("pg_dump")],
        None => {
            let (found, _) = hotbench_pgserver::binaries::installed();
            found.iter().map(|b| b.program("pg_dump")).collect()
        }
    };
    let mut best: Option<(PathBuf, String, u32)> = None;
    let mut seen = Vec::new();
    for p in candidates.into_iter().filter(|p| p.is_file()) {
        let Ok(out) = child::output_within(Command::new(&p).arg("--version"), child::PROBE_LIMIT)
        else {
            continue;
        };
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let Some(major) = major_of(&line) else {
            continue;
        };
        seen.push(major.to_string());
        if major >= server_major && best.as_ref().is_none_or(|b| major < b.2) {
            best = Some((p, line, major));
        }
    }
    best.ok_or_else(|| {
        if seen.is_empty() {
            "no pg_dump found".to_string()
        } else {
            format!(
                "no pg_dump of major {server_major} or later (found {})",
                seen.join(", ")
            )
        }
    })
}

/// The major of `pg_dump (PostgreSQL) 16.4 (Debian …)`.
fn major_of(line: &str) -> Option<u32> {
    let v = line
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
    v.split(['.', 'b', 'r', 'd']).next()?.parse().ok()
}

/// A `-t` pattern matching exactly `schema.name`: each part double-quoted with `"` doubled,
/// so `*`, `?`, `.` and upper case inside are literal.
pub fn pattern(schema: &str, name: &str) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    format!("{}.{}", q(schema), q(name))
}

/// A libpq connection string for the same server, database and role, without the password.
fn conninfo(p: &ConnectParams, t: &hotbench_wire::Target) -> String {
    let q = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    let host = match &t.host {
        Host::Tcp(h) => h.clone(),
        Host::Unix(d) => d.display().to_string(),
    };
    let mut s = format!(
        "host={} port={} user={} dbname={} sslmode={} application_name={}",
        q(&host),
        t.port,
        q(&p.user),
        q(&p.dbname),
        q(p.sslmode.as_str()),
        q("hotbench capture (pg_dump)")
    );
    if let Some(addr) = t.hostaddr {
        s.push_str(&format!(" hostaddr={}", q(&addr.to_string())));
    }
    if let Some(ct) = p.connect_timeout {
        s.push_str(&format!(" connect_timeout={}", ct.as_secs().max(1)));
    }
    s
}

/// pg_dump's statements the twin gets, each ending in `;`.
fn filter(text: &str) -> Result<String, String> {
    // psql meta-commands (`\restrict KEY`, `\connect`) are lines of their own.
    let lines: String = text
        .lines()
        .filter(|l| !l.starts_with('\\'))
        .map(|l| format!("{l}\n"))
        .collect();
    let statements = hotbench_scenario::sqlsplit::split(&lines).map_err(|e| {
        format!(
            "pg_dump's output did not split into statements: {e} (line {})",
            e.line
        )
    })?;
    let mut out = String::new();
    for st in statements {
        if keep(&st.text) {
            out.push_str(&st.text);
            out.push_str(";\n");
        }
    }
    Ok(out)
}

/// Whether a statement of pg_dump's belongs in the twin's schema.
fn keep(statement: &str) -> bool {
    let head: String = statement
        .split_whitespace()
        .take(12)
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    let drop_prefix = [
        "SET ",
        "SELECT PG_CATALOG.SET_CONFIG",
        "CREATE TRIGGER",
        "CREATE CONSTRAINT TRIGGER",
        "CREATE POLICY",
        "CREATE RULE",
        "CREATE EVENT TRIGGER",
        "CREATE PUBLICATION",
        "SECURITY LABEL",
        "GRANT ",
        "REVOKE ",
        "COMMENT ON",
    ];
    if drop_prefix.iter().any(|p| head.starts_with(p)) {
        return false;
    }
    let alter_drops = [
        " ENABLE ROW LEVEL SECURITY",
        " FORCE ROW LEVEL SECURITY",
        " OWNER TO ",
        " ENABLE TRIGGER",
        " DISABLE TRIGGER",
        " ENABLE ALWAYS TRIGGER",
        " ENABLE REPLICA TRIGGER",
    ];
    !(head.starts_with("ALTER ") && alter_drops.iter().any(|d| head.contains(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_only_the_name() {
        assert_eq!(pattern("s", "T*a.b?\"c"), "\"s\".\"T*a.b?\"\"c\"");
    }

    /// No table captured (one named only where the capture did not look) gave pg_dump no
    /// `-t`, and it dumped the whole database into schema.sql.
    #[test]
    fn nothing_captured_is_not_the_whole_database() {
        let model = Model::default();
        assert!(table_patterns(&model).is_empty());
        let params = hotbench_wire::Config::parse("host=/nonexistent dbname=x")
            .and_then(|c| c.resolve())
            .expect("params");
        let why = dump(
            &model,
            &params,
            Some(Path::new("/nonexistent")),
            Duration::from_secs(1),
        );
        assert_eq!(
            why,
            Err("pg_dump not used: no table or sequence to dump".into())
        );
    }

    #[test]
    fn versions_read() {
        assert_eq!(
            major_of("pg_dump (PostgreSQL) 15.10 (Debian 15.10-1)"),
            Some(15)
        );
        assert_eq!(major_of("pg_dump (PostgreSQL) 18beta1"), Some(18));
        assert_eq!(major_of("nothing"), None);
    }

    #[test]
    fn what_the_twin_must_not_get_is_dropped() {
        let dump = "\\restrict abc\nSET statement_timeout = 0;\n\
            SELECT pg_catalog.set_config('search_path', '', false);\n\
            CREATE TABLE public.t (a integer, b text DEFAULT ';SET x');\n\
            ALTER TABLE public.t OWNER TO bob;\n\
            CREATE TRIGGER tr BEFORE UPDATE ON public.t FOR EACH ROW EXECUTE FUNCTION public.f();\n\
            ALTER TABLE public.t ENABLE ROW LEVEL SECURITY;\n\
            CREATE POLICY p ON public.t USING (true);\n\
            ALTER TABLE ONLY public.t ADD CONSTRAINT t_pkey PRIMARY KEY (a);\n\\unrestrict abc\n";
        let out = filter(dump).unwrap();
        assert_eq!(
            out,
            "CREATE TABLE public.t (a integer, b text DEFAULT ';SET x');\n\
             ALTER TABLE ONLY public.t ADD CONSTRAINT t_pkey PRIMARY KEY (a);\n"
        );
    }
}
