//! How faithful a twin is: its run measured the way the capture measured the original
//! (the probe's wait samples, `pg_locks` hot rows, calls per statement, commits per second)
//! and compared measure by measure. The fidelity line counts the measures met, each against
//! the acceptance's tolerance: the same top wait event with a share within 0.15, every
//! statement's share of calls within 0.05, the captured hottest row ranked first among the
//! twin's (or tied with the first: its share of lock waits within 0.03 of it), throughput
//! within 0.5–2×. Pure.

use hotbench_results::capture_record::{
    CaptureDoc, Fidelity, HotKey, MixShare, ShapeFidelity, WaitShare, MIX_TOLERANCE, TPS_RANGE,
    VERIFY_FORMAT, WAIT_TOLERANCE,
};

use crate::sql_text::key_of;

/// Shares of lock waits closer than this to the twin's first row tie with it.
pub const HOT_TIE: f64 = 0.03;

/// What the twin's run measured.
#[derive(Debug, Clone, Default)]
pub struct Twin {
    pub target: String,
    pub duration_s: f64,
    /// Shares (0–1), most first.
    pub waits: Vec<WaitShare>,
    /// (relation, key, share 0–1), most waited-on first.
    pub hot_rows: Vec<(String, String, f64)>,
    /// (statement text as the script has it, calls).
    pub calls: Vec<(String, u64)>,
    pub tps: f64,
    /// (script, tps, mean latency ms).
    pub scripts: Vec<(String, f64, Option<f64>)>,
    pub notes: Vec<String>,
}

/// The twin scored against the capture.
pub fn score(c: &CaptureDoc, t: &Twin) -> Fidelity {
    let mut f = Fidelity {
        format: VERIFY_FORMAT.into(),
        target: t.target.clone(),
        duration_s: t.duration_s,
        notes: t.notes.clone(),
        ..Default::default()
    };
    let mut checks: Vec<(String, Option<bool>)> = Vec::new();
    // Top wait.
    f.captured_top_wait = c.waits.first().cloned();
    f.twin_top_wait = t.waits.first().cloned();
    f.top_wait_ok = match (&f.captured_top_wait, &f.twin_top_wait) {
        (Some(a), Some(b)) => a.event == b.event && (a.share - b.share).abs() <= WAIT_TOLERANCE,
        _ => false,
    };
    checks.push((
        format!(
            "top wait {} vs {}",
            wait_text(f.captured_top_wait.as_ref()),
            wait_text(f.twin_top_wait.as_ref())
        ),
        Some(f.top_wait_ok),
    ));
    // Statement mix.
    f.mix = mix(c, t);
    f.mix_max_delta = f
        .mix
        .iter()
        .map(|m| (m.captured - m.twin).abs())
        .fold(0.0, f64::max);
    f.mix_ok = !f.mix.is_empty() && f.mix_max_delta <= MIX_TOLERANCE;
    checks.push((
        format!("statement mix max Δ {:.3}", f.mix_max_delta),
        Some(f.mix_ok),
    ));
    // Hottest key.
    f.hottest_key = c.hot_keys.first().cloned();
    if let Some(h) = &f.hottest_key {
        let rel = hotbench_diagnose::shape::relation_key(&h.relation);
        let found =
            t.hot_rows.iter().enumerate().find(|(_, (r, k, _))| {
                hotbench_diagnose::shape::relation_key(r) == rel && *k == h.key
            });
        f.twin_rank = found.map(|(i, _)| i as u32 + 1);
        f.twin_hottest_share = found.map(|(_, r)| r.2);
        // First, or tied with the first (near-equal rows rank at random: pgbench's ten
        // tellers).
        let top = t.hot_rows.first().map_or(0.0, |r| r.2);
        f.hottest_ok = Some(
            f.twin_rank == Some(1) || f.twin_hottest_share.is_some_and(|s| s >= top - HOT_TIE),
        );
        checks.push((
            format!(
                "hottest key {} ({}) rank {}",
                h.relation,
                h.key,
                f.twin_rank.map_or("–".into(), |r| r.to_string())
            ),
            f.hottest_ok,
        ));
    }
    // Throughput.
    f.captured_tps = c.tps;
    f.twin_tps = t.tps;
    f.tps_ratio = if c.tps > 0.0 { t.tps / c.tps } else { 0.0 };
    f.tps_ok = f.tps_ratio >= TPS_RANGE.0 && f.tps_ratio <= TPS_RANGE.1;
    checks.push((format!("tps {:.2}×", f.tps_ratio), Some(f.tps_ok)));
    f.shapes = c
        .shapes
        .iter()
        .map(|s| {
            let tw = t.scripts.iter().find(|x| x.0 == s.script);
            ShapeFidelity {
                script: s.script.clone(),
                captured_tps: s.tps,
                twin_tps: tw.map_or(0.0, |x| x.1),
                captured_latency_ms: s.latency_ms,
                twin_latency_ms: tw.and_then(|x| x.2),
            }
        })
        .collect();
    let applied: Vec<&(String, Option<bool>)> = checks.iter().filter(|c| c.1.is_some()).collect();
    f.of = applied.len() as u32;
    f.passed = applied.iter().filter(|c| c.1 == Some(true)).count() as u32;
    let parts: Vec<String> = checks
        .iter()
        .map(|(what, ok)| {
            format!(
                "{what} {}",
                match ok {
                    Some(true) => "✔",
                    Some(false) => "✘",
                    None => "–",
                }
            )
        })
        .collect();
    f.line = format!("fidelity {}/{}: {}", f.passed, f.of, parts.join("; "));
    f
}

fn wait_text(w: Option<&WaitShare>) -> String {
    w.map_or("none".into(), |w| {
        format!("{} {:.0}%", w.event, w.share * 100.0)
    })
}

/// Each statement's share of calls, captured and twin, by normalized text (statements
/// neither side ran much are kept: a statement the twin never ran counts fully).
fn mix(c: &CaptureDoc, t: &Twin) -> Vec<MixShare> {
    let mut out: Vec<MixShare> = c
        .statements
        .iter()
        .map(|s| MixShare {
            query: s.query.clone(),
            captured: s.calls_share,
            twin: 0.0,
        })
        .collect();
    let total: u64 = t.calls.iter().map(|x| x.1).sum();
    if total == 0 {
        return out;
    }
    for (text, n) in &t.calls {
        let k = unwrap_logging(&key_of(text));
        // the twin's `visible=false` is pg_stat_statements' `visible=?`
        let counted = crate::count_key::counted_key(&k);
        let k = if out.iter().any(|m| m.query == counted) {
            counted
        } else {
            k
        };
        let share = *n as f64 / total as f64;
        match out.iter_mut().find(|m| m.query == k) {
            Some(m) => m.twin += share,
            None => out.push(MixShare {
                query: k,
                captured: 0.0,
                twin: share,
            }),
        }
    }
    out.sort_by(|a, b| {
        b.captured
            .total_cmp(&a.captured)
            .then(b.twin.total_cmp(&a.twin))
    });
    out
}

/// A captured statement the fixes' checks made log what it did (`with hotbench_… as (
/// STATEMENT returning …) insert into hotbench_…`), or a chain carries the value of
/// (`with hotbench_chain as (STATEMENT) select …`), counts as the statement itself.
fn unwrap_logging(key: &str) -> String {
    // A claim logging its rows: `with hotbench_claim as (CLAIM), hotbench_claim_log as (…)`.
    if let Some(rest) = key.strip_prefix("with hotbench_claim as (") {
        if let Some(end) = rest.find("), hotbench_claim_log as (") {
            return rest[..end].trim().to_string();
        }
    }
    // A returned value carried (`crate::chain`): `with hotbench_chain as (STATEMENT) select …`.
    if let Some(rest) = key.strip_prefix("with hotbench_chain as (") {
        if let Some(end) = rest.rfind(") select ") {
            return rest[..end].trim().to_string();
        }
    }
    let Some(rest) = key.strip_prefix("with hotbench_") else {
        return key.to_string();
    };
    let Some(open) = rest.find(" as (") else {
        return key.to_string();
    };
    let inner = &rest[open + 5..];
    match inner.rfind(" returning ") {
        Some(end) => inner[..end].trim().to_string(),
        None => key.to_string(),
    }
}

/// The report: each measure captured vs twin, then the fidelity line.
pub fn render(f: &Fidelity) -> String {
    let mut s = String::new();
    s.push_str(&format!("{:<22} {:<34} {}\n", "", "captured", "twin"));
    s.push_str(&format!(
        "{:<22} {:<34} {}\n",
        "top wait",
        wait_text(f.captured_top_wait.as_ref()),
        wait_text(f.twin_top_wait.as_ref())
    ));
    for m in f.mix.iter().take(12) {
        s.push_str(&format!(
            "{:<22} {:<34} {:.1}%   {}\n",
            "calls",
            format!("{:.1}%", m.captured * 100.0),
            m.twin * 100.0,
            cut(&m.query, 80)
        ));
    }
    if let Some(h) = &f.hottest_key {
        s.push_str(&format!(
            "{:<22} {:<34} {}\n",
            "hottest row",
            format!("{} ({}) {:.0}%", h.relation, h.key, h.share * 100.0),
            match (f.twin_rank, f.twin_hottest_share) {
                (Some(r), Some(sh)) => format!("rank {r}, {:.0}%", sh * 100.0),
                _ => "not waited on".into(),
            }
        ));
    }
    s.push_str(&format!(
        "{:<22} {:<34} {:.1} ({:.2}×)\n",
        "tps",
        format!("{:.1}", f.captured_tps),
        f.twin_tps,
        f.tps_ratio
    ));
    for sh in &f.shapes {
        let lat = |l: Option<f64>| l.map_or(String::new(), |l| format!(", {l:.2} ms"));
        s.push_str(&format!(
            "{:<22} {:<34} {:.1}/s{}\n",
            cut(&sh.script, 22),
            format!("{:.1}/s{}", sh.captured_tps, lat(sh.captured_latency_ms)),
            sh.twin_tps,
            lat(sh.twin_latency_ms)
        ));
    }
    for n in &f.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&f.line);
    s.push('\n');
    s
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A hot row of the twin's probe as `(relation, key, share)`.
pub fn hot_row(relation: &str, key: &str, pct: f64) -> (String, String, f64) {
    (relation.to_string(), key.to_string(), pct / 100.0)
}

/// The captured hottest row (for callers that only need it).
pub fn hottest(c: &CaptureDoc) -> Option<&HotKey> {
    c.hot_keys.first()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::capture_record::StatementShare;

    #[test]
    fn the_line_counts_the_measures_met() {
        let mut c = CaptureDoc::new();
        c.tps = 100.0;
        c.waits = vec![WaitShare {
            event: "Lock:tuple".into(),
            share: 0.5,
        }];
        c.statements = vec![
            StatementShare {
                query: "select v from t where id = ? for update".into(),
                calls_share: 0.5,
                ..Default::default()
            },
            StatementShare {
                query: "update t set v = v - ? where id = ?".into(),
                calls_share: 0.5,
                ..Default::default()
            },
        ];
        c.hot_keys = vec![HotKey {
            relation: "public.t".into(),
            key: "id=1".into(),
            rank: 1,
            share: 0.6,
        }];
        let t = Twin {
            waits: vec![WaitShare {
                event: "Lock:tuple".into(),
                share: 0.6,
            }],
            hot_rows: vec![hot_row("hb_x.t", "id=1", 55.0)],
            calls: vec![
                ("SELECT v FROM t WHERE id = :id FOR UPDATE".into(), 100),
                ("UPDATE t SET v = v - :p1 WHERE id = :id".into(), 100),
            ],
            tps: 150.0,
            ..Default::default()
        };
        let f = score(&c, &t);
        assert!(f.top_wait_ok && f.mix_ok && f.tps_ok, "{f:?}");
        assert_eq!((f.twin_rank, f.passed, f.of), (Some(1), 4, 4));
        assert!(f.line.starts_with("fidelity 4/4"), "{}", f.line);
        let slow = score(&c, &Twin { tps: 40.0, ..t });
        assert!(!slow.tps_ok && slow.line.starts_with("fidelity 3/4"));
        assert_eq!(
            unwrap_logging(&key_of(
                "with hotbench_inc as (\nUPDATE t SET v = v + 1 WHERE id = :id\n returning 1\n)\ninsert into hotbench_increments (counter, delta) select E't.v', 1 from hotbench_inc"
            )),
            "update t set v = v + ? where id = ?"
        );
        // A returned value carried to the next transaction (`crate::chain`).
        let chained = crate::chain::carry_statement(
            "SELECT id, status FROM fetch_job(:p1::varchar[], 1)",
            &crate::chain::quote_ident("id"),
        );
        assert_eq!(
            unwrap_logging(&key_of(&chained)),
            key_of("SELECT id, status FROM fetch_job($1::varchar[], $2)")
        );
    }
}
