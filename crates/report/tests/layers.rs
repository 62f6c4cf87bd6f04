//! The crate's layout stays as `docs/architecture.md` describes it: `analysis` uses neither
//! `text` nor `html`, `text` does not use `html`, and no two files use each other (the
//! `crate::…` paths in a file name the files it uses). Read from the sources, so a new file
//! that breaks the layering fails here, not in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`html::run`) → source text, for every file under `src/`.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).expect("read src") {
            let p = e.expect("entry").path();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                let mut sub = prefix.to_vec();
                sub.push(name);
                walk(&p, &sub, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let mut path = prefix.to_vec();
                if name != "mod" && name != "lib" {
                    path.push(name);
                }
                out.insert(path.join("::"), std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut out,
    );
    out
}

/// The longest module of `known` that `path` (`html::run::run_section`) starts with.
fn module_of(path: &str, known: &BTreeMap<String, String>) -> Option<String> {
    let mut s: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    while !s.is_empty() {
        let m = s.join("::");
        if known.contains_key(&m) {
            return Some(m);
        }
        s.pop();
    }
    None
}

/// The modules a file's code names through `crate::…` paths (comments left out), including
/// each name of a `crate::a::{b, c}` group.
fn uses(text: &str, known: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let mut rest = line.split("//").next().unwrap_or("");
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let base = path.trim_end_matches(':').to_string();
            out.extend(module_of(&base, known));
            if let Some(group) = rest[path.len()..].strip_prefix('{') {
                for name in group.split('}').next().unwrap_or("").split(',') {
                    let name = name.trim().split("::").next().unwrap_or("");
                    out.extend(module_of(&format!("{base}::{name}"), known));
                }
            }
        }
    }
    out
}

#[test]
fn no_two_files_use_each_other_and_rendering_depends_on_analysis_only() {
    let mods = modules();
    let graph: BTreeMap<&String, BTreeSet<String>> =
        mods.iter().map(|(m, t)| (m, uses(t, &mods))).collect();
    assert!(graph.len() > 20, "{:?}", graph.keys());
    assert!(graph[&"html::page".to_string()].contains("html::run"));
    let layer = |m: &str| m.split("::").next().unwrap_or("").to_string();
    let mut bad = Vec::new();
    for (a, used) in &graph {
        for b in used {
            // The crate root and a parent declaring its files are not uses.
            let declares = a.is_empty() || b.starts_with(&format!("{a}::"));
            if b.as_str() > a.as_str() && !declares && graph[b].contains(a.as_str()) {
                bad.push(format!("{a} <-> {b}"));
            }
            let (from, to) = (layer(a), layer(b));
            if (from == "analysis" && (to == "text" || to == "html"))
                || (from == "text" && to == "html")
            {
                bad.push(format!("{a} uses {b}"));
            }
        }
    }
    assert!(bad.is_empty(), "layering broken: {bad:#?}");
}
