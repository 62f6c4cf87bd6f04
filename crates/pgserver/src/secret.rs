//! The generated password of a cluster and the file that keeps it. A cluster hotbench
//! creates ([`crate::config::AuthMethod::Private`]) trusts only its 0700 socket directory;
//! over TCP it wants SCRAM-SHA-256 with a random password made for it, kept in a pgpass file
//! (`passfile`, 0600, owned by the user who runs hotbench) beside the data directory. hotbench
//! reads it back for its own clients; people point libpq at it (`PGPASSFILE`, or the
//! `passfile` parameter of the URL `hotbench server url` prints), so the password itself is
//! never printed.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// Name of the password file in a cluster's directory.
pub const PASSFILE: &str = "passfile";

/// A new random password: 128 bits from the kernel, as 32 hex digits (nothing a pgpass
/// line, a URL or a connection string needs to escape).
pub fn generate() -> Result<String> {
    let mut bytes = [0u8; 16];
    let path = Path::new("/dev/urandom");
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| Error::io("cannot read random bytes for a password", path, e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A pgpass field: `:` and `\` escaped.
fn field(v: &str) -> String {
    v.replace('\\', "\\\\").replace(':', "\\:")
}

/// The pgpass lines for `user`'s `password` on a server at 127.0.0.1 / localhost and the unix
/// socket in `socket_dir`, on `port` (`*` before the port is known).
pub fn render(user: &str, password: &str, socket_dir: &Path, port: Option<u16>) -> String {
    let port = port.map_or_else(|| "*".to_string(), |p| p.to_string());
    let (user, password) = (field(user), field(password));
    let mut out = String::new();
    for host in [
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        field(&socket_dir.to_string_lossy()),
    ] {
        out.push_str(&format!("{host}:{port}:*:{user}:{password}\n"));
    }
    out
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Write the password file at `path` (0600, owned by us), replacing ours atomically. Refuses
/// to replace anything that is not a regular file of ours (a link someone put there).
pub fn write(path: &Path, text: &str) -> Result<()> {
    if let Ok(md) = std::fs::symlink_metadata(path) {
        if !md.file_type().is_file() || md.uid() != euid() {
            return Err(Error::State(format!(
                "{} is not a password file hotbench wrote (not a regular file of user {}); \
                 remove it",
                path.display(),
                euid()
            )));
        }
    }
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .map_err(|e| Error::io("cannot write the password file", &tmp, e))?;
    let written = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io("cannot write the password file", path, e));
    }
    Ok(())
}

/// The password kept in `path`: only from a regular file of ours that no one else may read
/// (else `None`, as when it does not exist).
pub fn read(path: &Path) -> Option<String> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let md = f.metadata().ok()?;
    if !md.file_type().is_file() || md.uid() != euid() || md.mode() & 0o077 != 0 {
        return None;
    }
    let mut text = String::new();
    f.read_to_string(&mut text).ok()?;
    text.lines().find_map(password_of)
}

/// The password field (the fifth) of a pgpass line, unescaped.
fn password_of(line: &str) -> Option<String> {
    let mut fields = 0;
    let mut chars = line.chars();
    while fields < 4 {
        match chars.next()? {
            '\\' => {
                chars.next()?;
            }
            ':' => fields += 1,
            _ => {}
        }
    }
    let mut pw = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => pw.push(chars.next()?),
            c => pw.push(c),
        }
    }
    (!pw.is_empty()).then_some(pw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_random_hex_and_round_trip_through_the_file() {
        let a = generate().expect("random");
        let b = generate().expect("random");
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        let text = render("postgres", &a, Path::new("/tmp/a:b\\c"), Some(5433));
        assert!(text.starts_with(&format!("127.0.0.1:5433:*:postgres:{a}\n")));
        assert!(text.contains(&format!("/tmp/a\\:b\\\\c:5433:*:postgres:{a}\n")));
        assert_eq!(password_of("h:*:*:u:p\\:w"), Some("p:w".into()));
        assert_eq!(password_of("h:*:*:u"), None);
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join(PASSFILE);
        write(&path, &text).expect("write");
        assert_eq!(read(&path), Some(a.clone()));
        let md = std::fs::metadata(&path).expect("stat");
        assert_eq!(md.mode() & 0o777, 0o600);
        assert_eq!(md.uid(), euid());
        write(&path, &render("postgres", &b, Path::new("/s"), None)).expect("rewrite");
        assert_eq!(read(&path), Some(b));
        // Readable by others: not trusted.
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .expect("chmod");
        assert_eq!(read(&path), None);
        // A link there is neither read nor replaced.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        assert_eq!(read(&link), None);
        assert!(write(&link, "x").is_err());
    }
}
