//! Result files: a regular file is replaced atomically (write a temporary sibling, fsync,
//! rename), so a reader or a crash at any instant only ever sees a complete document; a FIFO
//! or character device is written through once (see [`crate::output_path`]). A failed write
//! is an error and leaves no temporary file behind.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::output_path::{self, OutputPath, OutputPathError};

#[derive(Debug, thiserror::Error)]
pub enum JsonFileError {
    #[error("could not write \"{path}\": {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Path(#[from] OutputPathError),
    #[error("could not encode the result as JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Serialises `value` (pretty) and writes it to `path`: the final, definitive write.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), JsonFileError> {
    let bytes = serde_json::to_vec_pretty(value)?;
    write_bytes_atomic(path, &bytes)
}

/// A snapshot during a run: regular files only (a stream gets the final document once).
pub fn write_snapshot<T: Serialize>(path: &Path, value: &T) -> Result<(), JsonFileError> {
    match output_path::resolve(path)? {
        OutputPath::Regular(target) => {
            let bytes = serde_json::to_vec_pretty(value)?;
            replace_regular(path, &target, &bytes)
        }
        OutputPath::Stream(_) => Ok(()),
    }
}

/// Writes `bytes` (plus a final newline) to `path`: atomically for a regular file, through
/// the node for a FIFO or character device.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), JsonFileError> {
    match output_path::resolve(path)? {
        OutputPath::Regular(target) => replace_regular(path, &target, bytes),
        OutputPath::Stream(node) => write_through(path, &node, bytes),
    }
}

fn replace_regular(shown: &Path, target: &Path, bytes: &[u8]) -> Result<(), JsonFileError> {
    let io = |source| JsonFileError::Io {
        path: shown.to_path_buf(),
        source,
    };
    let tmp = output_path::temp_sibling(target, "");
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, target)
    })();
    written.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}

fn write_through(shown: &Path, node: &Path, bytes: &[u8]) -> Result<(), JsonFileError> {
    let written = (|| {
        let mut f = fs::OpenOptions::new().write(true).open(node)?;
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.flush()
    })();
    written.map_err(|source| JsonFileError::Io {
        path: shown.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hb-json-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn leftovers(d: &Path) -> Vec<String> {
        crate::output_path::temp_siblings_in(d)
    }

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let d = dir("replace");
        let path = d.join("r.json");
        write_atomic(&path, &serde_json::json!({"a": 1, "b": [1, 2, 3]})).unwrap();
        write_atomic(&path, &serde_json::json!({"a": 2})).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        assert!(leftovers(&d).is_empty());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unwritable_path_is_an_error() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.json"), &1).unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir/x.json"), "{err}");
    }

    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_replaced() {
        let d = dir("link");
        let real = d.join("real.json");
        fs::write(&real, "old").unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, &serde_json::json!({"v": 3})).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let v: serde_json::Value = serde_json::from_slice(&fs::read(&real).unwrap()).unwrap();
        assert_eq!(v["v"], 3);
        assert!(leftovers(&d).is_empty());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_are_written_through_and_stay_devices() {
        write_atomic(Path::new("/dev/null"), &serde_json::json!({"v": 1})).unwrap();
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        let e = write_atomic(Path::new("/dev/full"), &serde_json::json!({"v": 1})).unwrap_err();
        assert!(e.to_string().contains("/dev/full"), "{e}");
        assert!(fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
        // Snapshots skip streams: only the final document goes through.
        write_snapshot(Path::new("/dev/full"), &1).unwrap();
    }
}
