//! What a statement does to which relation, from its (normalized) text: reads, row locks
//! (`FOR UPDATE`/`FOR SHARE`, with `SKIP LOCKED`, `NOWAIT`, a `LIMIT`), updates (told apart:
//! an increment `SET n = n + …` from an assignment), deletes and inserts. A diagnosis needs
//! no more than this to tell a counter from a payment and a queue claim from a lookup, so it
//! is a token scan, not a parser: what it cannot place, it leaves out. Pure.

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
    pub access: Access,
}

/// The relation part of a name as `regclass` or a statement writes it (`s.t` → `t`,
/// `"T"` → `T`, `T` → `t`), for matching statements with relations.
pub fn relation_key(name: &str) -> String {
    let last = split_dotted(name).pop().unwrap_or_default();
    match last.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => last.to_lowercase(),
    }
}

/// Splits `a."b.c".d` at the dots outside quotes.
fn split_dotted(name: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    for ch in name.chars() {
        if ch == '.' && !quoted {
            parts.push(String::new());
            continue;
        }
        if ch == '"' {
            quoted = !quoted;
        }
        if let Some(p) = parts.last_mut() {
            p.push(ch);
        }
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A name or keyword (keywords lower-cased; quoted names kept with their quotes).
    Word(String),
    Sym(char),
}

fn tokens(sql: &str) -> Vec<Tok> {
    let c: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' || ch == '"' || ch == '$' {
            let mut w = String::new();
            // A dotted name, parts quoted or not.
            while i < c.len() {
                if c[i] == '"' {
                    w.push('"');
                    i += 1;
                    while i < c.len() && c[i] != '"' {
                        w.push(c[i]);
                        i += 1;
                    }
                    w.push('"');
                    i += 1;
                } else if c[i].is_alphanumeric() || matches!(c[i], '_' | '$' | '.') {
                    w.push(c[i]);
                    i += 1;
                } else {
                    break;
                }
            }
            let w = if w.contains('"') { w } else { w.to_lowercase() };
            out.push(Tok::Word(w));
        } else {
            out.push(Tok::Sym(ch));
            i += 1;
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
    let t = tokens(sql);
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
                            access: Access::Delete,
                        });
                    }
                }
                "insert" if word(i + 1) == Some("into") => {
                    if let Some(name) = word(i + 2) {
                        out.push(Touch {
                            relation: relation_key(name),
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
                    let limit = has_limit_before(&t, i);
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

/// Whether every assignment of the SET list starting at `from` is `col = col ± …`.
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
    let mut depth = 0;
    while i < t.len() {
        match &t[i] {
            Tok::Sym('(') => depth += 1,
            Tok::Sym(')') => depth -= 1,
            Tok::Word(w) if depth == 0 && matches!(w.as_str(), "where" | "from" | "returning") => {
                break
            }
            Tok::Word(col) if depth == 0 && t.get(i + 1) == Some(&Tok::Sym('=')) => {
                let same = matches!(t.get(i + 2), Some(Tok::Word(v)) if last(v) == last(col));
                let op = matches!(t.get(i + 3), Some(Tok::Sym('+' | '-')));
                if !(same && op) {
                    return false;
                }
                any = true;
                i += 3;
            }
            _ => {}
        }
        i += 1;
    }
    any
}

fn last(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
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
}
