//! The workspace's crates and their roots (`src/lib.rs`, `src/main.rs`, `src/bin/*`,
//! `tests/*`, `examples/*`, `benches/*`), the import circles between their files and the
//! functions over a length, each named so a failure says where to look.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::functions::functions;
use crate::modules::Tree;

/// Every crate directory under `<workspace>/crates`.
pub fn crate_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = read_dir(&workspace.join("crates"))
        .into_iter()
        .filter(|d| d.join("Cargo.toml").exists())
        .collect();
    out.sort();
    out
}

/// A crate's roots: each is compiled as a crate of its own.
pub fn roots(crate_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in ["src/lib.rs", "src/main.rs"] {
        if crate_dir.join(f).exists() {
            out.push(crate_dir.join(f));
        }
    }
    for d in ["src/bin", "tests", "examples", "benches"] {
        for p in read_dir(&crate_dir.join(d)) {
            if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            } else if p.join("main.rs").exists() {
                out.push(p.join("main.rs"));
            }
        }
    }
    out.sort();
    out
}

/// Every `.rs` file under a crate directory (`target/` and hidden directories left out).
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in read_dir(dir) {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if p.is_dir() && name != "target" && !name.starts_with('.') {
            out.extend(rust_files(&p));
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn read_dir(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    out.sort();
    out
}

/// The import circles among the files of a crate's roots, each as `a.rs -> b.rs -> a.rs`
/// (paths relative to `base`).
pub fn circles(crate_dir: &Path, base: &Path) -> Result<Vec<String>, String> {
    let tree = Tree::read(&roots(crate_dir))?;
    let edges = tree.edges();
    let name = |f: usize| {
        let p = &tree.files()[f];
        p.strip_prefix(base).unwrap_or(p).display().to_string()
    };
    Ok(strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let path = cycle_through(&edges, &c);
            let names: Vec<String> = path.iter().map(|f| name(*f)).collect();
            let mut msg = format!("{} (circle of {} files)", names.join(" -> "), c.len());
            if c.len() > 2 {
                for a in &c {
                    let to: Vec<String> = edges[a]
                        .iter()
                        .filter(|b| c.contains(b))
                        .map(|b| name(*b))
                        .collect();
                    msg.push_str(&format!("\n    {} uses {}", name(*a), to.join(", ")));
                }
            }
            msg
        })
        .collect())
}

/// The functions over `max` lines in the crate's files, as `file:line fn name (N lines)`.
pub fn long_functions(crate_dir: &Path, base: &Path, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for f in rust_files(crate_dir) {
        let Ok(src) = std::fs::read_to_string(&f) else {
            continue;
        };
        for func in functions(&src).into_iter().filter(|x| x.lines > max) {
            let shown = f.strip_prefix(base).unwrap_or(&f).display().to_string();
            out.push(format!(
                "{shown}:{} fn {} ({} lines)",
                func.line, func.name, func.lines
            ));
        }
    }
    out
}

/// Tarjan's strongly connected components.
pub fn strongly_connected(edges: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: BTreeMap<usize, usize>,
        low: BTreeMap<usize, usize>,
        stack: Vec<usize>,
        on_stack: BTreeSet<usize>,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let next: Vec<usize> = s.edges.get(&v).into_iter().flatten().copied().collect();
        for w in next {
            if !s.index.contains_key(&w) {
                visit(s, w);
                let lw = s.low[&w];
                let lv = s.low.get_mut(&v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(&w) {
                let iw = s.index[&w];
                let lv = s.low.get_mut(&v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[&v] == s.index[&v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    let nodes: BTreeSet<usize> = edges
        .iter()
        .flat_map(|(a, b)| std::iter::once(*a).chain(b.iter().copied()))
        .collect();
    for v in nodes {
        if !s.index.contains_key(&v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// A shortest cycle from the component's first file back to itself, inside the component.
fn cycle_through(edges: &BTreeMap<usize, BTreeSet<usize>>, comp: &[usize]) -> Vec<usize> {
    let inside: BTreeSet<usize> = comp.iter().copied().collect();
    let start = comp[0];
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in edges.get(&v).into_iter().flatten() {
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while let Some(&p) = prev.get(&at) {
                    path.insert(1, p);
                    at = p;
                }
                if v == start {
                    path.truncate(1);
                }
                path.push(start);
                path.dedup();
                return path;
            }
            if inside.contains(&w) && !prev.contains_key(&w) && w != start {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    comp.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_circle_is_found_and_named_by_its_shortest_path() {
        let mut e: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        e.entry(0).or_default().insert(1);
        e.entry(1).or_default().insert(2);
        e.entry(2).or_default().insert(0);
        e.entry(2).or_default().insert(3);
        let sccs: Vec<Vec<usize>> = strongly_connected(&e)
            .into_iter()
            .filter(|c| c.len() > 1)
            .collect();
        assert_eq!(sccs, [vec![0, 1, 2]]);
        assert_eq!(cycle_through(&e, &sccs[0]), [0, 1, 2, 0]);
    }
}
