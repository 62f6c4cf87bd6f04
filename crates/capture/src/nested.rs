//! Statements no client sends, left out of the statement mix: `pg_stat_statements` (with
//! `track = all`) counts the statements a function or trigger runs beside the call that ran
//! them (procrastinate's `procrastinate_fetch_job_v2(…)` and the `pg_notify` of its insert
//! trigger), while a twin's counts are its clients' own. Such a statement is one no shape
//! holds whose text begins a statement of a captured function's body (the captured
//! schema's `$…$` bodies and the touched tables' trigger functions', normalized as the mix
//! is), or the server's referential actions
//! (`… where ? operator(pg_catalog.=) …`, as its foreign-key checks already are). The mix
//! is what the clients sent, its shares over those; a note counts what was left out. Pure.

use std::collections::BTreeSet;

use hotbench_results::capture_record::CaptureDoc;

use crate::sql_text::{key_of, StatementText};

/// Characters of a statement's key matched against the bodies: PL/pgSQL sends its
/// statements without their `INTO` clause, so only the beginning is compared.
const PREFIX: usize = 60;
/// A statement the log should have shown this many times, had a client sent it, and did
/// not: the server ran it.
const LOG_MIN_EXPECTED: f64 = 10.0;

/// Leaves out of `doc.statements` those run inside the functions and triggers of
/// `schema_sql` (or naming a trigger's `new.`/`old.` row), and, when the shapes came from a
/// server log of `log_span_s` seconds (which shows every statement a client sent), those
/// in no shape that ran often enough to be seen in it; shares the rest's calls and time
/// anew.
pub fn leave_out(doc: &mut CaptureDoc, schema_sql: &str, log_span_s: Option<f64>) {
    let shaped: BTreeSet<&str> = doc
        .shapes
        .iter()
        .flat_map(|s| s.statements.iter().map(String::as_str))
        .collect();
    let bodies = bodies(schema_sql);
    let duration = doc.duration_s.max(1e-3);
    let nested = |q: &str, calls: u64| {
        if shaped.contains(q) || StatementText::parse(q, &[]).control().is_some() {
            return false;
        }
        let p: String = q.chars().take(PREFIX).collect();
        let trigger_row = q
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .any(|w| w.starts_with("new.") || w.starts_with("old."));
        let unlogged =
            log_span_s.is_some_and(|span| calls as f64 / duration * span >= LOG_MIN_EXPECTED);
        p.len() >= 12 && bodies.iter().any(|b| b.contains(&p))
            || q.contains(" operator(pg_catalog.=) ")
            || trigger_row
            || unlogged
    };
    let before = doc.statements.len();
    let (out, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut doc.statements)
        .into_iter()
        .partition(|s| nested(&s.query, s.calls));
    doc.statements = kept;
    if out.is_empty() {
        return;
    }
    let calls: u64 = doc.statements.iter().map(|s| s.calls).sum();
    let time: f64 = doc.statements.iter().map(|s| s.total_ms).sum();
    for s in &mut doc.statements {
        s.calls_share = s.calls as f64 / (calls.max(1) as f64);
        s.time_share = if time > 0.0 { s.total_ms / time } else { 0.0 };
    }
    doc.notes.push(format!(
        "statement mix: {} of {before} statements ({} calls) left out: run inside a function or trigger, or a referential action{}, not sent by a client (pg_stat_statements' track = all counts them; the twin's clients do not)",
        out.len(),
        out.iter().map(|s| s.calls).sum::<u64>(),
        if log_span_s.is_some() {
            ", or in no shape of the server log that shows every statement the clients sent"
        } else {
            ""
        }
    ));
}

/// The normalized text of each dollar-quoted body in `sql`.
fn bodies(sql: &str) -> Vec<String> {
    use hotbench_sqltext::{Kind, Lexer};
    Lexer::new(sql)
        .filter(|t| t.kind == Kind::Dollar && t.closed)
        .filter_map(|t| {
            let text = t.text(sql);
            let tag_end = text[1..].find('$')? + 2;
            let inner = text.get(tag_end..text.len().checked_sub(tag_end)?)?;
            // PL/pgSQL runs `PERFORM f()` as `SELECT f()`.
            Some(key_of(inner).replace("perform ", "select "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::capture_record::{Shape, StatementShare};

    fn st(q: &str, calls: u64) -> StatementShare {
        StatementShare {
            query: key_of(q),
            calls,
            total_ms: calls as f64,
            ..Default::default()
        }
    }

    #[test]
    fn a_function_bodys_statements_leave_the_mix() {
        let mut doc = CaptureDoc::new();
        doc.shapes.push(Shape {
            statements: vec![key_of("SELECT \"q:s\".finish_job($1, $2)")],
            ..Default::default()
        });
        doc.statements = vec![
            st("SELECT \"q:s\".finish_job($1, $2)", 100),
            st("begin", 100),
            st(
                "DELETE FROM jobs WHERE id = job_id AND status IN ($1, $2) RETURNING id",
                100,
            ),
            st("SELECT pg_notify($1 || new.queue_name, payload)", 100),
            st(
                "DELETE FROM ONLY \"public\".\"ev\" WHERE $1 OPERATOR(pg_catalog.=) \"job_id\"",
                100,
            ),
            st("SELECT other FROM elsewhere", 100),
            st("INSERT INTO ev(job_id) VALUES (new.id)", 100),
        ];
        let schema = "CREATE FUNCTION \"q:s\".finish_job(job_id bigint, s text) RETURNS void LANGUAGE plpgsql AS $function$\nBEGIN\n  DELETE FROM jobs WHERE id = job_id AND status IN ('a', 'b') RETURNING id INTO x;\nEND;\n$function$;\n\
            CREATE FUNCTION t() RETURNS trigger AS $$ BEGIN PERFORM pg_notify('q' || NEW.queue_name, payload); RETURN NEW; END $$ LANGUAGE plpgsql;";
        doc.duration_s = 10.0;
        let mut logged = doc.clone();
        leave_out(&mut doc, schema, None);
        let left: Vec<&str> = doc.statements.iter().map(|s| s.query.as_str()).collect();
        assert_eq!(
            left,
            vec![
                "select \"q:s\".finish_job(?, ?)",
                "begin",
                "select other from elsewhere"
            ],
            "a statement sent by a client stays, even when a body holds one like it"
        );
        assert!((doc.statements[0].calls_share - 1.0 / 3.0).abs() < 1e-9);
        assert!(
            doc.notes[0].contains("4 of 7 statements (400 calls) left out"),
            "{:?}",
            doc.notes
        );
        // A log showing every statement the clients sent never showed the other one,
        // though at 10/s it would have been seen 10 times in its 1 s.
        leave_out(&mut logged, schema, Some(1.0));
        let left: Vec<&str> = logged.statements.iter().map(|s| s.query.as_str()).collect();
        assert_eq!(left, vec!["select \"q:s\".finish_job(?, ?)", "begin"]);
        let mut rare = logged.clone();
        rare.statements.push(st("SELECT rare FROM r", 5));
        leave_out(&mut rare, "", Some(1.0));
        assert_eq!(
            rare.statements.len(),
            3,
            "5 calls in 10 s: maybe not in a 1 s log"
        );
    }
}
