//! What a statement does to which relation, from its (normalized) text: reads, row locks
//! (`FOR UPDATE`/`FOR SHARE`, with `SKIP LOCKED`, `NOWAIT`, a `LIMIT`), updates (told apart:
//! an increment `SET n = n + …` from an assignment), deletes and inserts. A diagnosis needs
//! no more than this to tell a counter from a payment and a queue claim from a lookup, so it
//! is a token scan, not a parser, except for the right-hand side of an assignment, read as an
//! expression (an ORM quotes, qualifies and parenthesises `n + 1`); what it cannot place, it
//! leaves out. Pure.

use hotbench_sqltext::Kind;

/// How a statement touches a relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Rows read with a locking clause.
    Lock {
        /// `FOR SHARE` / `FOR KEY SHARE` (else `FOR [NO KEY] UPDATE`).
        share: bool,
        skip_locked: bool,
        nowait: bool,
        /// The select has a `LIMIT` (a claim of the first few rows).
        limit: bool,
    },
    /// `UPDATE`: `increment` when every assignment is `col = col ± …`.
    Update {
        increment: bool,
    },
    Delete,
    Insert,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// Unqualified, lower-case (unless quoted) relation name.
    pub relation: String,
    /// The name as the statement wrote it (`"S".t`, schema included): [`name_parts`]
    /// reads the catalogs' schema and name from it.
    pub written: String,
    pub access: Access,
}

/// The relation part of a name as `regclass` or a statement writes it (`s.t` → `t`,
/// `"T"` → `T`, `T` → `t`, `U&"d\0061t"` → `dat`), for matching statements with relations.
pub fn relation_key(name: &str) -> String {
    parts(name, str::to_lowercase).pop().unwrap_or_default()
}

/// The parts of a dotted name as a statement writes it (`"q ""x"" ü; y".jobs` →
/// `q "x" ü; y`, `jobs`), each what PostgreSQL reads: a quoted part's value (`""`, `U&`
/// escapes decoded), a bare one folded to lower case as the server folds it (ASCII only).
/// The catalogs' names, for looking the object up.
pub fn name_parts(written: &str) -> Vec<String> {
    parts(written, str::to_ascii_lowercase)
}

/// Splits `written` at the dots outside quotes (tokens from `hotbench_sqltext`), each bare
/// word through `fold`, each quoted identifier decoded.
fn parts(written: &str, fold: fn(&str) -> String) -> Vec<String> {
    let mut out = vec![String::new()];
    for t in hotbench_sqltext::Lexer::new(written) {
        let text = t.text(written);
        let Some(last) = out.last_mut() else { break };
        match t.kind {
            Kind::Punct if text == "." => out.push(String::new()),
            Kind::QuotedIdent => last.push_str(&hotbench_sqltext::ident_value(text)),
            Kind::Word => last.push_str(&fold(text)),
            _ if t.is_blank() => {}
            _ => last.push_str(text),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// A name or keyword (keywords lower-cased; quoted names kept with their quotes).
    Word(String),
    Sym(char),
}

#[cfg(test)]
fn tokens(sql: &str) -> Vec<Tok> {
    tokens_at(sql).into_iter().map(|(t, _)| t).collect()
}

/// The tokens of `sql` with the byte range each came from (a string literal's `?` spans the
/// literal, quotes included), for rewriting a statement around them. A dotted name (`s.t`,
/// `"S"."t"`, `t.*`'s `t.`) is one word; comments are gone. The tokens are
/// `hotbench_sqltext`'s (the one SQL lexer).
pub(crate) fn tokens_at(sql: &str) -> Vec<(Tok, std::ops::Range<usize>)> {
    let toks = hotbench_sqltext::tokens(sql);
    let name_part = |t: &hotbench_sqltext::Token| {
        matches!(
            t.kind,
            Kind::Word | Kind::QuotedIdent | Kind::Number | Kind::Param
        ) || (t.kind == Kind::Punct && t.text(sql).bytes().all(|b| b == b'.'))
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k];
        k += 1;
        let text = t.text(sql);
        match t.kind {
            _ if t.is_blank() => {}
            Kind::String(_) | Kind::Dollar => out.push((Tok::Sym('?'), t.start..t.end)),
            Kind::Punct => out.extend(text.chars().map(|c| (Tok::Sym(c), t.start..t.end))),
            Kind::Variable => {
                out.push((Tok::Sym(':'), t.start..t.start + 1));
                out.push((Tok::Word(text[1..].to_lowercase()), t.start + 1..t.end));
            }
            _ => {
                // A name's parts and dots, written together.
                let mut end = t.end;
                while k < toks.len() && toks[k].start == end && name_part(&toks[k]) {
                    end = toks[k].end;
                    k += 1;
                }
                let w = &sql[t.start..end];
                let w = if w.contains('"') {
                    w.to_string()
                } else {
                    w.to_lowercase()
                };
                out.push((Tok::Word(w), t.start..end));
            }
        }
    }
    out
}

/// Words that end a FROM list's relation or cannot be one.
const NOT_RELATIONS: [&str; 16] = [
    "select", "lateral", "only", "where", "group", "order", "limit", "for", "join", "on", "using",
    "inner", "left", "right", "full", "cross",
];

/// The touches of every statement in `sql` (several when `;`-separated), in order.
pub fn touches(sql: &str) -> Vec<Touch> {
    let spans = tokens_at(sql);
    let written = |i: usize| {
        spans
            .get(i)
            .map_or(String::new(), |(_, r)| sql[r.clone()].to_string())
    };
    let t: Vec<Tok> = spans.iter().map(|(t, _)| t.clone()).collect();
    let word = |i: usize| match t.get(i) {
        Some(Tok::Word(w)) => Some(w.as_str()),
        _ => None,
    };
    let sym = |i: usize, s: char| t.get(i) == Some(&Tok::Sym(s));
    let mut out: Vec<Touch> = Vec::new();
    // Per parenthesis depth: indexes in `out` of the relations read by the select there.
    let mut scopes: Vec<Vec<usize>> = vec![Vec::new()];
    let mut i = 0;
    while i < t.len() {
        match &t[i] {
            Tok::Sym('(') => scopes.push(Vec::new()),
            Tok::Sym(')') if scopes.len() > 1 => {
                scopes.pop();
            }
            Tok::Sym(';') => scopes = vec![Vec::new()],
            Tok::Word(w) => match w.as_str() {
                "select" => {
                    if let Some(s) = scopes.last_mut() {
                        s.clear();
                    }
                }
                "from" | "join" if word(i.wrapping_sub(1)) != Some("delete") => {
                    let mut j = i + 1;
                    while let Some(name) = word(j) {
                        if NOT_RELATIONS.contains(&name) || sym(j + 1, '(') {
                            break;
                        }
                        out.push(Touch {
                            relation: relation_key(name),
                            written: written(j),
                            access: Access::Read,
                        });
                        let idx = out.len() - 1;
                        if let Some(s) = scopes.last_mut() {
                            s.push(idx);
                        }
                        // `t alias, u` / `t as a, u`: the next relation after a comma.
                        j += 1;
                        if word(j) == Some("as") {
                            j += 1;
                        }
                        if word(j).is_some_and(|w| !NOT_RELATIONS.contains(&w)) {
                            j += 1;
                        }
                        if !sym(j, ',') {
                            break;
                        }
                        j += 1;
                    }
                }
                "update" if !matches!(word(i.wrapping_sub(1)), Some("for" | "key")) => {
                    if let Some(name) = word(i + 1).filter(|n| *n != "only") {
                        out.push(Touch {
                            relation: relation_key(name),
                            written: written(i + 1),
                            access: Access::Update {
                                increment: increments(&t, i + 2),
                            },
                        });
                    }
                }
                "delete" if word(i + 1) == Some("from") => {
                    if let Some(name) = word(i + 2).filter(|n| *n != "only") {
                        out.push(Touch {
                            relation: relation_key(name),
                            written: written(i + 2),
                            access: Access::Delete,
                        });
                    }
                }
                "insert" if word(i + 1) == Some("into") => {
                    if let Some(name) = word(i + 2) {
                        out.push(Touch {
                            relation: relation_key(name),
                            written: written(i + 2),
                            access: Access::Insert,
                        });
                    }
                }
                "for" if matches!(word(i + 1), Some("update" | "share" | "no" | "key")) => {
                    let share = matches!(
                        (word(i + 1), word(i + 2)),
                        (Some("share"), _) | (Some("key"), Some("share"))
                    );
                    let mut j = i + 1;
                    let (mut skip_locked, mut nowait) = (false, false);
                    while let Some(w) = word(j) {
                        match w {
                            "skip" => skip_locked = true,
                            "nowait" => nowait = true,
                            "update" | "share" | "no" | "key" | "locked" | "of" => {}
                            _ if sym(j + 1, ',') || word(j - 1) == Some("of") => {}
                            _ => break,
                        }
                        j += 1;
                    }
                    let scope = scopes.last().cloned().unwrap_or_default();
                    // `… LIMIT n FOR UPDATE` or `… FOR UPDATE SKIP LOCKED LIMIT n` (pgqueuer).
                    let limit =
                        has_limit_before(&t, i) || matches!(word(j), Some("limit" | "fetch"));
                    for idx in scope {
                        out[idx].access = Access::Lock {
                            share,
                            skip_locked,
                            nowait,
                            limit,
                        };
                    }
                }
                _ => {}
            },
            _ => {}
        }
        i += 1;
    }
    out
}

/// Words followed by `(` that are syntax or common built-ins, never a user's function.
const NOT_CALLS: [&str; 41] = [
    "materialized",
    "in",
    "any",
    "all",
    "some",
    "exists",
    "values",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "cast",
    "array",
    "row",
    "filter",
    "over",
    "lateral",
    "as",
    "and",
    "or",
    "not",
    "select",
    "from",
    "where",
    "using",
    "on",
    "returning",
    "set",
    "into",
    "with",
    "limit",
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "now",
    "unnest",
    "left",
    "right",
    "extract",
];

/// Functions `sql` calls by name (`f(…)`, `s.f(…)`), unqualified and lower-cased unless
/// quoted, in order, without syntax words or common built-ins: the candidates whose bodies
/// may do the statement's work (see [`crate::functions`]).
pub fn calls(sql: &str) -> Vec<String> {
    call_sites(sql).into_iter().map(|(key, _)| key).collect()
}

/// The names of [`calls`] as the statement wrote them (`"S".f`, schema included), for
/// [`name_parts`].
pub fn calls_written(sql: &str) -> Vec<String> {
    call_sites(sql).into_iter().map(|(_, w)| w).collect()
}

/// Each call's key and the name as written, once per key.
fn call_sites(sql: &str) -> Vec<(String, String)> {
    let spans = tokens_at(sql);
    let t: Vec<Tok> = spans.iter().map(|(t, _)| t.clone()).collect();
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        let Tok::Word(w) = tok else { continue };
        if t.get(i + 1) != Some(&Tok::Sym('(')) || w.starts_with('$') {
            continue;
        }
        // `insert into t (cols)` names a table, not a call.
        if matches!(t.get(i.wrapping_sub(1)), Some(Tok::Word(p)) if p == "into" || p == "table") {
            continue;
        }
        let name = relation_key(w);
        if name.is_empty()
            || name.chars().next().is_some_and(|c| c.is_ascii_digit())
            || NOT_CALLS.contains(&name.as_str())
            || out.iter().any(|(k, _)| *k == name)
        {
            continue;
        }
        out.push((name, sql[spans[i].1.clone()].to_string()));
    }
    out
}

/// [`touches`] of `sql` and of the bodies of the functions it calls (one level deep).
pub fn touches_via(sql: &str, bodies: &std::collections::BTreeMap<String, String>) -> Vec<Touch> {
    let mut out = touches(sql);
    if bodies.is_empty() {
        return out;
    }
    for c in calls(sql) {
        if let Some(b) = bodies.get(&c) {
            out.extend(touches(b));
        }
    }
    out
}

/// Whether the select whose locking clause starts at `at` has a `LIMIT` (or `FETCH FIRST`)
/// at its own depth.
fn has_limit_before(t: &[Tok], at: usize) -> bool {
    let mut depth = 0i32;
    for tok in t[..at].iter().rev() {
        match tok {
            Tok::Sym(')') => depth += 1,
            Tok::Sym('(') => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            Tok::Word(w) if depth == 0 && (w == "limit" || w == "fetch") => return true,
            Tok::Word(w) if depth == 0 && w == "select" => return false,
            _ => {}
        }
    }
    false
}

/// Whether every assignment of the SET list starting at `from` is an increment of its own
/// column (see [`is_increment`]).
fn increments(t: &[Tok], from: usize) -> bool {
    let Some(set) = t[from..]
        .iter()
        .position(|x| *x == Tok::Word("set".into()))
        .map(|p| p + from)
    else {
        return false;
    };
    let mut any = false;
    let mut i = set + 1;
    while let Some(Tok::Word(col)) = t.get(i) {
        if t.get(i + 1) != Some(&Tok::Sym('=')) {
            return false;
        }
        // The right-hand side: up to a comma, WHERE/FROM/RETURNING or `;` at its own depth.
        let start = i + 2;
        let mut end = start;
        let mut depth = 0i32;
        while let Some(tok) = t.get(end) {
            match tok {
                Tok::Sym('(') => depth += 1,
                Tok::Sym(')') if depth == 0 => break,
                Tok::Sym(')') => depth -= 1,
                Tok::Sym(',' | ';') if depth == 0 => break,
                Tok::Word(w)
                    if depth == 0 && matches!(w.as_str(), "where" | "from" | "returning") =>
                {
                    break
                }
                _ => {}
            }
            end += 1;
        }
        if !is_increment(col, &t[start..end]) {
            return false;
        }
        any = true;
        if t.get(end) != Some(&Tok::Sym(',')) {
            break;
        }
        i = end + 1;
    }
    any
}

/// Whether `rhs` adds to or subtracts from `col` itself, however an ORM writes it: `n + $1`,
/// `("t"."n" + $1)` (Django, SQLAlchemy), `COALESCE("n", 0) + $1` (Rails' `update_counters`),
/// `(t1_0.n+1)` (Hibernate), `$1 + n`, `n - $1`. Parentheses around the whole expression
/// and quotes or qualifiers on the column do not matter; the other operand must not name the
/// column again.
pub(crate) fn is_increment(col: &str, rhs: &[Tok]) -> bool {
    let mut e = rhs;
    while e.len() >= 2 && e[0] == Tok::Sym('(') && closing(e, 0) == Some(e.len() - 1) {
        e = &e[1..e.len() - 1];
    }
    let same = |w: &str| relation_key(w) == relation_key(col);
    // The column itself, or COALESCE(column, …), and where it ends.
    let operand_end = |at: usize| -> Option<usize> {
        let mut at = at;
        // Parentheses around the operand alone.
        let mut opened = 0;
        while e.get(at) == Some(&Tok::Sym('(')) {
            opened += 1;
            at += 1;
        }
        let end = match e.get(at) {
            Some(Tok::Word(w)) if w == "coalesce" && e.get(at + 1) == Some(&Tok::Sym('(')) => {
                match e.get(at + 2) {
                    Some(Tok::Word(c)) if same(c) => closing(e, at + 1)? + 1,
                    _ => return None,
                }
            }
            Some(Tok::Word(w)) if same(w) => at + 1,
            _ => return None,
        };
        let mut end = end;
        for _ in 0..opened {
            if e.get(end) != Some(&Tok::Sym(')')) {
                return None;
            }
            end += 1;
        }
        Some(end)
    };
    let names_col = |toks: &[Tok]| toks.iter().any(|x| matches!(x, Tok::Word(w) if same(w)));
    // `col ± rest`
    if let Some(end) = operand_end(0) {
        if matches!(e.get(end), Some(Tok::Sym('+' | '-'))) && end + 1 < e.len() {
            return !names_col(&e[end + 1..]);
        }
        return false;
    }
    // `rest + col` (at depth 0, the last term)
    let mut depth = 0i32;
    for (k, tok) in e.iter().enumerate() {
        match tok {
            Tok::Sym('(') => depth += 1,
            Tok::Sym(')') => depth -= 1,
            Tok::Sym('+') if depth == 0 && k > 0 => {
                return operand_end(k + 1) == Some(e.len()) && !names_col(&e[..k]);
            }
            _ => {}
        }
    }
    false
}

/// Index of the `)` closing the `(` at `open`.
pub(crate) fn closing(t: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, tok) in t.iter().enumerate().skip(open) {
        match tok {
            Tok::Sym('(') => depth += 1,
            Tok::Sym(')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(share: bool, skip_locked: bool, limit: bool) -> Access {
        Access::Lock {
            share,
            skip_locked,
            nowait: false,
            limit,
        }
    }

    fn of(sql: &str) -> Vec<(String, Access)> {
        touches(sql)
            .into_iter()
            .map(|t| (t.relation, t.access))
            .collect()
    }

    #[test]
    fn payments_read_lock_then_assign() {
        assert_eq!(
            of("select remaining from daily_limit where customer_id = ? and day = current_date for update"),
            [("daily_limit".into(), lock(false, false, false))]
        );
        assert_eq!(
            of("update daily_limit set remaining = ?, last_update = now() where customer_id = ?"),
            [("daily_limit".into(), Access::Update { increment: false })]
        );
        assert_eq!(
            of("insert into ledger (customer_id, day, amount) values (?, current_date, ?)"),
            [("ledger".into(), Access::Insert)]
        );
        assert_eq!(
            of("SELECT x FROM public.Accounts a FOR SHARE"),
            [("accounts".into(), lock(true, false, false))]
        );
    }

    /// Nested comments and `E''` strings read as PostgreSQL reads them (this file's own
    /// scanner took the `E` of `E'…'` for a word, and ended a comment at its first `*/`).
    #[test]
    fn nested_comments_and_prefixed_strings_are_one_token() {
        assert_eq!(
            of("/* app /* v2 */ */ update post set views = views + 1 where id = E'x'"),
            [("post".into(), Access::Update { increment: true })]
        );
        assert_eq!(tokens("where id = E'x'")[3..], [Tok::Sym('?')]);
    }

    #[test]
    fn counters_increment() {
        assert_eq!(
            of("update post set views_count = views_count + ? where id = ?"),
            [("post".into(), Access::Update { increment: true })]
        );
        assert_eq!(
            of("UPDATE pgbench_branches b SET bbalance = b.bbalance - ? WHERE bid = ?"),
            [(
                "pgbench_branches".into(),
                Access::Update { increment: true }
            )]
        );
        assert_eq!(
            of("update t set n = n + ?, m = ? where id = ?"),
            [("t".into(), Access::Update { increment: false })]
        );
    }

    /// `x = x + n` and `x = x - n` as ORMs send them, normalized (literals and parameters
    /// `?`): Django 5.1 `F("views") + 1` and SQLAlchemy 2.0 `Account.balance + 1` (captured
    /// from the libraries, `tests/apps/`), Rails' `update_counters` (activerecord
    /// counter_cache.rb: `"#{quoted_column} = COALESCE(#{quoted_column}, 0) #{operator}
    /// #{value.abs}"`) and Hibernate 6's bulk JPQL update (`update post p1_0 set
    /// view_count=(p1_0.view_count+1) where p1_0.id=?`).
    #[test]
    fn orm_increments_are_increments_however_quoted_qualified_or_parenthesised() {
        let inc = |sql: &str| of(sql).first().map(|t| t.1);
        for sql in [
            "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" + ?) WHERE \"site_page\".\"id\" = ?",
            "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" - ?) WHERE \"site_page\".\"id\" = ?",
            "UPDATE accounts SET balance=(accounts.balance + ?::BIGINT) WHERE accounts.id = ?::BIGINT",
            "UPDATE accounts SET balance=(accounts.balance - ?) WHERE accounts.id = ?",
            "UPDATE \"posts\" SET \"comments_count\" = COALESCE(\"comments_count\", ?) + ? WHERE \"posts\".\"id\" = ?",
            "UPDATE \"posts\" SET \"comments_count\" = COALESCE(\"comments_count\", ?) - ? WHERE \"posts\".\"id\" = ?",
            "update post p1_0 set view_count=(p1_0.view_count+?) where p1_0.id=?",
            "update post p1_0 set view_count=(p1_0.view_count-?) where p1_0.id=?",
            "update t set n = ? + n where id = ?",
            "update t set n = ((n) + ?) where id = ?",
        ] {
            let rel = of(sql)[0].0.clone();
            assert_eq!(inc(sql), Some(Access::Update { increment: true }), "{sql}");
            assert!(["site_page", "accounts", "posts", "post", "t"].contains(&rel.as_str()), "{sql}: {rel}");
        }
        for sql in [
            // SQLAlchemy's unit of work writes the value it computed: an assignment.
            "UPDATE accounts SET balance=? WHERE accounts.id = ?",
            "update t set n = m + ? where id = ?",
            "update t set n = n * ? where id = ?",
            "update t set n = n + n where id = ?",
            "update t set n = (n + ?) * ? where id = ?",
            "update t set n = coalesce(m, ?) + ? where id = ?",
            "update t set n = n + ?, m = ? where id = ?",
        ] {
            assert_eq!(inc(sql), Some(Access::Update { increment: false }), "{sql}");
        }
    }

    #[test]
    fn queue_claims_lock_the_first_rows_of_their_own_select() {
        assert_eq!(
            of("select take_jobs(array( select id from job_queue order by id asc limit ? for update ))"),
            [("job_queue".into(), lock(false, false, true))]
        );
        assert_eq!(
            of("delete from jobs where id = (select id from jobs order by id limit ? for update skip locked) returning *"),
            [
                ("jobs".into(), Access::Delete),
                ("jobs".into(), lock(false, true, true))
            ]
        );
        assert_eq!(
            of("with c as (select id from q join w on w.id = q.id where q.s = ? fetch first ? rows only for no key update of q skip locked) update q set s = ? from c where q.id = c.id"),
            [
                ("q".into(), lock(false, true, true)),
                ("w".into(), lock(false, true, true)),
                ("q".into(), Access::Update { increment: false }),
                ("c".into(), Access::Read),
            ]
        );
    }

    /// procrastinate 3.10's claim is inside `procrastinate_fetch_job_v2` (its PL/pgSQL body,
    /// from procrastinate/sql/schema.sql, comments and literals kept); pgqueuer 1.6's stale
    /// re-pick puts LIMIT after the locking clause (`FOR UPDATE SKIP LOCKED LIMIT n`, in a CTE)
    /// and its fresh claim sits in a CROSS JOIN LATERAL.
    #[test]
    fn claims_in_function_bodies_ctes_and_laterals() {
        let call = "SELECT id, status, task_name, priority, lock, queueing_lock, args, scheduled_at, queue_name, attempts, worker_id FROM procrastinate_fetch_job_v2(?::varchar[], ?)";
        assert!(of(call).is_empty());
        assert_eq!(calls(call), ["procrastinate_fetch_job_v2"]);
        let body = "
DECLARE
	found_jobs procrastinate_jobs;
BEGIN
    WITH candidate AS (
        SELECT jobs.*
            FROM procrastinate_jobs AS jobs
            WHERE
                -- reject the job if its lock has earlier or higher priority jobs
                NOT EXISTS (
                    SELECT 1
                        FROM procrastinate_jobs AS other_jobs
                        WHERE
                            jobs.lock IS NOT NULL
                            AND other_jobs.lock = jobs.lock
                            AND (other_jobs.status = 'doing' OR other_jobs.status = 'todo')
                )
                AND jobs.status = 'todo'
                AND (target_queue_names IS NULL OR jobs.queue_name = ANY( target_queue_names ))
                AND (jobs.scheduled_at IS NULL OR jobs.scheduled_at <= now())
            ORDER BY jobs.priority DESC, jobs.id ASC LIMIT 1
            FOR UPDATE OF jobs SKIP LOCKED
    )
    UPDATE procrastinate_jobs
        SET status = 'doing', worker_id = p_worker_id
        FROM candidate
        WHERE procrastinate_jobs.id = candidate.id
        RETURNING procrastinate_jobs.* INTO found_jobs;

 RETURN found_jobs;
END;
";
        let bodies: std::collections::BTreeMap<String, String> =
            [("procrastinate_fetch_job_v2".to_string(), body.to_string())].into();
        let t: Vec<(String, Access)> = touches_via(call, &bodies)
            .into_iter()
            .map(|t| (t.relation, t.access))
            .collect();
        assert!(
            t.contains(&("procrastinate_jobs".into(), lock(false, true, true))),
            "{t:?}"
        );
        assert!(t.contains(&(
            "procrastinate_jobs".into(),
            Access::Update { increment: false }
        )));
        // pgqueuer: LIMIT after the lock, and a claim in a LATERAL subquery.
        let stale = "WITH next_stale AS (SELECT stale.id, stale.priority FROM pgqueuer stale WHERE stale.status = ? AND stale.heartbeat < NOW() - ?::interval ORDER BY stale.priority DESC, stale.id ASC FOR UPDATE SKIP LOCKED LIMIT ?) UPDATE pgqueuer SET status = ? FROM next_stale WHERE pgqueuer.id = next_stale.id";
        assert_eq!(of(stale)[0], ("pgqueuer".into(), lock(false, true, true)));
        let lateral = "WITH next_queued AS (SELECT job.id, job.priority FROM available CROSS JOIN LATERAL (SELECT candidate.id, candidate.priority FROM pgqueuer candidate WHERE candidate.entrypoint = available.entrypoint AND candidate.status = ? ORDER BY candidate.priority DESC, candidate.id ASC LIMIT ? FOR UPDATE SKIP LOCKED) job ORDER BY job.priority DESC, job.id ASC LIMIT ?) SELECT 1";
        assert!(
            of(lateral).contains(&("pgqueuer".into(), lock(false, true, true))),
            "{:?}",
            of(lateral)
        );
        // A comment or a literal saying FOR UPDATE is neither.
        assert_eq!(
            of("select a from t where b = 'for update' -- for update\n"),
            [("t".into(), Access::Read)]
        );
    }

    #[test]
    fn several_statements_and_odd_names() {
        let t = of(
            "begin; update \"My T\" set v = v + ? where id = ?; select a from s1.t1, t2 x; commit;",
        );
        assert_eq!(
            t,
            [
                ("My T".into(), Access::Update { increment: true }),
                ("t1".into(), Access::Read),
                ("t2".into(), Access::Read),
            ]
        );
        assert!(of("select now()").is_empty());
        assert!(of("select * from generate_series(?, ?)").is_empty());
        assert_eq!(relation_key("hb_queue.job_queue"), "job_queue");
        assert_eq!(relation_key("\"We.ird\""), "We.ird");
    }

    /// A name in a schema whose own name holds quotes, spaces, `;` and non-ASCII letters is
    /// read whole, schema and all, as the server reads it (the capture looks it up by both).
    #[test]
    fn qualified_names_are_read_with_their_schema_whatever_it_holds() {
        let sql = r#"update "q ""x"" ü; y".jobs set s = ? where id = (select id from "q ""x"" ü; y".Jobs for update skip locked)"#;
        let t = touches(sql);
        let written: Vec<&str> = t.iter().map(|t| t.written.as_str()).collect();
        assert_eq!(
            written,
            [r#""q ""x"" ü; y".jobs"#, r#""q ""x"" ü; y".Jobs"#]
        );
        assert_eq!(name_parts(written[0]), [r#"q "x" ü; y"#, "jobs"]);
        assert_eq!(name_parts(written[1]), [r#"q "x" ü; y"#, "jobs"]);
        assert_eq!(name_parts(r#"U&"a\003Ab".ÄT"#), ["a:b", "Ät"]);
        assert_eq!(relation_key(r#"s.U&"d\0061t""#), "dat");
        let call = r#"select id from "q ""x"" ü; y".fetch_job(?)"#;
        assert_eq!(calls(call), ["fetch_job"]);
        assert_eq!(calls_written(call), [r#""q ""x"" ü; y".fetch_job"#]);
    }
}
