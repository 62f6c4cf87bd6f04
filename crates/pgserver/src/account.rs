//! Who PostgreSQL runs as. `initdb` and `postgres` refuse to run as root, so when we are root we
//! pick (or create) an unprivileged system account and run them as it, with every directory
//! they touch owned by it. When we are not root they simply run as us.

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

/// Name of the account we create when root and no `postgres` account exists.
pub const CREATED_USER: &str = "hotbench";

impl RunAs {
    /// The account to use, resolved once per process (may create [`CREATED_USER`] when root).
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
    for name in ["postgres", CREATED_USER] {
        if let Some((uid, gid)) = lookup_name(name) {
            return Ok(RunAs {
                name: name.into(),
                uid,
                gid,
                switch: true,
            });
        }
    }
    let created = Command::new("useradd")
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
            CREATED_USER,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    // Whether or not useradd succeeded (a parallel process may have won the race), look again.
    let _ = created;
    if let Some((uid, gid)) = lookup_name(CREATED_USER) {
        return Ok(RunAs {
            name: CREATED_USER.into(),
            uid,
            gid,
            switch: true,
        });
    }
    if let Some((uid, gid)) = lookup_name("nobody") {
        return Ok(RunAs {
            name: "nobody".into(),
            uid,
            gid,
            switch: true,
        });
    }
    Err(Error::NoUser(format!(
        "no `postgres` user, `useradd --system {CREATED_USER}` failed and no `nobody` user exists"
    )))
}

fn lookup_name(name: &str) -> Option<(u32, u32)> {
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
