//! Reading inputs (scripts, scenario files, result files) with bounded memory: a regular file
//! or a pipe is read up to a size limit, anything else (`/dev/zero`, a directory, a block
//! device) is refused with one line instead of being read without end.
//!
//! A pipe (`<(…)`, `/dev/stdin`, `-f -`) gives its bytes once, so its text is kept for the
//! rest of the process: a command that reads an input again (a sweep loads its scripts at
//! every count) sees the same text, not an empty one.

use std::fs;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::Mutex;

/// Largest script or scenario file read (pgbench scripts are kilobytes).
pub const SCRIPT_LIMIT: u64 = 16 << 20;
/// Largest result file read (a day's per-second timeline is a few hundred megabytes).
pub const RESULT_LIMIT: u64 = 1 << 30;

/// Why an input could not be read, worded to follow `could not read "PATH": `.
#[derive(Debug, thiserror::Error)]
#[error("{reason}")]
pub struct InputError {
    pub reason: String,
}

fn fail(reason: impl Into<String>) -> InputError {
    InputError {
        reason: reason.into(),
    }
}

fn too_large(limit: u64) -> InputError {
    fail(format!(
        "larger than {} MiB, the limit for this input",
        limit >> 20
    ))
}

/// Reads `path` as UTF-8 text of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let file = fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
    let ft = meta.file_type();
    if ft.is_file() && meta.len() > limit {
        return Err(too_large(limit));
    }
    if ft.is_dir() {
        return Err(fail("is a directory"));
    }
    if !(ft.is_file() || ft.is_fifo()) {
        return Err(fail("is not a regular file or a pipe"));
    }
    if ft.is_fifo() {
        return read_once((meta.dev(), meta.ino()), limit, || {
            read_limited(file, limit)
        });
    }
    read_limited(file, limit)
}

/// Reads standard input (`-f -`) as [`read_limited`] does, once: whatever it is (a pipe, or
/// a file whose offset a first read left at its end), a second read would find nothing.
pub fn read_stdin(limit: u64) -> Result<String, InputError> {
    let stdin = std::io::stdin();
    let key = stdin
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| fs::File::from(fd).metadata())
        .map(|m| (m.dev(), m.ino()));
    match key {
        Ok(key) => read_once(key, limit, || read_limited(stdin, limit)),
        Err(_) => read_limited(stdin, limit),
    }
}

/// The text of every pipe read so far, by device and inode.
static KEPT: Mutex<Vec<((u64, u64), String)>> = Mutex::new(Vec::new());

/// The kept text of the pipe `key`, or `read`'s, kept for the next read.
fn read_once(
    key: (u64, u64),
    limit: u64,
    read: impl FnOnce() -> Result<String, InputError>,
) -> Result<String, InputError> {
    let kept =
        |k: &Vec<((u64, u64), String)>| k.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone());
    if let Some(text) = kept(&KEPT.lock().unwrap_or_else(|e| e.into_inner())) {
        if text.len() as u64 > limit {
            return Err(too_large(limit));
        }
        return Ok(text);
    }
    // Read without the lock: a pipe may take as long as its writer does.
    let text = read()?;
    KEPT.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((key, text.clone()));
    Ok(text)
}

/// Reads a stream (standard input) as UTF-8 text of at most `limit` bytes.
pub fn read_limited(stream: impl Read, limit: u64) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    stream
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        fail(format!(
            "not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    // A byte-order mark (editors on Windows add one) is no part of the first line: left in,
    // it made a CSV's first point or a script's first command unreadable.
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused() {
        for p in ["/dev/zero", "/dev/urandom"] {
            let e = read_text(Path::new(p), SCRIPT_LIMIT).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{p}: {e}");
        }
        let e = read_text(Path::new("/"), SCRIPT_LIMIT).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[test]
    fn streams_are_cut_at_the_limit() {
        let e = read_limited(std::io::repeat(b'x'), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        assert_eq!(read_limited(&b"abc"[..], 3).unwrap(), "abc");
        assert_eq!(
            read_limited(&b"\xef\xbb\xbf1,2\n"[..], 10).unwrap(),
            "1,2\n"
        );
        let e = read_limited(&b"a\xffb"[..], 10).unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
    }
}
