//! The SQL of [`crate::fixes`]: each fix's script, setup and check, written by rewriting the
//! captured statements around the spans `diagnose::shape_parts` finds (a `SKIP LOCKED`
//! inserted after the lock strength, a LIMIT replaced, an UPDATE's target, right-hand side
//! and WHERE replaced), and the bookkeeping the checks read (`hotbench_claims`,
//! `hotbench_increments`, `hotbench_counter_start`). Pure.

use std::ops::Range;

use hotbench_diagnose::shape::{relation_key, touches, Access};
use hotbench_diagnose::shape_parts::{
    equalities, lock_clauses, update_parts, LockClause, UpdateParts,
};

use crate::fix_shape::{FloorSource, GeneratedFile, Shape};
use crate::log_sql::{control, Control};
use crate::sqltext::{guard_braces, ident, literal};

/// Claims per transaction of a batched claim (`{{batch}}`'s default).
pub const BATCH: i64 = 10;
/// Rows per sharded counter (`{{shards}}`'s default).
pub const SHARDS: i64 = 16;

/// One line of a script: a statement (ended by `;`, or by `\gset`) or a meta-command.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Query { sql: String, gset: bool },
    Meta(String),
}

pub fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for s in steps {
        match s {
            Step::Query { sql, gset: true } => {
                out.push_str(sql.trim_end());
                out.push_str("\n\\gset\n");
            }
            Step::Query { sql, gset: false } => {
                out.push_str(sql.trim_end());
                out.push_str(";\n");
            }
            Step::Meta(m) => {
                out.push_str(m);
                out.push('\n');
            }
        }
    }
    out
}

fn query(sql: &str) -> Step {
    Step::Query {
        sql: guard_braces(sql.trim()),
        gset: false,
    }
}

/// A file-name part for `name`: lower-case letters, digits and `_`, with a hash of the
/// name when anything had to change.
pub fn file_stem(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if clean == name && !clean.is_empty() {
        return clean;
    }
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!("{clean}_{h:08x}")
}

/// `text` with each `(range, replacement)` applied (ranges must not overlap).
fn splice(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (r, s) in edits {
        if r.start <= r.end
            && r.end <= out.len()
            && out.is_char_boundary(r.start)
            && out.is_char_boundary(r.end)
        {
            out.replace_range(r, &s);
        }
    }
    out
}

/// [`splice`] of captured text, then guarded against `{{…}}` expansion — except the
/// replacements themselves, which may be parameters (`{{batch}}`).
fn splice_guarded(text: &str, edits: Vec<(Range<usize>, String)>) -> String {
    let mut params = Vec::new();
    let edits = edits
        .into_iter()
        .map(|(r, s)| {
            if s.contains("{{") {
                params.push(s);
                (r, format!("hotbench\x01{}\x01", params.len() - 1))
            } else {
                (r, s)
            }
        })
        .collect();
    let mut out = guard_braces(&splice(text, edits));
    for (i, p) in params.iter().enumerate() {
        out = out.replace(&format!("hotbench\x01{i}\x01"), p);
    }
    out
}

/// A name for a comment or an `about`: one line, no `{{` for the scenario to expand.
pub fn plain(s: &str) -> String {
    s.replace(['\n', '\r'], " ").replace("{{", "{ {")
}

fn header(shape: &Shape, what: &str) -> Vec<Step> {
    let mut out = vec![Step::Meta(format!(
        "-- hotbench capture: {what} (shape {}, captured as {})",
        plain(&shape.name),
        plain(&shape.script)
    ))];
    out.extend(shape.draws.iter().map(|d| Step::Meta(d.clone())));
    out
}

fn is_control(sql: &str) -> bool {
    control(sql) != Control::Other
}

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether two WHERE conditions pick the same row: the same `column = value` conjuncts
/// (in any order, qualifiers aside), or the same text.
fn same_row(a_sql: &str, a: &Range<usize>, b_sql: &str, b: &Range<usize>) -> bool {
    let set = |sql: &str, r: &Range<usize>| {
        equalities(sql, r.clone()).map(|e| {
            let mut v: Vec<(String, String)> =
                e.into_iter().map(|(c, v)| (c, norm(&sql[v]))).collect();
            v.sort();
            v
        })
    };
    match (set(a_sql, a), set(b_sql, b)) {
        (Some(x), Some(y)) => x == y,
        _ => norm(&a_sql[a.clone()]) == norm(&b_sql[b.clone()]),
    }
}

pub struct Rcw {
    /// The SELECT … FOR UPDATE and the UPDATE it replaces (no other fix takes them).
    pub taken: [usize; 2],
    pub script: String,
    pub about: String,
    pub check: GeneratedFile,
}

/// `SELECT … FOR UPDATE` then an UPDATE of the same row → one `UPDATE … RETURNING` that
/// only writes when the floor holds.
pub fn read_check_write(shape: &Shape, notes: &mut Vec<String>) -> Option<Rcw> {
    let st = &shape.statements;
    let (i, j, rel, upd) = st.iter().enumerate().find_map(|(i, s)| {
        let c = lock_clauses(s)
            .into_iter()
            .find(|c| !c.nested && c.limit_value.is_none() && !c.skip_locked)?;
        let rel = touches(s)
            .into_iter()
            .find(|t| matches!(t.access, Access::Lock { .. }))?
            .relation;
        let sel_where = c.where_clause.clone()?;
        st.iter().enumerate().skip(i + 1).find_map(|(j, u_sql)| {
            let u = update_parts(u_sql)?;
            let w = u.where_clause.clone()?;
            (u.relation == rel && same_row(s, &sel_where, u_sql, &w))
                .then(|| (i, j, rel.clone(), u))
        })
    })?;
    let u_sql = &st[j];
    let Some((a, floor)) = upd.assignments.iter().find_map(|a| {
        let f = shape
            .floors
            .iter()
            .find(|f| f.relation == rel && f.column == a.column)?;
        Some((a, f))
    }) else {
        notes.push(format!(
            "{}: read-check-write of {rel} recognised, but no floor is known for the columns its UPDATE sets: no update-returning variant",
            shape.name
        ));
        return None;
    };
    let col_text = &u_sql[a.column_span.clone()];
    let new_value = if a.delta.is_some() {
        u_sql[a.rhs.clone()].to_string()
    } else if let Some(var) = shape.amounts.get(&a.column) {
        format!("{col_text} - :{var}")
    } else {
        notes.push(format!(
            "{}: read-check-write of {rel}.{} recognised, but the UPDATE assigns a value computed by the client and no amount variable was given: no update-returning variant",
            shape.name, a.column
        ));
        return None;
    };
    let op = if floor.strict { ">" } else { ">=" };
    notes.push(format!(
        "{}: read-check-write of {rel}.{} recognised",
        shape.name, a.column
    ));
    let cond = format!("({new_value}) {op} {}", floor.value);
    let w = upd.where_clause.clone()?;
    let update = splice(
        &u_sql[..upd.end],
        vec![
            (a.rhs.clone(), new_value.clone()),
            (w.clone(), format!("({}) and {cond}", &u_sql[w])),
        ],
    );
    let fix = format!(
        "with hotbench_rcw as (\n{update}\n returning 1\n)\nselect count(*) as hotbench_ok from hotbench_rcw"
    );
    let others: Vec<&String> = st
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != i && *k != j)
        .map(|(_, s)| s)
        .collect();
    let keep_block = others.iter().any(|s| !is_control(s));
    let mut steps = header(
        shape,
        "read-check-write as one UPDATE … RETURNING, the check in its WHERE",
    );
    let begin = others.iter().find(|s| control(s) == Control::Begin);
    if keep_block {
        steps.push(query(begin.map_or("begin", |s| s.as_str())));
    }
    steps.push(Step::Query {
        sql: guard_braces(&fix),
        gset: true,
    });
    let rest: Vec<&&String> = others.iter().filter(|s| !is_control(s)).collect();
    if !rest.is_empty() {
        steps.push(Step::Meta("\\if :hotbench_ok".into()));
        steps.extend(rest.iter().map(|s| query(s)));
        steps.push(Step::Meta("\\endif".into()));
    }
    if keep_block {
        steps.push(query("commit"));
    }
    let source = match &floor.source {
        FloorSource::Check(name) => format!("CHECK constraint {name}"),
        FloorSource::ObservedMinimum => "the observed minimum".to_string(),
    };
    let rel_text = guard_braces(&u_sql[upd.relation_span.clone()]);
    let col = ident(&a.column);
    let name = format!(
        "{rel}.{} never {} {} ({source})",
        a.column,
        if floor.strict { "at or below" } else { "below" },
        floor.value
    );
    let bad_op = if floor.strict { "<=" } else { "<" };
    let check = format!(
        "-- hotbench capture: the floor the captured read-check-write keeps ({}).\n\
         select {} as name, count(*) = 0 as ok,\n       format('%s row(s) of %s with %s {bad_op} %s', count(*), {}, {}, {}) as detail\nfrom {rel_text} where {col} {bad_op} {};\n",
        plain(&source),
        literal(&name),
        literal(&rel),
        literal(&a.column),
        literal(&floor.value),
        floor.value
    );
    Some(Rcw {
        taken: [i, j],
        script: render(&steps),
        about: format!(
            "one UPDATE … RETURNING of {rel} writing only when {}.{} stays {op} {} ({source}); no row back = refused",
            rel, a.column, floor.value
        ),
        check: GeneratedFile {
            name: format!("hotbench_floor_{}_{}.sql", file_stem(&rel), file_stem(&a.column)),
            text: check,
        },
    })
}

pub struct Claim {
    pub setup: GeneratedFile,
    pub check: GeneratedFile,
    pub skip_locked: String,
    pub batched: String,
    pub baseline: Vec<Step>,
    pub about_skip: String,
    pub about_batch: String,
}

const CLAIMS_SETUP: &str = "-- hotbench capture: every row a claim took, as text, for the check that each was taken once.\n\
create unlogged table if not exists hotbench_claims (claimed text not null);\n";

/// A `FOR UPDATE … LIMIT` claim → `SKIP LOCKED`, then a batch per transaction; every
/// variant logs what it claimed.
pub fn claim(shape: &Shape, notes: &mut Vec<String>) -> Option<Claim> {
    let st = &shape.statements;
    let (k, c, rel) = st.iter().enumerate().find_map(|(k, s)| {
        let c = lock_clauses(s)
            .into_iter()
            .find(|c| c.limit_value.is_some() && !c.skip_locked && !c.nowait && !c.share)?;
        let rel = touches(s)
            .into_iter()
            .find(|t| matches!(t.access, Access::Lock { limit: true, .. }))?
            .relation;
        Some((k, c, rel))
    })?;
    let sql = &st[k];
    let standalone =
        !c.nested && sql[c.select.clone()].trim() == sql.trim().trim_end_matches(';').trim();
    let variant = |skip: bool, batch: bool| -> Vec<Step> {
        let limit = (batch && (!standalone || follow_ups(st, k).is_empty())).then_some("{{batch}}");
        let claim_sql = claim_cte(sql, &c, &rel, skip, limit);
        if standalone {
            standalone_claim(shape, k, &claim_sql, skip, batch && limit.is_none())
        } else {
            st.iter()
                .enumerate()
                .map(|(i, s)| {
                    if i == k {
                        Step::Query {
                            sql: nested_claim(sql, &c, &claim_sql, limit.is_some()),
                            gset: false,
                        }
                    } else {
                        query(s)
                    }
                })
                .collect()
        }
    };
    let mut skip_steps = header(shape, "the claim with SKIP LOCKED");
    skip_steps.extend(variant(true, false));
    let mut batch_steps = header(shape, "SKIP LOCKED claims, a batch per transaction");
    batch_steps.extend(variant(true, true));
    notes.push(format!(
        "{}: claim of {rel} (FOR UPDATE … LIMIT) recognised",
        shape.name
    ));
    let check = "-- hotbench capture: no row claimed twice (every variant logs its claims in hotbench_claims).\n\
         select 'each claimed row claimed once' as name, count(*) = count(distinct claimed) as ok,\n       format('%s claims of %s distinct rows', count(*), count(distinct claimed)) as detail\nfrom hotbench_claims;\n"
        .to_string();
    let batched_about = if standalone && !follow_ups(st, k).is_empty() {
        format!("up to {BATCH} SKIP LOCKED claims of {rel}, each with its statements, in one transaction")
    } else {
        format!("SKIP LOCKED claims of up to `batch` rows of {rel} at once")
    };
    Some(Claim {
        setup: GeneratedFile {
            name: "hotbench_claims.sql".into(),
            text: CLAIMS_SETUP.into(),
        },
        check: GeneratedFile {
            name: "hotbench_claims_check.sql".into(),
            text: check,
        },
        skip_locked: render(&skip_steps),
        batched: render(&batch_steps),
        baseline: variant(false, false),
        about_skip: format!(
            "the claim of {rel} with FOR UPDATE SKIP LOCKED: each client takes a row nobody holds"
        ),
        about_batch: batched_about,
    })
}

/// The statements after the claim `k` that are not transaction control.
fn follow_ups(st: &[String], k: usize) -> Vec<&String> {
    st.iter().skip(k + 1).filter(|s| !is_control(s)).collect()
}

/// `WITH hotbench_claim AS (…), hotbench_claim_log AS (INSERT …)` (no trailing text).
fn claim_cte(sql: &str, c: &LockClause, rel: &str, skip: bool, limit: Option<&str>) -> String {
    let base = c.select.start;
    let mut edits = Vec::new();
    if skip {
        edits.push((
            c.strength_end - base..c.strength_end - base,
            " skip locked".to_string(),
        ));
    }
    if let (Some(l), Some(v)) = (limit, c.limit_value.as_ref()) {
        edits.push((v.start - base..v.end - base, l.to_string()));
    }
    let select = splice_guarded(&sql[c.select.clone()], edits);
    format!(
        "hotbench_claim as (\n{select}\n), hotbench_claim_log as (\n insert into hotbench_claims (claimed)\n select {} || hotbench_claim::text from hotbench_claim\n)",
        literal(&format!("{rel}:"))
    )
}

/// A claim that is a statement of its own: it reports how many rows it took (and the
/// columns the next statements use) through `\gset`; they run only when it took one.
fn standalone_claim(shape: &Shape, k: usize, cte: &str, skip: bool, repeat: bool) -> Vec<Step> {
    let st = &shape.statements;
    let mut cols = String::new();
    for (var, col) in &shape.claimed {
        let var: String = var
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        cols.push_str(&format!(
            ", (array_agg(hotbench_claim.{}))[1] as {var}",
            ident(col)
        ));
    }
    let claim = Step::Query {
        sql: format!("with {cte}\nselect count(*) as hotbench_claimed{cols} from hotbench_claim"),
        gset: true,
    };
    let before: Vec<&String> = st.iter().take(k).collect();
    let after: Vec<&String> = st.iter().skip(k + 1).collect();
    let begin = before
        .iter()
        .chain(after.iter())
        .find(|s| control(s) == Control::Begin);
    let end = after.iter().rev().find(|s| {
        matches!(
            control(s),
            Control::Commit { .. } | Control::Rollback { .. }
        )
    });
    let mut out = Vec::new();
    let in_block = begin.is_some() || repeat;
    if in_block {
        out.push(query(begin.map_or("begin", |s| s.as_str())));
    }
    out.extend(before.iter().filter(|s| !is_control(s)).map(|s| query(s)));
    let rounds = if repeat && skip { BATCH as usize } else { 1 };
    for _ in 0..rounds {
        out.push(claim.clone());
        out.push(Step::Meta("\\if :hotbench_claimed".into()));
        out.extend(follow_ups(st, k).into_iter().map(|s| query(s)));
    }
    for _ in 0..rounds {
        out.push(Step::Meta("\\endif".into()));
    }
    if in_block {
        out.push(query(end.map_or("commit", |s| s.as_str())));
    }
    out
}

/// A claim inside a bigger statement: its select becomes a CTE the statement reads.
fn nested_claim(sql: &str, c: &LockClause, cte: &str, batch: bool) -> String {
    let mut edits = vec![(c.select.clone(), "select * from hotbench_claim".to_string())];
    if batch {
        // `id = (select …)` takes one row; a batch needs `id in (select …)`.
        let before = sql[..c.select.start].trim_end();
        if let Some(b) = before.strip_suffix('(') {
            let b = b.trim_end();
            if b.ends_with('=') && !b.ends_with("<=") && !b.ends_with(">=") && !b.ends_with("!=") {
                edits.push((b.len() - 1..b.len(), "in".to_string()));
            }
        }
    }
    let body = splice_guarded(sql, edits);
    let t = body.trim_start();
    let lower = t.to_ascii_lowercase();
    for w in ["with recursive ", "with "] {
        if lower.starts_with(w) {
            return format!("{w}{cte},\n{}", &t[w.len()..]);
        }
    }
    format!("with {cte}\n{t}")
}

pub struct Counter {
    pub common_setup: Vec<GeneratedFile>,
    pub check: GeneratedFile,
    pub fix_setup: GeneratedFile,
    pub script: String,
    pub baseline: Vec<Step>,
    pub about: String,
}

/// The name of the shard table of `rel`: within PostgreSQL's 63 bytes, cut on a character.
pub fn shard_table(rel: &str) -> String {
    let mut name = String::from("hotbench_shard_");
    for c in rel.chars() {
        if name.len() + c.len_utf8() > 63 {
            break;
        }
        name.push(c);
    }
    name
}

/// One counter UPDATE of the shape.
struct Inc {
    at: usize,
    parts: UpdateParts,
    keys: Vec<String>,
}

/// A hot counter increment → the same increment on one of `{{shards}}` rows of a shard
/// table; every variant logs its increments, and the check adds them up. Statements in
/// `taken` (a read-check-write's UPDATE: a balance with a floor, not a counter) are left out.
pub fn counter(
    shape: &Shape,
    base: Option<&[Step]>,
    taken: &[usize],
    notes: &mut Vec<String>,
) -> Option<Counter> {
    let st = &shape.statements;
    let incs: Vec<Inc> = st
        .iter()
        .enumerate()
        .filter(|(at, _)| !taken.contains(at))
        .filter_map(|(at, s)| {
            let parts = update_parts(s)?;
            if !parts.assignments.iter().any(|a| a.delta.is_some()) {
                return None;
            }
            if !shape.hot.is_empty() && !shape.hot.contains(&parts.relation) {
                return None;
            }
            let keys = equalities(s, parts.where_clause.clone()?)?
                .into_iter()
                .map(|(c, _)| c)
                .collect();
            Some(Inc { at, parts, keys })
        })
        .collect();
    let first = hottest(&incs, &shape.hot)?;
    let rel = first.parts.relation.clone();
    let rel_text = guard_braces(&st[first.at][first.parts.relation_span.clone()]);
    // One relation per shape (the first hot one); its other increments must use the same key.
    let incs: Vec<&Inc> = incs
        .iter()
        .filter(|i| i.parts.relation == rel && i.keys == first.keys)
        .collect();
    let mut cols: Vec<String> = Vec::new();
    for i in &incs {
        for a in i.parts.assignments.iter().filter(|a| a.delta.is_some()) {
            if !cols.contains(&a.column) {
                cols.push(a.column.clone());
            }
        }
    }
    let shard = ident(&shard_table(&rel));
    let keys: Vec<String> = first.keys.iter().map(|k| ident(k)).collect();
    let cols_q: Vec<String> = cols.iter().map(|c| ident(c)).collect();
    let label = |c: &str| literal(&format!("{rel}.{c}"));
    let mut common = format!(
        "-- hotbench capture: the counters of {}: their totals at the start, every increment logged, and the (empty) shard table the sharded variant fills.\n\
         create unlogged table if not exists hotbench_increments (counter text not null, delta numeric not null);\n\
         create table if not exists hotbench_counter_start (counter text primary key, total numeric not null);\n\
         create table {shard} as select {}, 0 as hotbench_shard, {} from {rel_text} limit 0;\n",
        plain(&rel),
        keys.join(", "),
        cols_q.join(", ")
    );
    let mut check = format!(
        "-- hotbench capture: no increment of {}'s counters lost (base row + shards = start + increments).\n",
        plain(&rel)
    );
    for (c, q) in cols.iter().zip(&cols_q) {
        common.push_str(&format!(
            "insert into hotbench_counter_start values ({}, (select coalesce(sum({q}), 0) from {rel_text}));\n",
            label(c)
        ));
        check.push_str(&format!(
            "select {} as name, t.now = s.total + coalesce(i.delta, 0) as ok,\n       format('total %s, %s at the start, %s in increments', t.now, s.total, coalesce(i.delta, 0)) as detail\n\
             from (select coalesce((select sum({q}) from {rel_text}), 0) + coalesce((select sum({q}) from {shard}), 0) as now) t\n\
             cross join (select total from hotbench_counter_start where counter = {l}) s\n\
             cross join (select sum(delta) as delta from hotbench_increments where counter = {l}) i;\n",
            literal(&format!("{rel}.{c}: every increment counted")),
            l = label(c)
        ));
    }
    let fix_setup = format!(
        "-- hotbench capture: {{{{shards}}}} shard rows per counter row of {p}, starting at 0.\n\
         insert into {shard} ({k}, hotbench_shard, {c})\nselect {kr}, hotbench_g, {zeros} from {rel_text}, generate_series(0, {{{{shards}}}} - 1) as hotbench_g;\n\
         create index on {shard} ({k}, hotbench_shard);\nanalyze {shard};\n",
        k = keys.join(", "),
        c = cols_q.join(", "),
        kr = keys.iter().map(|k| format!("{rel_text}.{k}")).collect::<Vec<_>>().join(", "),
        zeros = vec!["0"; cols.len()].join(", "),
        p = plain(&rel)
    );
    let plain: Vec<Step> =
        base.map_or_else(|| st.iter().map(|s| query(s)).collect(), <[Step]>::to_vec);
    let replace = |steps: &[Step], sharded: bool| -> Vec<Step> {
        steps
            .iter()
            .map(|step| match step {
                Step::Query { sql, gset: false } => match incs
                    .iter()
                    .find(|i| guard_braces(st[i.at].trim()) == *sql)
                {
                    Some(i) => Step::Query {
                        sql: logged_increment(&st[i.at], &i.parts, &rel, sharded.then_some(&shard)),
                        gset: false,
                    },
                    None => step.clone(),
                },
                other => other.clone(),
            })
            .collect()
    };
    let mut script = header(shape, "the hot counter spread over {{shards}} rows");
    script.push(Step::Meta(
        "\\set hotbench_shard random(0, {{shards}} - 1)".into(),
    ));
    script.extend(replace(&plain, true));
    notes.push(format!(
        "{}: counter increment of {rel} ({}) recognised",
        shape.name,
        cols.join(", ")
    ));
    if st.iter().any(|s| {
        touches(s)
            .iter()
            .any(|t| t.relation == rel && t.access == Access::Read)
    }) {
        notes.push(format!(
            "{}: the shape also reads {rel}; in the sharded variant that read sees the base row only, not the shards",
            shape.name
        ));
    }
    let stem = file_stem(&rel);
    Some(Counter {
        common_setup: vec![GeneratedFile {
            name: format!("hotbench_counter_{stem}.sql"),
            text: common,
        }],
        check: GeneratedFile {
            name: format!("hotbench_counter_{stem}_check.sql"),
            text: check,
        },
        fix_setup: GeneratedFile {
            name: format!("{}_sharded_setup.sql", file_stem(&shape.name)),
            text: fix_setup,
        },
        script: render(&script),
        baseline: replace(&plain, false),
        about: format!(
            "each increment of {rel} ({}) goes to one of `shards` shard rows of its counter",
            cols.join(", ")
        ),
    })
}

/// The hottest relation's increment: `hot` lists the relations whose rows were waited on
/// first (tpcb-like's tellers, not the accounts its first UPDATE increments); ties go to the
/// first in the transaction.
fn hottest<'a>(incs: &'a [Inc], hot: &[String]) -> Option<&'a Inc> {
    let rank = |i: &Inc| {
        hot.iter()
            .position(|h| *h == i.parts.relation)
            .unwrap_or(usize::MAX)
    };
    incs.iter().min_by_key(|i| rank(i))
}

/// The increment, on the shard table when `shard` is given, logging each delta it applied.
fn logged_increment(sql: &str, u: &UpdateParts, rel: &str, shard: Option<&String>) -> String {
    let mut edits = Vec::new();
    if let Some(shard) = shard {
        let written = &sql[u.relation_span.clone()];
        let target = match &u.alias {
            Some(_) => shard.clone(),
            None => format!("{shard} as {}", ident(&relation_key(written))),
        };
        edits.push((u.relation_span.clone(), target));
        if let Some(w) = &u.where_clause {
            edits.push((
                w.clone(),
                format!("({}) and hotbench_shard = :hotbench_shard", &sql[w.clone()]),
            ));
        }
    }
    let update = splice_guarded(&sql[..u.end], edits);
    let logs: Vec<String> = u
        .assignments
        .iter()
        .filter_map(|a| {
            let (neg, d) = a.delta.clone()?;
            let sign = if neg { "-" } else { "" };
            Some(format!(
                "select {}, {sign}({})::numeric from hotbench_inc",
                literal(&format!("{rel}.{}", a.column)),
                guard_braces(&sql[d])
            ))
        })
        .collect();
    format!(
        "with hotbench_inc as (\n{update}\n returning 1\n)\ninsert into hotbench_increments (counter, delta)\n{}",
        logs.join("\nunion all ")
    )
}

/// `CHECK ((col >= 0))`, `CHECK (col > (-5)::numeric)`, `CHECK (0 <= col)` → the floor.
pub fn floor_from_check(column: &str, def: &str) -> Option<(bool, String)> {
    // Words (quoted or not), numbers with their sign, and comparison operators.
    let mut toks: Vec<String> = Vec::new();
    let c: Vec<char> = def.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '"' {
            let mut w = String::from('"');
            i += 1;
            while i < c.len() {
                w.push(c[i]);
                if c[i] == '"' && c.get(i + 1) != Some(&'"') {
                    break;
                }
                if c[i] == '"' {
                    i += 1;
                    w.push('"');
                }
                i += 1;
            }
            i += 1;
            toks.push(w);
        } else if ch.is_alphanumeric()
            || ch == '_'
            || ch == '.'
            || (ch == '-' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let mut w = String::from(ch);
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                w.push(c[i]);
                i += 1;
            }
            toks.push(w);
        } else if ch == '>' || ch == '<' || ch == '=' {
            let mut w = String::from(ch);
            if c.get(i + 1) == Some(&'=') {
                w.push('=');
                i += 1;
            }
            i += 1;
            toks.push(w);
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            // A cast: skip the type name.
            i += 2;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == ' ') {
                i += 1;
            }
        } else {
            if !matches!(ch, '(' | ')' | ' ') {
                toks.push(ch.to_string());
            }
            i += 1;
        }
    }
    let is_col = |t: &str| relation_key(t) == column;
    let is_num = |t: &str| t.parse::<f64>().is_ok_and(f64::is_finite);
    // Only a constraint that is this one comparison.
    if toks.first().map(String::as_str) != Some("CHECK")
        && toks.first().map(|t| t.to_lowercase()) != Some("check".into())
    {
        return None;
    }
    let t: Vec<&str> = toks.iter().skip(1).map(String::as_str).collect();
    match t.as_slice() {
        [a, op, n] if is_col(a) && is_num(n) && (*op == ">=" || *op == ">") => {
            Some((*op == ">", (*n).to_string()))
        }
        [n, op, a] if is_col(a) && is_num(n) && (*op == "<=" || *op == "<") => {
            Some((*op == "<", (*n).to_string()))
        }
        _ => None,
    }
}
