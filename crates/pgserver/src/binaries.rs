//! Finding PostgreSQL server binaries: `--pg-bin DIR`, then PATH, `pg_config --bindir`,
//! `/usr/lib/postgresql/*/bin`, `/usr/local/pgsql/bin`, then bundles we downloaded earlier;
//! `--pg-version N` picks a major and downloads it when no installed one matches.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// Major downloaded when no PostgreSQL is installed and no `--pg-version` is given.
pub const DEFAULT_DOWNLOAD_MAJOR: u32 = 17;

/// How to choose binaries (plain values, filled from `--pg-bin` / `--pg-version`).
#[derive(Debug, Clone, Default)]
pub struct BinOptions {
    /// Use exactly this bin directory.
    pub pg_bin: Option<PathBuf>,
    /// Wanted major version (e.g. 17); downloaded when not installed.
    pub pg_version: Option<u32>,
    /// Refuse to download (tests, offline use).
    pub no_download: bool,
}

/// A usable set of PostgreSQL server programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgBinaries {
    /// Directory holding `postgres`, `initdb`, ….
    pub bin_dir: PathBuf,
    /// Full version, e.g. "15.10".
    pub version: String,
    /// Major version, e.g. 15.
    pub major: u32,
    /// `pg_config --sharedir` or a guess; holds `extension/`.
    pub share_dir: Option<PathBuf>,
    /// `pg_config --pkglibdir` or a guess; holds loadable modules.
    pub pkglib_dir: Option<PathBuf>,
    /// True when these came from our download cache.
    pub downloaded: bool,
}

impl PgBinaries {
    /// Path of one program in the bin directory.
    pub fn program(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// Inspect a bin directory: it must hold `postgres` and `initdb`.
    pub fn from_dir(dir: &Path) -> Result<PgBinaries> {
        for program in ["postgres", "initdb"] {
            if !is_executable(&dir.join(program)) {
                return Err(Error::MissingProgram {
                    dir: dir.to_path_buf(),
                    program: program.into(),
                });
            }
        }
        let postgres = dir.join("postgres");
        let out = crate::child::output_within(
            Command::new(&postgres).arg("--version"),
            crate::child::PROBE_LIMIT,
        )
        .map_err(|e| Error::io("cannot run postgres --version", &postgres, e))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let version = parse_version(&text).ok_or_else(|| Error::Command {
            what: format!("{} --version", postgres.display()),
            log: format!("unrecognised output {:?}", text.trim()),
        })?;
        let major = major_of(&version).ok_or_else(|| Error::Command {
            what: format!("{} --version", postgres.display()),
            log: format!("unrecognised version {version:?}"),
        })?;
        let (share_dir, pkglib_dir) = support_dirs(dir, major);
        Ok(PgBinaries {
            bin_dir: dir.to_path_buf(),
            version,
            major,
            share_dir,
            pkglib_dir,
            downloaded: false,
        })
    }

    /// Is `pg_stat_statements` installed next to these binaries?
    pub fn has_pg_stat_statements(&self) -> bool {
        let control = self
            .share_dir
            .as_ref()
            .map(|d| d.join("extension/pg_stat_statements.control"));
        let module = self
            .pkglib_dir
            .as_ref()
            .map(|d| d.join("pg_stat_statements.so"));
        matches!((control, module), (Some(c), Some(m)) if c.is_file() && m.is_file())
    }
}

/// Choose binaries per `opts`; downloads (see [`crate::download`]) the asked major when it is
/// not installed, or [`DEFAULT_DOWNLOAD_MAJOR`] when nothing is installed, unless `no_download`.
pub fn find(opts: &BinOptions) -> Result<PgBinaries> {
    if let Some(dir) = &opts.pg_bin {
        let b = PgBinaries::from_dir(dir)?;
        if let Some(want) = opts.pg_version {
            if b.major != want {
                return Err(Error::Invalid(format!(
                    "--pg-bin {} holds PostgreSQL {} but --pg-version {want} was asked for",
                    dir.display(),
                    b.version
                )));
            }
        }
        return Ok(b);
    }
    let (found, searched) = installed();
    let pick = match opts.pg_version {
        Some(want) => found.into_iter().find(|b| b.major == want),
        None => found.into_iter().next(),
    };
    if let Some(b) = pick {
        return Ok(b);
    }
    match opts.pg_version {
        Some(want) if !opts.no_download => download(want),
        None if !opts.no_download => download(DEFAULT_DOWNLOAD_MAJOR),
        _ => Err(Error::MissingBinaries {
            wanted: opts
                .pg_version
                .map(|v| format!(" for major {v}"))
                .unwrap_or_default(),
            searched,
        }),
    }
}

/// All installed candidates in preference order (PATH, pg_config, newest system major, …,
/// cached downloads), plus a description of where we looked.
pub fn installed() -> (Vec<PgBinaries>, String) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut searched = vec!["PATH".to_string()];
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            let pg = d.join("postgres");
            if is_executable(&pg) && is_executable(&d.join("initdb")) {
                // Follow symlinks (/usr/local/bin/postgres -> /usr/lib/postgresql/15/bin/postgres)
                // so support files are found relative to the real directory.
                let real = std::fs::canonicalize(&pg)
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf));
                match real {
                    Some(r) if is_executable(&r.join("initdb")) => dirs.push(r),
                    _ => dirs.push(d),
                }
            }
        }
    }
    searched.push("pg_config --bindir".into());
    if let Ok(out) = crate::child::output_within(
        Command::new("pg_config").arg("--bindir"),
        crate::child::PROBE_LIMIT,
    ) {
        if out.status.success() {
            let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !s.is_empty() {
                dirs.push(PathBuf::from(s));
            }
        }
    }
    searched.push("/usr/lib/postgresql/*/bin".into());
    let mut system: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((major, e.path().join("bin")))
        })
        .collect();
    system.sort_by_key(|s| std::cmp::Reverse(s.0));
    dirs.extend(system.into_iter().map(|(_, d)| d));
    searched.push("/usr/local/pgsql/bin".into());
    dirs.push(PathBuf::from("/usr/local/pgsql/bin"));
    let cached = crate::download::cached_bin_dirs();
    if let Ok(first) = crate::paths::cache_dir() {
        searched.push(first.display().to_string());
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for (dir, downloaded) in dirs
        .into_iter()
        .map(|d| (d, false))
        .chain(cached.into_iter().map(|d| (d, true)))
    {
        let key = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Ok(mut b) = PgBinaries::from_dir(&dir) {
            b.downloaded = downloaded;
            out.push(b);
        }
    }
    (out, searched.join(", "))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// "postgres (PostgreSQL) 15.10 (Debian 15.10-0+deb12u1)" -> "15.10".
pub(crate) fn parse_version(text: &str) -> Option<String> {
    let rest = text.split("(PostgreSQL)").nth(1)?;
    let v = rest.split_whitespace().next()?;
    let v: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

pub(crate) fn major_of(version: &str) -> Option<u32> {
    version.split('.').next()?.parse().ok()
}

fn support_dirs(bin: &Path, major: u32) -> (Option<PathBuf>, Option<PathBuf>) {
    let pg_config = bin.join("pg_config");
    if is_executable(&pg_config) {
        if let Ok(out) = crate::child::output_within(
            Command::new(&pg_config).args(["--sharedir", "--pkglibdir"]),
            crate::child::PROBE_LIMIT,
        ) {
            let text = String::from_utf8_lossy(&out.stdout);
            let mut lines = text.lines().map(|l| PathBuf::from(l.trim()));
            if let (true, Some(s), Some(l)) = (out.status.success(), lines.next(), lines.next()) {
                return (Some(s), Some(l));
            }
        }
    }
    let root = bin.parent().unwrap_or(bin);
    let share = [
        root.join("share/postgresql"),
        root.join("share"),
        PathBuf::from(format!("/usr/share/postgresql/{major}")),
    ]
    .into_iter()
    .find(|d| d.join("postgres.bki").is_file());
    let lib = [root.join("lib/postgresql"), root.join("lib")]
        .into_iter()
        .find(|d| d.join("plpgsql.so").is_file());
    (share, lib)
}

/// Download (or reuse from the cache) binaries for major `major`.
fn download(major: u32) -> Result<PgBinaries> {
    let want = |b: &PgBinaries| b.major == major;
    if let Some(mut b) = crate::download::cached_bin_dirs()
        .into_iter()
        .filter_map(|d| PgBinaries::from_dir(&d).ok())
        .find(want)
    {
        b.downloaded = true;
        return Ok(b);
    }
    let cache = crate::paths::cache_dir()?;
    let dir = crate::download::fetch_into(&crate::download::repository(), &cache, major)?;
    let mut b = PgBinaries::from_dir(&dir.join("bin"))?;
    b.downloaded = true;
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        let v = parse_version("postgres (PostgreSQL) 15.10 (Debian 15.10-0+deb12u1)\n");
        assert_eq!(v.as_deref(), Some("15.10"));
        assert_eq!(
            parse_version("postgres (PostgreSQL) 17.2\n").as_deref(),
            Some("17.2")
        );
        assert_eq!(
            parse_version("postgres (PostgreSQL) 16beta1\n").as_deref(),
            Some("16")
        );
        assert_eq!(parse_version("garbage"), None);
        assert_eq!(major_of("17.2"), Some(17));
    }
}
