//! The lab's fixes, generated for the transaction shapes a capture recognises, as scenario
//! variants beside the captured one: a read-check-write (`SELECT … FOR UPDATE`, then an
//! `UPDATE` of the same row) becomes one `UPDATE … RETURNING` with the check in its `WHERE`; a
//! `FOR UPDATE … LIMIT` claim gets `SKIP LOCKED`, then claims a batch per transaction; a hot
//! counter increment goes to a sharded counter. Each comes with a check of the invariant the
//! captured statements keep — a value never below its floor (a CHECK constraint's, else the
//! observed minimum, named in the check), each claimed row claimed once, a counter's total
//! equal to its start plus every increment — which the captured (baseline) variant runs too,
//! so a fix is only better if it is as correct. Recognition is `diagnose::shape`'s; the
//! statements are rewritten around the spans `diagnose::shape_parts` finds, never re-parsed
//! here; identifiers are quoted (`sqltext::ident`) and copied SQL guarded against `{{…}}`
//! expansion. The claims and increments the checks count are logged by the statements
//! themselves (one data-modifying CTE, no extra round trip), in the baseline too
//! ([`Fixes::baseline_body`]). Documented in `docs/capture.md` ("Fix variants").

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::fix_shape::{Floor, FloorSource, GeneratedFile, Shape};
use crate::fixes_sql as gen;

/// A `[[variants]]` entry of `scenario.toml`; serialises with the manifest's field names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantEntry {
    pub name: String,
    pub about: String,
    pub script: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput: Option<String>,
}

/// A `[params.NAME]` entry the variants use (`{{batch}}`, `{{shards}}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamEntry {
    #[serde(skip)]
    pub name: String,
    pub default: i64,
    pub min: i64,
    pub help: String,
}

/// The manifest's `[work]`: useful work counted in the database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkEntry {
    pub sql: String,
    pub unit: String,
}

/// What [`fixes`] made of one shape (or, [`merge`]d, of all).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fixes {
    /// Every file the entries below name.
    pub files: Vec<GeneratedFile>,
    /// Files for the manifest's `setup`, after the schema and data (every variant needs
    /// them: the tables the checks read).
    pub setup: Vec<String>,
    /// Files for the manifest's `checks` (every variant, the baseline too).
    pub checks: Vec<String>,
    /// The fix variants.
    pub variants: Vec<VariantEntry>,
    pub params: Vec<ParamEntry>,
    /// The `[work]` to count claims by, when a claim was recognised.
    pub work: Option<WorkEntry>,
    /// Per captured script: the statements (with their `\gset`/`\if` lines) to write in
    /// place of the captured ones, so the baseline logs what the checks count.
    pub baseline_body: BTreeMap<String, String>,
    /// What was recognised, what was made, and what was not and why.
    pub notes: Vec<String>,
}

/// The fixes for one shape.
pub fn fixes(shape: &Shape) -> Fixes {
    let mut out = Fixes::default();
    let mut body: Option<Vec<gen::Step>> = None;
    let mut taken: Vec<usize> = Vec::new();
    if let Some(rcw) = gen::read_check_write(shape, &mut out.notes) {
        taken.extend(rcw.taken);
        out.add_file(rcw.check.clone());
        out.checks.push(rcw.check.name.clone());
        out.add_variant(
            shape,
            "update-returning",
            rcw.about,
            rcw.script,
            Vec::new(),
            None,
        );
    }
    if let Some(claim) = gen::claim(shape, &mut out.notes) {
        out.add_file(claim.setup.clone());
        out.setup.push(claim.setup.name.clone());
        out.add_file(claim.check.clone());
        out.checks.push(claim.check.name.clone());
        out.add_variant(
            shape,
            "skip-locked",
            claim.about_skip,
            claim.skip_locked,
            Vec::new(),
            None,
        );
        out.add_variant(
            shape,
            "skip-locked-batch",
            claim.about_batch,
            claim.batched,
            Vec::new(),
            None,
        );
        out.params.push(ParamEntry {
            name: "batch".into(),
            default: gen::BATCH,
            min: 1,
            help: "rows claimed per transaction by the skip-locked-batch variants".into(),
        });
        out.work = Some(WorkEntry {
            sql: "select count(*) from hotbench_claims".into(),
            unit: "claims".into(),
        });
        body = Some(claim.baseline);
    }
    if let Some(counter) = gen::counter(shape, body.as_deref(), &taken, &mut out.notes) {
        for f in counter.common_setup {
            out.setup.push(f.name.clone());
            out.add_file(f);
        }
        out.add_file(counter.check.clone());
        out.checks.push(counter.check.name.clone());
        out.add_file(counter.fix_setup.clone());
        let setup = vec![counter.fix_setup.name.clone()];
        out.add_variant(shape, "sharded", counter.about, counter.script, setup, None);
        out.params.push(ParamEntry {
            name: "shards".into(),
            default: gen::SHARDS,
            min: 1,
            help: "rows each hot counter is spread over by the sharded variants".into(),
        });
        body = Some(counter.baseline);
    }
    if let Some(b) = body {
        out.baseline_body
            .insert(shape.script.clone(), gen::render(&b));
    }
    out.notes = out.notes.iter().map(|n| gen::plain(n)).collect();
    out
}

/// The fixes of several shapes as one: files and entries named once.
pub fn merge(all: Vec<Fixes>) -> Fixes {
    let mut out = Fixes::default();
    for f in all {
        for file in f.files {
            out.add_file(file);
        }
        for s in f.setup {
            if !out.setup.contains(&s) {
                out.setup.push(s);
            }
        }
        for c in f.checks {
            if !out.checks.contains(&c) {
                out.checks.push(c);
            }
        }
        out.variants.extend(f.variants);
        for p in f.params {
            if !out.params.iter().any(|q| q.name == p.name) {
                out.params.push(p);
            }
        }
        out.work = out.work.or(f.work);
        out.baseline_body.extend(f.baseline_body);
        out.notes.extend(f.notes);
    }
    out
}

impl Fixes {
    fn add_file(&mut self, f: GeneratedFile) {
        if !self.files.iter().any(|g| g.name == f.name) {
            self.files.push(f);
        }
    }

    fn add_variant(
        &mut self,
        shape: &Shape,
        kind: &str,
        about: String,
        script: String,
        setup: Vec<String>,
        goodput: Option<String>,
    ) {
        let stem = gen::file_stem(&shape.name);
        let file = format!("{stem}_{}.sql", kind.replace('-', "_"));
        self.add_file(GeneratedFile {
            name: file.clone(),
            text: script,
        });
        self.variants.push(VariantEntry {
            name: format!("{stem}-{kind}"),
            about: gen::plain(&about),
            script: file,
            setup,
            checks: Vec::new(),
            goodput,
        });
        self.notes
            .push(format!("{}: {kind} variant generated", shape.name));
    }
}

/// The floor a `CHECK` constraint's definition (`CHECK ((remaining >= 0))`, as
/// `pg_get_constraintdef` writes it) puts on `column`: `(strict, value)`.
pub fn floor_from_check(column: &str, def: &str) -> Option<(bool, String)> {
    gen::floor_from_check(column, def)
}

#[cfg(test)]
#[path = "fixes_tests.rs"]
mod tests;
