//! Where the workload side meets the data side: the rows the twin's data must hold (the hot
//! values a statement's `WHERE` compares with a column, the rows `pg_locks` named), and
//! `--redact` applied to what the scripts and `capture.json` carry (hot values, constants,
//! hot rows' keys), with the same keyed [`Redactor`] as the data, so a hot key stays the
//! same (generated) key in the scripts and in `data.sql`. Pure.

use std::collections::BTreeMap;

use hotbench_diagnose::shape::{touches, Access};

use crate::model::ValueKind;
use crate::params::{Fit, Fitted, Tail};
use crate::redact::Redactor;
use crate::schema::{KeyRows, TableName, TableProfile};
use crate::sql_text::Value;
use crate::workload::Capture;

/// Rows of values, one per column.
type Rows = Vec<Vec<Option<String>>>;

/// The rows that must exist: per (table, column), the hot values and constants a statement
/// on that one table compares the column with, and the keys of the rows waited on.
pub fn must_contain(c: &Capture, tables: &[String]) -> Vec<KeyRows> {
    let mut by: BTreeMap<(String, Vec<String>), Rows> = BTreeMap::new();
    for (shape, model) in c.doc.shapes.iter().zip(&c.shapes) {
        for p in &shape.parameters {
            let Some(col) = &p.column else { continue };
            let Some(st) = model.statements.get(p.statement) else {
                continue;
            };
            let t = touches(&st.key);
            let [one] = t.as_slice() else { continue };
            if matches!(one.access, Access::Insert) || !in_where(&st.text.pieces, p.position) {
                continue;
            }
            let mut values: Vec<String> = p.hot.iter().map(|h| h.value.clone()).collect();
            if p.model == "constant" {
                values.extend(p.value.iter().filter(|v| !v.starts_with("E'")).cloned());
            }
            let rows = by
                .entry((one.relation.clone(), vec![col.clone()]))
                .or_default();
            for v in values {
                let row = vec![Some(v)];
                if !rows.contains(&row) {
                    rows.push(row);
                }
            }
        }
    }
    for k in &c.doc.hot_keys {
        let rel = hotbench_diagnose::shape::relation_key(&k.relation);
        let Some((cols, vals)) = split_key(&k.key) else {
            continue;
        };
        let rows = by.entry((rel, cols)).or_default();
        let row: Vec<Option<String>> = vals.into_iter().map(Some).collect();
        if !rows.contains(&row) {
            rows.push(row);
        }
    }
    by.into_iter()
        .filter(|((t, _), rows)| tables.contains(t) && !rows.is_empty())
        .map(|((t, columns), rows)| KeyRows {
            table: TableName::new(None, &t),
            columns,
            rows,
        })
        .collect()
}

/// The slot comes after the statement's `WHERE` (a comparison, not an assignment).
fn in_where(pieces: &[String], slot: usize) -> bool {
    let before: String = pieces
        .iter()
        .take(slot + 1)
        .map(|p| p.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("?");
    before.contains(" where ")
}

/// `a=1, b=x` → (["a", "b"], ["1", "x"]); `None` for ctids, NULLs and values with `, `.
fn split_key(key: &str) -> Option<(Vec<String>, Vec<String>)> {
    if key.starts_with("ctid=") || key.ends_with('…') {
        return None;
    }
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for part in key.split(", ") {
        let (c, v) = part.split_once('=')?;
        if v == "NULL" {
            return None;
        }
        cols.push(c.to_string());
        vals.push(v.to_string());
    }
    Some((cols, vals))
}

/// `--redact`'s stand-ins for the workload side, by the column a value goes with (its kind
/// from the captured tables; a number or text otherwise).
struct StandIns {
    r: Redactor,
    kinds: BTreeMap<String, ValueKind>,
}

impl StandIns {
    fn new(tables: &[TableProfile], seed: u64) -> Self {
        let mut kinds: BTreeMap<String, ValueKind> = BTreeMap::new();
        for t in tables {
            for col in &t.columns {
                kinds
                    .entry(col.name.clone())
                    .or_insert_with(|| col.kind.clone());
            }
        }
        StandIns {
            r: Redactor::new(seed),
            kinds,
        }
    }

    fn kind_of(&self, column: Option<&str>, v: &Value) -> ValueKind {
        if let Some(k) = column.and_then(|c| self.kinds.get(c)) {
            return k.clone();
        }
        match v {
            Value::Number(n) if n.parse::<i64>().is_ok() => ValueKind::Int {
                min: i64::MIN.into(),
                max: i64::MAX.into(),
            },
            Value::Number(_) => ValueKind::Decimal,
            _ => ValueKind::Text,
        }
    }

    fn value(&self, column: Option<&str>, v: &Value) -> Value {
        let text = match v {
            Value::Number(n) => n.clone(),
            Value::Text(t) => t.clone(),
            other => return other.clone(),
        };
        match self.r.value(&self.kind_of(column, v), &text) {
            Some(new) => match v {
                Value::Number(_) => Value::Number(new),
                _ => Value::Text(new),
            },
            None => Value::Unknown,
        }
    }

    /// A hot row's key (`col=value, …`) with each value's stand-in.
    fn key(&self, key: &str) -> String {
        match split_key(key) {
            Some((cols, vals)) => cols
                .iter()
                .zip(vals)
                .map(|(col, v)| {
                    let kind = self.kind_of(Some(col), &Value::Text(v.clone()));
                    let new = self.r.value(&kind, &v).unwrap_or_else(|| "?".into());
                    format!("{col}={new}")
                })
                .collect::<Vec<_>>()
                .join(", "),
            None if key.starts_with("ctid=") => key.to_string(),
            None => "(redacted)".into(),
        }
    }
}

/// The hot rows' keys as `--redact` writes them (the same stand-ins as the data's): what
/// [`fallback`] must draw from under `--redact`, since its other values come from the
/// captured tables' statistics, redacted already.
pub fn redacted_hot_keys(
    keys: &[hotbench_results::capture_record::HotKey],
    tables: &[TableProfile],
    seed: u64,
) -> Vec<hotbench_results::capture_record::HotKey> {
    let s = StandIns::new(tables, seed);
    keys.iter()
        .map(|k| {
            let mut k = k.clone();
            k.key = s.key(&k.key);
            k
        })
        .collect()
}

/// `--redact` on the workload side: the scripts are rewritten with generated values, and
/// the capture's hot rows' keys and findings lose their values. `fallback` draws from the
/// redacted tables and [`redacted_hot_keys`]: its values are stand-ins already.
pub fn redact(
    c: &mut Capture,
    tables: &[TableProfile],
    seed: u64,
    fallback: Option<&crate::script::Fallback<'_>>,
) {
    let s = StandIns::new(tables, seed);
    let f = |column: Option<&str>, v: &Value| -> Value { s.value(column, v) };
    c.write_scripts(Some(&f), fallback);
    for k in &mut c.doc.hot_keys {
        k.key = s.key(&k.key);
    }
    c.doc.findings = c
        .diagnosis
        .findings
        .iter()
        .map(|f| format!("{} (title redacted)", f.kind.name()))
        .collect();
    c.doc.notes.push(
        "--redact: every captured value in the scripts, keys and data is a generated stand-in"
            .into(),
    );
}

/// Values for slots the statements did not show (bound parameters, `$1`), by the
/// statement, the slot (and how many it has) and the slot's column: the rows waited on
/// (`pg_locks`) of the statement's table keyed by the slot's column, with their share of the
/// lock waits; the rest over the column's range in `pg_stats` (its histogram's bounds and
/// most-common values); a text column's most common value. A slot with no column, passed
/// to a captured function or cast to a captured type, as [`crate::unseen`] says.
pub fn fallback<'a>(
    hot_keys: &'a [hotbench_results::capture_record::HotKey],
    tables: &'a [TableProfile],
    defs: &'a crate::unseen::Defs,
) -> impl Fn(&str, (usize, usize), Option<&str>) -> Option<Fitted> + 'a {
    move |statement: &str, slot: (usize, usize), column: Option<&str>| {
        let by_column = |t: &TableProfile, c: &str| column_fit(hot_keys, t, c);
        let Some(column) = column else {
            return crate::unseen::fit(defs, tables, statement, slot, &by_column);
        };
        let rel = touches(statement).first()?.relation.clone();
        let table = tables.iter().find(|t| t.name == rel)?;
        by_column(table, column)
    }
}

/// A column's values from its rows waited on and its `pg_stats` ([`fallback`]).
fn column_fit(
    hot_keys: &[hotbench_results::capture_record::HotKey],
    table: &TableProfile,
    column: &str,
) -> Option<Fitted> {
    let rel = &table.name;
    let col = table.columns.iter().find(|c| c.name == column)?;
    let stats = col.stats.as_ref();
    let hot: Vec<(i64, f64)> = hot_keys
        .iter()
        .filter(|k| &hotbench_diagnose::shape::relation_key(&k.relation) == rel)
        .filter_map(|k| {
            let (cols, vals) = split_key(&k.key)?;
            (cols.len() == 1 && cols[0] == column)
                .then(|| vals[0].parse::<i64>().ok().map(|v| (v, k.share)))
                .flatten()
        })
        .take(crate::params::MAX_HOT)
        .collect();
    match &col.kind {
        ValueKind::Int { .. } => {
            let nums: Vec<i64> = stats
                .map(|s| {
                    s.histogram
                        .iter()
                        .chain(s.mcv.iter().map(|m| &m.0))
                        .filter_map(|v| v.parse::<i64>().ok())
                        .collect()
                })
                .unwrap_or_default();
            let lo = nums.iter().chain(hot.iter().map(|h| &h.0)).min().copied()?;
            let hi = nums.iter().chain(hot.iter().map(|h| &h.0)).max().copied()?;
            let total: f64 = hot.iter().map(|h| h.1).sum();
            // Lock-wait shares stand in for draw shares: scaled to at most half the draws.
            let k = if total > 0.5 { 0.5 / total } else { 1.0 };
            let hot: Vec<(i64, f64)> = hot.into_iter().map(|(v, s)| (v, s * k)).collect();
            Some(Fitted {
                why: format!(
                    "bound values were not visible: {lo}..{hi} from pg_stats{}",
                    if hot.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", {} hot value(s) from the rows waited on (pg_locks), at their share of the lock waits",
                            hot.len()
                        )
                    }
                ),
                fit: Fit::Int {
                    lo,
                    hi,
                    hot,
                    tail: Tail::Uniform,
                },
                observations: 0,
                distinct: 0,
            })
        }
        ValueKind::Text => {
            let v = stats?.mcv.first()?.0.clone();
            Some(Fitted {
                fit: Fit::Constant(Value::Text(v)),
                why: "bound values were not visible: the column's most common value (pg_stats)"
                    .into(),
                observations: 0,
                distinct: 0,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_columns_and_values() {
        assert_eq!(
            split_key("a=1, b=x"),
            Some((vec!["a".into(), "b".into()], vec!["1".into(), "x".into()]))
        );
        assert_eq!(split_key("ctid=(0,1)"), None);
        assert!(in_where(
            &["update t set a = ".into(), " where id = ".into(), "".into()],
            1
        ));
        assert!(!in_where(
            &["update t set a = ".into(), " where id = ".into(), "".into()],
            0
        ));
    }
}
