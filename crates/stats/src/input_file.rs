//! Reading inputs (scripts, scenario files, result files) with bounded memory: a regular file
//! or a pipe is read up to a size limit, anything else (`/dev/zero`, a directory, a block
//! device) is refused with one line instead of being read without end.

use std::fs;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

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
    read_limited(file, limit)
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
