//! Downloading PostgreSQL binaries for a major that is not installed (`--pg-version 17`).
//!
//! Source: the zonky `io.zonky.test.postgres:embedded-postgres-binaries-<platform>` artifacts
//! on Maven Central (a jar holding one `.txz` bundle with `bin/`, `lib/`, `share/`). We read
//! `maven-metadata.xml` for the newest release of the major, download the jar with a progress
//! line, verify it against the `.sha256` (else `.sha1`) Maven publishes next to it, unpack the
//! bundle into `<cache>/pg-<version>-<platform>/` and mark it complete. Later runs reuse it; a
//! `flock` keeps two processes from downloading at once. Nothing half-made is left on failure.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha1::Digest;

use crate::error::{Error, Result};
use crate::paths;

mod bundle;

use bundle::unpack_jar;

/// Maven Central.
pub const MAVEN_CENTRAL: &str = "https://repo1.maven.org/maven2";
const GROUP_PATH: &str = "io/zonky/test/postgres";
const COMPLETE: &str = ".hotbench-complete";

/// Maven platform suffix for this machine.
pub fn platform() -> Result<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Ok("linux-amd64"),
        "aarch64" => Ok("linux-arm64v8"),
        "x86" => Ok("linux-i386"),
        "arm" => Ok("linux-arm32v7"),
        other => Err(Error::Download {
            version: String::new(),
            reason: format!("no prebuilt PostgreSQL bundle for architecture {other}"),
        }),
    }
}

fn fail(version: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::download(version, reason)
}

/// Bin directories of complete bundles in the cache, newest version first.
pub fn cached_bin_dirs() -> Vec<PathBuf> {
    let Ok(cache) = paths::cache_dir() else {
        return Vec::new();
    };
    let mut v: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(&cache)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(COMPLETE).is_file())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let ver = name.strip_prefix("pg-")?.split('-').next()?.to_string();
            Some((version_key(&ver)?, e.path().join("bin")))
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0));
    v.into_iter().map(|x| x.1).collect()
}

/// "17.2.0" -> [17, 2, 0]; versions with a suffix ("10.5.0-1") rank by their numbers.
fn version_key(v: &str) -> Option<Vec<u32>> {
    v.split(['.', '-']).map(|p| p.parse().ok()).collect()
}

/// The newest version of `major` listed in Maven metadata.
pub(crate) fn newest_for_major(metadata: &str, major: u32) -> Option<String> {
    metadata
        .split("<version>")
        .skip(1)
        .filter_map(|s| s.split("</version>").next())
        .map(str::trim)
        .filter(|v| v.split('.').next().and_then(|m| m.parse::<u32>().ok()) == Some(major))
        .filter_map(|v| Some((version_key(v)?, v.to_string())))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|x| x.1)
}

/// Trust the system CA store (honours SSL_CERT_FILE/SSL_CERT_DIR), falling back to the
/// bundled web PKI roots when it is empty.
fn root_certs() -> ureq::tls::RootCerts {
    let found = rustls_native_certs::load_native_certs();
    let certs: Vec<ureq::tls::Certificate<'static>> = found
        .certs
        .iter()
        .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    if certs.is_empty() {
        ureq::tls::RootCerts::WebPki
    } else {
        ureq::tls::RootCerts::new_with_certs(&certs)
    }
}

fn agent() -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(root_certs())
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_connect(Some(Duration::from_secs(20)))
        .timeout_recv_body(Some(Duration::from_secs(60)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .build()
        .into()
}

fn get_text(agent: &ureq::Agent, url: &str, version: &str) -> Result<String> {
    let mut resp = agent
        .get(url)
        .call()
        .map_err(|e| fail(version, format!("GET {url}: {e}")))?;
    resp.body_mut()
        .read_to_string()
        .map_err(|e| fail(version, format!("GET {url}: {e}")))
}

/// Maven repository root: `HOTBENCH_MAVEN_REPO` (a mirror) or Maven Central.
pub fn repository() -> String {
    std::env::var("HOTBENCH_MAVEN_REPO")
        .ok()
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('/').to_string())
        .unwrap_or_else(|| MAVEN_CENTRAL.to_string())
}

/// Download the newest bundle of `major` from `repo` into `cache` (unless another process
/// just did); returns the bundle directory.
pub fn fetch_into(repo: &str, cache: &Path, major: u32) -> Result<PathBuf> {
    paths::create_dir_all(cache)?;
    paths::set_mode(cache, 0o755)?;
    let _lock = lock(cache)?;
    let platform = platform()?;
    let artifact = format!("embedded-postgres-binaries-{platform}");
    let agent = agent();
    let meta_url = format!("{repo}/{GROUP_PATH}/{artifact}/maven-metadata.xml");
    let meta = get_text(&agent, &meta_url, &major.to_string())?;
    let version = newest_for_major(&meta, major).ok_or_else(|| {
        fail(
            major.to_string(),
            format!("no PostgreSQL {major} bundle for {platform} in {meta_url}"),
        )
    })?;
    let final_dir = cache.join(format!("pg-{version}-{platform}"));
    if final_dir.join(COMPLETE).is_file() {
        // Finished by another process while we waited for the lock.
        return Ok(final_dir);
    }
    let jar_url = format!("{repo}/{GROUP_PATH}/{artifact}/{version}/{artifact}-{version}.jar");
    let tmp_dir = cache.join(format!(
        ".pg-{version}-{platform}.{}.tmp",
        std::process::id()
    ));
    let jar = cache.join(format!(".{artifact}-{version}.{}.jar", std::process::id()));
    let result = download_and_unpack(&agent, &jar_url, &version, &jar, &tmp_dir, &final_dir);
    let _ = std::fs::remove_file(&jar);
    let _ = std::fs::remove_dir_all(&tmp_dir);
    result?;
    Ok(final_dir)
}

fn lock(cache: &Path) -> Result<File> {
    crate::lock_file::lock(
        &cache.join(".download.lock"),
        crate::lock_file::LockMode::Exclusive,
    )
}

fn download_and_unpack(
    agent: &ureq::Agent,
    url: &str,
    version: &str,
    jar: &Path,
    tmp_dir: &Path,
    final_dir: &Path,
) -> Result<()> {
    let t = Instant::now();
    let (sha256, sha1, size) = download(agent, url, version, jar)?;
    let secs = t.elapsed().as_secs_f64();
    match get_text(agent, &format!("{url}.sha256"), version) {
        Ok(expected) => check_sum("SHA-256", &expected, &sha256, url, version)?,
        Err(_) => {
            let expected = get_text(agent, &format!("{url}.sha1"), version)?;
            check_sum("SHA-1", &expected, &sha1, url, version)?;
        }
    }
    eprintln!(
        "hotbench: downloaded {:.1} MiB in {secs:.1} s, checksum verified; unpacking…",
        size as f64 / 1048576.0
    );
    let t = Instant::now();
    if final_dir.exists() {
        // An incomplete earlier attempt (no completion marker).
        std::fs::remove_dir_all(final_dir).map_err(|e| Error::io("cannot remove", final_dir, e))?;
    }
    paths::create_dir_all(tmp_dir)?;
    unpack_jar(jar, tmp_dir, version)?;
    if !tmp_dir.join("bin/postgres").is_file() {
        return Err(fail(version, "the bundle has no bin/postgres"));
    }
    paths::set_mode(tmp_dir, 0o755)?;
    std::fs::rename(tmp_dir, final_dir)
        .map_err(|e| Error::io("cannot move bundle into place", final_dir, e))?;
    let marker = final_dir.join(COMPLETE);
    std::fs::write(&marker, format!("{url}\n"))
        .map_err(|e| Error::io("cannot write", &marker, e))?;
    eprintln!(
        "hotbench: PostgreSQL {version} ready in {} ({:.1} s)",
        final_dir.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn check_sum(kind: &str, published: &str, actual: &str, url: &str, version: &str) -> Result<()> {
    let expected = published
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if expected != actual {
        return Err(fail(
            version,
            format!("{kind} mismatch for {url}: published {expected}, got {actual}"),
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Stream `url` into `dest`, hashing as we go; returns (sha256, sha1, bytes).
fn download(
    agent: &ureq::Agent,
    url: &str,
    version: &str,
    dest: &Path,
) -> Result<(String, String, u64)> {
    let mut resp = agent
        .get(url)
        .call()
        .map_err(|e| fail(version, format!("GET {url}: {e}")))?;
    let total: Option<u64> = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let mut body = resp.body_mut().with_config().limit(1 << 30).reader();
    let mut out = File::create(dest).map_err(|e| Error::io("cannot create", dest, e))?;
    let mut h256 = sha2::Sha256::new();
    let mut h1 = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut done: u64 = 0;
    let tty = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let mut last_quarter = 0;
    let mib = |b: u64| b as f64 / 1048576.0;
    let head = format!("hotbench: downloading PostgreSQL {version}");
    eprintln!("{head} ({url})");
    loop {
        let n = body
            .read(&mut buf)
            .map_err(|e| fail(version, format!("reading {url}: {e}")))?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])
            .map_err(|e| Error::io("cannot write download", dest, e))?;
        h256.update(&buf[..n]);
        h1.update(&buf[..n]);
        done += n as u64;
        let pct = total.map(|t| done * 100 / t.max(1));
        if tty && last.elapsed() > Duration::from_millis(200) {
            last = Instant::now();
            match (total, pct) {
                (Some(t), Some(p)) => {
                    eprint!("\r{head}: {:.1}/{:.1} MiB ({p}%)   ", mib(done), mib(t))
                }
                _ => eprint!("\r{head}: {:.1} MiB   ", mib(done)),
            }
        } else if !tty {
            if let Some(p) = pct {
                if p / 25 > last_quarter {
                    last_quarter = p / 25;
                    eprintln!("{head}: {p}%");
                }
            }
        }
    }
    if tty {
        eprintln!("\r{head}: {:.1} MiB done          ", mib(done));
    }
    if let Some(t) = total {
        if done != t {
            return Err(fail(version, format!("{url}: got {done} of {t} bytes")));
        }
    }
    out.sync_all()
        .map_err(|e| Error::io("cannot write download", dest, e))?;
    Ok((hex(&h256.finalize()), hex(&h1.finalize()), done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_newest_release_of_major() {
        let meta = "<versions><version>16.9.0</version><version>17.2.0</version>\
                    <version>17.11.0</version><version>17.9.0</version><version>18.1.0</version></versions>";
        assert_eq!(newest_for_major(meta, 17).as_deref(), Some("17.11.0"));
        assert_eq!(newest_for_major(meta, 16).as_deref(), Some("16.9.0"));
        assert_eq!(newest_for_major(meta, 12), None);
        assert_eq!(version_key("10.5.0-1"), Some(vec![10, 5, 0, 1]));
    }

    /// A jar as zonky publishes it: a zip holding a .txz of bin/postgres etc.
    fn fake_jar() -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, mode) in [
            ("bin/postgres", 0o755),
            ("bin/initdb", 0o755),
            ("share/postgres.bki", 0o644),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_size(3);
            h.set_mode(mode);
            h.set_cksum();
            tar.append_data(&mut h, path, &b"abc"[..])
                .expect("tar append");
        }
        let tar = tar.into_inner().expect("tar");
        let mut txz = Vec::new();
        lzma_rs::xz_compress(&mut &tar[..], &mut txz).expect("xz");
        super::bundle::tests::zip_one("postgres-linux-x86_64.txz", &txz)
    }

    /// Serve `files` (path -> body) over HTTP on loopback for a bounded number of requests.
    fn serve(files: Vec<(String, Vec<u8>)>) -> String {
        use std::io::BufRead;
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        std::thread::spawn(move || {
            for stream in l.incoming().take(20) {
                let Ok(mut s) = stream else { continue };
                let mut r = std::io::BufReader::new(s.try_clone().expect("clone"));
                let mut line = String::new();
                let _ = r.read_line(&mut line);
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).map(|n| n == 0).unwrap_or(true) || h == "\r\n" {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let (status, body) = match files.iter().find(|(p, _)| *p == path) {
                    Some((_, b)) => ("200 OK", b.clone()),
                    None => ("404 Not Found", b"missing".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes());
                let _ = s.write_all(&body);
            }
        });
        format!("http://{addr}")
    }

    fn repo_files(jar: &[u8], sha256: &str) -> Vec<(String, Vec<u8>)> {
        let art = format!(
            "/{GROUP_PATH}/embedded-postgres-binaries-{}",
            platform().expect("platform")
        );
        vec![
            (
                format!("{art}/maven-metadata.xml"),
                b"<versions><version>42.1.0</version><version>42.3.0</version></versions>".to_vec(),
            ),
            (
                format!(
                    "{art}/42.3.0/embedded-postgres-binaries-{}-42.3.0.jar",
                    platform().expect("p")
                ),
                jar.to_vec(),
            ),
            (
                format!(
                    "{art}/42.3.0/embedded-postgres-binaries-{}-42.3.0.jar.sha256",
                    platform().expect("p")
                ),
                sha256.as_bytes().to_vec(),
            ),
        ]
    }

    fn leftovers(cache: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(cache)
            .expect("read cache")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".download.lock")
            .collect();
        v.sort();
        v
    }

    #[test]
    fn downloads_verifies_and_unpacks_from_a_repository() {
        let jar = fake_jar();
        let sum = hex(&sha2::Sha256::digest(&jar));
        let repo = serve(repo_files(&jar, &format!("{sum}  x.jar\n")));
        let cache = tempfile::tempdir().expect("tempdir");
        let dir = fetch_into(&repo, cache.path(), 42).expect("fetch");
        assert!(dir.join("bin/postgres").is_file());
        assert!(dir.join(COMPLETE).is_file());
        assert_eq!(
            leftovers(cache.path()),
            vec![format!("pg-42.3.0-{}", platform().expect("p"))]
        );
        // Reused: a second fetch needs only the metadata.
        assert_eq!(fetch_into(&repo, cache.path(), 42).expect("again"), dir);
    }

    #[test]
    fn failed_downloads_say_why_and_leave_nothing() {
        let jar = fake_jar();
        let repo = serve(repo_files(&jar, "00deadbeef"));
        let cache = tempfile::tempdir().expect("tempdir");
        let e = fetch_into(&repo, cache.path(), 42).expect_err("checksum must fail");
        assert!(
            matches!(e, Error::Download { .. }) && e.to_string().contains("SHA-256 mismatch"),
            "{e}"
        );
        assert!(
            leftovers(cache.path()).is_empty(),
            "{:?}",
            leftovers(cache.path())
        );
        let e = fetch_into(&repo, cache.path(), 41).expect_err("no such major");
        assert!(e.to_string().contains("no PostgreSQL 41 bundle"), "{e}");
        let e = fetch_into("http://127.0.0.1:1", cache.path(), 42).expect_err("unreachable");
        assert!(
            e.to_string()
                .starts_with("download of PostgreSQL 42 binaries failed: GET http://127.0.0.1:1/"),
            "{e}"
        );
        assert!(leftovers(cache.path()).is_empty());
    }
}
