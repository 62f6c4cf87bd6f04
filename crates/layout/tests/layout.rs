//! The layout rules of `docs/architecture.md` on every crate of the workspace, tests and
//! examples included: no two files use each other, directly or round a longer circle, and
//! no function is over 150 lines. A failure names the circle (`a.rs -> b.rs -> a.rs`) or the
//! function (`file:line`).

use std::path::{Path, PathBuf};

use hotbench_layout::workspace::{circles, crate_dirs, long_functions};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace dir")
}

#[test]
fn no_import_circle_between_files() {
    let ws = workspace();
    let crates = crate_dirs(&ws);
    assert!(crates.len() > 10, "{crates:?}");
    let mut found = Vec::new();
    for c in &crates {
        found.extend(circles(c, &ws).unwrap_or_else(|e| panic!("{e}")));
    }
    assert!(
        found.is_empty(),
        "import circles between files:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_function_over_150_lines() {
    let ws = workspace();
    let mut found = Vec::new();
    for c in crate_dirs(&ws) {
        found.extend(long_functions(&c, &ws, 150));
    }
    assert!(
        found.is_empty(),
        "functions over 150 lines (make them named steps):\n{}",
        found.join("\n")
    );
}
