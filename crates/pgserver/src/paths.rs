//! Where things live: the download cache, the default server's data directory, temporary
//! clusters. When we are root and the run-as account cannot reach a directory under our home
//! (root's home is 0700), system locations (`/var/cache/hotbench`, `/var/lib/hotbench`) are
//! used instead.

use std::path::{Path, PathBuf};

use crate::account::RunAs;
use crate::error::{Error, Result};

/// Longest unix socket path (sun_path is 108 bytes with the NUL).
pub const MAX_SOCKET_PATH: usize = 107;
/// Length of the socket file name PostgreSQL adds, `/.s.PGSQL.65535`.
const SOCKET_NAME_LEN: usize = "/.s.PGSQL.65535".len();

/// Can a socket directory of this path hold PostgreSQL's socket (plus its `.lock`)?
pub fn socket_dir_fits(dir: &Path) -> bool {
    dir.as_os_str().len() + SOCKET_NAME_LEN + ".lock".len() <= MAX_SOCKET_PATH
}

fn xdg(var: &str, fallback: &str) -> Result<PathBuf> {
    if let Some(v) = std::env::var_os(var) {
        let p = PathBuf::from(v);
        if p.is_absolute() {
            return Ok(p);
        }
    }
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h).join(fallback)),
        _ => Err(Error::Invalid(format!(
            "neither {var} nor HOME is set; cannot choose a directory for hotbench"
        ))),
    }
}

fn reachable_or(preferred: PathBuf, system: &str) -> Result<PathBuf> {
    let user = RunAs::get()?;
    if user.can_traverse(&preferred) {
        Ok(preferred)
    } else {
        Ok(PathBuf::from(system))
    }
}

/// Download cache: `$XDG_CACHE_HOME/hotbench` or `~/.cache/hotbench` (`/var/cache/hotbench`
/// when root and that is not reachable by the PostgreSQL user).
pub fn cache_dir() -> Result<PathBuf> {
    reachable_or(
        xdg("XDG_CACHE_HOME", ".cache")?.join("hotbench"),
        "/var/cache/hotbench",
    )
}

/// Persistent data: `$XDG_DATA_HOME/hotbench` or `~/.local/share/hotbench` (`/var/lib/hotbench`
/// when root and that is not reachable by the PostgreSQL user).
pub fn data_home() -> Result<PathBuf> {
    reachable_or(
        xdg("XDG_DATA_HOME", ".local/share")?.join("hotbench"),
        "/var/lib/hotbench",
    )
}

/// Parent directory for throwaway clusters: the system temp dir when short enough for a
/// socket path and reachable by the PostgreSQL user, else `/tmp`.
pub fn temp_root() -> PathBuf {
    let t = std::env::temp_dir();
    let ok = t.as_os_str().len() < 60 && RunAs::get().map(|u| u.can_traverse(&t)).unwrap_or(false);
    if ok {
        t
    } else {
        PathBuf::from("/tmp")
    }
}

/// Create `dir` and its parents, mapping errors (ENOSPC → disk full).
pub fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create directory", dir, e))
}

/// Create (or take over) the socket directory `dir`: mode 0700, owned by the account
/// PostgreSQL runs as, so only it and root reach the trusted socket inside. Refuses a
/// symbolic link or what is not a directory there, and a directory another user made where
/// they could (one in `/tmp`); one in a directory of ours is taken over (a cluster made when
/// PostgreSQL ran as `postgres`).
pub fn create_private_dir(dir: &Path, user: &RunAs) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let owner = |p: &Path| std::fs::symlink_metadata(p).map(|m| m.uid()).ok();
    match std::fs::symlink_metadata(dir) {
        Ok(md) if !md.is_dir() => {
            return Err(Error::Invalid(format!(
                "{} should be hotbench's socket directory but is not a directory",
                dir.display()
            )))
        }
        Ok(md) if md.uid() != user.uid && dir.parent().and_then(owner) != Some(user.uid) => {
            return Err(Error::Invalid(format!(
                "{} should be hotbench's socket directory but belongs to another user; remove it",
                dir.display()
            )))
        }
        Ok(_) => {}
        Err(_) => create_dir_all(dir)?,
    }
    user.chown(dir)?;
    set_mode(dir, 0o700)
}

/// Set unix permissions on `path`.
pub fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("cannot set permissions", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_limit() {
        assert!(socket_dir_fits(Path::new("/tmp/hb-abc/s")));
        let long = format!("/{}", "x".repeat(90));
        assert!(!socket_dir_fits(Path::new(&long)));
    }
}
