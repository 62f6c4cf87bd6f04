//! libpq's two spellings of connection options: `key=value` conninfo strings and
//! `postgresql://` URLs, parsed and printed back (password masked on request).
//!
//! The rules follow libpq's `conninfo_parse` and `conninfo_uri_parse_options`: single
//! quotes and backslash escapes in conninfo values; percent-decoding, `[v6]` hosts,
//! `host1:p1,host2:p2` lists and query parameters in URLs.

use std::fmt;
use std::str::FromStr;

use crate::config::{Config, Form};
use crate::error::ConfigError;

const PREFIXES: [&str; 2] = ["postgresql://", "postgres://"];

pub(crate) fn is_url(s: &str) -> bool {
    PREFIXES.iter().any(|p| s.starts_with(p))
}

/// `key=value` pairs; values may be single-quoted; `\` escapes the next character.
pub(crate) fn parse_conninfo(s: &str) -> Result<Config, ConfigError> {
    let mut cfg = Config::new();
    let mut chars = s.chars().peekable();
    // After an unquoted password, a word without "=" is most likely the rest of a password
    // with a space in it: the message must not quote it.
    let mut after_password = false;
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            if after_password {
                return Err(ConfigError::new(
                    "missing \"=\" after the password in connection info string (a password with spaces needs quotes: password='…')",
                ));
            }
            return Err(ConfigError::new(format!(
                "missing \"=\" after \"{key}\" in connection info string"
            )));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        after_password = key == "password" && chars.peek() != Some(&'\'');
        if chars.peek() == Some(&'\'') {
            chars.next();
            let mut closed = false;
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some(n) => value.push(n),
                        None => break,
                    },
                    '\'' => {
                        closed = true;
                        break;
                    }
                    c => value.push(c),
                }
            }
            if !closed {
                return Err(ConfigError::new(
                    "unterminated quoted string in connection info string",
                ));
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        value.push(n);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        cfg.set(&key, &value)?;
    }
    cfg.form = Form::Conninfo;
    Ok(cfg)
}

/// `postgresql://[user[:password]@][host[:port][,…]][/dbname][?key=value&…]`
pub(crate) fn parse_url(raw: &str) -> Result<Config, ConfigError> {
    let mut cfg = Config::new();
    cfg.form = Form::Url;
    // Messages quote the URI with its password masked, found as this parser finds it (a
    // malformed host or port after it must not print it).
    let masked = mask_url(raw);
    let s = masked.as_str();
    let rest = PREFIXES
        .iter()
        .find_map(|p| raw.strip_prefix(p))
        .ok_or_else(|| ConfigError::new(format!("invalid URI: \"{s}\"")))?;

    // Split off the query string, then the path (dbname).
    let (before_q, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    // Credentials: the part before an '@' that comes before any '/'.
    let mut netloc_and_path = before_q;
    let slash = before_q.find('/');
    if let Some(at) = before_q.find('@') {
        if slash.is_none_or(|sl| at < sl) {
            let creds = &before_q[..at];
            netloc_and_path = &before_q[at + 1..];
            let (user, password) = match creds.find(':') {
                Some(c) => (&creds[..c], Some(&creds[c + 1..])),
                None => (creds, None),
            };
            if !user.is_empty() {
                cfg.user = Some(percent_decode(user)?);
            }
            if let Some(p) = password {
                // Never echo the password in an error message.
                cfg.password = Some(percent_decode(p).map_err(|_| {
                    ConfigError::new("invalid percent-encoded token in the URI's password")
                })?);
            }
        }
    }
    let (netloc, path) = match netloc_and_path.find('/') {
        Some(i) => (&netloc_and_path[..i], Some(&netloc_and_path[i + 1..])),
        None => (netloc_and_path, None),
    };

    // Hosts and ports.
    if !netloc.is_empty() {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        let mut rest = netloc;
        loop {
            let (host, after) = if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').ok_or_else(|| {
                    ConfigError::new(format!(
                        "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"{s}\""
                    ))
                })?;
                if end == 0 {
                    return Err(ConfigError::new(format!(
                        "IPv6 host address may not be empty in URI: \"{s}\""
                    )));
                }
                (&r[..end], &r[end + 1..])
            } else {
                let end = rest.find([':', ',']).unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            };
            hosts.push(percent_decode(host)?);
            let mut after = after;
            let mut port = String::new();
            if let Some(a) = after.strip_prefix(':') {
                let end = a.find(',').unwrap_or(a.len());
                port = percent_decode(&a[..end])?;
                after = &a[end..];
            } else if !after.is_empty() && !after.starts_with(',') {
                return Err(ConfigError::new(format!(
                    "unexpected character \"{}\" at position {} in URI (expected \":\" or \"/\"): \"{s}\"",
                    after.chars().next().unwrap_or(' '),
                    raw.len() - after.len() + 1
                )));
            }
            ports.push(port);
            match after.strip_prefix(',') {
                Some(a) => rest = a,
                None => break,
            }
        }
        if hosts.iter().any(|h| !h.is_empty()) {
            cfg.host = Some(hosts.join(","));
        }
        if ports.iter().any(|p| !p.is_empty()) {
            cfg.port = Some(ports.join(","));
        }
    }

    if let Some(p) = path {
        if !p.is_empty() {
            cfg.dbname = Some(percent_decode(p)?);
        }
    }

    if let Some(q) = query {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                ConfigError::new(format!(
                    "missing key/value separator \"=\" in URI query parameter: \"{pair}\""
                ))
            })?;
            let k = percent_decode(k)?;
            let v = if k == "password" {
                percent_decode(v).map_err(|_| {
                    ConfigError::new("invalid percent-encoded token in the URI's password")
                })?
            } else {
                percent_decode(v)?
            };
            // libpq's JDBC compatibility: ssl=true means sslmode=require.
            if k == "ssl" && v == "true" {
                cfg.set("sslmode", "require")?;
                continue;
            }
            cfg.set(&k, &v)
                .map_err(|_| ConfigError::new(format!("invalid URI query parameter: \"{k}\"")))?;
        }
    }
    Ok(cfg)
}

/// `raw` with its passwords replaced by `********`, found as [`parse_url`] finds them: the
/// part after the first `:` of the credentials (before the first `@` that precedes any
/// `/`, within what comes before the first `?`), and every `password=` query value.
pub(crate) fn mask_url(raw: &str) -> String {
    let Some((prefix, rest)) = PREFIXES
        .iter()
        .find_map(|p| raw.strip_prefix(p).map(|r| (*p, r)))
    else {
        return raw.to_string();
    };
    let (before_q, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut out = String::from(prefix);
    let slash = before_q.find('/');
    match before_q
        .find('@')
        .filter(|at| slash.is_none_or(|sl| *at < sl))
    {
        Some(at) => {
            let creds = &before_q[..at];
            match creds.find(':') {
                Some(c) => {
                    out.push_str(&creds[..=c]);
                    out.push_str(MASK);
                }
                None => out.push_str(creds),
            }
            out.push_str(&before_q[at..]);
        }
        None => out.push_str(before_q),
    }
    if let Some(q) = query {
        out.push('?');
        let pairs: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if percent_decode(k).is_ok_and(|k| k == "password") => {
                    format!("{k}={MASK}")
                }
                _ => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Decodes `%XX` escapes; `%00` and malformed escapes are errors, as in libpq.
pub(crate) fn percent_decode(s: &str) -> Result<String, ConfigError> {
    if s.contains('\0') {
        return Err(ConfigError::new("NUL character in URI"));
    }
    if !s.contains('%') {
        return Ok(s.to_string());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    ConfigError::new(format!("invalid percent-encoded token: \"{s}\""))
                })?;
            if hex == 0 {
                return Err(ConfigError::new(format!(
                    "forbidden value %00 in percent-encoded value: \"{s}\""
                )));
            }
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| ConfigError::new(format!("invalid percent-encoded token: \"{s}\"")))
}

fn percent_encode(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

const MASK: &str = "********";

fn quote_value(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '\\')
    {
        return v.to_string();
    }
    let mut out = String::from("'");
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

pub(crate) fn to_conninfo(c: &Config, mask: bool) -> String {
    c.pairs()
        .into_iter()
        .map(|(k, v)| {
            let v = if mask && k == "password" {
                MASK.to_string()
            } else {
                quote_value(&v)
            };
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn to_url(c: &Config, mask: bool) -> String {
    let mut s = String::from("postgresql://");
    if c.user.is_some() || c.password.is_some() {
        if let Some(u) = &c.user {
            s.push_str(&percent_encode(u, b""));
        }
        if let Some(p) = &c.password {
            s.push(':');
            if mask {
                s.push_str(MASK);
            } else {
                s.push_str(&percent_encode(p, b""));
            }
        }
        s.push('@');
    }
    let hosts: Vec<&str> = c
        .host
        .as_deref()
        .map(|h| h.split(',').collect())
        .unwrap_or_default();
    let ports: Vec<&str> = c
        .port
        .as_deref()
        .map(|p| p.split(',').collect())
        .unwrap_or_default();
    let host_in_query = hosts.is_empty() || hosts.iter().any(|h| h.starts_with('/'));
    if !host_in_query {
        let parts: Vec<String> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let mut e = if h.contains(':') {
                    format!("[{h}]")
                } else {
                    percent_encode(h, b"")
                };
                let p = if ports.len() == 1 {
                    ports.first()
                } else {
                    ports.get(i)
                };
                if let Some(p) = p.filter(|p| !p.is_empty()) {
                    e.push(':');
                    e.push_str(p);
                }
                e
            })
            .collect();
        s.push_str(&parts.join(","));
    }
    if let Some(d) = &c.dbname {
        s.push('/');
        s.push_str(&percent_encode(d, b""));
    }
    let mut q: Vec<String> = Vec::new();
    for (k, v) in c.pairs() {
        let in_netloc = matches!(k, "user" | "password" | "dbname")
            || (matches!(k, "host" | "port") && !host_in_query);
        if in_netloc {
            continue;
        }
        q.push(format!("{k}={}", percent_encode(&v, b"/,")));
    }
    if !q.is_empty() {
        s.push('?');
        s.push_str(&q.join("&"));
    }
    s
}

/// Config's text forms: parsed from and written as a conninfo string or a URL.
impl Config {
    /// Parses a conninfo string (`host=a port=5432`) or a URL (`postgresql://…`).
    pub fn parse(s: &str) -> Result<Config, ConfigError> {
        if is_url(s) {
            parse_url(s)
        } else {
            parse_conninfo(s)
        }
    }

    /// True when libpq would treat `s` as a connection string rather than a database name
    /// (it contains `=` or starts with a URL prefix).
    pub fn looks_like_conninfo(s: &str) -> bool {
        is_url(s) || s.contains('=')
    }

    /// The CLI's connection arguments with pgbench's (libpq's) precedence: `-h -p -U`
    /// first, then the positional `dbname`, which, when it is a conninfo string or URL, is
    /// expanded and overrides them.
    pub fn from_cli(
        host: Option<&str>,
        port: Option<&str>,
        user: Option<&str>,
        dbname: Option<&str>,
    ) -> Result<Config, ConfigError> {
        let mut c = Config::new();
        if let Some(h) = host {
            c.set("host", h)?;
        }
        if let Some(p) = port {
            c.set("port", p)?;
        }
        if let Some(u) = user {
            c.set("user", u)?;
        }
        if let Some(d) = dbname {
            if Config::looks_like_conninfo(d) {
                let expanded = Config::parse(d)?;
                c.form = expanded.form;
                c.apply(&expanded);
            } else {
                c.set("dbname", d)?;
            }
        }
        Ok(c)
    }

    /// The options for display, password replaced by `********`, in the form they were
    /// given (conninfo or URL).
    pub fn masked(&self) -> String {
        match self.form {
            Form::Conninfo => self.masked_conninfo(),
            Form::Url => to_url(self, true),
        }
    }

    /// Conninfo form with the password masked.
    pub fn masked_conninfo(&self) -> String {
        to_conninfo(self, true)
    }

    /// URL form with the password masked.
    pub fn masked_url(&self) -> String {
        to_url(self, true)
    }

    /// URL form including the password.
    pub fn to_url_string(&self) -> String {
        to_url(self, false)
    }

    /// Conninfo form including the password (for handing to another libpq tool).
    pub fn to_conninfo_string(&self) -> String {
        to_conninfo(self, false)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Config({})", self.masked_conninfo())
    }
}

impl fmt::Display for Config {
    /// Same as [`Config::masked`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

impl FromStr for Config {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Config::parse(s)
    }
}
