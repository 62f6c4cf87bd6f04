//! Values for a slot sampling never saw a value of (bound server-side: psycopg 3 and
//! `-M prepared` show `$1` in `pg_stat_activity`) that is passed to a captured function
//! (`select f(?, ?)`) or cast to a captured type (`?::t[]`): a value of the right type,
//! standing on what the catalogs say, instead of a `1` the call would refuse. In order:
//! - a composite (or an array of one) whose every attribute is a column of one captured
//!   table (procrastinate's `procrastinate_job_to_defer_v1`, the columns of
//!   `procrastinate_jobs` it is inserted into): one row, each attribute that column's most
//!   common value (`pg_stats`; NULL where most rows hold NULL);
//! - an enum argument the function's body compares with labels (`IF end_status NOT IN
//!   ('succeeded', 'failed', 'aborted') THEN RAISE`): the first label it names;
//! - an argument named after a column (its name, or its last words: `p_worker_id` →
//!   `worker_id`; an array's in the singular: `target_queue_names` → `queue_name`): that
//!   column's values, as [`crate::keys::fallback`] draws a column's, an array holding its
//!   most common value.
//!
//! None of it is what the clients sent; each script's comment says where it came from.
//! The definitions are read from the captured `schema.sql`'s text. Pure.

use std::collections::BTreeMap;

use hotbench_sqltext::{ident_value, string_value, Kind, Lexer};

use crate::params::{Fit, Fitted};
use crate::profile::TableProfile;
use crate::sql_text::Value;

/// What the captured schema defines that values can be made for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defs {
    /// By unqualified lower-case name: the arguments a call passes (name, type), and the
    /// body.
    pub functions: BTreeMap<String, Function>,
    /// Composite type → its attributes' names.
    pub composites: BTreeMap<String, Vec<String>>,
    /// Enum type → its labels.
    pub enums: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Function {
    /// (name, type) of each argument a call passes (an unnamed one's name empty).
    pub args: Vec<(String, String)>,
    pub body: String,
}

/// A token as this module reads it: kind and value (a word lower-cased, an identifier
/// or string decoded).
type Tok = (Kind, String);

fn toks(sql: &str) -> Vec<Tok> {
    Lexer::new(sql)
        .filter(|t| !(t.is_blank() || t.is_comment()))
        .map(|t| {
            let text = t.text(sql);
            let v = match t.kind {
                Kind::QuotedIdent => ident_value(text),
                Kind::Word => text.to_ascii_lowercase(),
                Kind::String(k) => string_value(text, k),
                Kind::Dollar => hotbench_sqltext::dollar_body(text).to_string(),
                _ => text.to_string(),
            };
            (t.kind, v)
        })
        .collect()
}

impl Defs {
    /// The functions and types `CREATE [OR REPLACE] FUNCTION` and `CREATE TYPE` define in
    /// `sql`.
    pub fn read(sql: &str) -> Defs {
        let t = toks(sql);
        let mut d = Defs::default();
        let mut i = 0;
        while i < t.len() {
            let created = t[i].1 == "create" && t[i].0 == Kind::Word;
            i += 1;
            if !created {
                continue;
            }
            let mut j = i;
            if t.get(j).is_some_and(|x| x.1 == "or") {
                j += 2;
            }
            let what = t.get(j).map(|x| x.1.as_str()).unwrap_or("");
            if what != "function" && what != "type" {
                continue;
            }
            let (name, mut k) = qualified_name(&t, j + 1);
            if what == "function" {
                let (args, next) = list(&t, k + 1);
                k = next;
                let body = t[k..]
                    .iter()
                    .take_while(|x| x.1 != ";")
                    .find(|x| x.0 == Kind::Dollar)
                    .map(|x| x.1.clone())
                    .unwrap_or_default();
                let args = args.iter().filter_map(|a| arg(a)).collect();
                d.functions.insert(name, Function { args, body });
            } else if t.get(k).is_some_and(|x| x.1 == "as") {
                if t.get(k + 1).is_some_and(|x| x.1 == "enum") {
                    let (items, next) = list(&t, k + 3);
                    k = next;
                    let labels = items
                        .iter()
                        .filter_map(|a| match a.as_slice() {
                            [(Kind::String(_), v)] => Some(v.clone()),
                            _ => None,
                        })
                        .collect();
                    d.enums.insert(name, labels);
                } else if t.get(k + 1).is_some_and(|x| x.1 == "(") {
                    let (items, next) = list(&t, k + 2);
                    k = next;
                    let attrs = items
                        .iter()
                        .filter_map(|a| a.first().map(|x| x.1.clone()))
                        .collect();
                    d.composites.insert(name, attrs);
                }
            }
            i = k;
        }
        d
    }
}

/// `name` or `schema.name` from `t[i..]`: the unqualified name (lower-case unless quoted)
/// and the index after it.
fn qualified_name(t: &[Tok], mut i: usize) -> (String, usize) {
    let mut name = String::new();
    while let Some(x) = t
        .get(i)
        .filter(|x| matches!(x.0, Kind::Word | Kind::QuotedIdent))
    {
        name = x.1.clone();
        i += 1;
        if t.get(i).is_some_and(|d| d.0 == Kind::Punct && d.1 == ".") {
            i += 1;
        } else {
            break;
        }
    }
    (name, i)
}

/// The comma-separated items from `t[start..]` (just after a `(`) to its `)`, and the
/// index after that `)`.
fn list(t: &[Tok], start: usize) -> (Vec<Vec<Tok>>, usize) {
    let mut items: Vec<Vec<Tok>> = vec![Vec::new()];
    let mut depth = 0;
    let mut i = start;
    while let Some(x) = t.get(i) {
        i += 1;
        match x.1.as_str() {
            "(" | "[" if x.0 == Kind::Punct => depth += 1,
            ")" | "]" if x.0 == Kind::Punct && depth > 0 => depth -= 1,
            ")" if x.0 == Kind::Punct => break,
            "," if x.0 == Kind::Punct && depth == 0 => {
                items.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(a) = items.last_mut() {
            a.push(x.clone());
        }
    }
    items.retain(|a| !a.is_empty());
    (items, i)
}

/// A function argument's (name, type), `OUT` ones none; `DEFAULT …` left out of the type.
fn arg(a: &[Tok]) -> Option<(String, String)> {
    let mut a = a;
    let mode = a.first()?.1.as_str();
    if mode == "out" && a.first()?.0 == Kind::Word {
        return None;
    }
    if matches!(mode, "in" | "inout" | "variadic") && a.len() > 1 {
        a = &a[1..];
    }
    let first = a.first()?;
    let named = a.len() >= 2
        && matches!(first.0, Kind::Word | Kind::QuotedIdent)
        && !(first.0 == Kind::Word && crate::chain::MULTI_WORD_TYPES.contains(&first.1.as_str()))
        && a[1].1 != "("
        && a[1].1 != ".";
    let (name, ty) = if named {
        (first.1.clone(), &a[1..])
    } else {
        (String::new(), a)
    };
    let ty: Vec<&Tok> = ty
        .iter()
        .take_while(|x| !(x.0 == Kind::Word && x.1 == "default") && x.1 != "=")
        .collect();
    Some((name, type_text(&ty)))
}

/// A type's tokens as one lower-case text, unqualified (`public.t[]` → `t[]`,
/// `character varying` kept).
fn type_text(ty: &[&Tok]) -> String {
    let mut out = String::new();
    for x in ty {
        match x.0 {
            Kind::Punct if x.1 == "." => out.clear(),
            Kind::Word | Kind::QuotedIdent => {
                if out.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    out.push(' ');
                }
                out.push_str(&x.1);
            }
            _ => out.push_str(&x.1),
        }
    }
    out
}

/// The type `?` number `slot` of the normalized `key` is cast to (`?::t[]`), if it is.
fn slot_cast(key: &str, slot: usize) -> Option<String> {
    let t = toks(key);
    let at = t
        .iter()
        .enumerate()
        .filter(|(_, x)| x.0 == Kind::Punct && x.1 == "?")
        .nth(slot)?
        .0;
    if t.get(at + 1)?.1 != "::" {
        return None;
    }
    let ty: Vec<&Tok> = t[at + 2..]
        .iter()
        .take_while(|x| {
            matches!(x.0, Kind::Word | Kind::QuotedIdent)
                || (x.0 == Kind::Punct && matches!(x.1.as_str(), "." | "[" | "]"))
        })
        .collect();
    (!ty.is_empty()).then(|| type_text(&ty))
}

/// A value standing for slot `slot` (of `slots`) of the normalized statement `key`, when
/// the catalogs say what its values are like (module comment); `column_fit` draws a
/// named column's values (`crate::keys::fallback`'s rule).
pub fn fit(
    defs: &Defs,
    tables: &[TableProfile],
    key: &str,
    (slot, slots): (usize, usize),
    column_fit: &dyn Fn(&TableProfile, &str) -> Option<Fitted>,
) -> Option<Fitted> {
    let func = hotbench_diagnose::shape::calls(key)
        .into_iter()
        .filter_map(|f| defs.functions.get(&f).map(|d| (f, d)))
        .find(|(_, d)| d.args.len() == slots);
    let arg = func.as_ref().and_then(|(_, d)| d.args.get(slot));
    let ty = slot_cast(key, slot).or_else(|| arg.map(|a| a.1.clone()))?;
    let (base, array) = match ty.strip_suffix("[]") {
        Some(b) => (b.to_string(), true),
        None => (ty.clone(), false),
    };
    if let Some(attrs) = defs.composites.get(&base) {
        return composite(&base, attrs, array, tables);
    }
    let (fname, f) = func?;
    let (name, _) = arg.filter(|a| !a.0.is_empty())?;
    if let Some(labels) = defs.enums.get(&base) {
        if let Some(l) = compared_labels(&f.body, name, labels).into_iter().next() {
            return Some(constant(
                Value::Text(l),
                format!(
                    "bound values were not visible: the first label of {base} that {fname}'s body compares {name} with"
                ),
            ));
        }
    }
    let (table, col) = named_column(name, array, tables)?;
    if array {
        let v = common_value(table, col)??;
        return Some(constant(
            Value::Text(format!("{{{}}}", array_element(&v))),
            format!(
                "bound values were not visible: {fname}'s {name}, an array named after {}.{col}: its most common value (pg_stats)",
                table.name
            ),
        ));
    }
    let mut f = column_fit(table, col)?;
    f.why = format!(
        "{} ({fname}'s {name}, named after {}.{col})",
        f.why, table.name
    );
    Some(f)
}

fn constant(v: Value, why: String) -> Fitted {
    Fitted {
        fit: Fit::Constant(v),
        observations: 0,
        distinct: 0,
        why,
    }
}

/// One row of composite `ty` (an array of one when `array`) from the one table holding a
/// column of every attribute's name, each the column's most common value.
fn composite(ty: &str, attrs: &[String], array: bool, tables: &[TableProfile]) -> Option<Fitted> {
    let table = tables.iter().find(|t| {
        !attrs.is_empty() && attrs.iter().all(|a| t.columns.iter().any(|c| &c.name == a))
    })?;
    let mut fields = Vec::new();
    for a in attrs {
        fields.push(common_value(table, a)?.map_or(String::new(), |v| row_field(&v)));
    }
    let row = format!("({})", fields.join(","));
    let text = if array {
        format!("{{{}}}", array_element(&row))
    } else {
        row
    };
    Some(constant(
        Value::Text(text),
        format!(
            "bound values were not visible: one row of {ty}, each attribute the most common value of {}'s column of its name (pg_stats; NULL where most rows hold NULL)",
            table.name
        ),
    ))
}

/// The column's most common value: `Some(None)` for NULL (most rows hold it, or no
/// statistics and the column allows it), `None` when nothing says.
fn common_value(table: &TableProfile, column: &str) -> Option<Option<String>> {
    let c = table.columns.iter().find(|c| c.name == column)?;
    let Some(s) = &c.stats else {
        return (!c.not_null).then_some(None);
    };
    if s.null_frac >= 0.5 {
        return Some(None);
    }
    if let Some(v) = s.mcv.first().map(|m| m.0.clone()) {
        return Some(Some(v));
    }
    match s.histogram.first() {
        Some(v) => Some(Some(v.clone())),
        None => (!c.not_null).then_some(None),
    }
}

/// A composite literal's field: quoted when it holds what the row syntax reads.
fn row_field(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| matches!(c, '(' | ')' | ',' | '"' | '\\') || c.is_whitespace())
    {
        return v.to_string();
    }
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

/// An array literal's element, always quoted (`"`, `\` escaped).
fn array_element(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The labels (of `labels`) the body compares `name` with: string constants after it in
/// the same condition (up to `THEN`, `LOOP` or `;`), in order.
fn compared_labels(body: &str, name: &str, labels: &[String]) -> Vec<String> {
    let t = toks(body);
    let mut out: Vec<String> = Vec::new();
    for (i, x) in t.iter().enumerate() {
        if !(x.0 == Kind::Word && x.1 == name) {
            continue;
        }
        for y in t[i + 1..].iter().take(40) {
            if (y.0 == Kind::Word && matches!(y.1.as_str(), "then" | "loop")) || y.1 == ";" {
                break;
            }
            if matches!(y.0, Kind::String(_)) && labels.contains(&y.1) && !out.contains(&y.1) {
                out.push(y.1.clone());
            }
        }
    }
    out
}

/// The column argument `name` is named after: the name, or its last words (`p_worker_id`
/// → `worker_id`), each also in the singular for an array (`queue_names` → `queue_name`);
/// of the tables holding it, the first with statistics on it.
fn named_column<'t>(
    name: &str,
    array: bool,
    tables: &'t [TableProfile],
) -> Option<(&'t TableProfile, &'t str)> {
    let words: Vec<&str> = name.split('_').collect();
    for k in 0..words.len() {
        let cand = words[k..].join("_");
        let mut cands = vec![cand.clone()];
        if array {
            if let Some(s) = cand.strip_suffix('s').filter(|s| !s.is_empty()) {
                cands.insert(0, s.to_string());
            }
        }
        for c in cands {
            let holding = tables.iter().filter_map(|t| {
                let col = t.columns.iter().find(|x| x.name == c)?;
                Some((t, col))
            });
            let best = holding
                .clone()
                .find(|(_, col)| col.stats.is_some())
                .or_else(|| holding.clone().next());
            if let Some((t, col)) = best {
                return Some((t, col.name.as_str()));
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "unseen_tests.rs"]
mod tests;
