//! The ladder table printed at the end of a scenario run: one row per variant (throughput,
//! useful work, latency, failures, retries, top wait, checks, speedup over the baseline, and
//! in a perturbed ladder each variant's recovery: TTR90, TTR99, work lost), then failed
//! checks with their detail, each perturbation when a variant had several, and per-variant
//! notes. Every figure is the work
//! group's (a queue's consumers), other groups are in the notes. A pure function of the
//! [`Ladder`], so it can be re-rendered from a JSON file.

use hotbench_results::perturbation_record::outcome;
use hotbench_results::{Ladder, PerturbationRecord, VariantResult};

const HEADERS: [&str; 10] = [
    "variant",
    "tps",
    "goodput/s",
    "p50 ms",
    "p99 ms",
    "failed",
    "retries",
    "top wait",
    "checks",
    "vs baseline",
];

fn row(l: &Ladder, v: &VariantResult) -> Vec<String> {
    let name = if v.baseline {
        format!("{} (baseline)", v.name)
    } else {
        v.name.clone()
    };
    let Some(r) = v.work_record() else {
        let why = v.skipped.clone().unwrap_or_else(|| "did not run".into());
        let shown = if why.starts_with("not run") {
            why
        } else {
            format!("skipped: {why}")
        };
        return vec![name, shown];
    };
    let t = &r.totals;
    // Nothing committed: no latency, no speed-up, and passing checks prove nothing (the
    // reason is printed under the table).
    let none = t.counters.no_commit_reason().is_some();
    let dash = || "–".to_string();
    let checks = if v.checks.is_empty() {
        "-".to_string()
    } else {
        let ok = v.checks.iter().filter(|c| c.ok).count();
        if ok == v.checks.len() && none {
            dash()
        } else {
            let mark = if ok == v.checks.len() { '✔' } else { '✘' };
            format!("{mark} {ok}/{}", v.checks.len())
        }
    };
    let ms = |x: f64| if none { dash() } else { format!("{x:.2}") };
    vec![
        name,
        format!("{:.0}", t.tps),
        // No rate when the [work] query measured nothing (a failed check).
        v.useful_per_s().map_or_else(dash, |u| format!("{u:.0}")),
        ms(t.latency.p50_ms),
        ms(t.latency.p99_ms),
        (t.counters.failures()).to_string(),
        t.counters.retries.to_string(),
        r.top_wait().unwrap_or_else(|| "-".into()),
        checks,
        match l.speedup(v) {
            Some(s) if !none => format!("{s:.2}×"),
            _ => dash(),
        },
    ]
}

/// The work group every multi-group variant shares, if any (single-group runs need no
/// legend).
fn shared_work_group(l: &Ladder) -> Option<&str> {
    let multi: Vec<&VariantResult> = l
        .variants
        .iter()
        .filter(|v| v.record.as_ref().is_some_and(|r| r.groups.len() > 1))
        .collect();
    let first = multi.first()?.work_group.as_deref()?;
    multi
        .iter()
        .all(|v| v.work_group.as_deref() == Some(first))
        .then_some(first)
}

/// The variant's perturbations (`--perturb`, `[[perturbation]]`), none when it did not run.
fn perturbations(v: &VariantResult) -> &[PerturbationRecord] {
    v.record
        .as_ref()
        .map_or(&[], |r| r.perturbations.as_slice())
}

/// Each perturbation of each variant on a line of its own when the `recovery` column sums
/// several (a variant perturbed more than once) or one failed: `  escrow: 10s:ddl-lock=ledger,5s
/// at 10.012 s: TTR90 10.74 s, TTR99 not recovered, lost 71795`.
fn firings(l: &Ladder) -> String {
    let detail = l.variants.iter().any(|v| {
        let p = perturbations(v);
        p.len() > 1 || p.iter().any(|e| !e.ran())
    });
    let mut out = String::new();
    for v in l.variants.iter().filter(|_| detail) {
        for e in perturbations(v) {
            let what = match &e.error {
                Some(err) => err.clone(),
                None => outcome(std::slice::from_ref(e)).unwrap_or_default(),
            };
            out.push_str(&format!(
                "  {}: {} at {:.3} s: {what}\n",
                v.name, e.spec, e.at_s
            ));
        }
    }
    out
}

/// The table and what follows it.
pub fn render(l: &Ladder) -> String {
    let mut headers: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
    if let Some(u) = &l.work_unit {
        headers[2] = format!("{u}/s");
    }
    let perturbed = l.variants.iter().any(|v| !perturbations(v).is_empty());
    if perturbed {
        headers.push("recovery".into());
    }
    let rows: Vec<Vec<String>> = l
        .variants
        .iter()
        .map(|v| {
            let mut r = row(l, v);
            if perturbed && r.len() > 2 {
                r.push(outcome(perturbations(v)).unwrap_or_else(|| "–".into()));
            }
            r
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .filter(|r| r.len() > 2)
            .filter_map(|r| r.get(i))
            .chain(std::iter::once(&headers[i]))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            let pad = w.saturating_sub(c.chars().count());
            if i == 0 || i == 7 || i == HEADERS.len() || cells.len() == 2 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = format!("{} ({}, {})\n", l.title, l.scenario, l.engine);
    out.push_str(&line(&headers));
    let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    out.push_str(&"-".repeat(total));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r));
    }
    let steady: Vec<String> = l
        .variants
        .iter()
        .filter_map(|v| v.steady_ratio.map(|r| format!("{} {r:.2}", v.name)))
        .collect();
    if !steady.is_empty() {
        out.push_str(&format!(
            "steady ratio (work/s in the last minute ÷ in the second minute): {}\n",
            steady.join(", ")
        ));
    }
    if let Some(g) = shared_work_group(l) {
        out.push_str(&format!(
            "(tps, latency and ranking: group \"{g}\" only; other groups below)\n"
        ));
    }
    for (variant, c) in l.failed_checks() {
        // A check without detail says no more than that it failed.
        let detail = match c.detail.trim() {
            "" => String::new(),
            d => format!(": {d}"),
        };
        out.push_str(&format!(
            "✘ {variant}: check \"{}\" failed{detail}\n",
            c.name
        ));
    }
    for v in &l.variants {
        if let Some(why) = v
            .record
            .as_ref()
            .and_then(|r| r.totals.counters.no_commit_reason())
        {
            out.push_str(&format!("– {}: {why}\n", v.name));
        }
        for n in &v.notes {
            out.push_str(&format!("  {}: {n}\n", v.name));
        }
    }
    out.push_str(&firings(l));
    out.push_str(&crate::ceiling::lines(l));
    if l.interrupted {
        out.push_str("(interrupted: not every variant ran)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::CheckResult;
    use hotbench_results::{FailureKind, RunRecord, TotalsRecord, TxnCounters};

    fn variant(name: &str, baseline: bool, committed: u64, deadlocks: u64) -> VariantResult {
        let mut c = TxnCounters::default();
        for _ in 0..committed {
            c.record_success(2000, None, 1);
        }
        for _ in 0..deadlocks {
            c.record_failure(FailureKind::Deadlock);
        }
        c.unfinished = 3;
        let record = RunRecord {
            status: hotbench_results::RunStatus::Completed,
            duration_s: 2.0,
            totals: TotalsRecord::from_counters(c, 2.0),
            ..Default::default()
        };
        VariantResult {
            name: name.into(),
            about: String::new(),
            baseline,
            skipped: None,
            params: Default::default(),
            record: Some(record),
            checks: vec![CheckResult {
                name: "never negative".into(),
                ok: true,
                detail: String::new(),
            }],
            monitors: vec![],
            work: None,
            aborted_clients: 0,
            work_group: None,
            work_per_interval: vec![],
            ran_out_at_s: None,
            steady_ratio: None,
            notes: vec![],
            ..Default::default()
        }
    }

    /// A daily-limit ladder of these variants, without a ceiling.
    fn daily_limit(variants: Vec<VariantResult>) -> Ladder {
        Ladder {
            scenario: "daily-limit".into(),
            title: "t".into(),
            demonstrates: String::new(),
            engine: "postgresql".into(),
            server_version: String::new(),
            params: Default::default(),
            work_unit: None,
            variants,
            interrupted: false,
            ..Default::default()
        }
    }

    /// A perturbed ladder ranks each variant with its recovery (`scenario run … --perturb`);
    /// one perturbed more than once gets a line per firing; an unperturbed one has no column.
    #[test]
    fn a_perturbed_ladder_shows_each_variants_recovery() {
        let judged = |ttr90: Option<f64>, lost: f64| {
            let mut e =
                PerturbationRecord::new("1s:checkpoint".into(), "checkpoint", "".into(), 1.0);
            (e.baseline_per_s, e.ttr90_s, e.ttr99_s, e.lost) =
                (Some(100.0), ttr90, ttr90, Some(lost));
            e
        };
        let plain = render(&daily_limit(vec![variant("update", true, 10, 0)]));
        assert!(!plain.contains("recovery"), "{plain}");
        let mut fast = variant("update", true, 10, 0);
        let mut slow = variant("select-for-update", false, 10, 0);
        if let (Some(f), Some(s)) = (fast.record.as_mut(), slow.record.as_mut()) {
            f.perturbations = vec![judged(Some(0.24), 0.0)];
            s.perturbations = vec![judged(None, 6202.0)];
        }
        let skipped = VariantResult {
            record: None,
            skipped: Some("not run".into()),
            ..variant("escrow", false, 0, 0)
        };
        let out = render(&daily_limit(vec![fast.clone(), slow.clone(), skipped]));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[1].ends_with("  recovery"), "{out}");
        assert!(
            lines[3].ends_with("  TTR90 0.24 s, TTR99 0.24 s, lost 0"),
            "{out}"
        );
        assert!(
            lines[4].ends_with("  TTR90 not recovered, TTR99 not recovered, lost 6202"),
            "{out}"
        );
        assert!(!out.contains("  update: 1s:checkpoint"), "one each: {out}");
        if let Some(f) = fast.record.as_mut() {
            let mut late = judged(Some(2.0), 50.0);
            late.spec = "every5s:checkpoint".into();
            late.at_s = 5.0;
            f.perturbations.push(late);
        }
        let out = render(&daily_limit(vec![fast, slow]));
        assert!(
            out.contains("slowest of 2: TTR90 2.00 s, TTR99 2.00 s, lost 50 in all")
                && out.contains(
                    "  update: every5s:checkpoint at 5.000 s: TTR90 2.00 s, TTR99 2.00 s, lost 50\n"
                )
                && out.contains("  select-for-update: 1s:checkpoint at 1.000 s: TTR90 not"),
            "{out}"
        );
    }

    #[test]
    fn a_failed_check_without_detail_has_no_dangling_colon() {
        let mut v = variant("update", true, 10, 0);
        v.checks = vec![
            CheckResult {
                name: "sums match".into(),
                ok: false,
                detail: String::new(),
            },
            CheckResult {
                name: "never negative".into(),
                ok: false,
                detail: "3 rows".into(),
            },
        ];
        let text = render(&daily_limit(vec![v]));
        assert!(
            text.contains("✘ update: check \"sums match\" failed\n"),
            "{text}"
        );
        assert!(
            text.contains("✘ update: check \"never negative\" failed: 3 rows\n"),
            "{text}"
        );
    }

    #[test]
    fn a_variant_without_commits_shows_dashes_and_why() {
        let l = daily_limit(vec![
            variant("update", true, 100, 0),
            variant("for-share", false, 0, 12),
        ]);
        let text = render(&l);
        let row = text
            .lines()
            .find(|l| l.starts_with("for-share"))
            .expect("row");
        assert!(!row.contains('✔') && !row.contains("0.00"), "{row}");
        assert_eq!(row.matches('–').count(), 4, "{row}");
        assert!(
            text.contains(
                "– for-share: no transaction committed: 12 deadlock failures, \
                 3 unfinished (still running at the end)"
            ),
            "{text}"
        );
        let base = text.lines().find(|l| l.starts_with("update")).expect("row");
        assert!(base.contains("✔ 1/1") && base.contains("1.00×"), "{base}");
        assert!(!text.contains("ceiling"), "{text}");
    }

    #[test]
    fn the_ceiling_is_a_line_with_each_variants_share() {
        let mut l = daily_limit(vec![
            variant("update", true, 25, 0),
            variant("escrow", false, 80, 0),
        ]);
        l.ceiling = Some(VariantResult {
            about: "update's statements with customers=4000 (not ranked)".into(),
            ..variant("ceiling", false, 100, 0)
        });
        crate::ceiling::apply_pct(&mut l);
        assert_eq!(l.variants[1].pct_of_ceiling.map(f64::round), Some(80.0));
        let text = render(&l);
        assert!(
            text.contains(
                "ceiling: 50 goodput/s — update's statements with customers=4000 (not ranked)\n\
                 % of ceiling: update 25%, escrow 80%\n"
            ),
            "{text}"
        );
        // Not a ranked row of the table.
        assert!(!text.lines().any(|r| r.starts_with("ceiling ")), "{text}");
        let json = serde_json::to_value(&l).unwrap();
        assert!(json["variants"][1]["pct_of_ceiling"].as_f64().is_some());
        assert_eq!(json["ceiling"]["name"], "ceiling");
    }
}
