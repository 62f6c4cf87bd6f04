//! A crate's module tree read from its sources, and which of its files use which: the
//! `use` declarations and the paths in code (`crate::…`, `super::…`, `self::…`, a child
//! module's name), each resolved to the file that defines the item it names, through
//! re-exports (`pub use`). A `mod` declaration owns a file; it is not a use of it, as in
//! `cargo modules`. A re-export is a use only where the file's own code names what it
//! re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::functions::matching_close;
use crate::lex::{tokens, Tok, Token};

/// One `use` binding (`use a::b as c;` binds `c` to `a::b`; a glob binds nothing).
#[derive(Debug, Clone)]
struct Binding {
    name: Option<String>,
    path: Vec<String>,
    public: bool,
}

/// A module: where its text is, what it declares, imports and names in code.
#[derive(Debug, Default)]
struct Module {
    path: Vec<String>,
    file: usize,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    bindings: Vec<Binding>,
    /// Identifiers in the module's code outside `use` declarations.
    idents: BTreeSet<String>,
    /// Paths of two segments or more in code, as written.
    code_paths: Vec<Vec<String>>,
}

/// The module trees of some crate roots, and the files they live in.
#[derive(Debug, Default)]
pub struct Tree {
    files: Vec<PathBuf>,
    file_ids: BTreeMap<PathBuf, usize>,
    /// Per root: its modules, the root first.
    crates: Vec<Vec<Module>>,
}

impl Tree {
    /// Reads the module tree of every root (`src/lib.rs`, `tests/x.rs`, …) given.
    pub fn read(roots: &[PathBuf]) -> Result<Tree, String> {
        let mut tree = Tree::default();
        for root in roots {
            let mut mods = Vec::new();
            tree.read_file(root, true, Vec::new(), &mut mods)?;
            tree.crates.push(mods);
        }
        Ok(tree)
    }

    fn file_id(&mut self, p: &Path) -> usize {
        if let Some(id) = self.file_ids.get(p) {
            return *id;
        }
        self.files.push(p.to_path_buf());
        self.file_ids.insert(p.to_path_buf(), self.files.len() - 1);
        self.files.len() - 1
    }

    /// Reads the file of module `path` (and the files it declares) into `mods`.
    fn read_file(
        &mut self,
        file: &Path,
        owns_dir: bool,
        path: Vec<String>,
        mods: &mut Vec<Module>,
    ) -> Result<usize, String> {
        let src = std::fs::read_to_string(file)
            .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
        let toks = tokens(&src);
        let id = self.file_id(file);
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let child_dir = if owns_dir {
            dir.clone()
        } else {
            dir.join(file.file_stem().unwrap_or_default())
        };
        let ctx = FileCtx {
            file: id,
            dir,
            child_dir,
            path_attrs: path_attrs(&src),
        };
        self.read_module(&ctx, &toks, path, mods)
    }

    /// Reads one module whose body is `toks` (a whole file or an inline `mod x { … }`).
    fn read_module(
        &mut self,
        ctx: &FileCtx,
        toks: &[Token],
        path: Vec<String>,
        mods: &mut Vec<Module>,
    ) -> Result<usize, String> {
        let me = mods.len();
        mods.push(Module {
            path: path.clone(),
            file: ctx.file,
            ..Module::default()
        });
        let mut depth = 0;
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if t.is_punct('{') {
                depth += 1;
            } else if t.is_punct('}') {
                depth -= 1;
            } else if t.is_ident("mod") && !prev_is(toks, i, '$') {
                if cfg_test(toks, i) {
                    // Test modules are left out, as `cargo modules` does by default: a test
                    // uses whatever it tests, from anywhere.
                    i = skip_module(toks, i);
                    continue;
                }
                if let Some(name) = toks.get(i + 1).and_then(Token::ident) {
                    let mut sub = path.clone();
                    sub.push(name.to_string());
                    let child = match toks.get(i + 2) {
                        Some(n) if n.is_punct(';') => {
                            let f = ctx.child_file(name)?;
                            let owns = f.file_name().is_some_and(|n| n == "mod.rs");
                            self.read_file(&f, owns, sub, mods)?
                        }
                        Some(n) if n.is_punct('{') => {
                            let close = matching_close(toks, i + 2).unwrap_or(toks.len() - 1);
                            let c = self.read_module(ctx, &toks[i + 3..close], sub, mods)?;
                            i = close + 1;
                            mods[me].children.insert(name.to_string(), c);
                            continue;
                        }
                        _ => {
                            i += 1;
                            continue;
                        }
                    };
                    mods[me].children.insert(name.to_string(), child);
                }
            } else if t.is_ident("use") {
                let end = (i..toks.len())
                    .find(|&j| toks[j].is_punct(';'))
                    .unwrap_or(toks.len());
                let public = is_public(toks, i);
                let mut out = Vec::new();
                use_tree(&toks[i + 1..end], &mut Vec::new(), &mut out);
                for (path, name) in out {
                    mods[me].bindings.push(Binding { name, path, public });
                }
                i = end + 1;
                continue;
            } else if let Some(kw) = t.ident() {
                if depth == 0 && ITEM_KEYWORDS.contains(&kw) && !prev_is(toks, i, '&') {
                    if let Some(name) = toks.get(i + 1).and_then(Token::ident) {
                        mods[me].items.insert(name.to_string());
                    }
                } else if kw == "macro_rules" {
                    if let Some(name) = toks.get(i + 2).and_then(Token::ident) {
                        mods[me].items.insert(name.to_string());
                    }
                }
                mods[me].idents.insert(kw.to_string());
                if !prev_is_sep(toks, i) && toks.get(i + 1).is_some_and(|n| n.tok == Tok::PathSep) {
                    mods[me].code_paths.push(path_at(toks, i));
                }
            }
            i += 1;
        }
        Ok(me)
    }

    /// The files each file uses, by index into `files()`.
    pub fn edges(&self) -> BTreeMap<usize, BTreeSet<usize>> {
        let mut out: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for mods in &self.crates {
            for m in mods {
                let mut add = |to: Option<usize>| {
                    if let Some(to) = to {
                        if to != m.file {
                            out.entry(m.file).or_default().insert(to);
                        }
                    }
                };
                for b in &m.bindings {
                    let used = match &b.name {
                        None => !b.public,
                        Some(n) => !b.public || n == "_" || m.idents.contains(n),
                    };
                    if used {
                        let abs = resolve(m, &b.path, false);
                        add(abs.and_then(|a| locate(mods, &a, 8, false)));
                    }
                }
                for p in &m.code_paths {
                    let abs = resolve(m, p, true);
                    add(abs.and_then(|a| locate(mods, &a, 8, false)));
                }
            }
        }
        out
    }

    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// What a file's `mod x;` declarations need: where the file is and its `#[path]`s.
struct FileCtx {
    file: usize,
    dir: PathBuf,
    child_dir: PathBuf,
    path_attrs: BTreeMap<String, String>,
}

impl FileCtx {
    fn child_file(&self, name: &str) -> Result<PathBuf, String> {
        if let Some(p) = self.path_attrs.get(name) {
            return Ok(self.dir.join(p));
        }
        let flat = self.child_dir.join(format!("{name}.rs"));
        let nested = self.child_dir.join(name).join("mod.rs");
        if flat.exists() {
            Ok(flat)
        } else if nested.exists() {
            Ok(nested)
        } else {
            Err(format!(
                "mod {name}: neither {} nor {}",
                flat.display(),
                nested.display()
            ))
        }
    }
}

/// `#[path = "x.rs"] mod name;` pairs of a file (read from the text: the lexer drops strings).
fn path_attrs(src: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut pending: Option<String> = None;
    for line in src.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("#[path = \"") {
            pending = rest.split('"').next().map(str::to_string);
        } else if let Some(p) = pending.take() {
            let words: Vec<&str> = l.split(|c: char| c.is_whitespace() || c == ';').collect();
            if let Some(i) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(i + 1) {
                    out.insert(name.to_string(), p);
                    continue;
                }
            }
            if l.starts_with("#[") {
                pending = Some(p);
            }
        }
    }
    out
}

/// Whether the `mod` at `i` has a `#[cfg(test)]` (or a `cfg(…)` naming `test`) attribute.
fn cfg_test(t: &[Token], mut i: usize) -> bool {
    while i > 0 && (t[i - 1].is_ident("pub") || t[i - 1].is_punct(')')) {
        if t[i - 1].is_punct(')') {
            match (0..i - 1).rev().find(|&j| t[j].is_punct('(')) {
                Some(j) => i = j,
                None => return false,
            }
        } else {
            i -= 1;
        }
    }
    while i > 0 && t[i - 1].is_punct(']') {
        let Some(open) = (0..i - 1).rev().find(|&j| t[j].is_punct('[')) else {
            return false;
        };
        let attr = &t[open + 1..i - 1];
        if attr.first().is_some_and(|a| a.is_ident("cfg"))
            && attr.iter().any(|a| a.is_ident("test"))
        {
            return true;
        }
        i = open.saturating_sub(1); // past the `#`
    }
    false
}

/// The index past the module declared at `i` (`mod x;` or `mod x { … }`).
fn skip_module(t: &[Token], i: usize) -> usize {
    match t.get(i + 2) {
        Some(n) if n.is_punct('{') => matching_close(t, i + 2).map_or(t.len(), |c| c + 1),
        _ => i + 3,
    }
}

fn prev_is(t: &[Token], i: usize, c: char) -> bool {
    i > 0 && t[i - 1].is_punct(c)
}

fn prev_is_sep(t: &[Token], i: usize) -> bool {
    i > 0 && (t[i - 1].tok == Tok::PathSep || t[i - 1].is_punct('$') || t[i - 1].is_punct('.'))
}

/// Whether the `use` at `i` is preceded by `pub` or `pub(…)`.
fn is_public(t: &[Token], i: usize) -> bool {
    if i > 0 && t[i - 1].is_ident("pub") {
        return true;
    }
    i > 0 && t[i - 1].is_punct(')') && (1..i).rev().take(4).any(|j| t[j].is_ident("pub"))
}

/// The path `a::b::c` starting at `i` (generic arguments end it).
fn path_at(t: &[Token], mut i: usize) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(s) = t.get(i).and_then(Token::ident) {
        out.push(s.to_string());
        if t.get(i + 1).is_some_and(|n| n.tok == Tok::PathSep) {
            i += 2;
        } else {
            break;
        }
    }
    out
}

/// The bindings of a use tree (`a::{b, c::d as e, f::*}`) under `prefix`: (path, bound
/// name), the name `None` for a glob.
fn use_tree(t: &[Token], prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let n = prefix.len();
    let mut i = 0;
    while let Some(tok) = t.get(i) {
        match &tok.tok {
            Tok::Ident(s) if s == "as" => break,
            Tok::Ident(s) => prefix.push(s.clone()),
            Tok::PathSep => {}
            Tok::Punct('*') => {
                out.push((prefix.clone(), None));
                prefix.truncate(n);
                return;
            }
            Tok::Punct('{') => {
                let close = group_close(t, i);
                for part in split_top(&t[i + 1..close.min(t.len())]) {
                    use_tree(part, prefix, out);
                }
                prefix.truncate(n);
                return;
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = prefix.clone();
    prefix.truncate(n);
    if path.len() == n {
        return;
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    let alias = t.get(i + 1).and_then(Token::ident).map(str::to_string);
    let name = alias.or_else(|| path.last().cloned());
    out.push((path, name));
}

fn group_close(t: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (j, tok) in t.iter().enumerate().skip(open) {
        if tok.is_punct('{') {
            depth += 1;
        } else if tok.is_punct('}') {
            depth -= 1;
            if depth == 0 {
                return j;
            }
        }
    }
    t.len()
}

/// A group's members, split at its top-level commas.
fn split_top(t: &[Token]) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (j, tok) in t.iter().enumerate() {
        if tok.is_punct('{') {
            depth += 1;
        } else if tok.is_punct('}') {
            depth -= 1;
        } else if tok.is_punct(',') && depth == 0 {
            out.push(&t[start..j]);
            start = j + 1;
        }
    }
    if start < t.len() {
        out.push(&t[start..]);
    }
    out
}

/// `path` as written in module `m`, made absolute within the crate; `None` when it names
/// something outside the crate (or a local name, for a path in code).
fn resolve(m: &Module, path: &[String], in_code: bool) -> Option<Vec<String>> {
    let head = path.first()?;
    match head.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some([m.path.clone(), path[1..].to_vec()].concat()),
        "super" => {
            let mut base = m.path.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            Some([base, rest.to_vec()].concat())
        }
        _ if m.children.contains_key(head) || m.items.contains(head) => {
            Some([m.path.clone(), path.to_vec()].concat())
        }
        _ if in_code => {
            let b = m
                .bindings
                .iter()
                .find(|b| b.name.as_deref() == Some(head.as_str()))?;
            let base = resolve(m, &b.path, false)?;
            Some([base, path[1..].to_vec()].concat())
        }
        _ => None,
    }
}

/// The file that defines what the absolute path names, following re-exports; with `strict`,
/// `None` unless the name is found.
fn locate(mods: &[Module], path: &[String], hops: usize, strict: bool) -> Option<usize> {
    let mut m = &mods[0];
    for (i, seg) in path.iter().enumerate() {
        if let Some(c) = m.children.get(seg) {
            m = &mods[*c];
            continue;
        }
        if m.items.contains(seg) || hops == 0 {
            return Some(m.file);
        }
        if let Some(b) = m
            .bindings
            .iter()
            .find(|b| b.name.as_deref() == Some(seg.as_str()))
        {
            let target = resolve(m, &b.path, false)?;
            return locate(
                mods,
                &[target, path[i + 1..].to_vec()].concat(),
                hops - 1,
                strict,
            );
        }
        for g in m.bindings.iter().filter(|b| b.name.is_none()) {
            if let Some(base) = resolve(m, &g.path, false) {
                let found = locate(mods, &[base, path[i..].to_vec()].concat(), hops - 1, true);
                if found.is_some() {
                    return found;
                }
            }
        }
        return (!strict).then_some(m.file);
    }
    Some(m.file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(src: &str) -> Vec<(Vec<String>, Option<String>)> {
        let t = tokens(src);
        let mut out = Vec::new();
        use_tree(&t, &mut Vec::new(), &mut out);
        out
    }

    #[test]
    fn use_trees_bind_their_names() {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            tree("crate::a::B"),
            [(v(&["crate", "a", "B"]), Some("B".into()))]
        );
        assert_eq!(
            tree("super::{x::{Y as Z, self}, w::*}"),
            [
                (v(&["super", "x", "Y"]), Some("Z".into())),
                (v(&["super", "x"]), Some("x".into())),
                (v(&["super", "w"]), None),
            ]
        );
    }
}
