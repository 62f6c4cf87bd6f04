//! Where an output file really goes, decided before anything is written: hotbench replaces
//! regular files atomically (temp sibling + rename), but never unlinks or renames over
//! something that is not a regular file. A symlink is followed (the link stays a link), an
//! existing FIFO or character device (`/dev/stdout`, a pipe) is written *through* like `tee`
//! does, and directories, sockets and block devices are refused.

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// An output's destination once symlinks are followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputPath {
    /// A regular file, existing or to be created: replaced atomically.
    Regular(PathBuf),
    /// An existing FIFO or character device: opened and written through, once, at the end.
    Stream(PathBuf),
}

impl OutputPath {
    pub fn path(&self) -> &Path {
        match self {
            OutputPath::Regular(p) | OutputPath::Stream(p) => p,
        }
    }
}

/// Why an output path cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("could not write \"{path}\": {reason}")]
pub struct OutputPathError {
    pub path: PathBuf,
    pub reason: String,
}

/// Symlink hops followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Follows symlinks (also dangling ones, whose target will be created) and classifies what
/// the path names.
pub fn resolve(path: &Path) -> Result<OutputPath, OutputPathError> {
    let fail = |reason: String| OutputPathError {
        path: path.to_path_buf(),
        reason,
    };
    // The kernel follows links first: this also sees through /proc's magic links
    // (`/dev/stdout` → `/proc/self/fd/1` → `pipe:[…]`), which read_link cannot.
    match fs::metadata(path) {
        Ok(meta) => {
            let ft = meta.file_type();
            return if ft.is_file() {
                let real = fs::canonicalize(path).map_err(|e| fail(e.to_string()))?;
                Ok(OutputPath::Regular(real))
            } else if ft.is_fifo() || ft.is_char_device() {
                Ok(OutputPath::Stream(path.to_path_buf()))
            } else if ft.is_dir() {
                Err(fail("is a directory".into()))
            } else if ft.is_block_device() {
                Err(fail("is a block device, not a regular file".into()))
            } else {
                Err(fail("is not a regular file".into()))
            };
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail(e.to_string())),
    }
    // Missing, or a dangling symlink whose target is to be created: follow it by hand.
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match fs::symlink_metadata(&current) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(OutputPath::Regular(canonical_missing(&current)))
            }
            Err(e) => return Err(fail(e.to_string())),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(&current).map_err(|e| fail(e.to_string()))?;
            current = match current.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            continue;
        }
        // Something appeared since the kernel said nothing was there: decide on it afresh.
        return if current.as_path() == path {
            Err(fail("changed while being checked".into()))
        } else {
            resolve(&current)
        };
    }
    Err(fail("too many levels of symbolic links".into()))
}

/// A file still to be created, named by its directory's real path and its own name: `x.json`,
/// `./x.json` and `d/../x.json` are one file, so two outputs (or an output and an input) can
/// be compared before either exists. A directory that cannot be resolved keeps the path as
/// given (writing there fails, and says why, at the check).
fn canonical_missing(path: &Path) -> PathBuf {
    let Some(name) = path.file_name() else {
        return path.to_path_buf();
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match fs::canonicalize(dir) {
        Ok(real) => real.join(name),
        Err(_) => path.to_path_buf(),
    }
}

/// The temporary sibling a regular file is written to before the rename.
pub fn temp_sibling(target: &Path, purpose: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    target.with_file_name(format!(".{name}.{}{purpose}.tmp", std::process::id()))
}

/// Names of the temporary siblings ([`temp_sibling`]) left in `dir`: none after any write,
/// failed or not (what the tests of atomic writes check).
pub fn temp_siblings_in(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks, before a run starts, that `path` can be written: resolves it and, for a regular
/// file, creates and removes a temporary file next to it (a missing or read-only directory
/// fails here, not after the measurement).
pub fn check(path: &Path) -> Result<OutputPath, OutputPathError> {
    let out = resolve(path)?;
    if let OutputPath::Regular(target) = &out {
        let probe = temp_sibling(target, ".check");
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map_err(|e| OutputPathError {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        let _ = fs::remove_file(&probe);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hb-outpath-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_missing_and_symlinked_files_resolve_to_the_file() {
        let d = dir("reg");
        let f = d.join("r.json");
        assert_eq!(resolve(&f).unwrap(), OutputPath::Regular(f.clone()));
        fs::write(&f, "x").unwrap();
        assert_eq!(resolve(&f).unwrap(), OutputPath::Regular(f.clone()));
        let link = d.join("link.json");
        std::os::unix::fs::symlink("r.json", &link).unwrap();
        assert_eq!(
            resolve(&link).unwrap(),
            OutputPath::Regular(d.join("r.json"))
        );
        // A file still to be made is named by its directory's real path, however spelled.
        let missing = d.join("sub/../new.json");
        fs::create_dir(d.join("sub")).unwrap();
        assert_eq!(
            resolve(&missing).unwrap(),
            OutputPath::Regular(fs::canonicalize(&d).unwrap().join("new.json"))
        );
        let dangling = d.join("dangling.json");
        std::os::unix::fs::symlink(d.join("new.json"), &dangling).unwrap();
        assert_eq!(
            resolve(&dangling).unwrap(),
            OutputPath::Regular(d.join("new.json"))
        );
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_are_streams_and_directories_are_refused() {
        assert!(matches!(
            resolve(Path::new("/dev/null")).unwrap(),
            OutputPath::Stream(_)
        ));
        let d = dir("dir");
        let e = resolve(&d).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let a = d.join("a");
        let b = d.join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let e = resolve(&a).unwrap_err().to_string();
        assert!(e.contains("symbolic links"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn check_fails_for_missing_directories_and_leaves_nothing() {
        let e = check(Path::new("/nonexistent-hb-dir/r.json")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent-hb-dir/r.json"), "{e}");
        let d = dir("check");
        check(&d.join("ok.json")).unwrap();
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0);
        fs::remove_dir_all(&d).unwrap();
    }
}
