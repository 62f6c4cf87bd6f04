//! Where scenarios come from: the directories under `scenarios/` compiled into the binary
//! with `include_dir`, or a user's directory on disk (`--dir`), read at run time so a copied
//! and edited scenario runs without recompiling. Either way a scenario becomes a [`Bundle`]:
//! its name, a display path for messages, and its text files in memory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};

use crate::error::{Result, ScenarioError};

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../scenarios");

/// The manifest's file name inside a scenario directory.
pub const MANIFEST: &str = "scenario.toml";

/// One scenario's files, loaded.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub name: String,
    /// `scenarios/NAME` for built-in scenarios, the directory otherwise.
    pub location: String,
    pub builtin: bool,
    /// Relative path → contents (text files only).
    pub files: BTreeMap<String, String>,
}

impl Bundle {
    /// `location/rel`, as shown in messages.
    pub fn display(&self, rel: &str) -> String {
        format!("{}/{rel}", self.location)
    }

    pub fn file(&self, rel: &str) -> Option<&str> {
        self.files.get(rel).map(String::as_str)
    }
}

/// Built-in scenarios, sorted by name.
pub fn builtin_bundles() -> Vec<Bundle> {
    let mut out = Vec::new();
    for d in BUILTIN.dirs() {
        if d.get_file(d.path().join(MANIFEST)).is_none() {
            continue;
        }
        let name = d
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut files = BTreeMap::new();
        collect_embedded(d, d.path(), &mut files);
        out.push(Bundle {
            location: format!("scenarios/{name}"),
            name,
            builtin: true,
            files,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn collect_embedded(d: &Dir<'static>, root: &Path, files: &mut BTreeMap<String, String>) {
    for f in d.files() {
        if let (Ok(rel), Some(text)) = (f.path().strip_prefix(root), f.contents_utf8()) {
            files.insert(rel.to_string_lossy().into_owned(), text.to_string());
        }
    }
    for sub in d.dirs() {
        collect_embedded(sub, root, files);
    }
}

/// Scenarios in a user's directory: the directory itself when it holds a `scenario.toml`,
/// else each subdirectory that does.
pub fn dir_bundles(dir: &Path) -> Result<Vec<Bundle>> {
    if !dir.is_dir() {
        return Err(ScenarioError::Input(format!(
            "scenario directory \"{}\" does not exist or is not a directory",
            dir.display()
        )));
    }
    if dir.join(MANIFEST).is_file() {
        return Ok(vec![load_dir(dir)?]);
    }
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| ScenarioError::Io(format!("could not read \"{}\": {e}", dir.display())))?;
    for e in entries.flatten() {
        let p = e.path();
        if p.join(MANIFEST).is_file() {
            out.push(load_dir(&p)?);
        }
    }
    if out.is_empty() {
        return Err(ScenarioError::Input(format!(
            "no scenario found in \"{}\" (expected {MANIFEST} in it or in its subdirectories)",
            dir.display()
        )));
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn load_dir(dir: &Path) -> Result<Bundle> {
    let name = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    let mut files = BTreeMap::new();
    collect_disk(dir, dir, &mut files, 0)?;
    Ok(Bundle {
        name,
        location: dir.display().to_string(),
        builtin: false,
        files,
    })
}

fn collect_disk(
    root: &Path,
    dir: &Path,
    files: &mut BTreeMap<String, String>,
    depth: usize,
) -> Result<()> {
    if depth > 4 {
        return Ok(());
    }
    let io = |p: &Path, e: std::io::Error| {
        ScenarioError::Io(format!("could not read \"{}\": {e}", p.display()))
    };
    let entries = std::fs::read_dir(dir).map_err(|e| io(dir, e))?;
    for e in entries.flatten() {
        let p: PathBuf = e.path();
        if p.is_dir() {
            collect_disk(root, &p, files, depth + 1)?;
            continue;
        }
        let text_like = matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("toml" | "sql" | "txt" | "md")
        );
        if !text_like {
            continue;
        }
        let text =
            hotbench_results::input_file::read_text(&p, hotbench_results::input_file::SCRIPT_LIMIT)
                .map_err(|e| {
                    ScenarioError::Input(format!("could not read \"{}\": {e}", p.display()))
                })?;
        if let Ok(rel) = p.strip_prefix(root) {
            files.insert(rel.to_string_lossy().into_owned(), text);
        }
    }
    Ok(())
}

/// All scenarios visible with these `--dir` directories: the user's first (they shadow
/// built-in scenarios of the same name), then the built-in ones.
pub fn all_bundles(dirs: &[PathBuf]) -> Result<Vec<Bundle>> {
    let mut out: Vec<Bundle> = Vec::new();
    for d in dirs {
        for b in dir_bundles(d)? {
            if !out.iter().any(|o| o.name == b.name) {
                out.push(b);
            }
        }
    }
    for b in builtin_bundles() {
        if !out.iter().any(|o| o.name == b.name) {
            out.push(b);
        }
    }
    Ok(out)
}

/// Finds scenario `name` (user directories first). When `--dir` is given, the scenario
/// must be in it: a built-in one of the same name is never run in its place (a user who
/// points `--dir` at `./my-ladder` and asks for `daily-limit` means their own files).
pub fn find_bundle(name: &str, dirs: &[PathBuf]) -> Result<Bundle> {
    if !dirs.is_empty() {
        let mut mine = Vec::new();
        for d in dirs {
            mine.extend(dir_bundles(d)?);
        }
        let names: Vec<String> = mine.iter().map(|b| b.name.clone()).collect();
        return mine.into_iter().find(|b| b.name == name).ok_or_else(|| {
            ScenarioError::Input(format!(
                "no scenario \"{name}\" in --dir {} (it holds: {}); a scenario's name is its directory's name, and built-in scenarios run without --dir",
                dirs.iter()
                    .map(|d| format!("\"{}\"", d.display()))
                    .collect::<Vec<_>>()
                    .join(", "),
                names.join(", ")
            ))
        });
    }
    let all = all_bundles(dirs)?;
    let names: Vec<String> = all.iter().map(|b| b.name.clone()).collect();
    all.into_iter().find(|b| b.name == name).ok_or_else(|| {
        ScenarioError::Input(format!(
            "unknown scenario \"{name}\" (available: {})",
            names.join(", ")
        ))
    })
}
