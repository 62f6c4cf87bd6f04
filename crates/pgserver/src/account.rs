//! Who PostgreSQL runs as. `initdb` and `postgres` refuse to run as root, so when we are root we
//! run them as a dedicated system account of their own, [`CREATED_USER`] (created on first
//! use), with every directory they touch owned by it. Never the distribution's shared
//! `postgres` account: a superuser of our server could then `COPY … TO PROGRAM` as the owner
//! of every other cluster on the machine. When we are not root they simply run as us.

use std::ffi::{CStr, CString};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The account the PostgreSQL processes run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// Login name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// True when we switch to this account (we are root); false when it is ourselves.
    pub switch: bool,
}

/// Name of the dedicated account PostgreSQL and PgBouncer run as when we are root.
pub const CREATED_USER: &str = "hotbench";

impl RunAs {
    /// The account to use, resolved once per process (creates [`CREATED_USER`] when root and
    /// it does not exist yet).
    pub fn get() -> Result<&'static RunAs> {
        static CELL: OnceLock<Result<RunAs, String>> = OnceLock::new();
        CELL.get_or_init(|| resolve().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Error::NoUser(e.clone()))
    }

    /// Make `cmd` run as this account (no-op when not switching).
    pub fn apply(&self, cmd: &mut Command) {
        if self.switch {
            cmd.uid(self.uid).gid(self.gid);
            // PostgreSQL looks at HOME/USER for nothing important, but psql and friends read
            // ~/.psqlrc and ~/.pgpass: point them away from root's.
            cmd.env("HOME", "/")
                .env("USER", &self.name)
                .env("LOGNAME", &self.name);
        }
    }

    /// Give `path` to this account (no-op when not switching).
    pub fn chown(&self, path: &Path) -> Result<()> {
        if !self.switch {
            return Ok(());
        }
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .map_err(|e| Error::io("cannot give ownership to the PostgreSQL user", path, e))
    }

    /// Give `dir` and everything under it to this account, never following a symbolic link
    /// (a cluster made by an earlier hotbench that ran PostgreSQL as `postgres`). No-op when
    /// not switching.
    pub fn chown_tree(&self, dir: &Path) -> Result<()> {
        if !self.switch {
            return Ok(());
        }
        std::os::unix::fs::lchown(dir, Some(self.uid), Some(self.gid))
            .map_err(|e| Error::io("cannot give ownership to the PostgreSQL user", dir, e))?;
        let md = std::fs::symlink_metadata(dir).map_err(|e| Error::io("cannot read", dir, e))?;
        if !md.is_dir() {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io("cannot read", dir, e))? {
            let entry = entry.map_err(|e| Error::io("cannot read", dir, e))?;
            self.chown_tree(&entry.path())?;
        }
        Ok(())
    }

    /// Can this account reach (search every ancestor of) `path`? Used to avoid data or cache
    /// directories under a 0700 home when we are root.
    pub fn can_traverse(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        if !self.switch {
            return true;
        }
        let mut cur = Some(path);
        while let Some(p) = cur {
            if let Ok(md) = std::fs::metadata(p) {
                let mode = md.mode();
                let ok = if md.uid() == self.uid {
                    mode & 0o100 != 0
                } else if md.gid() == self.gid {
                    mode & 0o010 != 0
                } else {
                    mode & 0o001 != 0
                };
                if !ok {
                    return false;
                }
            }
            cur = p.parent();
        }
        true
    }
}

fn resolve() -> Result<RunAs> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        let (name, gid) = match lookup_uid(euid) {
            Some((n, g)) => (n, g),
            // SAFETY: getegid has no preconditions.
            None => (format!("uid{euid}"), unsafe { libc::getegid() }),
        };
        return Ok(RunAs {
            name,
            uid: euid,
            gid,
            switch: false,
        });
    }
    resolve_root(&[CREATED_USER], CREATED_USER)
}

/// As root: the first existing account of `candidates`, else `create` made with `useradd
/// --system` (no home, no login shell). Never a shared account (`postgres`, `nobody`): what
/// runs as it could reach whatever else runs as it.
pub fn resolve_root(candidates: &[&str], create: &str) -> Result<RunAs> {
    let found = |name: &str| {
        lookup_name(name).map(|(uid, gid)| RunAs {
            name: name.into(),
            uid,
            gid,
            switch: true,
        })
    };
    if let Some(r) = candidates.iter().find_map(|n| found(n)) {
        return Ok(r);
    }
    // Whether or not useradd succeeds (a parallel process may win the race), look again after.
    let _ = Command::new("useradd")
        .args([
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
        ])
        .args([
            "--shell",
            "/usr/sbin/nologin",
            "--comment",
            "hotbench embedded PostgreSQL",
            create,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    found(create).ok_or_else(|| {
        Error::NoUser(format!(
            "none of {candidates:?} exists and `useradd --system {create}` failed; create a \
             system account `{create}` (no login) for the embedded PostgreSQL to run as"
        ))
    })
}

/// User and group id of the account `name`, if it exists.
pub fn lookup_name(name: &str) -> Option<(u32, u32)> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16384];
    // SAFETY: passwd is plain old data; zeroed is a valid initial value.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the duration of the call; buf outlives pw's strings.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() {
        return None;
    }
    Some((pw.pw_uid, pw.pw_gid))
}

fn lookup_uid(uid: u32) -> Option<(String, u32)> {
    let mut buf = vec![0u8; 16384];
    // SAFETY: as in lookup_name.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: as in lookup_name.
    let rc =
        unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name points into buf, NUL-terminated by getpwuid_r.
    let name = unsafe { CStr::from_ptr(pw.pw_name) }
        .to_string_lossy()
        .into_owned();
    Some((name, pw.pw_gid))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fresh-machine path: no `postgres` account, so one is created; initdb runs as it.
    #[test]
    #[ignore = "creates a system user: needs root and useradd (CI runs it with --ignored)"]
    fn creates_a_system_user_when_root_and_runs_initdb_as_it() {
        // SAFETY: geteuid has no preconditions.
        assert!(
            unsafe { libc::geteuid() } == 0
                && Command::new("useradd").arg("--help").output().is_ok(),
            "needs root and useradd"
        );
        let name = format!("hbt{}", std::process::id() % 100_000);
        let r = resolve_root(&["hotbench-no-such-user"], &name).expect("resolve");
        let cleanup = || {
            let _ = Command::new("userdel").arg(&name).output();
        };
        if r.name != name {
            cleanup();
            panic!("expected a created user {name}, got {r:?}");
        }
        assert!(r.switch && r.uid != 0);
        let (found, _) = crate::binaries::installed();
        let result = found.into_iter().find(|b| !b.downloaded).map(|bins| {
            let dir = tempfile::Builder::new()
                .prefix("hbu-")
                .tempdir_in("/tmp")
                .expect("tmp");
            crate::paths::set_mode(dir.path(), 0o755).expect("chmod");
            r.chown(dir.path()).expect("chown");
            let log = dir.path().join("log");
            let data = dir.path().join("data");
            let res = crate::cluster::initdb(&bins, &r, &data, "postgres", true, &log);
            use std::os::unix::fs::MetadataExt;
            let owner = std::fs::metadata(&data).map(|m| m.uid()).ok();
            (res.map_err(|e| e.to_string()), owner)
        });
        cleanup();
        if let Some((res, owner)) = result {
            res.expect("initdb as the created user");
            assert_eq!(owner, Some(r.uid));
        }
        assert!(lookup_name(&name).is_none(), "test user removed");
    }
}
