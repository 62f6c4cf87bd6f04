//! Template clusters for tests: initdb takes seconds on a loaded 2-core machine, copying a
//! fresh cluster a fraction of that. The first test server of a PostgreSQL build runs initdb
//! into `<cache>/templates/pg-<version>-<hash of bin dir>` (atomically: initdb into a temp
//! name, then rename); later ones copy it and give the copy to the run-as user. Only used for
//! throwaway clusters (`ClusterOptions::from_template`); any failure falls back to initdb.

use std::path::{Path, PathBuf};

use crate::account::RunAs;
use crate::binaries::PgBinaries;
use crate::config::DEFAULT_USER;
use crate::error::{Error, Result};
use crate::paths;

fn key(bins: &PgBinaries) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bins.bin_dir.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x100000001b3);
    }
    // v2: templates carry pg_stat_statements in template1 and postgres.
    format!("pg-{}-{:08x}-v2", bins.version, h as u32)
}

/// Path of the template for `bins`, creating it if needed.
pub fn ensure(bins: &PgBinaries, user: &RunAs, log: &Path) -> Result<PathBuf> {
    let root = paths::cache_dir()?.join("templates");
    let dir = root.join(key(bins));
    if dir.join("PG_VERSION").is_file() {
        return Ok(dir);
    }
    paths::create_dir_all(&root)?;
    paths::set_mode(&root, 0o755)?;
    user.chown(&root)?;
    let tmp = root.join(format!(".{}.{}.tmp", key(bins), std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let made = crate::initdb::initdb_with_extensions(bins, user, &tmp, DEFAULT_USER, true, log);
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another process won the race; theirs is as good as ours.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join("PG_VERSION").is_file() {
        Ok(dir)
    } else {
        Err(Error::State(format!(
            "template cluster {} missing",
            dir.display()
        )))
    }
}

/// Make `data` a copy of the template for `bins`, owned by `user`.
pub fn copy_into(bins: &PgBinaries, user: &RunAs, data: &Path, log: &Path) -> Result<()> {
    let src = ensure(bins, user, log)?;
    let r = copy_tree(&src, data, user);
    if r.is_err() {
        let _ = std::fs::remove_dir_all(data);
    }
    r
}

fn copy_tree(src: &Path, dst: &Path, user: &RunAs) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let md =
        std::fs::symlink_metadata(src).map_err(|e| Error::io("cannot read template", src, e))?;
    if md.is_dir() {
        std::fs::create_dir(dst).map_err(|e| Error::io("cannot copy template", dst, e))?;
        for entry in
            std::fs::read_dir(src).map_err(|e| Error::io("cannot read template", src, e))?
        {
            let entry = entry.map_err(|e| Error::io("cannot read template", src, e))?;
            copy_tree(&entry.path(), &dst.join(entry.file_name()), user)?;
        }
    } else if md.file_type().is_symlink() {
        let target =
            std::fs::read_link(src).map_err(|e| Error::io("cannot read template", src, e))?;
        std::os::unix::fs::symlink(target, dst)
            .map_err(|e| Error::io("cannot copy template", dst, e))?;
        return Ok(());
    } else {
        std::fs::copy(src, dst).map_err(|e| Error::io("cannot copy template", dst, e))?;
    }
    paths::set_mode(dst, md.permissions().mode() & 0o7777)?;
    user.chown(dst)
}

#[cfg(test)]
mod tests {
    #[test]
    fn builds_and_copies_a_template() {
        let user = crate::account::RunAs::get().expect("user");
        let (found, _) = crate::binaries::installed();
        let Some(bins) = found.into_iter().find(|b| !b.downloaded) else {
            return;
        };
        let dir = tempfile::Builder::new()
            .prefix("hbt-")
            .tempdir_in("/tmp")
            .expect("tmp");
        user.chown(dir.path()).expect("chown");
        let log = dir.path().join("log");
        let t = super::ensure(&bins, user, &log)
            .unwrap_or_else(|e| panic!("{e}: {}", crate::process::log_tail(&log, 0, 20)));
        assert!(t.join("PG_VERSION").is_file());
        let data = dir.path().join("data");
        let t = std::time::Instant::now();
        super::copy_into(&bins, user, &data, &log).expect("copy");
        eprintln!("copy {:?}", t.elapsed());
        assert!(data.join("global/pg_control").is_file());
    }
}
