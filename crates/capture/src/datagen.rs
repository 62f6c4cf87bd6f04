//! `data.sql`: fills each touched table to its captured size (`reltuples × scale`) with
//! values following its `pg_stats`, in pure SQL (`INSERT … SELECT … FROM generate_series`,
//! in chunks, so hotbench holds no rows and any server runs it). Parents before children:
//! a foreign key column keeps a generated value its parent has and otherwise takes one of
//! the parent's rows (a self-reference points at its own row); a table's key columns are
//! distinct by construction (a composite key counts through its columns like digits);
//! rows a CHECK or a partition bound refuses are filtered out and any other clash is
//! skipped (`ON CONFLICT DO NOTHING`). The rows that must exist (hot keys, and the
//! most-common values of each single-column foreign key in its parent) are written first.
//! Ends by moving each sequence past its column's values and analyzing every table.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::datagen_expr::Draws;
use crate::model::{Model, RelKind, Relation, ValueKind};
use crate::profile::{ColumnStats, TableProfile};
use crate::redact::Redactor;
use crate::schema_options::SchemaOptions;
use crate::sqltext::{float, ident, literal};

/// The generator's SQL and what it could not reproduce.
pub struct Data {
    pub sql: String,
    pub notes: Vec<String>,
}

/// Rows a relation must hold: per set of columns, the values (text) of each row.
pub(crate) type MustRows = BTreeMap<Vec<i16>, Vec<Vec<Option<String>>>>;

/// What the generator decided for the whole schema.
pub(crate) struct Plan<'a> {
    pub(crate) model: &'a Model,
    pub(crate) profiles: BTreeMap<u32, &'a TableProfile>,
    pub(crate) rows: BTreeMap<u32, u64>,
    pub(crate) must: BTreeMap<u32, MustRows>,
    /// Foreign keys (relation, constraint name) that close a cycle between tables.
    pub(crate) broken: BTreeSet<(u32, String)>,
    pub(crate) notes: Vec<String>,
    pub(crate) opts: &'a SchemaOptions,
}

pub fn write(model: &Model, profiles: &mut [TableProfile], opts: &SchemaOptions) -> Data {
    let mut notes = Vec::new();
    if opts.redact {
        redact_profiles(profiles, Redactor::new(opts.seed), &mut notes);
    }
    let rows = crate::datagen_size::target_rows(model, profiles, opts.scale, &mut notes);
    let must = must_rows(model, profiles, opts, &mut notes);
    let mut plan = Plan {
        model,
        profiles: BTreeMap::new(),
        rows,
        must,
        broken: BTreeSet::new(),
        notes,
        opts,
    };
    let order = plan.order();
    // Partitioned tables hold their partitions' rows.
    let mut counted: BTreeMap<u32, u64> = BTreeMap::new();
    for rel in &model.relations {
        let own = plan.rows.get(&rel.oid).copied().unwrap_or(0);
        let must = plan.must_count(rel.oid);
        let n = if rel.kind == RelKind::Table {
            own.max(must)
        } else {
            must
        };
        counted.insert(rel.oid, n);
        let mut cur = rel.partition_of.as_ref().map(|p| p.0);
        while let Some(p) = cur {
            *counted.entry(p).or_default() += n;
            cur = model
                .relation(p)
                .and_then(|r| r.partition_of.as_ref().map(|x| x.0));
        }
    }
    for p in profiles.iter_mut() {
        if let Some(r) = model
            .relations
            .iter()
            .find(|r| r.schema == p.schema && r.name == p.name)
        {
            p.rows = counted.get(&r.oid).copied().unwrap_or(0);
        }
    }
    plan.profiles = model
        .relations
        .iter()
        .filter_map(|r| {
            Some((
                r.oid,
                profiles
                    .iter()
                    .find(|p| p.schema == r.schema && p.name == r.name)?,
            ))
        })
        .collect();
    let mut sql = String::from("-- hotbench capture: data following the captured statistics\n");
    let _ = writeln!(
        sql,
        "select pg_catalog.setseed({});",
        float((opts.seed % 1_000_000) as f64 / 1_000_000.0)
    );
    for oid in &order {
        if let Some(rel) = model.relation(*oid) {
            sql.push_str(&plan.fill(rel));
        }
    }
    sql.push_str(&sequences(model));
    for rel in model.relations.iter().filter(|r| r.kind != RelKind::View) {
        let _ = writeln!(sql, "analyze {};", rel.qualified());
    }
    Data {
        sql,
        notes: plan.notes,
    }
}

/// Most-common values and strings replaced by generated ones; a kind without a generator
/// loses its values (the column is then made up from its type).
fn redact_profiles(profiles: &mut [TableProfile], r: Redactor, notes: &mut Vec<String>) {
    for p in profiles.iter_mut() {
        for c in &mut p.columns {
            let Some(s) = c.stats.as_mut() else { continue };
            if !Redactor::handles(&c.kind) {
                if !s.mcv.is_empty() || !s.histogram.is_empty() {
                    notes.push(format!(
                        "table {}.{} column {:?}: --redact has no generator for type {}; its \
                         values are left out and made up from the type",
                        p.schema, p.name, c.name, c.type_sql
                    ));
                }
                s.mcv.clear();
                s.histogram.clear();
                continue;
            }
            s.mcv = std::mem::take(&mut s.mcv)
                .into_iter()
                .filter_map(|(v, f)| Some((r.value(&c.kind, &v)?, f)))
                .collect();
            if !c.kind.interpolates() {
                s.histogram = std::mem::take(&mut s.histogram)
                    .into_iter()
                    .filter_map(|v| r.value(&c.kind, &v))
                    .collect();
            }
        }
    }
}

/// The rows each relation must hold: the hot keys asked for (redacted as the statistics
/// are), and each single-column foreign key's most-common values in the parent.
fn must_rows(
    model: &Model,
    profiles: &[TableProfile],
    opts: &SchemaOptions,
    notes: &mut Vec<String>,
) -> BTreeMap<u32, MustRows> {
    let redactor = opts.redact.then(|| Redactor::new(opts.seed));
    let mut out: BTreeMap<u32, MustRows> = BTreeMap::new();
    for k in &opts.must_contain {
        let rel = match &k.table.schema {
            Some(s) => model
                .relations
                .iter()
                .find(|r| &r.schema == s && r.name == k.table.name),
            // Along the search path, else the one captured table of that name (one a
            // function's body named in its own schema: the statements' keys drop it).
            None => opts
                .search_path
                .iter()
                .find_map(|s| {
                    model
                        .relations
                        .iter()
                        .find(|r| &r.schema == s && r.name == k.table.name)
                })
                .or_else(|| {
                    let mut named = model.relations.iter().filter(|r| r.name == k.table.name);
                    named.next().filter(|_| named.next().is_none())
                }),
        };
        let Some(rel) = rel.filter(|r| r.kind != RelKind::View) else {
            notes.push(format!(
                "rows that must exist in {}: no such table was captured",
                k.table.display()
            ));
            continue;
        };
        let mut cols = Vec::new();
        for name in &k.columns {
            match rel.columns.iter().find(|c| &c.name == name) {
                Some(c) => cols.push(c),
                None => {
                    notes.push(format!(
                        "rows that must exist in {}: no column {name:?}",
                        rel.display()
                    ));
                    cols.clear();
                    break;
                }
            }
        }
        if cols.is_empty() {
            continue;
        }
        let key: Vec<i16> = cols.iter().map(|c| c.num).collect();
        let entry = out.entry(rel.oid).or_default().entry(key).or_default();
        for row in &k.rows {
            let mut vals = Vec::new();
            for (c, v) in cols.iter().zip(row) {
                vals.push(match (v, &redactor) {
                    (Some(v), Some(r)) => match r.value(&c.kind, v) {
                        Some(x) => Some(x),
                        None => {
                            notes.push(format!(
                                "a row that must exist in {}: --redact has no generator for \
                                 column {:?} ({}); the row is left out",
                                rel.display(),
                                c.name,
                                c.type_sql
                            ));
                            vals.clear();
                            break;
                        }
                    },
                    (v, _) => v.clone(),
                });
            }
            if let Some((c, v)) = cols
                .iter()
                .zip(&vals)
                .find(|(c, v)| v.as_deref().is_some_and(|v| !plausible(&c.kind, v)))
            {
                notes.push(format!(
                    "a row that must exist in {}: {:?} is not a value of column {:?} ({}); \
                     the row is left out",
                    rel.display(),
                    v.as_deref().unwrap_or(""),
                    c.name,
                    c.type_sql
                ));
                continue;
            }
            if vals.len() == cols.len() && !entry.contains(&vals) {
                entry.push(vals);
            }
        }
    }
    fk_most_common(model, profiles, &mut out);
    out
}

/// Whether `v` reads as a value of `kind` (a value that does not would fail the whole
/// `INSERT` on the twin): numbers in range, booleans, UUIDs, ISO dates, enum labels;
/// anything for other kinds.
fn plausible(kind: &ValueKind, v: &str) -> bool {
    let t = v.trim();
    match kind {
        ValueKind::Int { min, max } => t.parse::<i128>().is_ok_and(|x| x >= *min && x <= *max),
        ValueKind::Decimal => {
            t.parse::<f64>().is_ok() || ["NaN", "Infinity", "-Infinity"].contains(&t)
        }
        ValueKind::Bool => matches!(
            t.to_ascii_lowercase().as_str(),
            "t" | "f" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | "y" | "n"
        ),
        ValueKind::Uuid => {
            let hex: String = t
                .chars()
                .filter(|c| *c != '-' && *c != '{' && *c != '}')
                .collect();
            hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit())
        }
        ValueKind::Date | ValueKind::Timestamp | ValueKind::TimestampTz => {
            let b = t.as_bytes();
            (b.len() >= 10 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[7] == b'-')
                || ["infinity", "-infinity"].contains(&t)
        }
        ValueKind::Enum { labels } => labels.iter().any(|l| l == v),
        _ => true,
    }
}

/// A child's most-common values of a single-column foreign key must be rows of the parent
/// (so the child's skew survives the foreign key).
fn fk_most_common(model: &Model, profiles: &[TableProfile], out: &mut BTreeMap<u32, MustRows>) {
    for rel in &model.relations {
        let Some(p) = profiles
            .iter()
            .find(|p| p.schema == rel.schema && p.name == rel.name)
        else {
            continue;
        };
        for c in rel
            .constraints
            .iter()
            .filter(|c| c.kind == 'f' && c.columns.len() == 1)
        {
            let Some((parent, pcols)) = &c.references else {
                continue;
            };
            if *parent == rel.oid || pcols.len() != 1 {
                continue;
            }
            let Some(col) = rel.column(c.columns[0]) else {
                continue;
            };
            let Some(stats) = p
                .columns
                .iter()
                .find(|x| x.name == col.name)
                .and_then(|x| x.stats.as_ref())
            else {
                continue;
            };
            let entry = out
                .entry(*parent)
                .or_default()
                .entry(pcols.clone())
                .or_default();
            for (v, _) in &stats.mcv {
                let row = vec![Some(v.clone())];
                if !entry.contains(&row) {
                    entry.push(row);
                }
            }
        }
    }
}

impl Plan<'_> {
    fn must_count(&self, oid: u32) -> u64 {
        self.must
            .get(&oid)
            .map_or(0, |m| m.values().map(|v| v.len() as u64).sum())
    }

    /// Relations in fill order: a foreign key's parent (all its partitions) before the
    /// child, a partitioned table (its rows that must exist) before its partitions.
    fn order(&mut self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut state: BTreeMap<u32, u8> = BTreeMap::new();
        for rel in &self.model.relations {
            if rel.partition_of.is_none() {
                self.visit(rel.oid, &mut state, &mut out);
            }
        }
        for rel in &self.model.relations {
            self.visit(rel.oid, &mut state, &mut out);
        }
        out
    }

    fn visit(&mut self, oid: u32, state: &mut BTreeMap<u32, u8>, out: &mut Vec<u32>) {
        if state.contains_key(&oid) {
            return;
        }
        state.insert(oid, 1);
        let model = self.model;
        let Some(rel) = model.relation(oid) else {
            return;
        };
        for c in rel.constraints.iter().filter(|c| c.kind == 'f') {
            let Some((parent, _)) = &c.references else {
                continue;
            };
            if self.is_self(rel, *parent) {
                continue;
            }
            match state.get(parent) {
                Some(1) => {
                    self.broken.insert((rel.oid, c.name.clone()));
                }
                Some(_) => {}
                None => self.visit(*parent, state, out),
            }
        }
        out.push(oid);
        let children: Vec<u32> = model
            .relations
            .iter()
            .filter(|r| r.partition_of.as_ref().is_some_and(|p| p.0 == oid))
            .map(|r| r.oid)
            .collect();
        for c in children {
            self.visit(c, state, out);
        }
        state.insert(oid, 2);
    }

    /// `parent` is `rel` or a partitioned table `rel` is (a partition of) a partition of.
    pub(crate) fn is_self(&self, rel: &Relation, parent: u32) -> bool {
        let mut cur = Some(rel.oid);
        let mut steps = 0;
        while let Some(o) = cur {
            if o == parent {
                return true;
            }
            steps += 1;
            if steps > 64 {
                break;
            }
            cur = self
                .model
                .relation(o)
                .and_then(|r| r.partition_of.as_ref().map(|p| p.0));
        }
        false
    }

    /// The statements that fill the table `rel`: the rows that must exist in it or in a
    /// partitioned table it is a partition of (each partition keeps those its bound
    /// accepts), then the rest in chunks.
    fn fill(&mut self, rel: &Relation) -> String {
        if rel.kind != RelKind::Table {
            return String::new();
        }
        let mut out = String::new();
        let must = self.must_for(rel);
        let total = self.rows.get(&rel.oid).copied().unwrap_or(0);
        let mut made = 0u64;
        // A hot-key list with no row left (procrastinate_workers' ids) writes no
        // `VALUES ()`, which is no SQL.
        for (cols, rows) in must.iter().filter(|(_, rows)| !rows.is_empty()) {
            if let Some(s) = self.insert(rel, Source::Must { cols, rows }, total) {
                out.push_str(&s);
                made += rows.len() as u64;
            }
        }
        let bulk = total.saturating_sub(made);
        let chunk = self.opts.chunk_rows.max(1);
        let mut from = 1;
        while from <= bulk {
            let to = (from + chunk - 1).min(bulk);
            match self.insert(
                rel,
                Source::Series {
                    from,
                    to,
                    offset: made,
                },
                total,
            ) {
                Some(s) => out.push_str(&s),
                None => break,
            }
            from = to + 1;
        }
        out
    }

    /// The rows that must exist in `rel` or one of its partition ancestors, keyed by `rel`'s
    /// column numbers.
    fn must_for(&self, rel: &Relation) -> MustRows {
        let mut out: MustRows = self.must.get(&rel.oid).cloned().unwrap_or_default();
        let mut cur = rel.partition_of.as_ref().map(|p| p.0);
        let mut steps = 0;
        while let (Some(p), true) = (cur, steps < 64) {
            steps += 1;
            let Some(parent) = self.model.relation(p) else {
                break;
            };
            for (cols, rows) in self.must.get(&p).into_iter().flatten() {
                let mapped: Option<Vec<i16>> = cols
                    .iter()
                    .map(|n| {
                        let name = &parent.column(*n)?.name;
                        Some(rel.columns.iter().find(|c| &c.name == name)?.num)
                    })
                    .collect();
                if let Some(m) = mapped {
                    out.entry(m).or_default().extend(rows.iter().cloned());
                }
            }
            cur = parent.partition_of.as_ref().map(|x| x.0);
        }
        out
    }
}

/// Where a statement's rows come from.
pub(crate) enum Source<'a> {
    /// `generate_series(from, to)`: the row's rank is `i - 1 + offset`.
    Series { from: u64, to: u64, offset: u64 },
    /// Rows that must exist: these columns take these values.
    Must {
        cols: &'a [i16],
        rows: &'a [Vec<Option<String>>],
    },
}

/// The sequences' next values past their columns' largest.
fn sequences(model: &Model) -> String {
    let mut out = String::new();
    for s in &model.sequences {
        let Some((rel, col)) = s
            .owned_by
            .or(s.feeds)
            .and_then(|(r, c)| Some((model.relation(r)?, model.relation(r)?.column(c)?)))
        else {
            continue;
        };
        if s.increment.starts_with('-') || !matches!(col.kind, ValueKind::Int { .. }) {
            continue;
        }
        let _ = writeln!(
            out,
            "select pg_catalog.setval({}::regclass, greatest(coalesce(max({})::int8 + 1, {}), {}), false) from {};",
            literal(&crate::sqltext::qualified(&s.schema, &s.name)),
            ident(&col.name),
            s.start,
            s.min,
            rel.qualified()
        );
    }
    out
}

/// The statistics of `rel`'s column `name`, if any.
pub(crate) fn stats_of<'p>(p: Option<&'p TableProfile>, name: &str) -> Option<&'p ColumnStats> {
    p?.columns.iter().find(|c| c.name == name)?.stats.as_ref()
}

/// The draws of column `j`, as columns of the innermost row source `s`.
pub(crate) fn draws(j: usize) -> Draws {
    Draws {
        null: format!("s.u{j}_0"),
        pick: format!("s.u{j}_1"),
        rest: format!("s.u{j}_2"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Column, Constraint};
    use crate::profile::ColumnProfile;

    fn column(num: i16, name: &str, type_sql: &str, oid: u32) -> Column {
        Column {
            num,
            name: name.into(),
            type_sql: type_sql.into(),
            type_oid: oid,
            kind: ValueKind::of_builtin(oid),
            not_null: true,
            default: None,
            identity: None,
            generated: None,
            collation: None,
            local: true,
            readable: true,
        }
    }

    fn big_table(reltuples: f64) -> (Model, Vec<TableProfile>) {
        let rel = Relation {
            oid: 20000,
            schema: "public".into(),
            name: "big".into(),
            kind: RelKind::Table,
            reltuples,
            live_tuples: None,
            inserted_tuples: None,
            unlogged: false,
            partition_key: None,
            partition_of: None,
            partition_constraint: None,
            options: Vec::new(),
            view_def: None,
            columns: vec![column(1, "id", "bigint", 20), column(2, "v", "text", 25)],
            constraints: vec![Constraint {
                name: "big_pkey".into(),
                kind: 'p',
                def: "PRIMARY KEY (id)".into(),
                columns: vec![1],
                references: None,
                inherited: false,
            }],
            indexes: Vec::new(),
        };
        let stats = ColumnStats {
            n_distinct: -1.0,
            histogram: (0..101).map(|k| (k * 10_000).to_string()).collect(),
            ..ColumnStats::default()
        };
        let profile = TableProfile {
            schema: "public".into(),
            name: "big".into(),
            kind: RelKind::Table,
            partition_of: None,
            reltuples,
            rows: 0,
            columns: vec![
                ColumnProfile {
                    name: "id".into(),
                    type_sql: "bigint".into(),
                    kind: ValueKind::of_builtin(20),
                    not_null: true,
                    stats: Some(stats.clone()),
                },
                ColumnProfile {
                    name: "v".into(),
                    type_sql: "text".into(),
                    kind: ValueKind::Text,
                    not_null: true,
                    stats: Some(stats),
                },
            ],
        };
        let model = Model {
            relations: vec![rel],
            ..Model::default()
        };
        (model, vec![profile])
    }

    #[test]
    fn a_million_rows_are_a_few_statements_whatever_the_size() {
        let (model, mut profiles) = big_table(1_000_000.0);
        let data = write(&model, &mut profiles, &SchemaOptions::default());
        assert!(
            data.sql.contains("generate_series(1::int8, 1000000::int8)"),
            "{}",
            data.sql
        );
        assert_eq!(data.sql.matches("insert into").count(), 1);
        let small = data.sql.len();
        assert!(small < 20_000, "{small} bytes");
        assert_eq!(profiles[0].rows, 1_000_000);
        let opts = SchemaOptions {
            scale: 10.0,
            ..SchemaOptions::default()
        };
        let data = write(&model, &mut profiles, &opts);
        assert_eq!(
            data.sql.matches("insert into").count(),
            10,
            "chunks of a million"
        );
        assert!(data.sql.len() < small * 11, "{} bytes", data.sql.len());
        assert_eq!(profiles[0].rows, 10_000_000);
    }

    #[test]
    fn an_empty_list_of_rows_that_must_exist_writes_no_values_list() {
        let (model, mut profiles) = big_table(100.0);
        let rel = &model.relations[0];
        let opts = SchemaOptions {
            must_contain: vec![crate::schema_options::KeyRows {
                table: crate::catalog::TableName::new(Some(&rel.schema), &rel.name),
                columns: vec!["id".into()],
                rows: Vec::new(),
            }],
            ..SchemaOptions::default()
        };
        let data = write(&model, &mut profiles, &opts);
        assert!(!data.sql.contains("(values )"), "{}", data.sql);
        assert_eq!(data.sql.matches("insert into").count(), 1, "{}", data.sql);
    }

    /// procrastinate's `procrastinate_workers`: never analyzed, its live tuple count read
    /// 0, referenced by the jobs' `worker_id` (NULL in the rows analyzed). It got no rows
    /// and the twin's first claim failed `procrastinate_jobs_worker_id_fkey`.
    #[test]
    fn a_never_analyzed_parent_of_a_captured_foreign_key_gets_rows() {
        let (mut model, mut profiles) = big_table(100.0);
        let mut workers = model.relations[0].clone();
        workers.oid = 20001;
        workers.name = "workers".into();
        workers.reltuples = -1.0;
        workers.live_tuples = Some(0.0);
        workers.columns.truncate(1);
        workers.constraints[0].name = "workers_pkey".into();
        let mut worker_id = column(3, "worker_id", "bigint", 20);
        worker_id.not_null = false;
        let jobs = &mut model.relations[0];
        jobs.columns.push(worker_id);
        jobs.constraints.push(Constraint {
            name: "jobs_worker_id_fkey".into(),
            kind: 'f',
            def: "FOREIGN KEY (worker_id) REFERENCES workers(id)".into(),
            columns: vec![3],
            references: Some((20001, vec![1])),
            inherited: false,
        });
        model.relations.push(workers.clone());
        let mut wp = profiles[0].clone();
        wp.name = "workers".into();
        wp.reltuples = -1.0;
        wp.columns.truncate(1);
        wp.columns[0].stats = None;
        let mut jp = profiles[0].columns[0].clone();
        jp.name = "worker_id".into();
        jp.not_null = false;
        jp.stats = Some(ColumnStats {
            null_frac: 1.0,
            ..ColumnStats::default()
        });
        profiles[0].columns.push(jp);
        profiles.push(wp);
        let data = write(&model, &mut profiles, &SchemaOptions::default());
        assert_eq!(profiles[1].rows, 1, "{}", data.sql);
        assert!(
            data.sql.contains("insert into \"public\".\"workers\""),
            "{}",
            data.sql
        );
        let note = data
            .notes
            .iter()
            .find(|n| n.contains("workers: never analyzed"));
        assert!(
            note.is_some_and(
                |n| n.contains("1 row(s) estimated from") && n.contains("\"jobs_worker_id_fkey\"")
            ),
            "{:?}",
            data.notes
        );
        // Its rows inserted less those deleted, when the statistics have them.
        model.relations[1].inserted_tuples = Some(3.0);
        let data = write(&model, &mut profiles, &SchemaOptions::default());
        assert_eq!(profiles[1].rows, 3, "{:?}", data.notes);
        assert!(data
            .notes
            .iter()
            .any(|n| n.contains("inserted less those deleted (3)")));
    }

    /// A hot key's table named unqualified (as the statements' keys name it) in a schema
    /// off the search path: its rows are written all the same (they were "no such table
    /// was captured" once such a table could be captured).
    #[test]
    fn rows_that_must_exist_find_their_table_off_the_search_path() {
        let (mut model, mut profiles) = big_table(10.0);
        model.relations[0].schema = "q \"x\" ü; y".into();
        profiles[0].schema = model.relations[0].schema.clone();
        let opts = SchemaOptions {
            must_contain: vec![crate::schema_options::KeyRows {
                table: crate::catalog::TableName::new(None, "big"),
                columns: vec!["id".into()],
                rows: vec![vec![Some("987654321".into())]],
            }],
            ..SchemaOptions::default()
        };
        let data = write(&model, &mut profiles, &opts);
        assert!(data.notes.is_empty(), "{:?}", data.notes);
        assert!(data.sql.contains("987654321"), "{}", data.sql);
    }
}
