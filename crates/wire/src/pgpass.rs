//! `~/.pgpass` lookup with libpq's rules.
//!
//! Lines are `hostname:port:database:username:password`; `*` matches anything in the
//! first four fields; `\` escapes `:` and `\`; `#` starts a comment line. The file is
//! ignored (with libpq's warning) when it is not a plain file or is readable by group or
//! others. The first matching line wins.

use std::path::Path;

/// Outcome of a lookup: the password if a line matched, and warnings to print.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PgpassLookup {
    /// The password of the first matching line.
    pub password: Option<String>,
    /// libpq-style warnings (bad permissions, not a plain file).
    pub warnings: Vec<String>,
}

/// Looks up a password in the file at `path` (missing file: no password, no warning).
///
/// `host` is the host name as configured (`localhost` when connecting through the default
/// socket directory), `port` the port number as text.
pub fn lookup(path: &Path, host: &str, port: &str, dbname: &str, user: &str) -> PgpassLookup {
    let mut out = PgpassLookup::default();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return out,
    };
    if !meta.is_file() {
        out.warnings.push(format!(
            "WARNING: password file \"{}\" is not a plain file",
            path.display()
        ));
        return out;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            out.warnings.push(format!(
                "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
                path.display()
            ));
            return out;
        }
    }
    let Ok(bytes) = std::fs::read(path) else {
        return out;
    };
    let text = String::from_utf8_lossy(&bytes);
    out.password = find(&text, host, port, dbname, user);
    out
}

/// Finds the password for (host, port, dbname, user) in pgpass-formatted text.
pub fn find(text: &str, host: &str, port: &str, dbname: &str, user: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut rest = line;
        let mut ok = true;
        for want in [host, port, dbname, user] {
            match match_field(rest, want) {
                Some(r) => rest = r,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        // The password: the rest of the line, de-escaped.
        let mut pw = String::with_capacity(rest.len());
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    pw.push(n);
                }
            } else {
                pw.push(c);
            }
        }
        return Some(pw);
    }
    None
}

/// Matches one `:`-terminated field against `want`; returns the text after the `:`.
fn match_field<'a>(field: &'a str, want: &str) -> Option<&'a str> {
    if let Some(rest) = field.strip_prefix("*:") {
        return Some(rest);
    }
    let mut want = want.chars();
    let mut chars = field.char_indices();
    while let Some((i, c)) = chars.next() {
        let c = match c {
            ':' => {
                return if want.next().is_none() {
                    Some(&field[i + 1..])
                } else {
                    None
                }
            }
            '\\' => chars.next()?.1,
            c => c,
        };
        if want.next() != Some(c) {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, host: &str, port: &str, db: &str, user: &str, want: Option<&str>) {
        assert_eq!(
            find(text, host, port, db, user).as_deref(),
            want,
            "{text:?}"
        );
    }

    #[test]
    fn exact_and_wildcards() {
        let f = "# comment\nhost1:5432:db:alice:s3cret\n*:*:*:bob:pw2\nhost2:*:db:*:any\n";
        check(f, "host1", "5432", "db", "alice", Some("s3cret"));
        check(f, "host1", "5433", "db", "alice", None);
        check(f, "x", "1", "y", "bob", Some("pw2"));
        check(f, "host2", "99", "db", "carol", Some("any"));
        check(f, "host2", "99", "other", "carol", None);
    }

    #[test]
    fn first_match_wins() {
        check(
            "*:*:*:*:first\n*:*:*:*:second\n",
            "h",
            "1",
            "d",
            "u",
            Some("first"),
        );
    }

    #[test]
    fn escapes() {
        check(
            r"h\:x:5432:db:u:pa\:ss\\w",
            "h:x",
            "5432",
            "db",
            "u",
            Some(r"pa:ss\w"),
        );
        check(r"h:5432:db:u:a:b", "h", "5432", "db", "u", Some("a:b"));
        // '*' only as a whole field.
        check("h*:5432:db:u:pw", "hx", "5432", "db", "u", None);
        check(r"\*:5432:db:u:pw", "*", "5432", "db", "u", Some("pw"));
    }

    #[test]
    fn short_lines_and_crlf() {
        check("h:5432:db\n", "h", "5432", "db", "u", None);
        check("h:5432:db:u:pw\r\n", "h", "5432", "db", "u", Some("pw"));
        check("h:5432:db:u:", "h", "5432", "db", "u", Some(""));
    }

    #[test]
    fn permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pgpass");
        std::fs::write(&p, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let r = lookup(&p, "h", "1", "d", "u");
        assert_eq!(r.password, None);
        assert!(r.warnings[0].contains("has group or world access"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let r = lookup(&p, "h", "1", "d", "u");
        assert_eq!(r.password.as_deref(), Some("pw"));
        assert!(r.warnings.is_empty());
        let r = lookup(dir.path(), "h", "1", "d", "u");
        assert!(r.warnings[0].contains("not a plain file"));
        let r = lookup(&dir.path().join("missing"), "h", "1", "d", "u");
        assert_eq!(r, PgpassLookup::default());
    }
}
