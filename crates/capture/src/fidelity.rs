//! How faithful a twin is: its run measured the way the capture measured the original
//! (the probe's wait samples, `pg_locks` hot rows or the keys drawn, calls per statement,
//! commits per second) and compared measure by measure. The fidelity line counts the measures
//! met, each against the acceptance's tolerance: the same top wait event with a share within
//! 0.15, every statement's share of calls within 0.05, the same hottest key, throughput within
//! 0.5–2×. Where the original's first wait event (or key) cannot be told from its next at the
//! samples taken ([`crate::ties`]), either of the tied is accepted as the twin's first (the
//! original first's share still within 0.15 for waits); the hottest key is judged by lock
//! waits or by the keys drawn, whichever the capture has enough of
//! ([`crate::fidelity_key`]); a measure with nothing to compare is shown `n/a` with why and
//! not counted. Pure.

use hotbench_results::capture_record::{
    CaptureDoc, Check, Fidelity, MixShare, ShapeFidelity, TieTest, WaitShare, MIX_TOLERANCE,
    TPS_RANGE, VERIFY_FORMAT, WAIT_TOLERANCE,
};

use crate::fidelity_key::{by_draws, by_rows, evidence, Evidence, KeyScore};
use crate::sql_text::key_of;
use crate::ties::{describe, ties_in_order, wait_tie};

/// What the twin's run measured.
#[derive(Debug, Clone, Default)]
pub struct Twin {
    pub target: String,
    pub duration_s: f64,
    /// Shares (0–1), most first.
    pub waits: Vec<WaitShare>,
    /// (relation, key, share 0–1), most waited-on first.
    pub hot_rows: Vec<(String, String, f64)>,
    /// The twin's own draws: (variable, value, transactions that ended with it).
    pub draws: Vec<(String, String, u64)>,
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
    let wait = top_wait(c, t, &mut f);
    f.checks.push(wait);
    // Statement mix.
    f.mix = mix(c, t);
    f.mix_max_delta = f
        .mix
        .iter()
        .map(|m| (m.captured - m.twin).abs())
        .fold(0.0, f64::max);
    f.mix_ok = !f.mix.is_empty() && f.mix_max_delta <= MIX_TOLERANCE;
    f.checks.push(if c.statements.is_empty() {
        na("statement mix n/a: the capture counted no statement")
    } else {
        check(
            format!("statement mix max Δ {:.3}", f.mix_max_delta),
            f.mix_ok,
        )
    });
    let key = hottest_key(c, t, &mut f);
    f.checks.push(key);
    // Throughput.
    f.captured_tps = c.tps;
    f.twin_tps = t.tps;
    f.tps_ratio = if c.tps > 0.0 { t.tps / c.tps } else { 0.0 };
    f.tps_ok = f.tps_ratio >= TPS_RANGE.0 && f.tps_ratio <= TPS_RANGE.1;
    f.checks.push(if c.tps > 0.0 {
        check(format!("tps {:.2}×", f.tps_ratio), f.tps_ok)
    } else {
        na("tps n/a: the capture counted no commit")
    });
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
    f.of = f.checks.iter().filter(|c| c.met.is_some()).count() as u32;
    f.passed = f.checks.iter().filter(|c| c.met == Some(true)).count() as u32;
    let parts: Vec<String> = f
        .checks
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c.what,
                match c.met {
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

fn check(what: String, met: bool) -> Check {
    Check {
        what,
        met: Some(met),
    }
}

fn na(what: &str) -> Check {
    Check {
        what: what.into(),
        met: None,
    }
}

/// The top wait: the twin's first is the original's first or one tied with it, and the
/// twin's share of the original's first is within the tolerance.
fn top_wait(c: &CaptureDoc, t: &Twin, f: &mut Fidelity) -> Check {
    f.captured_top_wait = c.waits.first().cloned();
    f.twin_top_wait = t.waits.first().cloned();
    let Some(first) = c.waits.first() else {
        return na("top wait n/a: the capture sampled no busy session");
    };
    f.top_wait_ties = ties_in_order(&c.waits[1..], |w| {
        wait_tie(&c.sampling, &first.event, &w.event)
    });
    let tied: Vec<&TieTest> = f.top_wait_ties.iter().filter(|x| x.tied).collect();
    let twin_share = t
        .waits
        .iter()
        .find(|w| w.event == first.event)
        .map_or(0.0, |w| w.share);
    f.twin_share_of_captured_top = Some(twin_share);
    f.top_wait_ok = match &f.twin_top_wait {
        Some(b) => {
            (b.event == first.event || tied.iter().any(|x| x.other == b.event))
                && (first.share - twin_share).abs() <= WAIT_TOLERANCE
        }
        None => false,
    };
    let mut what = format!(
        "top wait {} vs {}",
        wait_text(f.captured_top_wait.as_ref()),
        wait_text(f.twin_top_wait.as_ref())
    );
    if !tied.is_empty() {
        let names: Vec<String> = tied
            .iter()
            .map(|x| format!("{} {:.0}%", x.other, x.other_share * 100.0))
            .collect();
        what.push_str(&format!(
            " (tied in the capture with {}; {} {:.0}% in the twin)",
            names.join(", "),
            first.event,
            twin_share * 100.0
        ));
    }
    check(what, f.top_wait_ok)
}

/// The hottest key by the evidence the capture supports.
fn hottest_key(c: &CaptureDoc, t: &Twin, f: &mut Fidelity) -> Check {
    let (how, scored) = match evidence(c) {
        Evidence::LockWaits => ("lock waits", by_rows(c, &t.hot_rows)),
        Evidence::Draws(d) => ("draws", by_draws(&d, &t.draws)),
        Evidence::None(why) => return na(&format!("hottest key n/a: {why}")),
    };
    let Some(KeyScore {
        first,
        ties,
        twin_first,
        twin_rank,
        twin_share,
        met,
    }) = scored
    else {
        return na("hottest key n/a: nothing to compare");
    };
    f.hottest_evidence = how.into();
    let tied = ties.iter().filter(|x| x.tied).count();
    let what = format!(
        "hottest key by {how} {}({}{}) rank {}{}",
        if first.relation.is_empty() {
            String::new()
        } else {
            format!("{} ", first.relation)
        },
        first.key,
        match tied {
            0 => String::new(),
            n => format!("; tied with {n} other{}", if n == 1 { "" } else { "s" }),
        },
        twin_rank.map_or("–".into(), |r| r.to_string()),
        match (&twin_first, twin_rank) {
            (Some(k), r) if r != Some(1) => format!(" (the twin's first {k})"),
            (None, _) => " (the twin has none)".into(),
            _ => String::new(),
        }
    );
    f.hottest_ok = Some(met);
    f.twin_rank = twin_rank;
    f.twin_hottest_share = twin_share;
    f.twin_first_key = twin_first;
    f.hottest_ties = ties;
    f.hottest_key = Some(first);
    check(what, met)
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
            // Keyed again as the twin's texts are (a capture written before keys spelled
            // every quoted name one way matches too).
            query: key_of(&s.query),
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
    for x in &f.top_wait_ties {
        s.push_str(&format!("{:<22} {}\n", "  tie test", describe(x)));
    }
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
        let by = match f.hottest_evidence.as_str() {
            "draws" => "hottest key (draws)",
            _ => "hottest row",
        };
        let samples = match (f.hottest_evidence.as_str(), h.samples) {
            (_, 0) => String::new(),
            ("draws", n) => format!(" of {n} values"),
            (_, n) => format!(", {n} samples"),
        };
        s.push_str(&format!(
            "{:<22} {:<34} {}\n",
            by,
            format!(
                "{}({}) {:.1}%{samples}",
                if h.relation.is_empty() {
                    String::new()
                } else {
                    format!("{} ", h.relation)
                },
                h.key,
                h.share * 100.0
            ),
            match (f.twin_rank, f.twin_hottest_share) {
                (Some(r), Some(sh)) => format!(
                    "rank {r}, {:.1}%{}",
                    sh * 100.0,
                    f.twin_first_key
                        .as_ref()
                        .filter(|_| r != 1)
                        .map_or(String::new(), |k| format!(" (first: {k})"))
                ),
                (Some(r), None) => format!("rank {r}"),
                _ if f.hottest_evidence == "draws" => "not drawn".into(),
                _ => "not waited on".into(),
            }
        ));
        for x in &f.hottest_ties {
            s.push_str(&format!("{:<22} {}\n", "  tie test", describe(x)));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::capture_record::{HotKey, StatementShare};

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
            samples: 0,
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

    /// A name holding `:` (here the schema's) is `U&"q \003A x"` in the twin's script, as
    /// the script writer writes it; the captured text says `"q : x"`: the same statement,
    /// not one missing from the twin's mix and one the capture never saw.
    #[test]
    fn a_name_with_a_colon_is_matched_however_the_script_spells_it() {
        let mut c = CaptureDoc::new();
        c.statements = vec![StatementShare {
            query: key_of(r#"update "q : x".t set n = n + $1 where id = $2"#),
            calls_share: 1.0,
            ..Default::default()
        }];
        let script = crate::script_quote::escape_identifiers(
            r#"UPDATE "q : x".t SET n = n + :d WHERE id = :id"#,
        );
        let t = Twin {
            calls: vec![(script, 100)],
            tps: 1.0,
            ..Default::default()
        };
        let f = score(&c, &t);
        assert_eq!(f.mix.len(), 1, "{:?}", f.mix);
        assert!(f.mix_ok && f.mix_max_delta == 0.0, "{:?}", f.mix);
    }

    /// A capture read from its JSON (as `--verify` reads `capture.json`).
    fn doc(json: serde_json::Value) -> CaptureDoc {
        serde_json::from_value(json).expect("a capture document")
    }

    fn twin_waits(w: &[(&str, f64)]) -> Twin {
        Twin {
            waits: w
                .iter()
                .map(|(e, s)| WaitShare {
                    event: e.to_string(),
                    share: *s,
                })
                .collect(),
            tps: 100.0,
            ..Default::default()
        }
    }

    /// The Zipf row: Lock:tuple 38% vs Client:ClientRead 36% in the original, per-interval
    /// counts swinging between the two; `steady` keeps every interval at the mean.
    fn zipf_capture(steady: bool) -> CaptureDoc {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..60 {
            let (x, y) = match (steady, i % 2) {
                (true, _) => (38, 36),
                (false, 0) => (50, 26),
                (false, _) => (26, 46),
            };
            a.push(x);
            b.push(y);
        }
        doc(serde_json::json!({
            "format": "hotbench-capture/1",
            "tps": 100.0,
            "waits": [{"event": "Lock:tuple", "share": 0.38},
                      {"event": "Client:ClientRead", "share": 0.36},
                      {"event": "CPU", "share": 0.26}],
            "sampling": {
                "wait_rounds": 600, "busy_samples": 6000, "interval_s": 1.0,
                "busy_by_interval": vec![100; 60],
                "waits_by_interval": [{"event": "Lock:tuple", "counts": a},
                                      {"event": "Client:ClientRead", "counts": b}]
            }
        }))
    }

    #[test]
    fn a_tied_top_wait_accepts_the_second_as_the_twins_first() {
        let twin = twin_waits(&[("Client:ClientRead", 0.37), ("Lock:tuple", 0.33)]);
        let f = score(&zipf_capture(false), &twin);
        assert!(f.top_wait_ok, "{}", f.line);
        assert!(
            f.line.contains(
                "(tied in the capture with Client:ClientRead 36%; Lock:tuple 33% in the twin) ✔"
            ),
            "{}",
            f.line
        );
        assert!(
            f.top_wait_ties[0].tied && f.top_wait_ties[0].over.contains("6000 backend samples")
        );
        assert!(render(&f).contains("  tie test"), "{}", render(&f));
        // Told apart (steady intervals): the twin's first must be the original's.
        assert!(!score(&zipf_capture(true), &twin).top_wait_ok);
        // Tied, but the original's first is not within 0.15 in the twin.
        let far = twin_waits(&[("Client:ClientRead", 0.60), ("Lock:tuple", 0.20)]);
        assert!(!score(&zipf_capture(false), &far).top_wait_ok);
    }

    #[test]
    fn a_measure_with_nothing_to_compare_is_shown_na_and_not_counted() {
        let c = doc(serde_json::json!({
            "format": "hotbench-capture/1",
            "tps": 100.0,
            "waits": [{"event": "CPU", "share": 0.6}],
            "statements": [{"query": "select now()", "calls_share": 1.0}]
        }));
        let mut t = twin_waits(&[("CPU", 0.55)]);
        t.calls = vec![("select now()".into(), 10)];
        let f = score(&c, &t);
        assert!(
            f.line.starts_with("fidelity 3/3: ")
                && f.line
                    .contains("hottest key n/a: no row was waited on and no key was drawn hot –"),
            "{}",
            f.line
        );
        let none = score(&CaptureDoc::new(), &Twin::default());
        assert!(
            none.line.starts_with("fidelity 0/0: top wait n/a")
                && none.line.contains("statement mix n/a")
                && none.line.contains("tps n/a"),
            "{}",
            none.line
        );
    }

    /// YCSB: 3 lock-waiting samples on its hottest row; its keys are judged by the draws.
    #[test]
    fn rare_row_waits_are_judged_by_the_twins_own_draws() {
        let c = doc(serde_json::json!({
            "format": "hotbench-capture/1",
            "tps": 100.0,
            "hot_keys": [{"relation": "public.usertable", "key": "ycsb_key=10", "rank": 1,
                          "share": 0.043, "samples": 3}],
            "sampling": {"lock_reads": 9, "lock_reads_effective": 8.0, "lock_samples": 70},
            "shapes": [{"script": "shape_01.sql", "tps": 100.0, "parameters": [
                {"variable": "ycsb_key", "column": "ycsb_key", "model": "zipfian",
                 "observations": 2000,
                 "hot": [{"value": "1", "rank": 1, "share": 0.19},
                         {"value": "2", "rank": 2, "share": 0.09}]}]}]
        }));
        let mut t = twin_waits(&[]);
        t.draws = vec![
            ("ycsb_key".into(), "1".into(), 1900),
            ("ycsb_key".into(), "2".into(), 900),
        ];
        let f = score(&c, &t);
        assert_eq!(f.hottest_evidence, "draws");
        assert!(
            f.line
                .contains("hottest key by draws public.usertable (ycsb_key=1) rank 1 ✔"),
            "{}",
            f.line
        );
        assert!(render(&f).contains("hottest key (draws)"), "{}", render(&f));
    }
}
