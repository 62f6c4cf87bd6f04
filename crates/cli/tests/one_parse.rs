//! Flags are parsed once, in `crates/cli/src/main.rs`: commands hand each other typed
//! requests (`RunRequest`, `LadderRequest`), never argument strings to parse again. This
//! scans the workspace's Rust sources and fails on a clap parse anywhere else.

use std::path::{Path, PathBuf};

/// clap's ways to parse a command line (spelled in two halves, so this file has none).
const PARSES: [[&str; 2]; 8] = [
    ["try_parse", "_from"],
    ["parse", "_from"],
    ["try_get_matches", "_from"],
    ["get_matches", "_from"],
    ["try_get_matches", "_from_mut"],
    ["get_matches", "_from_mut"],
    ["try_update", "_from"],
    ["update", "_from"],
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

/// The places in `text` that call one of `names` (whole identifiers only), as line numbers.
fn calls(text: &str, names: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if names.iter().any(|n| n == word) {
                found.push((i + 1, word.to_string()));
            }
        }
    }
    found
}

#[test]
fn clap_parses_a_command_line_only_in_main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let main = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs");
    let names: Vec<String> = PARSES.iter().map(|[a, b]| format!("{a}{b}")).collect();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    assert!(files.len() > 100, "found only {} sources", files.len());
    let mut offenders = Vec::new();
    for f in files {
        if f.canonicalize().ok() == main.canonicalize().ok() {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for (line, name) in calls(&text, &names) {
            offenders.push(format!("{}:{line}: {name}", f.display()));
        }
    }
    assert!(
        offenders.is_empty(),
        "a command line is parsed outside crates/cli/src/main.rs (build a typed request \
         instead; tests parse through main's parse_command_line):\n{}",
        offenders.join("\n")
    );
    // main.rs itself does parse: the scan sees what it looks for.
    let text = std::fs::read_to_string(&main).expect("main.rs");
    assert!(!calls(&text, &names).is_empty());
}
