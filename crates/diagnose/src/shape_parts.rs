//! Where the parts [`crate::shape`] recognises sit in a statement's text, for code that
//! rewrites the statement rather than only naming what it does (`capture`'s fix variants):
//! a locking clause with its select, LIMIT and WHERE; an UPDATE's relation, assignments (an
//! increment's delta and sign) and WHERE; a WHERE that is a conjunction of `column = value`.
//! The same token scan as `shape`, so the two never disagree on what a statement is; byte
//! ranges into the text given. Pure.

use std::ops::Range;

use crate::shape::{closing, is_increment, relation_key, tokens_at, Tok};

/// A locking clause (`FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, `FOR KEY SHARE`) and
/// the select it locks the rows of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockClause {
    /// From `FOR` to the end of the clause (its `OF` list, `NOWAIT` or `SKIP LOCKED`).
    pub clause: Range<usize>,
    /// Where `SKIP LOCKED` goes: after the strength and its `OF` list.
    pub strength_end: usize,
    pub share: bool,
    pub skip_locked: bool,
    pub nowait: bool,
    /// The select, from its `SELECT` to its end (before the `)` closing a subquery).
    pub select: Range<usize>,
    /// Inside parentheses (a subquery, a CTE) rather than the statement itself.
    pub nested: bool,
    /// The value after the select's `LIMIT` (`1`, `$1`, `:n`).
    pub limit_value: Option<Range<usize>>,
    /// The select's WHERE condition.
    pub where_clause: Option<Range<usize>>,
}

/// One `column = expression` of an UPDATE's SET list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The column as [`relation_key`] writes a name (unquoted, lower-case unless quoted).
    pub column: String,
    pub column_span: Range<usize>,
    pub rhs: Range<usize>,
    /// For `col = col ± delta` (however parenthesised or qualified): the delta's text and
    /// whether it is subtracted.
    pub delta: Option<(bool, Range<usize>)>,
}

/// The first UPDATE of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateParts {
    /// [`relation_key`] of the target.
    pub relation: String,
    /// The target's name as written (`public."T"`), and its alias when it has one.
    pub relation_span: Range<usize>,
    pub alias: Option<Range<usize>>,
    pub assignments: Vec<Assignment>,
    /// The WHERE condition (up to RETURNING, `;` or the end).
    pub where_clause: Option<Range<usize>>,
    /// Where the UPDATE's text ends (before RETURNING, `;` or the closing `)`).
    pub end: usize,
}

fn word(t: &[(Tok, Range<usize>)], i: usize) -> Option<&str> {
    match t.get(i) {
        Some((Tok::Word(w), _)) => Some(w.as_str()),
        _ => None,
    }
}

fn sym(t: &[(Tok, Range<usize>)], i: usize, c: char) -> bool {
    matches!(t.get(i), Some((Tok::Sym(s), _)) if *s == c)
}

/// Index of the token where the clause at `from` (at its own depth) ends: the first of
/// `stops` at depth 0, a `)` closing the enclosing parenthesis, `;`, or the end.
fn clause_end(t: &[(Tok, Range<usize>)], from: usize, stops: &[&str]) -> usize {
    let mut depth = 0i32;
    let mut i = from;
    while i < t.len() {
        match &t[i].0 {
            Tok::Sym('(') => depth += 1,
            Tok::Sym(')') if depth == 0 => return i,
            Tok::Sym(')') => depth -= 1,
            Tok::Sym(';') if depth == 0 => return i,
            Tok::Word(w) if depth == 0 && stops.contains(&w.as_str()) => return i,
            _ => {}
        }
        i += 1;
    }
    t.len()
}

/// Byte range of tokens `a..b` (empty at the text's end when `a == b`).
fn span(t: &[(Tok, Range<usize>)], a: usize, b: usize, len: usize) -> Range<usize> {
    let start = t.get(a).map_or(len, |x| x.1.start);
    let end = if b > a { t[b - 1].1.end } else { start };
    start..end
}

/// Every locking clause of `sql`.
pub fn lock_clauses(sql: &str) -> Vec<LockClause> {
    let t = tokens_at(sql);
    let mut out = Vec::new();
    // Open parentheses: index of `(`; per depth, the last SELECT seen.
    let mut opens: Vec<usize> = Vec::new();
    let mut selects: Vec<Option<usize>> = vec![None];
    for i in 0..t.len() {
        match &t[i].0 {
            Tok::Sym('(') => {
                opens.push(i);
                selects.push(None);
            }
            Tok::Sym(')') => {
                opens.pop();
                if selects.len() > 1 {
                    selects.pop();
                }
            }
            Tok::Word(w) if w == "select" => {
                if let Some(s) = selects.last_mut() {
                    *s = Some(i);
                }
            }
            Tok::Word(w)
                if w == "for"
                    && matches!(word(&t, i + 1), Some("update" | "share" | "no" | "key")) =>
            {
                let Some(Some(sel)) = selects.last().copied() else {
                    continue;
                };
                out.push(one_clause(&t, sel, i, !opens.is_empty(), sql.len()));
            }
            _ => {}
        }
    }
    out
}

fn one_clause(
    t: &[(Tok, Range<usize>)],
    sel: usize,
    at: usize,
    nested: bool,
    len: usize,
) -> LockClause {
    let share = matches!(
        (word(t, at + 1), word(t, at + 2)),
        (Some("share"), _) | (Some("key"), Some("share"))
    );
    let mut j = at + 1;
    while matches!(word(t, j), Some("update" | "share" | "no" | "key")) {
        j += 1;
    }
    if word(t, j) == Some("of") {
        j += 1;
        while word(t, j).is_some() {
            j += 1;
            if !sym(t, j, ',') {
                break;
            }
            j += 1;
        }
    }
    let strength_end = t.get(j - 1).map_or(len, |x| x.1.end);
    let (mut skip_locked, mut nowait) = (false, false);
    loop {
        match word(t, j) {
            Some("skip") if word(t, j + 1) == Some("locked") => {
                skip_locked = true;
                j += 2;
            }
            Some("nowait") => {
                nowait = true;
                j += 1;
            }
            _ => break,
        }
    }
    let clause = t[at].1.start..t.get(j - 1).map_or(len, |x| x.1.end);
    let end = clause_end(t, sel + 1, &[]);
    let select = span(t, sel, end, len);
    // The select's own LIMIT and WHERE (at its depth).
    let mut limit_value = None;
    let mut where_clause = None;
    let mut depth = 0i32;
    for k in sel + 1..end {
        match &t[k].0 {
            Tok::Sym('(') => depth += 1,
            Tok::Sym(')') => depth -= 1,
            Tok::Word(w) if depth == 0 && w == "limit" => {
                let v = if sym(t, k + 1, ':') {
                    k + 1..k + 3
                } else {
                    k + 1..k + 2
                };
                if v.end <= end {
                    limit_value = Some(span(t, v.start, v.end, len));
                }
            }
            Tok::Word(w) if depth == 0 && w == "where" => {
                let e = clause_end(
                    t,
                    k + 1,
                    &[
                        "group",
                        "having",
                        "window",
                        "order",
                        "limit",
                        "offset",
                        "fetch",
                        "for",
                        "union",
                        "intersect",
                        "except",
                    ],
                );
                where_clause = Some(span(t, k + 1, e.min(end), len));
            }
            _ => {}
        }
    }
    LockClause {
        clause,
        strength_end,
        share,
        skip_locked,
        nowait,
        select,
        nested,
        limit_value,
        where_clause,
    }
}

/// The first UPDATE of `sql` (not `FOR UPDATE`, not `DO UPDATE`), with its parts.
pub fn update_parts(sql: &str) -> Option<UpdateParts> {
    let t = tokens_at(sql);
    let u = (0..t.len()).find(|&i| {
        word(&t, i) == Some("update")
            && !matches!(word(&t, i.wrapping_sub(1)), Some("for" | "key" | "do"))
    })?;
    let mut r = u + 1;
    if word(&t, r) == Some("only") {
        r += 1;
    }
    let name = word(&t, r)?;
    let relation = relation_key(name);
    let relation_span = t[r].1.clone();
    let mut k = r + 1;
    if word(&t, k) == Some("as") {
        k += 1;
    }
    let alias = match word(&t, k) {
        Some(w) if w != "set" => {
            k += 1;
            Some(t[k - 1].1.clone())
        }
        _ => None,
    };
    if word(&t, k) != Some("set") {
        return None;
    }
    let set_end = clause_end(&t, k + 1, &["where", "from", "returning"]);
    let assignments = assignments(&t, k + 1, set_end, sql.len())?;
    let (where_clause, end) = match word(&t, set_end) {
        Some("where") | Some("from") => {
            let w = if word(&t, set_end) == Some("from") {
                clause_end(&t, set_end + 1, &["where", "returning"])
            } else {
                set_end
            };
            let e = clause_end(&t, w + 1, &["returning"]);
            let wc = (word(&t, w) == Some("where")).then(|| span(&t, w + 1, e, sql.len()));
            (wc, span(&t, u, e, sql.len()).end)
        }
        _ => (None, span(&t, u, set_end, sql.len()).end),
    };
    Some(UpdateParts {
        relation,
        relation_span,
        alias,
        assignments,
        where_clause,
        end,
    })
}

fn assignments(
    t: &[(Tok, Range<usize>)],
    from: usize,
    to: usize,
    len: usize,
) -> Option<Vec<Assignment>> {
    let mut out = Vec::new();
    let mut i = from;
    while i < to {
        let col = word(t, i)?;
        if !sym(t, i + 1, '=') {
            return None;
        }
        let start = i + 2;
        let mut end = start;
        let mut depth = 0i32;
        while end < to {
            match &t[end].0 {
                Tok::Sym('(') => depth += 1,
                Tok::Sym(')') => depth -= 1,
                Tok::Sym(',') if depth == 0 => break,
                _ => {}
            }
            end += 1;
        }
        let toks: Vec<Tok> = t[start..end].iter().map(|x| x.0.clone()).collect();
        let delta = is_increment(col, &toks)
            .then(|| delta_of(col, &t[start..end], len))
            .flatten();
        out.push(Assignment {
            column: relation_key(col),
            column_span: t[i].1.clone(),
            rhs: span(t, start, end, len),
            delta,
        });
        i = end + 1;
    }
    Some(out)
}

/// The delta of an increment's right-hand side (known to be one): `col ± X` → X, `X + col` → X.
fn delta_of(col: &str, e: &[(Tok, Range<usize>)], len: usize) -> Option<(bool, Range<usize>)> {
    let toks: Vec<Tok> = e.iter().map(|x| x.0.clone()).collect();
    let mut e = e;
    let mut toks = toks.as_slice();
    while toks.len() >= 2 && toks[0] == Tok::Sym('(') && closing(toks, 0) == Some(toks.len() - 1) {
        e = &e[1..e.len() - 1];
        toks = &toks[1..toks.len() - 1];
    }
    let same = |w: &str| relation_key(w) == relation_key(col);
    // The first top-level + or -.
    let mut depth = 0i32;
    let ops: Vec<(usize, bool)> = toks
        .iter()
        .enumerate()
        .filter_map(|(k, tok)| {
            match tok {
                Tok::Sym('(') => depth += 1,
                Tok::Sym(')') => depth -= 1,
                Tok::Sym(c @ ('+' | '-')) if depth == 0 && k > 0 => return Some((k, *c == '-')),
                _ => {}
            }
            None
        })
        .collect();
    let names_col_before = |k: usize| {
        toks[..k]
            .iter()
            .any(|x| matches!(x, Tok::Word(w) if same(w)))
    };
    match ops.first() {
        Some(&(k, neg)) if names_col_before(k) => Some((neg, span(e, k + 1, e.len(), len))),
        _ => {
            let &(k, neg) = ops.last()?;
            (!neg).then(|| (false, span(e, 0, k, len)))
        }
    }
}

/// A WHERE condition that is a conjunction of `column = value` (either way round), as
/// (column as [`relation_key`] writes it, the value's text range); `None` when it is anything
/// else.
pub fn equalities(sql: &str, cond: Range<usize>) -> Option<Vec<(String, Range<usize>)>> {
    let part = sql.get(cond.clone())?;
    let t = tokens_at(part);
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let end = (i..t.len())
            .find(|&k| word(&t, k) == Some("and"))
            .unwrap_or(t.len());
        let eq = (i..end).find(|&k| sym(&t, k, '='))?;
        let (l, r) = (i..eq, eq + 1..end);
        let digit = |w: &str| w.starts_with(|c: char| c.is_ascii_digit());
        let is_col = |r: &Range<usize>| {
            r.len() == 1 && word(&t, r.start).is_some_and(|w| !w.starts_with('$') && !digit(w))
        };
        // A value names no column: parameters, numbers, literals, `:variables`, casts.
        let is_value = |r: &Range<usize>| {
            !r.is_empty()
                && r.clone().all(|k| match &t[k].0 {
                    Tok::Word(w) => {
                        w.starts_with('$') || digit(w) || (k > 0 && sym(&t, k - 1, ':'))
                    }
                    _ => true,
                })
        };
        // `col = value`, the column on the left when both sides are single names
        // (`day = current_date`).
        let (col, val) = if is_col(&l) && (is_value(&r) || r.len() == 1) {
            (l, r)
        } else if is_col(&r) && is_value(&l) {
            (r, l)
        } else {
            return None;
        };
        let name = word(&t, col.start)?;
        let v = span(&t, val.start, val.end, part.len());
        out.push((relation_key(name), cond.start + v.start..cond.start + v.end));
        i = end + 1;
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
#[path = "shape_parts_tests.rs"]
mod tests;
