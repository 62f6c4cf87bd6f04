//! Atomic JSON files: write to a temporary sibling, fsync, then rename over the target, so a
//! reader (or a crash at any instant) only ever sees a complete, valid document.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum JsonFileError {
    #[error("could not write \"{path}\": {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not encode the result as JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Serialises `value` (pretty) and atomically replaces `path` with it.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), JsonFileError> {
    let bytes = serde_json::to_vec_pretty(value)?;
    write_bytes_atomic(path, &bytes)
}

pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), JsonFileError> {
    let io = |source| JsonFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result.json".into());
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    {
        let mut f = fs::File::create(&tmp).map_err(io)?;
        f.write_all(bytes).map_err(io)?;
        f.write_all(b"\n").map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("hb-json-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        write_atomic(&path, &serde_json::json!({"a": 1, "b": [1, 2, 3]})).unwrap();
        write_atomic(&path, &serde_json::json!({"a": 2})).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_path_is_an_error() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.json"), &1).unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir/x.json"), "{err}");
    }
}
