//! One `INSERT … SELECT` of the data generator, built in named layers:
//! `s` the row source (`generate_series`, or the rows that must exist as `VALUES`) with the
//! row's uniform draws; `x` each column's value ([`crate::datagen_expr`]) and the ranks of
//! its key columns; `y` the foreign key columns kept when the parent has the value and
//! otherwise taken from one of the parent's rows (joined by row number, once per
//! statement), under the table's own column names; then the rows a CHECK or a partition
//! bound refuses filtered out, and `ON CONFLICT DO NOTHING`. Internal names (`s`, `x`, `y`,
//! `c3`, `u3_1`, `f0`, …) never collide with a user's: every user column reaches SQL only
//! as `y`'s quoted output names and the parents' columns under `k0`, `k1`, ….

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::datagen::{draws, stats_of, Plan, Source};
use crate::datagen_expr::{self, Role};
use crate::model::{Column, Constraint, Relation, ValueKind};
use crate::profile::TableProfile;
use crate::sqltext::{ident, literal};

/// How one column gets its value in `x`.
enum Col {
    /// Not written (a generated column, or a default with nothing better to follow).
    Omit,
    /// Written from this `x` expression.
    Gen(String),
}

/// The key columns' ranks: column number → (rank SQL, distinct values).
type Ranks = BTreeMap<i16, (String, u64)>;

impl Plan<'_> {
    /// The statement writing `src`'s rows into `rel` (`total` rows in all), or `None` (with a
    /// note) when a column cannot be given any value.
    pub(crate) fn insert(&mut self, rel: &Relation, src: Source, total: u64) -> Option<String> {
        let profile = self.profiles.get(&rel.oid).copied();
        let base = match &src {
            Source::Series { offset, .. } => format!("(s.i - 1 + {offset})"),
            Source::Must { .. } => "(s.i - 1)".to_string(),
        };
        let ranks = ranks(rel, profile, &base, total);
        let overrides: BTreeMap<i16, usize> = match &src {
            Source::Must { cols, .. } => cols.iter().enumerate().map(|(k, c)| (*c, k)).collect(),
            Source::Series { .. } => BTreeMap::new(),
        };
        let fk_cols: Vec<i16> = rel
            .constraints
            .iter()
            .filter(|c| c.kind == 'f')
            .flat_map(|c| c.columns.iter().copied())
            .collect();
        let mut cols = Vec::new();
        for (j, c) in rel.columns.iter().enumerate() {
            let col = if let Some(k) = overrides.get(&c.num) {
                Col::Gen(format!("(s.m{k})::{}", c.type_sql))
            } else {
                self.column(rel, profile, j, c, &ranks, fk_cols.contains(&c.num), total)?
            };
            cols.push(col);
        }
        let (joins, fixed, extra_draws) = self.foreign_keys(rel, &cols, &ranks)?;
        Some(assemble(
            rel,
            &src,
            &cols,
            &ranks,
            &joins,
            &fixed,
            extra_draws,
        ))
    }

    /// Column `c`'s plan: its rank if it is a key column, its statistics, or its type.
    #[allow(clippy::too_many_arguments)]
    fn column(
        &mut self,
        rel: &Relation,
        profile: Option<&TableProfile>,
        j: usize,
        c: &Column,
        ranks: &Ranks,
        is_fk: bool,
        total: u64,
    ) -> Option<Col> {
        if c.generated.is_some() {
            return Some(Col::Omit);
        }
        let stats = stats_of(profile, &c.name);
        let ranked = ranks.get(&c.num);
        if ranked.is_none()
            && stats.is_none()
            && !is_fk
            && (c.default.is_some() || c.identity.is_some())
        {
            return Some(Col::Omit);
        }
        let role = match ranked {
            Some((rank, distinct)) => Role::Ranked {
                rank,
                distinct: *distinct,
            },
            None => Role::Drawn,
        };
        let salt = format!("{}.{}.{}:", rel.schema, rel.name, c.name);
        match datagen_expr::value(c, stats, &role, &draws(j), total as f64, &salt) {
            Some(v) => Some(Col::Gen(v)),
            None if !c.not_null => Some(Col::Gen(format!("null::{}", c.type_sql))),
            None => {
                self.notes.push(format!(
                    "table {}: column {:?} ({}) is NOT NULL, has no statistics hotbench can \
                     follow and no default: the table is left empty",
                    rel.display(),
                    c.name,
                    c.type_sql
                ));
                None
            }
        }
    }

    /// The joins and fixed expressions of `rel`'s foreign keys: column number → `y`
    /// expression; the count of extra draws (`s.fkN`) they use.
    #[allow(clippy::type_complexity)]
    fn foreign_keys(
        &mut self,
        rel: &Relation,
        cols: &[Col],
        ranks: &Ranks,
    ) -> Option<(Vec<String>, BTreeMap<i16, String>, usize)> {
        let mut joins = Vec::new();
        let mut fixed: BTreeMap<i16, String> = BTreeMap::new();
        let xcol = |num: i16| -> Option<String> {
            let j = rel.columns.iter().position(|c| c.num == num)?;
            matches!(cols.get(j), Some(Col::Gen(_))).then(|| format!("x.c{j}"))
        };
        let fks: Vec<&Constraint> = rel.constraints.iter().filter(|c| c.kind == 'f').collect();
        for (n, fk) in fks.iter().enumerate() {
            let Some((parent_oid, pcols)) = &fk.references else {
                continue;
            };
            if fk.columns.iter().any(|c| fixed.contains_key(c)) {
                continue; // a column of two foreign keys follows the first
            }
            let mine: Vec<Option<String>> = fk.columns.iter().map(|c| xcol(*c)).collect();
            let any_null = mine
                .iter()
                .map(|m| {
                    m.as_ref()
                        .map_or("true".to_string(), |m| format!("{m} is null"))
                })
                .collect::<Vec<_>>()
                .join(" or ");
            let broken = self.broken.contains(&(rel.oid, fk.name.clone()));
            let parent = self.model.relation(*parent_oid);
            if broken || parent.is_none() {
                for c in &fk.columns {
                    if rel.column(*c).is_some_and(|c| c.not_null) {
                        self.notes.push(format!(
                            "table {}: foreign key {:?} closes a cycle of NOT NULL references \
                             (or its parent was not captured): the table is left empty",
                            rel.display(),
                            fk.name
                        ));
                        return None;
                    }
                    fixed.insert(*c, "null".into());
                }
                self.notes.push(format!(
                    "table {}: foreign key {:?} closes a cycle between tables: its columns are NULL",
                    rel.display(),
                    fk.name
                ));
                continue;
            }
            let parent = parent?;
            let pnames: Vec<String> = pcols
                .iter()
                .map(|p| {
                    parent
                        .column(*p)
                        .map(|c| c.name.clone())
                        .unwrap_or_default()
                })
                .collect();
            if self.is_self(rel, *parent_oid) {
                for (c, pname) in fk.columns.iter().zip(&pnames) {
                    let own = rel
                        .columns
                        .iter()
                        .find(|x| &x.name == pname)
                        .and_then(|x| xcol(x.num));
                    let v = match own {
                        Some(o) => format!("case when {any_null} then null else {o} end"),
                        None => "null".into(),
                    };
                    fixed.insert(*c, v);
                }
                continue;
            }
            let q = parent.qualified();
            let keys: Vec<String> = pnames
                .iter()
                .enumerate()
                .map(|(k, p)| format!("q.{} as k{k}", ident(p)))
                .collect();
            let count = format!("(select greatest(count(*), 1) from {q})");
            let ranked = fk.columns.first().and_then(|c| ranks.get(c));
            let on = match ranked {
                Some(_) => format!("r{n}.rn = 1 + (x.rk{n} % {count})"),
                None => format!("r{n}.rn = 1 + pg_catalog.floor(x.fk{n} * {count})::int8"),
            };
            joins.push(format!(
                "left join (select {}, row_number() over () as rn from {q} as q) as r{n} on {on}",
                keys.join(", ")
            ));
            let hit: Vec<String> = mine
                .iter()
                .enumerate()
                .map(|(k, m)| format!("f{n}.k{k} = {}", m.clone().unwrap_or_else(|| "null".into())))
                .collect();
            if ranked.is_none() {
                joins.push(format!(
                    "left join (select {}, true as hit from {q} as q) as f{n} on {}",
                    keys.join(", "),
                    hit.join(" and ")
                ));
            }
            for (k, c) in fk.columns.iter().enumerate() {
                let m = mine[k].clone().unwrap_or_else(|| "null".into());
                let v = if ranked.is_some() {
                    format!("r{n}.k{k}")
                } else {
                    format!(
                        "case when {any_null} then {m} when f{n}.hit then {m} else r{n}.k{k} end"
                    )
                };
                fixed.insert(*c, v);
            }
        }
        Some((joins, fixed, fks.len()))
    }
}

/// The ranks of the key columns: the primary key's (or first unique set's) columns count
/// like digits (the last ones through their distinct values, the first through the rest),
/// so every row's key differs; each other unique set's first column is ranked alone.
fn ranks(rel: &Relation, profile: Option<&TableProfile>, base: &str, total: u64) -> Ranks {
    let mut out = Ranks::new();
    let sets = rel.unique_sets();
    let Some(primary) = sets.first() else {
        return out;
    };
    let total = total.max(1);
    let radix = |num: i16| -> u64 {
        let Some(c) = rel.column(num) else { return 1 };
        let cap = match &c.kind {
            ValueKind::Bool => 2,
            ValueKind::Enum { labels } => labels.len().max(1) as u64,
            _ => 10_000,
        };
        stats_of(profile, &c.name)
            .map_or(1, |s| s.distinct_in(total as f64).round() as u64)
            .clamp(1, cap)
    };
    let radices: Vec<u64> = primary.iter().skip(1).map(|c| radix(*c)).collect();
    let mut below: u64 = 1;
    let mut per: Vec<u64> = vec![0; radices.len()];
    for (k, r) in radices.iter().enumerate().rev() {
        per[k] = below;
        below = below.saturating_mul(*r).min(total);
    }
    let first_distinct = total.div_ceil(below.max(1));
    out.insert(primary[0], (format!("({base} / {below})"), first_distinct));
    for (k, c) in primary.iter().skip(1).enumerate() {
        out.insert(
            *c,
            (
                format!("(({base} / {}) % {})", per[k], radices[k]),
                radices[k],
            ),
        );
    }
    for set in sets.iter().skip(1) {
        if set.iter().all(|c| out.contains_key(c)) && set.contains(&primary[0]) {
            continue;
        }
        if primary.len() == 1 && set.contains(&primary[0]) {
            continue;
        }
        if let Some(c) = set.iter().find(|c| !out.contains_key(c)) {
            out.insert(*c, (base.to_string(), total));
        }
    }
    out
}

/// The statement, layer by layer.
fn assemble(
    rel: &Relation,
    src: &Source,
    cols: &[Col],
    ranks: &Ranks,
    joins: &[String],
    fixed: &BTreeMap<i16, String>,
    fk_draws: usize,
) -> String {
    let mut draws_sql = String::new();
    for (j, c) in cols.iter().enumerate() {
        if matches!(c, Col::Gen(_)) {
            let _ = write!(
                draws_sql,
                ", random() as u{j}_0, random() as u{j}_1, random() as u{j}_2"
            );
        }
    }
    for n in 0..fk_draws {
        let _ = write!(draws_sql, ", random() as fk{n}");
    }
    let s = match src {
        Source::Series { from, to, .. } => format!(
            "(select g.i{draws_sql} from pg_catalog.generate_series({from}::int8, {to}::int8) as g(i)) as s"
        ),
        Source::Must { cols: mc, rows } => {
            let values: Vec<String> = rows
                .iter()
                .enumerate()
                .map(|(k, row)| {
                    let vals: Vec<String> = row
                        .iter()
                        .map(|v| v.as_ref().map_or("null::text".to_string(), |v| format!("{}::text", literal(v))))
                        .collect();
                    format!("({}::int8, {})", k + 1, vals.join(", "))
                })
                .collect();
            let names: Vec<String> = (0..mc.len()).map(|k| format!("m{k}")).collect();
            format!(
                "(select v.*{draws_sql} from (values {}) as v(i, {})) as s",
                values.join(", "),
                names.join(", ")
            )
        }
    };
    let mut x = String::from("select s.i");
    for (j, c) in cols.iter().enumerate() {
        if let Col::Gen(e) = c {
            let _ = write!(x, ", {e} as c{j}");
        }
    }
    for n in 0..fk_draws {
        let _ = write!(x, ", s.fk{n} as fk{n}");
    }
    for (n, fk) in rel.constraints.iter().filter(|c| c.kind == 'f').enumerate() {
        if let Some((rank, _)) = fk.columns.first().and_then(|c| ranks.get(c)) {
            let _ = write!(x, ", {rank} as rk{n}");
        }
    }
    let mut y = Vec::new();
    let mut insert_cols = Vec::new();
    let mut filters = Vec::new();
    let mut overriding = false;
    for (j, c) in rel.columns.iter().enumerate() {
        let name = ident(&c.name);
        match (&cols[j], fixed.get(&c.num)) {
            (Col::Omit, _) => y.push(format!("null::{} as {name}", c.type_sql)),
            (Col::Gen(_), f) => {
                let v = f.cloned().unwrap_or_else(|| format!("x.c{j}"));
                y.push(format!("{v} as {name}"));
                insert_cols.push(name.clone());
                overriding |= c.identity == Some('a');
                if c.not_null {
                    filters.push(format!("{name} is not null"));
                }
            }
        }
    }
    for c in rel.constraints.iter().filter(|c| c.kind == 'c') {
        if let Some(e) = check_expression(&c.def) {
            filters.push(format!("({e}) is not false"));
        }
    }
    if let Some(pc) = &rel.partition_constraint {
        filters.push(format!("({pc}) is not false"));
    }
    let mut out = format!("insert into {}", rel.qualified());
    if !insert_cols.is_empty() {
        let _ = write!(out, " ({})", insert_cols.join(", "));
    }
    if overriding {
        out.push_str(" overriding system value");
    }
    let _ = write!(
        out,
        "\nselect {} from (\n  select {} from (\n    {x} from {s}\n  ) as x{}\n) as y",
        if insert_cols.is_empty() {
            String::new()
        } else {
            insert_cols.join(", ")
        },
        y.join(", "),
        joins.iter().map(|j| format!("\n  {j}")).collect::<String>()
    );
    if !filters.is_empty() {
        let _ = write!(out, "\nwhere {}", filters.join(" and "));
    }
    out.push_str("\non conflict do nothing;\n");
    out
}

/// The expression of `CHECK (expr)` as `pg_get_constraintdef` writes it (without
/// `NOT VALID` / `NO INHERIT`).
fn check_expression(def: &str) -> Option<String> {
    let mut e = def.trim().strip_prefix("CHECK ")?.trim();
    for suffix in [" NOT VALID", " NO INHERIT"] {
        e = e.strip_suffix(suffix).unwrap_or(e).trim_end();
    }
    for suffix in [" NOT VALID", " NO INHERIT"] {
        e = e.strip_suffix(suffix).unwrap_or(e).trim_end();
    }
    Some(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_expressions_lose_their_keywords() {
        assert_eq!(
            check_expression("CHECK ((a > 0)) NOT VALID").as_deref(),
            Some("((a > 0))")
        );
        assert_eq!(
            check_expression("CHECK ((a > 0)) NO INHERIT").as_deref(),
            Some("((a > 0))")
        );
        assert_eq!(check_expression("PRIMARY KEY (a)"), None);
    }
}
