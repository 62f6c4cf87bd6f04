//! Scenario ladders in the HTML report, read from the ladder document
//! (`hotbench_results::LadderFile`, written by `hotbench scenario run --json`). A ladder
//! becomes bars (useful work per second, speedup over the baseline, checks ✔/✘), a table
//! (with each variant's recovery when the ladder was perturbed),
//! the checks' details, throughput overlays and each variant's own run section.

use hotbench_results::perturbation_record::outcome;
use hotbench_results::{Ladder, RunRecord, VariantResult};

use crate::analysis::chart::{Chart, Series};
use crate::analysis::number::num;
use crate::analysis::section::{Bar, Bars};
use crate::analysis::sections::timeline::{align_into, hdr_chart, throughput_overlay};
use crate::html::bars;
use crate::html::doc::{facts, table, Doc};
use crate::html::escape::html;
use crate::html::run::run_section;

/// Passing checks of a variant that committed nothing prove nothing: shown as `–`.
fn checks_say_nothing(v: &VariantResult) -> bool {
    v.no_commit_reason().is_some() && v.checks_ok()
}

fn checks_text(v: &VariantResult) -> String {
    if v.checks.is_empty() {
        return String::new();
    }
    if checks_say_nothing(v) {
        return "checks –".into();
    }
    let bad = v.checks.iter().filter(|c| !c.ok).count();
    if bad == 0 {
        format!("checks ✔ {}", v.checks.len())
    } else {
        format!("checks ✘ {bad}/{}", v.checks.len())
    }
}

/// The run as its work group saw it (totals and timeline of that group): what the table,
/// the variant's cards and the overlays show; other groups are in its notes.
fn work_record(v: &VariantResult) -> Option<RunRecord> {
    v.work_record().map(|r| r.into_owned())
}

fn top_wait(r: &RunRecord) -> String {
    r.top_wait().unwrap_or_default()
}

/// One ladder's section: the header, the bars, the table, what went wrong, the overlays,
/// then each variant's own section.
pub fn ladder_section(doc: &mut Doc, l: &Ladder) {
    doc.raw("<section class=\"ladder\">\n");
    header(doc, l);
    let unit = match &l.work_unit {
        Some(u) => format!("{u}/s"),
        None => "goodput/s".into(),
    };
    work_bars(doc, l, &unit);
    let focused: Vec<Option<RunRecord>> = l.variants.iter().map(work_record).collect();
    ladder_table(doc, l, &focused, &unit);
    shortcomings(doc, l);
    let runs: Vec<(&str, &RunRecord)> = l
        .variants
        .iter()
        .zip(&focused)
        .filter_map(|(v, r)| r.as_ref().map(|r| (v.name.as_str(), r)))
        .collect();
    if runs.len() > 1 {
        doc.chart(throughput_overlay(&runs, false));
        doc.chart(throughput_overlay(&runs, true));
        doc.chart(hdr_chart(&runs));
    }
    for (v, r) in l.variants.iter().zip(&focused) {
        if let Some(r) = r {
            variant_section(doc, l, v, r);
        }
    }
    doc.raw("</section>\n");
}

/// The title, what the scenario demonstrates, and the facts every variant shares.
fn header(doc: &mut Doc, l: &Ladder) {
    let title = if l.title.is_empty() {
        l.scenario.clone()
    } else {
        format!("{} — {}", l.scenario, l.title)
    };
    doc.heading(2, &title);
    if !l.demonstrates.is_empty() {
        doc.raw(&format!("<p>{}</p>\n", html(l.demonstrates.trim())));
    }
    let mut pairs = vec![("server", format!("{} {}", l.engine, l.server_version))];
    if let Some(r) = l.variants.iter().find_map(|v| v.record.as_ref()) {
        pairs.push(("target", r.server.target.clone()));
        pairs.push((
            "clients",
            format!("{} clients, {} threads", r.bench.clients, r.bench.threads),
        ));
        pairs.push(("duration", format!("{:.1} s per variant", r.duration_s)));
        pairs.push((
            "added rtt",
            if r.bench.rtt_us > 0 {
                format!("{} ms", r.bench.rtt_us as f64 / 1000.0)
            } else {
                "none".into()
            },
        ));
        pairs.push(("random seed", r.bench.random_seed.to_string()));
        pairs.push(("command line", r.command_line.join(" ")));
    }
    let params: Vec<String> = l.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !params.is_empty() {
        pairs.push(("parameters", params.join(" ")));
    }
    doc.raw(&facts(&pairs));
    if l.interrupted {
        doc.raw("<p class=\"note\">interrupted: not every variant ran</p>\n");
    }
}

/// Useful work per variant as bars (speedup, ceiling share and checks as badges), with the
/// ceiling as a line.
fn work_bars(doc: &mut Doc, l: &Ladder, unit: &str) {
    let bar_list: Vec<Bar> = l
        .variants
        .iter()
        .filter(|v| v.record.is_some())
        .map(|v| {
            let mut badge = match l.speedup(v) {
                Some(s) => format!("×{s:.2}"),
                None => String::new(),
            };
            if v.baseline {
                badge.push_str(" baseline");
            }
            if let Some(p) = v.pct_of_ceiling {
                badge.push_str(&format!("  {p:.0}% of ceiling"));
            }
            let ct = checks_text(v);
            if !ct.is_empty() {
                badge.push_str("  ");
                badge.push_str(&ct);
            }
            Bar {
                label: v.name.clone(),
                value: v.useful_per_s().unwrap_or(0.0),
                badge,
                highlight: v.baseline,
                bad: v.checks.iter().any(|c| !c.ok),
            }
        })
        .collect();
    let ceiling = l.ceiling.as_ref().and_then(|c| c.useful_per_s());
    doc.raw(&bars::svg(&Bars {
        title: "Useful work per variant".into(),
        unit: unit.into(),
        bars: bar_list,
        line: ceiling.map(|v| ("ceiling".to_string(), v)),
    }));
    if let (Some(c), Some(v)) = (&l.ceiling, ceiling) {
        doc.raw(&format!(
            "<p class=\"note\">ceiling (not ranked): {} {} — {}</p>\n",
            html(&num(v)),
            html(unit),
            html(&c.about)
        ));
        if let Some(b) = &c.client_bound {
            doc.raw(&format!(
                "<p class=\"note\">ceiling {}</p>\n",
                html(&b.message())
            ));
        }
    }
}

/// One row per variant (skipped ones say why).
fn ladder_table(doc: &mut Doc, l: &Ladder, focused: &[Option<RunRecord>], unit: &str) {
    let rows: Vec<Vec<String>> = l
        .variants
        .iter()
        .zip(focused)
        .map(|(v, r)| match r {
            Some(r) => {
                let t = &r.totals;
                vec![
                    html(&v.name)
                        + if v.baseline {
                            " <span class=\"muted\">(baseline)</span>"
                        } else {
                            ""
                        },
                    num(t.tps),
                    // No rate when the [work] query measured nothing (a failed check).
                    v.useful_per_s().map_or_else(|| "–".to_string(), num),
                    ms_cell(v, t.latency.p50_ms),
                    ms_cell(v, t.latency.p99_ms),
                    t.counters.failures().to_string(),
                    t.counters.retries.to_string(),
                    html(&top_wait(r)),
                    checks_cell(v),
                    l.speedup(v)
                        .map(|s| format!("×{s:.2}"))
                        .unwrap_or_else(|| "–".into()),
                ]
            }
            None => vec![
                html(&v.name),
                format!(
                    "<span class=\"muted\">skipped: {}</span>",
                    html(v.skipped.as_deref().unwrap_or("did not run"))
                ),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                checks_cell(v),
                String::new(),
            ],
        })
        .collect();
    let mut headers = vec![
        "variant", "tps", unit, "p50 ms", "p99 ms", "failed", "retries", "top wait", "checks",
        "speedup",
    ];
    // A perturbed ladder: each variant's recovery (TTR90, TTR99, work lost), as the text's.
    let rows = if l
        .variants
        .iter()
        .any(|v| perturbed(v).is_some_and(|p| !p.is_empty()))
    {
        headers.push("recovery");
        rows.into_iter()
            .zip(&l.variants)
            .map(|(mut row, v)| {
                let cell = perturbed(v).and_then(outcome).unwrap_or_default();
                row.push(html(&cell));
                row
            })
            .collect()
    } else {
        rows
    };
    doc.raw(&table("ladder", &headers, &rows));
}

/// The variant's perturbations, when it ran.
fn perturbed(v: &VariantResult) -> Option<&[hotbench_results::PerturbationRecord]> {
    v.record.as_ref().map(|r| r.perturbations.as_slice())
}

/// Steady ratios, groups behind their rate and failed checks.
fn shortcomings(doc: &mut Doc, l: &Ladder) {
    let steady: Vec<String> = l
        .variants
        .iter()
        .filter_map(|v| v.steady_ratio.map(|r| format!("{} {r:.2}", html(&v.name))))
        .collect();
    if !steady.is_empty() {
        doc.raw(&format!(
            "<p>steady ratio (work/s in the last minute ÷ in the second minute; 1 is flat): {}</p>\n",
            steady.join(", ")
        ));
    }
    let behind: Vec<String> = l
        .variants
        .iter()
        .filter_map(|v| v.record.as_ref().map(|r| (v, r)))
        .flat_map(|(v, r)| {
            r.shortfalls().into_iter().map(move |s| {
                format!(
                    "<li class=\"bad\">{}: {} (more than {:.0}% behind; its latency \
                     is mostly schedule lag and is left out of the figures above)</li>",
                    html(&v.name),
                    html(&s.describe()),
                    hotbench_results::BEHIND_TOLERANCE * 100.0
                )
            })
        })
        .collect();
    if !behind.is_empty() {
        doc.raw(&format!(
            "<h3>Groups behind their rate</h3>\n<ul>\n{}\n</ul>\n",
            behind.join("\n")
        ));
    }
    let failed: Vec<String> = l
        .variants
        .iter()
        .flat_map(|v| {
            v.checks.iter().filter(|c| !c.ok).map(move |c| {
                format!(
                    "<li class=\"bad\">{}: {} — {}</li>",
                    html(&v.name),
                    html(&c.name),
                    html(&c.detail)
                )
            })
        })
        .collect();
    if !failed.is_empty() {
        doc.raw(&format!(
            "<h3>Failed checks</h3>\n<ul>\n{}\n</ul>\n",
            failed.join("\n")
        ));
    }
}

/// A variant's own section: its run, its checks, its monitors and its notes.
fn variant_section(doc: &mut Doc, l: &Ladder, v: &VariantResult, r: &RunRecord) {
    let mut title = format!("{} / {}", l.scenario, v.name);
    if !v.about.is_empty() {
        title.push_str(&format!(" — {}", v.about));
    }
    if let Some(g) = v.work_group.as_deref().filter(|_| r.groups.len() > 1) {
        title.push_str(&format!(" (figures: group {g}; other groups in the notes)"));
    }
    run_section(doc, &title, r);
    if !v.checks.is_empty() {
        let rows: Vec<Vec<String>> = v
            .checks
            .iter()
            .map(|c| {
                vec![
                    html(&c.name),
                    if c.ok {
                        "<span class=\"ok\">✔</span>".into()
                    } else {
                        "<span class=\"bad\">✘</span>".into()
                    },
                    format!("<code>{}</code>", html(&c.detail)),
                ]
            })
            .collect();
        doc.raw(&table("checks", &["check", "ok", "detail"], &rows));
    }
    for m in &v.monitors {
        let mut c = Chart::new(format!("{}: {}", v.name, m.name), "time", "s", &m.name);
        align_into(&mut c, vec![(m.name.clone(), m.samples.clone())]);
        if let Some(s) = c.series.first_mut() {
            *s = Series::line(m.name.clone(), s.values.clone());
        }
        doc.chart(c);
    }
    if let Some(why) = v.no_commit_reason() {
        doc.raw(&format!("<p class=\"note\">– {}</p>\n", html(&why)));
    }
    for n in &v.notes {
        doc.raw(&format!("<p class=\"note\">{}</p>\n", html(n)));
    }
}

/// A latency cell: `–` with the reason as a tooltip when the variant committed nothing.
fn ms_cell(v: &VariantResult, ms: f64) -> String {
    match v.no_commit_reason() {
        Some(why) => format!("<span title=\"{}\">–</span>", html(&why)),
        None => num(ms),
    }
}

fn checks_cell(v: &VariantResult) -> String {
    if v.checks.is_empty() {
        return String::new();
    }
    if checks_say_nothing(v) {
        return "–".into();
    }
    let bad = v.checks.iter().filter(|c| !c.ok).count();
    if bad == 0 {
        format!("<span class=\"ok\">✔ {}</span>", v.checks.len())
    } else {
        format!("<span class=\"bad\">✘ {bad}/{}</span>", v.checks.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ladder's section on a page of its own.
    fn page(l: Ladder) -> String {
        let mut doc = Doc::new("ladder");
        ladder_section(&mut doc, &l);
        doc.finish()
    }

    fn variant(name: &str, baseline: bool, count: u64) -> VariantResult {
        let mut r = hotbench_results::testdata::record(name, 1.0, 2, count, 2.0);
        r.totals.counters.deadlock_failures = if count == 0 { 12 } else { 0 };
        VariantResult {
            name: name.into(),
            baseline,
            record: Some(r),
            checks: vec![hotbench_results::CheckResult {
                name: "never negative".into(),
                ok: true,
                detail: String::new(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_variant_without_commits_shows_dashes_and_why_never_a_tick() {
        let l = Ladder {
            scenario: "daily-limit".into(),
            variants: vec![variant("update", true, 400), variant("for-share", false, 0)],
            ..Default::default()
        };
        let html = page(l);
        let row_start = html.find("<td>for-share").expect("for-share row");
        let row = &html[row_start..row_start + html[row_start..].find("</tr>").expect("row end")];
        assert!(!row.contains('✔') && !row.contains("0.00"), "{row}");
        assert!(row.matches('–').count() >= 4, "{row}");
        assert!(
            html.contains("– no transaction committed: 12 deadlock failures"),
            "reason missing"
        );
        assert!(!html.contains("for-share  checks ✔"), "bar badge ticks");
        assert!(!html.contains("class=\"ceiling\""), "no ceiling, no line");
    }

    /// A perturbed ladder's table has each variant's recovery, as the text table does.
    #[test]
    fn a_perturbed_ladder_ranks_each_variants_recovery() {
        let mut v = variant("update", true, 400);
        let mut e = hotbench_results::PerturbationRecord::new(
            "1s:checkpoint".into(),
            "checkpoint",
            "".into(),
            1.0,
        );
        (e.baseline_per_s, e.ttr90_s, e.lost) = (Some(100.0), Some(0.5), Some(12.0));
        let plain = page(Ladder {
            variants: vec![v.clone()],
            ..Default::default()
        });
        assert!(
            !plain.contains("<th>recovery"),
            "no perturbation, no column"
        );
        if let Some(r) = v.record.as_mut() {
            r.perturbations = vec![e];
        }
        let html = page(Ladder {
            variants: vec![v],
            ..Default::default()
        });
        assert!(html.contains("<th>recovery"), "the column");
        assert!(
            html.contains("TTR90 0.50 s, TTR99 not recovered, lost 12"),
            "the cell"
        );
    }

    #[test]
    fn the_ceiling_is_a_line_on_the_bars_and_each_variants_share() {
        let mut update = variant("update", true, 400);
        update.pct_of_ceiling = Some(40.0);
        let l = Ladder {
            scenario: "daily-limit".into(),
            variants: vec![update],
            ceiling: Some(VariantResult {
                about: "update's statements with customers=4000 (not ranked)".into(),
                client_bound: Some(hotbench_results::ClientBound {
                    clients: 100,
                    floor_ms: 1.03,
                    rtt_ms: 1.0,
                    bound_per_s: 97_087.0,
                    tps: 91_720.0,
                }),
                ..variant("ceiling", false, 1000)
            }),
            ..Default::default()
        };
        let html = page(l);
        assert!(html.contains("<line class=\"ceiling\""), "no ceiling line");
        assert!(html.contains("40% of ceiling"), "no share");
        assert!(html.contains("ceiling (not ranked): "), "no ceiling note");
        assert!(
            html.contains("ceiling bound by clients × rtt (100 clients / 1.03 ms"),
            "a client-bound ceiling must say so"
        );
        // Not a ranked row of the table.
        assert!(!html.contains("<td>ceiling"), "ceiling ranked as a variant");
    }
}
