//! The SQL expression that makes one column's value for one generated row, from three
//! uniform draws of the row (`u0` nulls, `u1` most-common values, `u2` the rest) or from the
//! row's rank when the column must be unique. Following `pg_stats`: a NULL with
//! `null_frac`, each most-common value with its frequency, the rest spread over the
//! histogram's equal-frequency buckets as `n_distinct` distinct values; a unique column's
//! values are distinct by construction (rank `r` of `d` maps to distinct values across the
//! histogram's range). Pure text; every value a literal written by [`crate::sqltext`].

use std::fmt::Write as _;

use crate::model::{Column, ValueKind};
use crate::profile::ColumnStats;
use crate::sqltext::{array_text, float, literal};

/// How a column's value is chosen.
pub enum Role<'a> {
    /// Drawn from the statistics (or made up from the type without them).
    Drawn,
    /// Distinct per rank: `rank` (an `int8` SQL expression, 0-based) of `distinct`.
    Ranked { rank: &'a str, distinct: u64 },
}

/// The uniform draws of one column of the row (SQL expressions in `[0, 1)`).
pub struct Draws {
    pub null: String,
    pub pick: String,
    pub rest: String,
}

/// The value of `col` for a row: an expression of type `col.type_sql`; `None` when nothing
/// can be made up (a type without statistics the generator does not know).
pub fn value(
    col: &Column,
    stats: Option<&ColumnStats>,
    role: &Role,
    draws: &Draws,
    rows: f64,
    salt: &str,
) -> Option<String> {
    let ty = &col.type_sql;
    let inner = match role {
        Role::Ranked { rank, distinct } => ranked(col, stats, rank, *distinct, salt)?,
        Role::Drawn => match stats {
            Some(s) => drawn(col, s, draws, rows, salt)?,
            None => made_up(col, &draws.rest, rows, salt)?,
        },
    };
    Some(format!("({inner})::{ty}"))
}

/// Most-common values, then the histogram, with the null fraction.
fn drawn(col: &Column, s: &ColumnStats, d: &Draws, rows: f64, salt: &str) -> Option<String> {
    let nf = if col.not_null { 0.0 } else { s.null_frac };
    let non_null = (1.0 - nf).max(1e-9);
    let mcv: Vec<&(String, f64)> = s.mcv.iter().filter(|(_, f)| *f > 0.0).collect();
    let mut thresholds = vec![0.0];
    let mut cum = 0.0;
    for (_, f) in &mcv {
        cum += f / non_null;
        thresholds.push(cum.min(1.0));
    }
    thresholds.pop();
    let distinct_rest = (s.distinct_in(rows * non_null) - mcv.len() as f64).max(1.0);
    let rest = if s.histogram.len() >= 2 {
        Some(histogram(col, &s.histogram, &d.rest, distinct_rest, salt))
    } else if !mcv.is_empty() {
        let vals: Vec<Option<String>> = mcv.iter().map(|(v, _)| Some(v.clone())).collect();
        Some(pick(&vals, &d.rest))
    } else {
        made_up(col, &d.rest, rows, salt)
    };
    let mut out = String::from("case");
    if nf > 0.0 {
        let _ = write!(out, " when {} < {} then null", d.null, float(nf));
    }
    if !mcv.is_empty() {
        let vals: Vec<Option<String>> = mcv.iter().map(|(v, _)| Some(v.clone())).collect();
        let t: Vec<String> = thresholds.iter().map(|t| float(*t)).collect();
        let _ = write!(
            out,
            " when {p} < {c} then ({arr}::text[])[pg_catalog.width_bucket({p}, \
             array[{t}]::float8[])]",
            p = d.pick,
            c = float(cum.min(1.0)),
            arr = literal(&array_text(&vals)),
            t = t.join(",")
        );
    }
    match rest {
        Some(r) if out == "case" => return Some(format!("({r})::text")),
        Some(r) => {
            let _ = write!(out, " else ({r})::text end");
        }
        None if mcv.is_empty() && nf > 0.0 => out.push_str(" else null end"),
        None if mcv.is_empty() => return None,
        None => out.push_str(" else null end"),
    }
    // The branches are text; the caller casts to the column's type.
    Some(out)
}

/// One of `vals` (text) chosen by draw `u`, uniformly.
fn pick(vals: &[Option<String>], u: &str) -> String {
    format!(
        "({}::text[])[1 + pg_catalog.floor({u} * {})::int4]",
        literal(&array_text(vals)),
        vals.len()
    )
}

/// The rank `floor(u × d)` of `d` values, as the position `(rank + ½) / d` in `[0, 1)`.
fn position(u: &str, distinct: f64) -> String {
    let d = float(distinct.max(1.0).floor());
    format!("((pg_catalog.floor({u} * {d}) + 0.5) / {d})")
}

/// A value at position `p` (SQL, in `[0, 1)`) of the histogram `bounds`: between two
/// bounds for numbers and times (interpolated), a bound itself for other kinds (with the
/// rank appended to strings when there must be more distinct values than bounds).
fn at_position(col: &Column, bounds: &[String], p: &str, rank: &str, distinct: f64) -> String {
    let m = bounds.len() - 1;
    let x = format!("({p} * {m})");
    let j = format!("least(pg_catalog.floor({x})::int4, {})", m - 1);
    let frac = format!("({x} - {j})");
    let lo = |arr: &str| format!("({arr})[{j} + 1]");
    let hi = |arr: &str| format!("({arr})[{j} + 2]");
    let typed = |ty: &str| format!("{}::{ty}[]", literal(&array_text(&opt(bounds))));
    match &col.kind {
        ValueKind::Int { .. } if numbers(bounds) => {
            let arr = format!("array[{}]::numeric[]", bounds.join(","));
            format!(
                "pg_catalog.round({} + ({} - {}) * {frac}::numeric)",
                lo(&arr),
                hi(&arr),
                lo(&arr)
            )
        }
        ValueKind::Decimal if numbers(bounds) => {
            let arr = format!("array[{}]::numeric[]", bounds.join(","));
            format!(
                "{} + ({} - {}) * {frac}::numeric",
                lo(&arr),
                hi(&arr),
                lo(&arr)
            )
        }
        ValueKind::Date => {
            let arr = typed("date");
            format!(
                "{} + pg_catalog.floor(({} - {}) * {frac})::int4",
                lo(&arr),
                hi(&arr),
                lo(&arr)
            )
        }
        ValueKind::Timestamp | ValueKind::TimestampTz => {
            let ty = if col.kind == ValueKind::Timestamp {
                "timestamp"
            } else {
                "timestamptz"
            };
            let arr = typed(ty);
            format!("{} + ({} - {}) * {frac}", lo(&arr), hi(&arr), lo(&arr))
        }
        ValueKind::Text if distinct > bounds.len() as f64 => {
            let arr = typed("text");
            format!("{} || '~' || ({rank})::text", lo(&arr))
        }
        ValueKind::Uuid if distinct > bounds.len() as f64 => {
            format!(
                "pg_catalog.md5({} || ({rank})::text)::uuid",
                literal(&format!("{}:", col.name))
            )
        }
        _ => {
            let arr = typed("text");
            lo(&arr)
        }
    }
}

fn histogram(col: &Column, bounds: &[String], u: &str, distinct: f64, _salt: &str) -> String {
    let d = float(distinct.max(1.0).floor());
    let rank = format!("pg_catalog.floor({u} * {d})::int8");
    format!(
        "({})::text",
        at_position(col, bounds, &position(u, distinct), &rank, distinct)
    )
}

/// Distinct values by rank: `rank` of `distinct` spread evenly over the statistics' range
/// (the histogram's first to last bound), one apart when the range is too narrow.
fn ranked(
    col: &Column,
    stats: Option<&ColumnStats>,
    rank: &str,
    distinct: u64,
    salt: &str,
) -> Option<String> {
    // Every value the statistics name, sorted: the range a ranked value spreads over is
    // theirs (most-common values can lie outside the histogram's bounds).
    let mut bounds: Vec<String> = stats
        .map(|s| {
            s.mcv
                .iter()
                .map(|(v, _)| v.clone())
                .chain(s.histogram.iter().cloned())
                .collect()
        })
        .unwrap_or_default();
    if col.kind.interpolates() && matches!(col.kind, ValueKind::Int { .. } | ValueKind::Decimal) {
        bounds.retain(|b| b.trim().parse::<f64>().is_ok_and(f64::is_finite));
        bounds.sort_by(|a, b| {
            let (x, y) = (
                a.trim().parse::<f64>().unwrap_or(0.0),
                b.trim().parse::<f64>().unwrap_or(0.0),
            );
            x.total_cmp(&y)
        });
    } else {
        // ISO dates and times, and strings: text order is good enough for a range.
        bounds.sort();
    }
    bounds.dedup();
    let d = distinct.max(1);
    // Few enough: the values the statistics name, each once.
    if !bounds.is_empty() && d <= bounds.len() as u64 {
        return Some(format!(
            "({}::text[])[1 + ({rank})::int4]",
            literal(&array_text(&opt(&bounds)))
        ));
    }
    Some(match &col.kind {
        ValueKind::Int { min, max } => {
            let lo: i128 = bounds
                .first()
                .and_then(|b| b.trim().parse().ok())
                .unwrap_or(1);
            let hi: i128 = bounds
                .last()
                .and_then(|b| b.trim().parse().ok())
                .unwrap_or(lo);
            let span = hi - lo + 1;
            let step = if span >= d as i128 {
                span / d as i128
            } else {
                1
            };
            let start = lo.min(max - d as i128 + 1).max(*min);
            format!("{start}::numeric + ({rank})::numeric * {step}")
        }
        ValueKind::Decimal => {
            let lo: f64 = bounds
                .first()
                .and_then(|b| b.parse().ok())
                .filter(|v: &f64| v.is_finite())
                .unwrap_or(1.0);
            let hi: f64 = bounds
                .last()
                .and_then(|b| b.parse().ok())
                .filter(|v: &f64| v.is_finite())
                .unwrap_or(lo);
            let step = if hi > lo { (hi - lo) / d as f64 } else { 1.0 };
            format!(
                "{}::numeric + ({rank})::numeric * {}::numeric",
                float(lo),
                float(step)
            )
        }
        ValueKind::Date | ValueKind::Timestamp | ValueKind::TimestampTz => {
            let ty = match col.kind {
                ValueKind::Date => "timestamp",
                ValueKind::Timestamp => "timestamp",
                _ => "timestamptz",
            };
            let lo = bounds
                .first()
                .cloned()
                .unwrap_or_else(|| "2000-01-01".into());
            let hi = bounds.last().cloned().unwrap_or_else(|| lo.clone());
            let (lo, hi) = (
                format!("{}::{ty}", literal(&lo)),
                format!("{}::{ty}", literal(&hi)),
            );
            let unit = if col.kind == ValueKind::Date {
                "1 day"
            } else {
                "1 microsecond"
            };
            format!("{lo} + ({rank}) * greatest(({hi} - {lo}) / {d}, interval '{unit}')")
        }
        ValueKind::Text => {
            let width = d.to_string().len();
            if bounds.len() >= 2 {
                let arr = format!("{}::text[]", literal(&array_text(&opt(&bounds))));
                let m = bounds.len();
                format!(
                    "({arr})[1 + (({rank}) * {m} / {d})::int4] || pg_catalog.lpad(({rank})::text, {width}, '0')"
                )
            } else {
                format!("'k' || pg_catalog.lpad(({rank})::text, {width}, '0')")
            }
        }
        ValueKind::Uuid => format!("pg_catalog.md5({} || ({rank})::text)::uuid", literal(salt)),
        ValueKind::Json => format!("pg_catalog.to_json({rank})"),
        ValueKind::Bytea => format!("pg_catalog.int8send({rank})"),
        ValueKind::Enum { labels } if !labels.is_empty() => {
            let l: Vec<Option<String>> = labels.iter().map(|l| Some(l.clone())).collect();
            format!(
                "({}::text[])[1 + (({rank}) % {})::int4]",
                literal(&array_text(&l)),
                l.len()
            )
        }
        ValueKind::Bool => format!("(({rank}) % 2 = 1)"),
        _ if !bounds.is_empty() => {
            let l = opt(&bounds);
            format!(
                "({}::text[])[1 + (({rank}) % {})::int4]",
                literal(&array_text(&l)),
                l.len()
            )
        }
        _ => return None,
    })
}

/// A value made up from the type alone (no statistics): `rank`-like spread over `rows`.
fn made_up(col: &Column, u: &str, rows: f64, salt: &str) -> Option<String> {
    let n = float(rows.max(1.0).floor());
    let rank = format!("pg_catalog.floor({u} * {n})::int8");
    Some(match &col.kind {
        ValueKind::Bool => format!("{u} < 0.5"),
        ValueKind::Int { .. } => format!("1 + {rank}"),
        ValueKind::Decimal => format!("pg_catalog.round(({u} * 1000)::numeric, 2)"),
        ValueKind::Text => format!("'v' || ({rank})::text"),
        ValueKind::Uuid => format!("pg_catalog.md5({} || ({rank})::text)::uuid", literal(salt)),
        ValueKind::Date => format!("date '2000-01-01' + pg_catalog.floor({u} * 3650)::int4"),
        ValueKind::Timestamp => format!("timestamp '2000-01-01' + {u} * interval '3650 days'"),
        ValueKind::TimestampTz => {
            format!("timestamptz '2000-01-01 00:00:00+00' + {u} * interval '3650 days'")
        }
        ValueKind::Json => "'{}'".into(),
        ValueKind::Bytea => "''::bytea".into(),
        ValueKind::Array(_) => "'{}'".into(),
        ValueKind::Enum { labels } if !labels.is_empty() => {
            let l: Vec<Option<String>> = labels.iter().map(|l| Some(l.clone())).collect();
            pick(&l, u)
        }
        _ => return None,
    })
}

fn opt(v: &[String]) -> Vec<Option<String>> {
    v.iter().map(|s| Some(s.clone())).collect()
}

/// Every bound is a finite number as SQL writes it (digits, sign, point, exponent).
fn numbers(bounds: &[String]) -> bool {
    bounds.iter().all(|b| {
        b.parse::<f64>().is_ok_and(f64::is_finite)
            && b.bytes()
                .all(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(kind: ValueKind) -> Column {
        Column {
            num: 1,
            name: "c".into(),
            type_sql: "integer".into(),
            type_oid: 23,
            kind,
            not_null: false,
            default: None,
            identity: None,
            generated: None,
            collation: None,
            local: true,
            readable: true,
        }
    }

    fn draws() -> Draws {
        Draws {
            null: "u0".into(),
            pick: "u1".into(),
            rest: "u2".into(),
        }
    }

    #[test]
    fn a_skewed_column_draws_its_mcvs_then_its_histogram() {
        let s = ColumnStats {
            null_frac: 0.1,
            n_distinct: -0.5,
            mcv: vec![("7".into(), 0.45), ("8".into(), 0.09)],
            histogram: vec!["1".into(), "50".into(), "100".into()],
            correlation: None,
        };
        let v = value(
            &col(ValueKind::of_builtin(23)),
            Some(&s),
            &Role::Drawn,
            &draws(),
            1000.0,
            "s",
        )
        .unwrap();
        assert!(v.contains("when u0 < 0.1 then null"), "{v}");
        assert!(v.contains("when u1 < 0.6"), "{v}");
        assert!(v.contains("array[0.0,0.5]::float8[]"), "{v}");
        assert!(v.contains("array[1,50,100]::numeric[]"), "{v}");
        assert!(v.ends_with("::integer"), "{v}");
    }

    #[test]
    fn hostile_values_stay_literals() {
        let s = ColumnStats {
            mcv: vec![("'); drop table t; --".into(), 0.5), ("{{x}}".into(), 0.1)],
            ..ColumnStats::default()
        };
        let mut c = col(ValueKind::Text);
        c.type_sql = "text".into();
        let v = value(&c, Some(&s), &Role::Drawn, &draws(), 10.0, "s").unwrap();
        assert!(v.contains("E'\\x7b\"''); drop table t; --\","), "{v}");
        assert!(!v.contains("{{"), "{v}");
        assert!(!numbers(&["1); drop".into()]));
    }

    #[test]
    fn ranked_integers_spread_over_the_range() {
        let s = ColumnStats {
            histogram: vec!["1000".into(), "2000".into()],
            ..ColumnStats::default()
        };
        let v = ranked(&col(ValueKind::of_builtin(23)), Some(&s), "r", 100, "s").unwrap();
        assert_eq!(v, "1000::numeric + (r)::numeric * 10");
    }
}
