//! How many rows the data generator writes per table: `reltuples × scale`. A table never
//! analyzed (`reltuples` -1) has no such count, and its live tuple count can read 0 (the
//! statistics of the sessions that filled it not yet flushed: procrastinate's
//! `procrastinate_workers`, one row per running worker), which left the twin without the
//! rows the captured statements need (`procrastinate_jobs_worker_id_fkey` failed). Such a
//! table is sized from the most it is known to hold: its live tuples, its rows inserted
//! less those deleted, the distinct values a captured child's foreign key column holds
//! (`pg_stats`), and at least one row when a captured foreign key references it (its keys
//! are generated from 1, the first key a child's statements name). Each estimate beyond the
//! live count is said in a note. Pure.

use std::collections::BTreeMap;

use crate::model::{Model, RelKind, Relation};
use crate::profile::TableProfile;

/// Rows per table (tables only), with a note for each never-analyzed one sized beyond its
/// live tuple count.
pub fn target_rows(
    model: &Model,
    profiles: &[TableProfile],
    scale: f64,
    notes: &mut Vec<String>,
) -> BTreeMap<u32, u64> {
    let mut out = BTreeMap::new();
    for r in model.relations.iter().filter(|r| r.kind == RelKind::Table) {
        let base = if r.reltuples >= 0.0 {
            r.reltuples
        } else {
            never_analyzed(model, profiles, r, notes)
        };
        let n = (base.max(0.0) * scale.max(0.0)).round();
        out.insert(r.oid, if n.is_finite() { n as u64 } else { 0 });
    }
    out
}

/// The rows of `rel`, never analyzed: the largest of what is known, noted when it is more
/// than the live tuple count.
fn never_analyzed(
    model: &Model,
    profiles: &[TableProfile],
    rel: &Relation,
    notes: &mut Vec<String>,
) -> f64 {
    let live = rel.live_tuples.unwrap_or(0.0).max(0.0);
    let mut best = (live, String::new());
    let mut consider = |n: f64, why: String| {
        if n.is_finite() && n > best.0 {
            best = (n, why);
        }
    };
    if let Some(ins) = rel.inserted_tuples {
        consider(
            ins.floor(),
            format!("its rows inserted less those deleted ({ins:.0})"),
        );
    }
    for (child, fk, col) in referencing_columns(model, rel.oid) {
        consider(
            1.0,
            format!(
                "{}'s foreign key {fk:?}, which references it",
                child.display()
            ),
        );
        let Some(col) = col else { continue };
        let who = format!("{}.{}", child.display(), col);
        let stats = profiles
            .iter()
            .find(|p| p.schema == child.schema && p.name == child.name)
            .and_then(|p| p.columns.iter().find(|c| c.name == col))
            .and_then(|c| c.stats.as_ref());
        if let Some(s) = stats.filter(|_| child.reltuples > 0.0) {
            let non_null = child.reltuples * (1.0 - s.null_frac).max(0.0);
            if non_null >= 1.0 {
                let d = s.distinct_in(non_null).ceil();
                consider(
                    d,
                    format!("the distinct values of {who} (pg_stats: {d:.0})"),
                );
            }
        }
    }
    if best.0 > live {
        notes.push(format!(
            "table {}: never analyzed and its live tuple count read {live:.0}: {:.0} row(s) \
             estimated from {}",
            rel.display(),
            best.0,
            best.1
        ));
    }
    best.0
}

/// The captured relations (other than `parent` itself) with a foreign key to `parent`: the
/// key's name and, for a single-column one, its column's name.
fn referencing_columns(model: &Model, parent: u32) -> Vec<(&Relation, &str, Option<String>)> {
    let mut out = Vec::new();
    for child in model.relations.iter().filter(|r| r.oid != parent) {
        for c in child.constraints.iter().filter(|c| c.kind == 'f') {
            if c.references.as_ref().is_none_or(|(p, _)| *p != parent) {
                continue;
            }
            let col = match c.columns.as_slice() {
                [num] => child.column(*num).map(|col| col.name.clone()),
                _ => None,
            };
            out.push((child, c.name.as_str(), col));
        }
    }
    out
}
