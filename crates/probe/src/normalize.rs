//! Statement texts without their values: `pg_stat_activity.query` holds the literal text a
//! client sent (`… where id = 42`), so the probe groups and records statements by a
//! normalized form (`… where id = ?`): the same statement with other values is one entry, and
//! no user value leaves the server in a query text. The tokens are `hotbench_sqltext`'s (one
//! SQL lexer for every crate); what is kept of them, the `IN` lists and the cut are this
//! file's. Pure, tested without a server.

use hotbench_sqltext::Lexer;

/// Characters kept of a normalized text: a longer one keeps its start, up to two locking
/// clauses from its middle with the `select` before them (a claim inside a CTE), and its
/// last [`TAIL_CHARS`] (where a top-level locking clause is), with ` … ` between.
pub const MAX_CHARS: usize = 300;
const TAIL_CHARS: usize = 100;
/// Characters of a text read (the server sends at most 2,000 of a statement's).
const MAX_INPUT_CHARS: usize = 10_000;

/// `sql` with comments dropped, whitespace collapsed, and string, number, bit-string and
/// dollar-quoted literals replaced by `?`; quoted identifiers and `$n` parameters are kept.
/// A text cut short inside a literal (`track_activity_query_size`) ends in `?`; a final `;`
/// is dropped (clients differ in sending one). An `IN` list of three or more values or
/// parameters (`in (1, 2, 3)`, `in ($1, $2, $3)`) becomes `in (?, …)`: one statement
/// whatever the list's length.
pub fn normalize(sql: &str) -> String {
    let sql = match sql.char_indices().nth(MAX_INPUT_CHARS) {
        Some((at, _)) => &sql[..at],
        None => sql,
    };
    let mut o = String::with_capacity(sql.len().min(MAX_CHARS * 2));
    for t in Lexer::new(sql) {
        if t.is_blank() {
            space(&mut o);
        } else if t.is_constant() {
            o.push('?');
        } else {
            o.push_str(t.text(sql));
        }
    }
    cut(&collapse_lists(o.trim().trim_end_matches(';').trim_end()))
}

/// `in (?, ?, ?…)` and `in ($1, $2, $3…)` → `in (?, …)`.
fn collapse_lists(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let mut items = 0;
        let mut end = 0;
        let mut scan = rest;
        loop {
            let item = scan.strip_prefix('?').map(|r| (1, r)).or_else(|| {
                let r = scan.strip_prefix('$')?;
                let digits = r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                (digits > 0).then(|| (1 + digits, &r[digits..]))
            });
            let Some((len, after)) = item else { break };
            items += 1;
            end += len;
            scan = after;
            match scan.strip_prefix(", ").or_else(|| scan.strip_prefix(',')) {
                Some(r) => {
                    end += scan.len() - r.len();
                    scan = r;
                }
                None => break,
            }
        }
        let in_list = out
            .get(out.len().saturating_sub(4)..)
            .is_some_and(|t| t.eq_ignore_ascii_case("in ("));
        if in_list && items >= 3 && scan.starts_with(')') && !rest[..end].ends_with(',') {
            out.push_str("?, …");
            rest = scan;
        }
    }
    out.push_str(rest);
    out
}

/// One space, never two, never leading.
fn space(o: &mut String) {
    if !o.is_empty() && !o.ends_with(' ') {
        o.push(' ');
    }
}

fn cut(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let n = c.len();
    if n <= MAX_CHARS {
        return s.to_string();
    }
    let tail_start = n - TAIL_CHARS;
    // Character ranges kept, in order: the head, the middle's locking clauses, the tail.
    let mut parts: Vec<(usize, usize)> = vec![(0, MAX_CHARS - TAIL_CHARS - 3)];
    for at in locking_clauses(&c, parts[0].1, tail_start) {
        let prev_end = parts.last().map_or(0, |p| p.1);
        if at < prev_end {
            continue;
        }
        let from = select_before(&c, at, prev_end);
        let to = word_end(&c, (at + CLAUSE_AFTER).min(tail_start));
        parts.push((from, to));
        if parts.len() > MAX_CLAUSES {
            break;
        }
    }
    parts.push((tail_start, n));
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (from, to) in parts {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    merged
        .iter()
        .map(|&(a, b)| c[a..b].iter().collect::<String>().trim().to_string())
        .collect::<Vec<_>>()
        .join(" … ")
}

/// Locking clauses kept from the middle of a cut text (a claim inside a CTE or a LATERAL
/// subquery: pgqueuer's), with up to [`CLAUSE_BEFORE`] characters before each (back to the
/// `select` whose rows it locks) and [`CLAUSE_AFTER`] after (`OF t SKIP LOCKED LIMIT n`).
const MAX_CLAUSES: usize = 2;
const CLAUSE_BEFORE: usize = 300;
const CLAUSE_AFTER: usize = 40;

/// Where `for update`, `for no key update`, `for share` and `for key share` start in
/// `c[from..to]` (after a space).
fn locking_clauses(c: &[char], from: usize, to: usize) -> Vec<usize> {
    let lower: String = c.iter().map(|ch| ch.to_ascii_lowercase()).collect();
    let lower: Vec<char> = lower.chars().collect();
    let at = |i: usize, w: &str| {
        w.chars()
            .enumerate()
            .all(|(k, ch)| lower.get(i + k) == Some(&ch))
    };
    (from.max(1)..to)
        .filter(|&i| lower[i - 1] == ' ')
        .filter(|&i| {
            [
                "for update",
                "for no key update",
                "for share",
                "for key share",
            ]
            .iter()
            .any(|w| at(i, w))
        })
        .collect()
}

/// Where the kept text before a locking clause at `at` starts: the last `select` within
/// [`CLAUSE_BEFORE`] characters (not before `floor`), else that far back at a word start.
fn select_before(c: &[char], at: usize, floor: usize) -> usize {
    let lo = at.saturating_sub(CLAUSE_BEFORE).max(floor);
    let is_select = |i: usize| {
        i + 7 <= c.len()
            && c[i..i + 6]
                .iter()
                .map(|ch| ch.to_ascii_lowercase())
                .eq("select".chars())
            && c[i + 6] == ' '
            && (i == 0 || matches!(c[i - 1], ' ' | '('))
    };
    if let Some(i) = (lo..at).rev().find(|&i| is_select(i)) {
        return i;
    }
    if lo == floor {
        return lo;
    }
    (lo..at).find(|&i| c[i - 1] == ' ').unwrap_or(lo)
}

/// `i`, or the end of the word `i` falls in.
fn word_end(c: &[char], mut i: usize) -> usize {
    while i < c.len() && i > 0 && c[i - 1] != ' ' && c[i] != ' ' {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn values_become_placeholders_and_names_stay() {
        assert_eq!(
            normalize("select remaining from daily_limit\n  where customer_id = 42 and day = current_date for update"),
            "select remaining from daily_limit where customer_id = ? and day = current_date for update"
        );
        assert_eq!(
            normalize("update t2 set n = n + 1, s = 'it''s', e = E'a\\'b' where id in (1, 2.5e3)"),
            "update t2 set n = n + ?, s = ?, e = ? where id in (?, ?)"
        );
        assert_eq!(
            normalize("select $1, $$body 'x'$$, $f$ 1 $f$ from \"Tab 1\" -- note 7\n where x=-3"),
            "select $1, ?, ? from \"Tab 1\" where x=-?"
        );
        assert_eq!(
            normalize("/* app /* nested */ 9 */ insert into t1 values (B'101', X'ff', .5)"),
            "insert into t1 values (?, ?, ?)"
        );
    }

    #[test]
    fn long_lists_are_one_statement_and_keep_their_locking_clause() {
        let ids: Vec<String> = (1..=400).map(|i| i.to_string()).collect();
        let sql = format!(
            "select * from accounts where id in ({}) order by id for update",
            ids.join(", ")
        );
        assert_eq!(
            normalize(&sql),
            "select * from accounts where id in (?, …) order by id for update"
        );
        let params: Vec<String> = (1..=400).map(|i| format!("${i}")).collect();
        assert_eq!(
            normalize(&format!(
                "select * from t where id in ({}) for update",
                params.join(",")
            )),
            "select * from t where id in (?, …) for update"
        );
        // Not an IN list, two values, or not only values: as they are.
        assert_eq!(
            normalize("insert into t values (1, 2, 3)"),
            "insert into t values (?, ?, ?)"
        );
        assert_eq!(
            normalize("select 1 where 2 in (1, 2)"),
            "select ? where ? in (?, ?)"
        );
        assert_eq!(
            normalize("select 1 where 2 IN (1, 2, x)"),
            "select ? where ? IN (?, ?, x)"
        );
        assert_eq!(
            normalize("select 1 where 2 in (1, 2, 3"),
            "select ? where ? in (?, ?, ?"
        );
    }

    /// pgqueuer's dequeue (its CTE/LATERAL claim is past the first 300 characters, and the
    /// statement is longer than what is kept): the claim and the select it locks are kept.
    #[test]
    fn a_claim_in_the_middle_of_a_long_statement_is_kept() {
        let sql = format!(
            "WITH available AS ( SELECT UNNEST($2::text[]) AS entrypoint ), next_queued AS ( \
             SELECT job.id, job.priority FROM available CROSS JOIN LATERAL ( \
             SELECT candidate.id, candidate.priority FROM pgqueuer candidate \
             WHERE candidate.entrypoint = available.entrypoint AND candidate.status = 'queued' \
             AND candidate.execute_after < NOW() ORDER BY candidate.priority DESC, candidate.id ASC \
             LIMIT $1 FOR UPDATE SKIP LOCKED ) job ORDER BY job.priority DESC, job.id ASC LIMIT $1 ), \
             updated AS ( UPDATE pgqueuer SET status = 'picked' {} WHERE id = ANY(SELECT id FROM next_queued) \
             RETURNING * ) SELECT * FROM updated ORDER BY priority DESC, id ASC",
            ", updated = NOW(), heartbeat = NOW()".repeat(20)
        );
        let n = normalize(&sql);
        assert!(
            n.contains(
                "FROM pgqueuer candidate WHERE candidate.entrypoint = available.entrypoint \
                 AND candidate.status = ? AND candidate.execute_after < NOW() ORDER BY \
                 candidate.priority DESC, candidate.id ASC LIMIT $1 FOR UPDATE SKIP LOCKED )"
            ) && n.ends_with("ORDER BY priority DESC, id ASC")
                && n.chars().count() < 800,
            "{n}"
        );
        // A clause far from any select keeps its last 300 characters, from a word's start.
        let far = format!(
            "{} select a from t where {} for share nowait {}",
            "x ".repeat(200),
            "c = ? and ".repeat(60),
            "y ".repeat(100)
        );
        let n = normalize(&far);
        assert!(
            n.contains(" … c = ? and") && n.contains("for share nowait"),
            "{n}"
        );
    }

    #[test]
    fn cut_texts_and_long_texts_end_cleanly() {
        assert_eq!(normalize("select 'unterminated"), "select ?");
        let long = format!("select {} from t for update", "col, ".repeat(200));
        let n = normalize(&long);
        assert!(
            n.contains(" … ")
                && n.ends_with("col, from t for update")
                && n.chars().count() <= super::MAX_CHARS,
            "{n}"
        );
        assert_eq!(normalize("  \n "), "");
        assert_eq!(normalize("commit; "), "commit");
    }

    /// PostgreSQL 16's `0x1F` and a `U&'…'` string are one constant each (this file's own
    /// lexer made them `?x1F` and `U&?`); `1..10` (PL/pgSQL's range) is two numbers.
    #[test]
    fn hex_integers_and_unicode_strings_are_one_constant() {
        assert_eq!(
            normalize("select 0x1F, U&'d\\0061t', 1..10 from t"),
            "select ?, ?, ?..? from t"
        );
    }
}
