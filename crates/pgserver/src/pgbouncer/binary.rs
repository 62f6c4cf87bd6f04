//! Finding the `pgbouncer` program as PostgreSQL's binaries are found: `--pgbouncer-bin`
//! (the program, or a directory holding it), then PATH, then `/usr/sbin` (where Debian's
//! package puts it, outside a normal user's PATH), and reading its version, which decides
//! what a transaction pool can keep (prepared statements from 1.21 on).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// A usable `pgbouncer` program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgBouncerBinary {
    /// The program.
    pub path: PathBuf,
    /// Its version, e.g. "1.18.0".
    pub version: String,
}

impl PgBouncerBinary {
    /// Inspect `path` (a program, or a directory holding `pgbouncer`).
    pub fn from_path(path: &Path) -> Result<PgBouncerBinary> {
        let program = if path.is_dir() {
            path.join("pgbouncer")
        } else {
            path.to_path_buf()
        };
        if !is_executable(&program) {
            return Err(Error::Invalid(format!(
                "--pgbouncer-bin {}: no executable pgbouncer program there",
                path.display()
            )));
        }
        let out = crate::child::output_within(
            Command::new(&program).arg("--version"),
            crate::child::PROBE_LIMIT,
        )
        .map_err(|e| Error::io("cannot run pgbouncer --version", &program, e))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = parse_version(&text).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: not a PgBouncer (its --version printed {:?})",
                program.display(),
                text.lines().next().unwrap_or("")
            ))
        })?;
        Ok(PgBouncerBinary {
            path: program,
            version,
        })
    }

    /// (major, minor) of the version.
    pub fn major_minor(&self) -> (u32, u32) {
        major_minor(&self.version)
    }

    /// Does a transaction pool of this version keep protocol-level prepared statements
    /// (`max_prepared_statements`, PgBouncer 1.21 and later)?
    pub fn keeps_prepared_statements(&self) -> bool {
        keeps_prepared_statements(&self.version)
    }
}

/// Does PgBouncer `version` ("1.18.0") keep prepared statements in transaction pooling?
pub fn keeps_prepared_statements(version: &str) -> bool {
    major_minor(version) >= (1, 21)
}

fn major_minor(version: &str) -> (u32, u32) {
    let mut it = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// `--pgbouncer-bin` when given, else the first `pgbouncer` on PATH or in `/usr/sbin`.
pub fn find(explicit: Option<&Path>) -> Result<PgBouncerBinary> {
    if let Some(p) = explicit {
        return PgBouncerBinary::from_path(p);
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for d in ["/usr/sbin", "/usr/local/sbin", "/usr/local/bin"] {
        dirs.push(PathBuf::from(d));
    }
    let found = dirs
        .iter()
        .map(|d| d.join("pgbouncer"))
        .find(|p| is_executable(p));
    match found {
        Some(p) => PgBouncerBinary::from_path(&p),
        None => Err(Error::Invalid(
            "no pgbouncer program found (searched PATH and /usr/sbin); install PgBouncer \
             (Debian/Ubuntu: apt-get install pgbouncer) or pass --pgbouncer-bin PATH"
                .into(),
        )),
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// "PgBouncer 1.18.0\nlibevent …" → "1.18.0".
pub(crate) fn parse_version(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let v = first
        .trim()
        .strip_prefix("PgBouncer ")?
        .split_whitespace()
        .next()?;
    let v: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!v.is_empty() && v.contains('.')).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_decide_prepared_statements() {
        let v = parse_version("PgBouncer 1.18.0\nlibevent 2.1.12-stable\n").expect("parses");
        assert_eq!(v, "1.18.0");
        assert!(!keeps_prepared_statements(&v));
        assert!(keeps_prepared_statements("1.21.0"));
        assert!(keeps_prepared_statements("1.24.1"));
        assert!(!keeps_prepared_statements("1.20.1"));
        assert_eq!(parse_version("postgres (PostgreSQL) 15.1"), None);
        assert_eq!(parse_version(""), None);
        assert_eq!(
            parse_version("PgBouncer 1.22.0-rc1\n").as_deref(),
            Some("1.22.0")
        );
    }

    #[test]
    fn a_directory_or_a_missing_program_is_explained() {
        let e = PgBouncerBinary::from_path(Path::new("/nonexistent/pgb")).unwrap_err();
        assert!(e.to_string().contains("no executable pgbouncer"), "{e}");
    }
}
