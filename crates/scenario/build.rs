//! Rebuild when a built-in scenario changes: `include_dir!` does not tell cargo which files
//! it read, so new or edited files under `scenarios/` would otherwise be missed.

fn main() {
    println!("cargo:rerun-if-changed=../../scenarios");
}
