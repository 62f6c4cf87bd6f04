//! A value one transaction returns, taken by a later one: a job queue's worker finishes
//! the job its fetch returned (`procrastinate_fetch_job_v2(…)` then
//! `procrastinate_finish_job_v1(job_id, …)`). Replaying the logged ids cannot work (each
//! job is finished once), so the two shapes are chained: the returning statement's script
//! keeps the value (`\gset`) and runs the taking shape's transaction with it, when it
//! returned one. The evidence, all of it needed: the taking slot's values are (nearly) all
//! distinct, one per call, and, integers, rise as they were taken (a sequence's ids, not
//! keys drawn at random); its name (the column it is compared with, or the called
//! function's argument, read from the captured definition) is a column the other shape's
//! `SELECT` returns (`id`), or that column under a prefix the returning statement names
//! (`job_id` after `…fetch_job…` returning `id`); and the returning statement ran at least
//! as often as the taking one (each taken value was returned first). A slot bound
//! server-side (sampling shows `$1`, psycopg 3) has no values to show: it is chained on
//! names and counts alone, weaker evidence said so in the note: its name must be the called
//! function's argument, and each statement ran at least 0.9 times as often as the other
//! (one taken per one returned). The returning statement runs once in its transaction
//! (its script keeps the one value; the taking shape's weight goes to the chain). The sessions are not evidence: a client pool
//! (procrastinate's) runs the two on whichever connection is free. Pure.

use std::collections::{BTreeMap, BTreeSet};

/// Type names whose first word alone is not the type (`character varying`, `double
/// precision`, `timestamp with time zone`…): an argument starting with one has no name.
pub(crate) const MULTI_WORD_TYPES: [&str; 6] = [
    "character",
    "double",
    "timestamp",
    "time",
    "bit",
    "interval",
];

use crate::shapes::ShapeModel;

/// Fewest values seen of a taking slot, and the share of them that must be distinct.
const MIN_SEEN: f64 = 10.0;
const DISTINCT_SHARE: f64 = 0.9;
/// Of a taking slot's integer values, the share (in the order seen) above the one before.
const RISING_SHARE: f64 = 0.75;
/// The returning statement's calls against the taking one's, at least.
const CALLS_SHARE: f64 = 0.9;
/// The variables the chained script keeps the value and whether one came in.
pub const CARRY_VAR: &str = "hotbench_carry";
pub const FOUND_VAR: &str = "hotbench_found";
/// The name of the chain's wrapper (`with hotbench_chain as (…) select …`).
pub const CHAIN_CTE: &str = "hotbench_chain";

/// Shape `to`'s transaction takes the value shape `from`'s statement returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    pub from: usize,
    /// The returning statement (index in the shape).
    pub statement: usize,
    /// The result column carried.
    pub column: String,
    pub to: usize,
    /// (statement, slot) of `to` that takes it.
    pub slot: (usize, usize),
    /// Transactions of `to` chained (all of them: each follows a `from`).
    pub pairs: f64,
    /// Why, for the script's comment and the note.
    pub evidence: String,
}

/// The chains among `shapes`: each taking shape once, never a shape that both returns and
/// takes. `args` are the argument names of the captured functions (by unqualified,
/// lower-case name; [`function_args`]).
pub fn detect(shapes: &[ShapeModel], args: &BTreeMap<String, Vec<String>>) -> Vec<Chain> {
    let mut out: Vec<Chain> = Vec::new();
    for (to, b) in shapes.iter().enumerate() {
        'slots: for (si, st) in b.statements.iter().enumerate() {
            for slot in 0..st.text.values.len() {
                let seen_values = distinct_values(st.values.get(slot));
                // Bound server-side, never seen: names and counts alone, the name read from
                // the called function's definition, one call of each per call of the other.
                let unseen = seen_values.is_none() && not_seen(st.values.get(slot));
                let name = match (seen_values, unseen) {
                    (Some(_), _) => slot_name(st, slot, args),
                    (None, true) => function_arg(st, slot, args),
                    (None, false) => None,
                };
                let Some(name) = name else {
                    continue;
                };
                let found = shapes
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != to)
                    .find_map(|(from, a)| {
                        a.statements.iter().enumerate().find_map(|(sa, ast)| {
                            let column = returns(&ast.key, &name)?;
                            let often = ast.calls >= CALLS_SHARE * st.calls
                                && (!unseen || st.calls >= CALLS_SHARE * ast.calls);
                            // Its script keeps the one value of its one run (a conditional
                            // one runs less: its `\if` takes none).
                            let once = ast.per_tx < 1.5;
                            (often && once).then_some((from, sa, column))
                        })
                    });
                let Some((from, statement, column)) = found else {
                    continue;
                };
                let values = match seen_values {
                    Some((seen, distinct)) => format!(
                        "its {} took {distinct} distinct values in {seen:.0} calls (a replayed one would be taken again)",
                        sanitize(&name)
                    ),
                    None => format!(
                        "its {} was bound server-side, its values never seen: weaker evidence, by names and counts alone",
                        sanitize(&name)
                    ),
                };
                out.push(Chain {
                    from,
                    statement,
                    column: column.clone(),
                    to,
                    slot: (si, slot),
                    pairs: b.count.min(shapes[from].count),
                    evidence: format!(
                        "{values}; this statement returns {}, which {} names, and ran {:.0} times against {:.0}",
                        sanitize(&column),
                        sanitize(&name),
                        shapes[from].statements[statement].calls,
                        st.calls
                    ),
                });
                break 'slots;
            }
        }
    }
    // A shape that takes is not chained from; a returning shape chains one taker.
    let takers: BTreeSet<usize> = out.iter().map(|c| c.to).collect();
    let mut used = BTreeSet::new();
    out.retain(|c| !takers.contains(&c.from) && used.insert(c.from));
    out
}

/// (values seen, distinct ones) when at least [`MIN_SEEN`] were seen and nearly all differ.
fn distinct_values(values: Option<&Vec<(crate::sql_text::Value, f64)>>) -> Option<(f64, usize)> {
    use crate::sql_text::Value;
    let values = values?;
    let seen: f64 = values.iter().map(|(_, w)| w).sum();
    let mut set = BTreeSet::new();
    for (v, _) in values {
        match v {
            Value::Number(s) | Value::Text(s) => set.insert(s.as_str()),
            Value::Null | Value::Unknown => return None,
        };
    }
    // Integers drawn at random (a key a client picks) are distinct too; ids a queue hands
    // out rise with time (a sequence's), as they were taken.
    let ints: Vec<i64> = values.iter().filter_map(|(v, _)| v.as_int()).collect();
    let rising = ints.windows(2).filter(|w| w[1] > w[0]).count();
    let rises =
        ints.len() < values.len() || rising as f64 >= RISING_SHARE * (ints.len() - 1) as f64;
    (seen >= MIN_SEEN && set.len() as f64 >= DISTINCT_SHARE * seen && rises)
        .then_some((seen, set.len()))
}

/// Seen at least once, and never a value: bound server-side (sampling shows `$1`).
fn not_seen(values: Option<&Vec<(crate::sql_text::Value, f64)>>) -> bool {
    values.is_some_and(|v| {
        !v.is_empty()
            && v.iter()
                .all(|(v, _)| matches!(v, crate::sql_text::Value::Unknown))
    })
}

/// The slot's name: the column it is compared with or assigned to, else the argument of
/// the one function the statement calls when every argument is a slot
/// (`select f(?, ?, ?)`), by position.
fn slot_name(
    st: &crate::shapes::ShapeStatement,
    slot: usize,
    args: &BTreeMap<String, Vec<String>>,
) -> Option<String> {
    if let Some(Some(c)) = st.text.columns.get(slot) {
        return Some(c.to_ascii_lowercase());
    }
    function_arg(st, slot, args)
}

/// The argument of the one function the statement calls that slot `slot` is passed as,
/// when every argument is a slot (`select f(?, ?, ?)`), by position.
pub fn function_arg(
    st: &crate::shapes::ShapeStatement,
    slot: usize,
    args: &BTreeMap<String, Vec<String>>,
) -> Option<String> {
    let calls = hotbench_diagnose::shape::calls(&st.key);
    let [f] = calls.as_slice() else { return None };
    let names = args.get(f)?;
    (names.len() == st.text.values.len())
        .then(|| names.get(slot).cloned())
        .flatten()
        .filter(|n| !n.is_empty())
}

/// The column a row-returning `SELECT` (its normalized key) returns that `name` takes:
/// the column `name` itself, or `name`'s last part after `_` when the statement names the
/// rest (`job_id` and `…fetch_job…` returning `id`). A `FOR UPDATE` claim is not a
/// transaction's result: its own transaction takes it ([`crate::claim_returns`]).
fn returns(key: &str, name: &str) -> Option<String> {
    let list = key.strip_prefix("select ")?;
    if key.contains(" for update") || key.contains(" for share") {
        return None;
    }
    let (list, rest) = list.split_once(" from ")?;
    let mut candidates = vec![name.to_string()];
    if let Some((prefix, col)) = name.rsplit_once('_') {
        let word = |w: &str| w.split(|c: char| !c.is_alphanumeric()).any(|x| x == prefix);
        if !prefix.is_empty() && !col.is_empty() && rest.split_whitespace().any(word) {
            candidates.push(col.to_string());
        }
    }
    if list.trim() == "*" {
        return candidates.pop();
    }
    candidates.into_iter().find_map(|c| {
        list.split(',')
            .find_map(|item| crate::claim_returns::returned_as(item, &c))
            .map(|_| c)
    })
}

/// The returning statement as the chain runs it: its rows in `hotbench_chain`, one row
/// always (the first non-null `column`, and how many came): a `\gset` never fails on an
/// empty result, and the taking transaction runs only when a value came.
/// `column` is written as the script has it (quoted, escaped for pgbench).
pub fn carry_statement(sql: &str, c: &str) -> String {
    format!(
        "WITH {CHAIN_CTE} AS ({}) SELECT (SELECT {CHAIN_CTE}.{c} FROM {CHAIN_CTE} WHERE {CHAIN_CTE}.{c} IS NOT NULL LIMIT 1) AS {CARRY_VAR}, (SELECT count({CHAIN_CTE}.{c}) FROM {CHAIN_CTE}) AS {FOUND_VAR}",
        sql.trim().trim_end_matches(';')
    )
}

/// `"name"`, a `"` doubled.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The chained block after the returning script's transaction: the taking shape's draws and
/// transaction, under `\if` on whether a value came.
pub fn block(taker_file: &str, evidence: &str, draws: &[String], body: &str) -> String {
    let mut out = format!(
        "-- chained: {}'s transaction takes the value this one returned ({}); run when one came\n\\if :{FOUND_VAR}\n",
        sanitize(taker_file),
        sanitize(evidence)
    );
    for d in draws {
        out.push_str(d);
        out.push('\n');
    }
    out.push_str(body);
    out.push_str("\\endif\n");
    out
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace("{{", "{ {")
}

/// Each function's argument names (those a call passes: `OUT` ones left out; an unnamed one
/// empty) from `CREATE [OR REPLACE] FUNCTION name(args)` in `sql` (the captured schema:
/// `pg_get_functiondef`'s or pg_dump's text), by unqualified lower-case name.
pub fn function_args(sql: &str) -> BTreeMap<String, Vec<String>> {
    use hotbench_sqltext::{ident_value, Kind, Lexer};
    let toks: Vec<(Kind, String)> = Lexer::new(sql)
        .filter(|t| !matches!(t.kind, Kind::Space | Kind::LineComment | Kind::BlockComment))
        .map(|t| {
            let text = t.text(sql);
            let v = match t.kind {
                Kind::QuotedIdent => ident_value(text),
                Kind::Word => text.to_ascii_lowercase(),
                _ => text.to_string(),
            };
            (t.kind, v)
        })
        .collect();
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i + 1 < toks.len() {
        let is_fn = toks[i].0 == Kind::Word && toks[i].1 == "function";
        let created = i >= 1
            && (toks[i - 1].1 == "create"
                || (i >= 3 && toks[i - 1].1 == "replace" && toks[i - 3].1 == "create"));
        i += 1;
        if !(is_fn && created) {
            continue;
        }
        // name, or schema . name, then (
        let mut name = String::new();
        while i < toks.len() && toks[i].1 != "(" {
            if matches!(toks[i].0, Kind::Word | Kind::QuotedIdent) {
                name = toks[i].1.clone();
            }
            i += 1;
        }
        let (args, next) = arg_names(&toks, i + 1);
        i = next;
        if !name.is_empty() {
            out.insert(name.to_lowercase(), args);
        }
    }
    out
}

/// The argument names from `toks[start..]` (after the `(`) to the matching `)`.
fn arg_names(toks: &[(hotbench_sqltext::Kind, String)], start: usize) -> (Vec<String>, usize) {
    use hotbench_sqltext::Kind;
    let mut args: Vec<Vec<&(Kind, String)>> = vec![Vec::new()];
    let mut depth = 0;
    let mut i = start;
    while i < toks.len() {
        let t = &toks[i];
        i += 1;
        match t.1.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" if depth > 0 => depth -= 1,
            ")" => break,
            "," if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(a) = args.last_mut() {
            a.push(t);
        }
    }
    let names = args
        .into_iter()
        .filter(|a| !a.is_empty())
        .filter_map(|mut a| {
            let mode = a.first().map(|t| t.1.clone()).unwrap_or_default();
            if matches!(mode.as_str(), "out") {
                return None;
            }
            if matches!(mode.as_str(), "in" | "inout" | "variadic") && a.len() > 1 {
                a.remove(0);
            }
            let first = a.first()?;
            let named = a.len() >= 2
                && matches!(first.0, Kind::Word | Kind::QuotedIdent)
                && !(first.0 == Kind::Word && MULTI_WORD_TYPES.contains(&first.1.as_str()))
                && a[1].1 != "(";
            Some(if named {
                first.1.to_lowercase()
            } else {
                String::new()
            })
        })
        .collect();
    (names, i)
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
