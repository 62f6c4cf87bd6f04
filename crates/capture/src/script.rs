//! One pgbench script per shape: its statements in order between BEGIN and COMMIT (or one
//! autocommit statement), each value drawn as fitted ([`crate::params`]) into a variable,
//! slots that carried one value in one transaction sharing one variable, the gaps between
//! statements slept (`\sleep`) when a sleep can reproduce them, conditional statements under
//! `\if`, and a comment before each number saying where it came from. Texts are written so
//! pgbench reads them as they were: values as literals pgbench cannot mistake for a
//! variable (`:` inside a string is written `\x3a`), quoted identifiers with a `:` as
//! Unicode escapes. The ceiling's `skew = 0` draws every key uniformly. Pure.

use std::collections::BTreeMap;

use hotbench_results::capture_record::{HotValue, Parameter};

use crate::params::{fit, Fit, Tail};
use crate::script_names::Names;
pub(crate) use crate::script_quote::escape_identifiers;
pub use crate::script_quote::literal;
use crate::shapes::ShapeModel;
use crate::sql_text::Value;

/// Shortest gap worth a `\sleep` (ms): shorter ones are the client's own CPU and round trip,
/// which a sleep overshoots on a busy machine (diagnose's rule).
pub const MIN_SLEEP_MS: f64 = hotbench_diagnose::suggest::MIN_THINK_MS;
/// Slots seen together at least this often and equal at least [`SAME_SHARE`] of the time
/// carry one value.
const SAME_MIN_SEEN: u64 = 3;
const SAME_SHARE: f64 = 0.9;
/// The scenario parameter that turns skew off (the ceiling).
pub const SKEW_PARAM: &str = "skew";

/// What the writer needs beyond the shape.
pub struct Context<'a> {
    pub file: &'a str,
    /// 1-based.
    pub number: usize,
    pub of: usize,
    /// Share of all transactions (0–1).
    pub weight: f64,
    pub duration_s: f64,
    /// How the counts were known (`pg_stat_statements` or sampling).
    pub counts_from: &'a str,
    /// Where its transactions were seen (`by sampling`, `in the server log`).
    pub seen_in: &'a str,
    pub begin_sql: &'a str,
    pub commit_sql: &'a str,
    /// Mean time a session idled between transactions (ms), for closed arrivals.
    pub idle_between_ms: Option<f64>,
    /// `--redact`: the value written for a captured one (by the column it goes with).
    pub redact: Option<&'a Redact<'a>>,
    /// Values for a slot whose values were not seen (bound parameters).
    pub fallback: Option<&'a Fallback<'a>>,
    /// (statement, slot) taking the value a chained statement returned ([`crate::chain`]).
    pub carried: Option<(usize, usize)>,
}

/// The generated value standing for a captured one, by its column (when known).
pub type Redact<'a> = dyn Fn(Option<&str>, &Value) -> Value + 'a;

/// How to draw a slot no value was seen for, by its statement (normalized), the slot (and
/// how many the statement has) and its column.
pub type Fallback<'a> =
    dyn Fn(&str, (usize, usize), Option<&str>) -> Option<crate::params::Fitted> + 'a;

/// A written script, in its parts (the fix variants reuse the draws and statements).
pub struct Written {
    /// Header comments, the idle sleep, every draw with its comment.
    pub head: String,
    /// BEGIN, the statements with their gaps, COMMIT (see [`Written::render_body`]).
    pub body: String,
    /// The body with each statement marked.
    body_template: String,
    /// Statements (by index in `statements`) that end in `\gset`.
    gsets: std::collections::BTreeSet<usize>,
    /// The `\set` lines alone, in order.
    pub draws: Vec<String>,
    /// The SQL statements in order (BEGIN and COMMIT included), values as `:variables`.
    pub statements: Vec<String>,
    /// Variable → the claim's result column it holds (set by the claim's `\gset`).
    pub claimed: BTreeMap<String, String>,
    pub parameters: Vec<Parameter>,
    /// Shape statement → its index in `statements`, for those that always run once.
    index: BTreeMap<usize, usize>,
    /// Run after the transaction: a chained shape's ([`crate::chain`]).
    pub tail: String,
}

impl Written {
    pub fn text(&self) -> String {
        format!("{}{}{}", self.head, self.body, self.tail)
    }

    /// Shape statement `si` as written, when it always runs once.
    pub fn statement_of(&self, si: usize) -> Option<String> {
        self.statements.get(*self.index.get(&si)?).cloned()
    }

    /// Shape statement `si` run as `sql` ending in `\gset`, and `tail` after the
    /// transaction: the returning side of a chain. False when `si` does not always run once.
    pub fn chain(&mut self, si: usize, sql: String, tail: String) -> bool {
        let Some(&j) = self.index.get(&si) else {
            return false;
        };
        self.statements[j] = sql;
        self.gsets.insert(j);
        self.body = self.render_body(None);
        self.tail = tail;
        true
    }

    /// A written script from its parts, `{i}` in `tpl` marking statement `i`.
    #[cfg(test)]
    pub(crate) fn for_test(head: &str, tpl: &str, draws: &[&str], sts: &[&str]) -> Self {
        let mut t = tpl.to_string();
        for i in 0..sts.len() {
            t = t.replace(&format!("{{{i}}}"), &format!("{MARK}{i}{MARK}"));
        }
        let mut w = Written {
            head: head.into(),
            body: String::new(),
            body_template: t,
            gsets: Default::default(),
            draws: draws.iter().map(|d| d.to_string()).collect(),
            statements: sts.iter().map(|s| s.to_string()).collect(),
            claimed: Default::default(),
            parameters: Vec::new(),
            index: Default::default(),
            tail: String::new(),
        };
        w.body = w.render_body(None);
        w
    }
}

/// The script of `shape`.
pub fn write(shape: &ShapeModel, cx: &Context<'_>) -> Written {
    let mut head = header(shape, cx);
    // Between transactions a closed-loop client's own time is larger than inside one (it
    // prepares the next): only twice the threshold is slept.
    if let Some(ms) = cx.idle_between_ms.filter(|m| *m >= 2.0 * MIN_SLEEP_MS) {
        head.push_str(&format!(
            "-- the sessions idled {ms:.1} ms between transactions (Little's law on the sample)\n\\sleep {} us\n",
            (ms * 1000.0).round() as u64
        ));
    }
    let d = draws(shape, cx);
    head.push_str(&d.text);
    let (template, statements, gsets, index) = body(shape, cx, &d);
    let mut w = Written {
        head,
        body: String::new(),
        body_template: template,
        gsets,
        draws: d.lines,
        statements,
        claimed: d.claimed,
        parameters: d.parameters,
        index,
        tail: String::new(),
    };
    w.body = w.render_body(None);
    w
}

/// The draws of a shape's values.
struct Draws {
    text: String,
    lines: Vec<String>,
    /// What each slot is written as: `:variable`, or a constant's literal.
    slot_var: BTreeMap<(usize, usize), String>,
    claimed: BTreeMap<String, String>,
    /// Statements whose result sets claimed variables (`\gset`).
    gsets: std::collections::BTreeSet<usize>,
    parameters: Vec<Parameter>,
}

/// Every value drawn up front (pgbench evaluates `\set` in order), each with a comment
/// saying where its numbers came from; a slot that repeats an earlier one's value, or takes
/// a claimed row's column, draws nothing.
fn draws(shape: &ShapeModel, cx: &Context<'_>) -> Draws {
    let mut d = Draws {
        text: String::new(),
        lines: Vec::new(),
        slot_var: BTreeMap::new(),
        claimed: BTreeMap::new(),
        gsets: Default::default(),
        parameters: Vec::new(),
    };
    let mut names = Names::default();
    let alternative_of: BTreeMap<usize, usize> = alternatives(shape)
        .into_iter()
        .map(|(a, b)| (b, a))
        .collect();
    for (si, st) in shape.statements.iter().enumerate() {
        for slot in 0..st.text.values.len() {
            let column = st.text.columns.get(slot).cloned().flatten();
            // The second of two alternatives takes the first's value for the same column.
            if let Some(&a) = alternative_of.get(&si) {
                let first = shape.statements[a]
                    .text
                    .columns
                    .iter()
                    .position(|c| c.is_some() && *c == column);
                if let Some(written) = first.and_then(|k| d.slot_var.get(&(a, k)).cloned()) {
                    d.text.push_str(&format!(
                        "-- statement {}, value {}: as in statement {}, its alternative\n",
                        si + 1,
                        slot + 1,
                        a + 1
                    ));
                    d.slot_var.insert((si, slot), written);
                    continue;
                }
            }
            if cx.carried == Some((si, slot)) {
                let v = crate::chain::CARRY_VAR;
                d.text.push_str(&format!(
                    "-- statement {}, value {}: the value the chained statement returned (:{v})\n",
                    si + 1,
                    slot + 1
                ));
                d.slot_var.insert((si, slot), format!(":{v}"));
                continue;
            }
            if let Some((claim, col)) = claimed_by(shape, si, slot) {
                let var = names.claimed(&col);
                d.text.push_str(&format!(
                    "-- statement {}, value {}: the {} of the row statement {} claimed (its \\gset)\n",
                    si + 1,
                    slot + 1,
                    sanitize_comment(&col),
                    claim + 1
                ));
                d.claimed.insert(var.clone(), col);
                d.gsets.insert(claim);
                d.slot_var.insert((si, slot), format!(":{var}"));
                continue;
            }
            if let Some((earlier, why)) = same_as(shape, si, slot) {
                if let Some(written) = d.slot_var.get(&earlier).cloned() {
                    let var = written.strip_prefix(':').map(str::to_string);
                    d.text.push_str(&format!(
                        "-- statement {}, value {}: {} again ({why})\n",
                        si + 1,
                        slot + 1,
                        match &var {
                            Some(v) => v.clone(),
                            None =>
                                format!("statement {}'s value {}", earlier.0 + 1, earlier.1 + 1),
                        },
                    ));
                    d.parameters.push(Parameter {
                        variable: var.clone().unwrap_or_default(),
                        statement: si,
                        position: slot,
                        column,
                        model: "same".into(),
                        same_as: var,
                        ..Default::default()
                    });
                    d.slot_var.insert((si, slot), written);
                    continue;
                }
            }
            let (fi, fs) = least_biased(shape, si, slot);
            let mut fitted = fit(shape.statements[fi]
                .values
                .get(fs)
                .map(Vec::as_slice)
                .unwrap_or(&[]));
            let mut seen = true;
            if let (Fit::Unknown, Some(fb)) = (&fitted.fit, cx.fallback) {
                if let Some(f) = fb(&st.key, (slot, st.text.values.len()), column.as_deref()) {
                    fitted = f;
                    seen = false;
                }
            }
            // The fallback's values come from the captured tables, which --redact has made
            // stand-ins already (as data.sql holds them): again would make a composite
            // literal a random string and a most common value one that no row holds.
            if let (Some(r), true) = (cx.redact, seen) {
                redact_fit(&mut fitted.fit, column.as_deref(), r);
            }
            let var = match &fitted.fit {
                Fit::Constant(_) => format!("value {}", slot + 1),
                _ => names.next(column.as_deref()),
            };
            let (lines, p) = draw(&var, &fitted.fit);
            d.text.push_str(&format!(
                "-- {var} (statement {}, value {}{}): {}\n",
                si + 1,
                slot + 1,
                column
                    .as_deref()
                    .map(|c| format!(", {}", sanitize_comment(c)))
                    .unwrap_or_default(),
                sanitize_comment(&fitted.why)
            ));
            d.text.push_str(&lines);
            d.lines.extend(lines.lines().map(str::to_string));
            let written = match &fitted.fit {
                Fit::Constant(v) => value_text(v),
                _ => format!(":{var}"),
            };
            d.parameters.push(Parameter {
                variable: var.clone(),
                statement: si,
                position: slot,
                column,
                observations: fitted.observations,
                distinct: fitted.distinct,
                ..p
            });
            d.slot_var.insert((si, slot), written);
        }
    }
    d
}

/// Marks statement `i` in a body template.
const MARK: char = '\u{1}';

/// BEGIN, the statements (gaps slept, conditional ones under `\if` — two never seen in one
/// transaction whose shares add up to about one are alternatives, `\if … \else` —,
/// repeated ones repeated, claims ending in `\gset`), COMMIT, as a template with each
/// statement marked; the statements alone, those ending in `\gset`, and where each
/// statement that always runs once is.
fn body(shape: &ShapeModel, cx: &Context<'_>, d: &Draws) -> Body {
    let mut index = BTreeMap::new();
    let mut out = String::new();
    let mut statements = Vec::new();
    let mut gsets = std::collections::BTreeSet::new();
    let mark = |out: &mut String, statements: &mut Vec<String>, sql: String| {
        out.push_str(&format!("{MARK}{}{MARK}", statements.len()));
        statements.push(sql);
    };
    if !shape.autocommit {
        mark(&mut out, &mut statements, cx.begin_sql.to_string());
        out.push_str(&edge_lines(shape.edge_gap_s));
    }
    let alternative = alternatives(shape);
    let mut done = std::collections::BTreeSet::new();
    for (si, st) in shape.statements.iter().enumerate() {
        if done.contains(&si) {
            continue;
        }
        if si > 0 {
            out.push_str(&gap_lines(shape.gaps_s.get(si).copied().flatten()));
        }
        let sql_of = |si: usize| {
            crate::sqltext::guard_braces(&escape_identifiers(&shape.statements[si].text.render(
                |slot| {
                    d.slot_var
                        .get(&(si, slot))
                        .cloned()
                        .unwrap_or_else(|| "NULL".into())
                },
            )))
        };
        let sql = sql_of(si);
        let times = repeat(st.per_tx);
        if let Some(&other) = alternative.get(&si) {
            done.insert(other);
            let p = (st.per_tx * 1000.0).round().max(1.0) as u64;
            let q = ((st.per_tx + shape.statements[other].per_tx) * 1000.0).round() as u64;
            out.push_str(&format!(
                "-- one of two statements never seen in one transaction: this one in {:.0}%, the next in {:.0}%\n\\set run{si} random(1, 1000)\n\\if :run{si} <= {p}\n",
                st.per_tx * 100.0,
                shape.statements[other].per_tx * 100.0
            ));
            mark(&mut out, &mut statements, sql);
            out.push_str(&format!("\\elif :run{si} <= {q}\n"));
            mark(&mut out, &mut statements, sql_of(other));
            out.push_str("\\endif\n");
        } else if st.per_tx < 0.95 && !d.gsets.contains(&si) {
            let per_mille = (st.per_tx * 1000.0).round().max(1.0) as u64;
            out.push_str(&format!(
                "-- runs in {:.0}% of these transactions ({:.0} calls against {:.0} transactions)\n\\set run{si} random(1, 1000)\n\\if :run{si} <= {per_mille}\n",
                st.per_tx * 100.0,
                st.calls,
                shape.count
            ));
            mark(&mut out, &mut statements, sql);
            out.push_str("\\endif\n");
        } else {
            if times > 1 {
                out.push_str(&format!(
                    "-- runs {times} times per transaction ({:.0} calls against {:.0} transactions)\n",
                    st.calls, shape.count
                ));
            }
            let at = statements.len();
            if d.gsets.contains(&si) {
                gsets.insert(at);
            }
            if times == 1 {
                index.insert(si, at);
            }
            mark(&mut out, &mut statements, sql);
            for _ in 1..times {
                out.push_str(&format!("{MARK}{at}{MARK}"));
            }
        }
    }
    if !shape.autocommit {
        out.push_str(&edge_lines(shape.commit_gap_s.or(shape.edge_gap_s)));
        mark(&mut out, &mut statements, cx.commit_sql.to_string());
    }
    (out, statements, gsets, index)
}

type Body = (
    String,
    Vec<String>,
    std::collections::BTreeSet<usize>,
    BTreeMap<usize, usize>,
);

/// Pairs of conditional statements never seen in one transaction whose shares add up to
/// about one (Django's `F("views") + 1` or `- 1`): the first → the second.
pub(crate) fn alternatives(shape: &ShapeModel) -> BTreeMap<usize, usize> {
    let mut out = BTreeMap::new();
    let cond: Vec<usize> = (0..shape.statements.len())
        .filter(|i| shape.statements[*i].per_tx < 0.95)
        .collect();
    let mut used = std::collections::BTreeSet::new();
    for &a in &cond {
        for &b in &cond {
            if a >= b || used.contains(&a) || used.contains(&b) {
                continue;
            }
            let sum = shape.statements[a].per_tx + shape.statements[b].per_tx;
            if (sum - 1.0).abs() <= 0.1 && !shape.seen_together(a, b) {
                out.insert(a, b);
                used.insert(a);
                used.insert(b);
            }
        }
    }
    out
}

impl Written {
    /// The body with its statements, each replaced by `replace[i]` (SQL, and whether it
    /// ends in `\gset`) when given: the fixes' logging statements in the captured script's
    /// own structure.
    pub fn render_body(&self, replace: Option<&[(String, bool)]>) -> String {
        let mut out = String::new();
        let mut parts = self.body_template.split(MARK);
        if let Some(first) = parts.next() {
            out.push_str(first);
        }
        let mut in_mark = true;
        for part in parts {
            if in_mark {
                let i: usize = part.parse().unwrap_or(usize::MAX);
                let (sql, gset) = match replace.and_then(|r| r.get(i)) {
                    Some((sql, gset)) => (sql.as_str(), *gset),
                    None => (
                        self.statements.get(i).map(String::as_str).unwrap_or(""),
                        self.gsets.contains(&i),
                    ),
                };
                out.push_str(sql.trim_end());
                out.push_str(if gset { "\n\\gset\n" } else { ";\n" });
            } else {
                out.push_str(part);
            }
            in_mark = !in_mark;
        }
        out
    }
}

/// A slot compared, after a claim (`… LIMIT n FOR UPDATE [SKIP LOCKED]`) on the same table,
/// with a column the claim returns: the claimed row's value, not a drawn one.
fn claimed_by(shape: &ShapeModel, si: usize, slot: usize) -> Option<(usize, String)> {
    use hotbench_diagnose::shape::{touches, Access};
    let st = shape.statements.get(si)?;
    let column = st.text.columns.get(slot)?.clone()?;
    // Only a condition (`WHERE id = ?`) names the claimed row; an assignment (`SET
    // timestamp = ?`) is a value of its own.
    let before = st.text.pieces.get(..=slot)?.concat().to_ascii_lowercase();
    if !before.contains(" where ") {
        return None;
    }
    let rel = touches(&st.key).first()?.relation.clone();
    (0..si).rev().find_map(|ci| {
        let claim = &shape.statements[ci];
        let t = touches(&claim.key);
        let is_claim = t
            .iter()
            .any(|t| t.relation == rel && matches!(t.access, Access::Lock { limit: true, .. }));
        let k = &claim.key;
        let list = k.strip_prefix("select ")?.split(" from ").next()?;
        let returned = if list.trim() == "*" {
            Some(column.clone())
        } else {
            list.split(',')
                .find_map(|c| crate::claim_returns::returned_as(c, &column))
        };
        returned.filter(|_| is_claim).map(|out| (ci, out))
    })
}

/// The fit with its literal values (constants, hot values) replaced by their stand-ins;
/// ranges are the distribution, not values, and stay.
fn redact_fit(f: &mut Fit, column: Option<&str>, r: &Redact<'_>) {
    match f {
        Fit::Constant(v) => *v = r(column, v),
        Fit::Int { hot, .. } => {
            for (v, _) in hot.iter_mut() {
                if let Some(i) = r(column, &Value::Number(v.to_string())).as_int() {
                    *v = i;
                }
            }
        }
        Fit::Unknown => {}
    }
}

fn header(shape: &ShapeModel, cx: &Context<'_>) -> String {
    let kind = if shape.autocommit {
        "one autocommit statement".to_string()
    } else {
        format!(
            "a transaction of {} statement{}",
            shape.statements.len(),
            if shape.statements.len() == 1 { "" } else { "s" }
        )
    };
    format!(
        "-- {}: written by hotbench capture. Shape {} of {}: {kind}.\n\
         -- Weight {:.1}% of transactions: about {:.0} over the {:.0} s captured ({:.1}/s), counted from {}; {} seen {}.\n",
        cx.file,
        cx.number,
        cx.of,
        cx.weight * 100.0,
        shape.count,
        cx.duration_s,
        shape.count / cx.duration_s.max(1e-9),
        cx.counts_from,
        shape.observed,
        cx.seen_in
    )
}

fn gap_lines(gap: Option<f64>) -> String {
    match gap.map(|g| g * 1000.0) {
        Some(ms) if ms >= MIN_SLEEP_MS => format!(
            "-- {ms:.1} ms between the statements (mean gap seen): slept\n\\sleep {} us\n",
            (ms * 1000.0).round() as u64
        ),
        Some(ms) => format!(
            "-- {ms:.2} ms between the statements (mean gap seen): under {MIN_SLEEP_MS} ms, the client's own time, not slept\n"
        ),
        None => String::new(),
    }
}

/// The round trip after BEGIN or before COMMIT: its share of the time idle in transactions.
fn edge_lines(gap: Option<f64>) -> String {
    match gap.map(|g| g * 1000.0) {
        Some(ms) if ms >= MIN_SLEEP_MS => format!(
            "-- {ms:.1} ms idle in the transaction here (its share of the sessions' idle-in-transaction time, Little's law): slept\n\\sleep {} us\n",
            (ms * 1000.0).round() as u64
        ),
        _ => String::new(),
    }
}

fn repeat(per_tx: f64) -> usize {
    if per_tx >= 1.5 {
        (per_tx.round() as usize).min(20)
    } else {
        1
    }
}

/// Where to read the values of a slot that later slots repeat: the repeating slot in the
/// statement with the shortest mean time (pg_stat_statements), when it saw values enough. A
/// statement that waits on a hot row is visible longer for hot keys than for cold ones;
/// the same key in a statement that no longer waits (the UPDATE after a `SELECT … FOR
/// UPDATE` of the row) is sampled with less bias.
fn least_biased(shape: &ShapeModel, si: usize, slot: usize) -> (usize, usize) {
    let mut best = (si, slot);
    let time = |s: usize| shape.statements[s].mean_ms.unwrap_or(f64::INFINITY);
    for (sj, st) in shape.statements.iter().enumerate().skip(si + 1) {
        for sk in 0..st.text.values.len() {
            let repeats = same_as(shape, sj, sk).is_some_and(|(e, _)| e == (si, slot));
            let enough = st.values.get(sk).is_some_and(|v| v.len() >= 20);
            if repeats && enough && time(sj) < time(best.0) {
                best = (sj, sk);
            }
        }
    }
    best
}

/// The earlier slot this one repeats, with the evidence: seen equal in the transactions
/// where both were seen, or — never seen together — compared with a column of the same
/// distinctive name (`aid` in both; not a bare `id`, which names a different row in every
/// table), and never seen to differ.
fn same_as(shape: &ShapeModel, si: usize, slot: usize) -> Option<((usize, usize), String)> {
    let seen_equal = shape
        .agreements
        .iter()
        .filter(|((_, b), a)| {
            *b == (si, slot)
                && a.seen >= SAME_MIN_SEEN
                && a.equal as f64 >= SAME_SHARE * a.seen as f64
        })
        .max_by_key(|(_, a)| a.equal)
        .map(|((a, _), ag)| {
            (
                *a,
                format!(
                    "equal in {} of {} transactions where both were seen",
                    ag.equal, ag.seen
                ),
            )
        });
    if seen_equal.is_some() {
        return seen_equal;
    }
    let column = shape.statements.get(si)?.text.columns.get(slot)?.clone()?;
    if column == "id" {
        return None;
    }
    for (sj, st) in shape.statements.iter().enumerate().take(si) {
        for (sk, c) in st.text.columns.iter().enumerate() {
            if c.as_deref() != Some(column.as_str()) {
                continue;
            }
            let ag = shape
                .agreements
                .get(&((sj, sk), (si, slot)))
                .copied()
                .unwrap_or_default();
            if ag.equal == ag.seen {
                return Some((
                    (sj, sk),
                    format!(
                        "the same column, {}, and never seen to differ ({} seen together)",
                        sanitize_comment(&column),
                        ag.seen
                    ),
                ));
            }
        }
    }
    None
}

/// The `\set` lines drawing `var`, and the parameter's record (model and numbers).
fn draw(var: &str, f: &Fit) -> (String, Parameter) {
    let mut p = Parameter {
        variable: var.to_string(),
        ..Default::default()
    };
    let lines = match f {
        Fit::Unknown => {
            p.model = "unknown".into();
            p.value = Some("1".into());
            format!("\\set {var} 1\n")
        }
        Fit::Constant(v) => {
            p.model = "constant".into();
            p.value = Some(value_text(v));
            // Written in the statement as a literal.
            String::new()
        }
        Fit::Int { lo, hi, hot, tail } => {
            p.lo = Some(*lo);
            p.hi = Some(*hi);
            let n = hi - lo + 1;
            let tail_expr = match tail {
                Tail::Uniform => format!("random({lo}, {hi})"),
                Tail::Zipfian(s) => {
                    p.s = Some(*s);
                    format!("{lo} + permute(random_zipfian(1, {n}, {s}) - 1, {n})")
                }
                Tail::Exponential(t) => {
                    p.theta = Some(*t);
                    format!("{lo} + permute(random_exponential(1, {n}, {t}) - 1, {n})")
                }
            };
            p.model = match (hot.is_empty(), tail) {
                (_, Tail::Zipfian(_)) => "zipfian",
                (_, Tail::Exponential(_)) => "exponential",
                _ => "uniform",
            }
            .into();
            p.hot = hot
                .iter()
                .enumerate()
                .map(|(i, (v, s))| HotValue {
                    value: v.to_string(),
                    rank: i as u32 + 1,
                    share: *s,
                })
                .collect();
            if hot.is_empty() && *tail == Tail::Uniform {
                format!("\\set {var} {tail_expr}\n")
            } else {
                let mut cases = format!("case when :{SKEW_PARAM} = 0 then random({lo}, {hi})");
                let mut cum = 0.0;
                for (v, s) in hot {
                    cum += s;
                    cases.push_str(&format!(
                        " when :{var}_u <= {} then {v}",
                        (cum * 1_000_000.0).round() as u64
                    ));
                }
                format!(
                    "\\set {var}_u random(1, 1000000)\n\\set {var} {cases} else {tail_expr} end\n"
                )
            }
        }
    };
    (lines, p)
}

/// A value as SQL (numbers as written, texts quoted).
fn value_text(v: &Value) -> String {
    match v {
        Value::Number(n) => n.clone(),
        Value::Text(t) => literal(t),
        Value::Null | Value::Unknown => "NULL".into(),
    }
}

fn sanitize_comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace("{{", "{ {")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_texts_reach_pgbench_and_the_server_as_they_were() {
        // A value with a quote, a backslash, a newline, `:name` and `{{…}}`.
        assert_eq!(
            literal("a'b\\c\n:x{{y}}"),
            "E'a\\'b\\\\c\\x0a\\x3ax\\x7b\\x7by}}'"
        );
        // An identifier pgbench would read a variable in, or the scenario a parameter.
        assert_eq!(
            escape_identifiers("select \"a:b\" from \"t{{x}}\" where \"ok\" = 1"),
            "select U&\"a\\003Ab\" from U&\"t\\007B\\007Bx}}\" where \"ok\" = 1"
        );
        assert_eq!(sanitize_comment("col{{x}}\u{1b}"), "col{ {x}} ");
        // A `"` inside a string constant is the constant's, not an identifier's: a
        // composite array holding JSON (procrastinate's deferred jobs, read from a log) stays
        // as it was (it became `{U&"(jobs,…` and the server refused the array).
        let value = "E'{\"(jobs,w,\\\"{\\\\\"a\\\\\": 1}\\\")\"}'";
        assert_eq!(escape_identifiers(value), value);
        assert_eq!(
            escape_identifiers("select '\"a:b\"', \"c:d\" from \"x\"\"y:z\""),
            "select '\"a:b\"', U&\"c\\003Ad\" from U&\"x\"\"y\\003Az\""
        );
    }
}
