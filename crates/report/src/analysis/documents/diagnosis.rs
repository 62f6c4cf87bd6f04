//! `hotbench diagnose`'s document (`hotbench-diagnosis/1`): a header, the findings ranked
//! with the command to run for each (the page sets each apart with its evidence, statements
//! and advice; the terminal lists them, then each one's evidence), the hot rows, the wait
//! timeline with lock waits, the oldest snapshot and dead tuples over the sample (the page's
//! charts), the checks made (so "nothing found" says what nothing means), the notes, and
//! `--run`'s ranking.

use hotbench_stats::diagnosis_record::{Diagnosis, DiagnosisStatus, Finding, LabRun};

use crate::analysis::number::num;
use crate::analysis::section::{Bar, Bars, Block, Cell, Section, Span, Style, Table};
use crate::analysis::sections::probes::{health_chart, locks_chart, waits_chart, xmin_chart};

/// Keys shown per finding.
const FINDING_KEYS: usize = 5;

pub fn sections(d: &Diagnosis) -> Vec<Section> {
    let mut out = vec![header(d), findings(d)];
    for (i, f) in d.findings.iter().enumerate() {
        out.push(finding(i + 1, f));
    }
    out.push(hot_rows(d));
    let mut timeline = Section::new("wait-timeline");
    timeline.heading(2, "Wait timeline");
    for c in [
        waits_chart(&d.probe),
        locks_chart(&d.probe),
        xmin_chart(&d.probe),
        health_chart(&d.probe),
    ] {
        timeline.chart(c);
    }
    out.push(timeline);
    out.push(looked_at(d));
    if let Some(l) = &d.lab {
        out.push(lab(l));
    }
    out
}

/// The page's title: `hotbench diagnose: TARGET`.
pub fn title(d: &Diagnosis) -> String {
    format!("hotbench diagnose: {}", d.target)
}

/// `hotbench diagnose: TARGET (PostgreSQL 15.4), 30.0 s sampled every 100 ms as "role"`,
/// and the page's facts.
fn header(d: &Diagnosis) -> Section {
    let mut s = Section::new("header");
    let version = d
        .server_version
        .split(" on ")
        .next()
        .unwrap_or(&d.server_version);
    let status = match d.status {
        DiagnosisStatus::Complete => "",
        DiagnosisStatus::Interrupted => " (interrupted)",
        DiagnosisStatus::ServerLost => " (the server went away)",
    };
    s.line(format!(
        "hotbench diagnose: {} ({version}), {:.1} s sampled every {:.0} ms as \"{}\"{status}",
        d.target, d.duration_s, d.interval_ms, d.role
    ));
    let status = match d.status {
        DiagnosisStatus::Complete => "complete",
        DiagnosisStatus::Interrupted => "interrupted: the findings cover what was sampled",
        DiagnosisStatus::ServerLost => {
            "the server went away mid-sample: the findings cover what was sampled"
        }
    };
    s.push(Block::Facts(vec![
        ("server".into(), d.server_version.clone()),
        ("role".into(), d.role.clone()),
        (
            "sampled".into(),
            format!(
                "{:.1} s, waits every {:.0} ms, statements and tables every {:.0} ms",
                d.duration_s, d.interval_ms, d.stats_interval_ms
            ),
        ),
        ("status".into(), status.to_string()),
        (
            "server cores".into(),
            d.server_cores
                .map_or("unknown".to_string(), |c| c.to_string()),
        ),
    ]));
    s
}

/// The findings ranked, each with its command (the terminal's list; the page's heading).
fn findings(d: &Diagnosis) -> Section {
    let mut s = Section::new("findings");
    s.heading(2, "Findings");
    s.line("");
    if d.findings.is_empty() {
        s.line(format!(
            "no contention found: nothing below crossed its threshold in {:.1} s",
            d.duration_s
        ));
        s.paragraph(
            Some("finding none"),
            vec![Span::plain(format!(
                "No contention found in {:.1} s: nothing crossed its threshold (see what was \
                 looked at below).",
                d.duration_s
            ))],
        );
        return s;
    }
    s.line("findings (most of the active time first):");
    for (i, f) in d.findings.iter().enumerate() {
        s.line(format!(
            "{}. [{}] {:.0}% {}",
            i + 1,
            f.kind.name(),
            f.share * 100.0,
            f.title
        ));
        if let Some(c) = &f.command {
            s.line(format!("   run: {c}"));
        }
    }
    s
}

/// One finding: the terminal's evidence lines, the page's section of its own.
fn finding(n: usize, f: &Finding) -> Section {
    let mut s = Section::new("finding").framed("run finding", Some(f.kind.name().to_string()));
    s.heading(
        3,
        format!(
            "{n}. {} — {:.0}% of active time",
            f.kind.name(),
            f.share * 100.0
        ),
    );
    s.paragraph(None, vec![Span::plain(f.title.as_str())]);
    if let Some(c) = &f.command {
        s.paragraph(None, vec![Span::plain("Reproduce and measure the fixes:")]);
        s.push(Block::Pre {
            class: Some("command"),
            code: true,
            text: c.clone(),
        });
    }
    s.line("");
    s.line(format!("evidence for {n}. {}", f.kind.name()));
    let mut facts: Vec<(String, String)> = Vec::new();
    if let Some(r) = &f.relation {
        s.line(format!("   relation: {r}"));
        facts.push(("relation".into(), r.clone()));
    }
    if !f.keys.is_empty() {
        let keys = f.keys.iter().take(FINDING_KEYS);
        let text: Vec<String> = keys
            .clone()
            .map(|k| format!("{} ({:.0}% of lock waits)", k.key, k.pct))
            .collect();
        s.line(format!("   keys: {}", text.join("; ")));
        let page: Vec<String> = keys.map(|k| format!("{} ({:.0}%)", k.key, k.pct)).collect();
        facts.push(("keys".into(), page.join("; ")));
    }
    for e in &f.evidence {
        s.line(format!("   {}: {}", e.what, e.value));
        facts.push((e.what.clone(), e.value.clone()));
    }
    s.push(Block::Facts(facts));
    if let Some(e) = &f.estimate {
        let mut line = format!("   estimated: {} clients", e.clients);
        if let Some(k) = e.hot_keys {
            line.push_str(&format!(", {k} hot keys"));
        }
        if let Some(r) = e.rtt_ms {
            line.push_str(&format!(", {r:.1} ms between statements"));
        }
        if let Some(r) = e.think_ms {
            line.push_str(&format!(", {r:.1} ms of think time inside transactions"));
        }
        s.line(line);
    }
    statements(&mut s, f);
    if !f.advice.is_empty() {
        s.line(format!("   what to do: {}", f.advice));
        s.paragraph(
            None,
            vec![
                Span::new(Style::Strong, "What to do:"),
                Span::plain(format!(" {}", f.advice)),
            ],
        );
    }
    s
}

/// The statements a finding's sessions ran: lines and a table.
fn statements(s: &mut Section, f: &Finding) {
    for st in &f.statements {
        let state = if st.state.is_empty() {
            String::new()
        } else {
            format!(" ({})", st.state)
        };
        s.line(format!(
            "   {:<9} {:>6}  {}{state}",
            st.role, st.samples, st.query
        ));
    }
    if f.statements.is_empty() {
        return;
    }
    let rows = f
        .statements
        .iter()
        .map(|st| {
            vec![
                Cell::from(st.role.as_str()),
                Cell::from(st.state.as_str()),
                Cell::from(st.samples.to_string()),
                Cell::code(st.query.as_str()),
            ]
        })
        .collect();
    s.table(Table::new(
        "statements",
        &["role", "state", "samples", "statement"],
        rows,
    ));
}

/// The rows lock waits queued on (the page's; the terminal has them in the findings).
fn hot_rows(d: &Diagnosis) -> Section {
    let mut s = Section::new("hot-rows");
    let p = &d.probe;
    if p.hot_rows.is_empty() {
        return s;
    }
    s.heading(2, "Hot rows");
    s.push(Block::Bars(Bars {
        title: "Rows lock waits queued on".into(),
        unit: "% of lock waits".into(),
        bars: p
            .hot_rows
            .iter()
            .enumerate()
            .map(|(i, r)| Bar {
                label: r.key.clone(),
                value: r.pct,
                badge: format!("{} waits", r.count),
                highlight: i == 0,
                bad: false,
            })
            .collect(),
        line: None,
    }));
    let rows = p
        .hot_rows
        .iter()
        .map(|r| {
            vec![
                Cell::from(r.relation.as_str()),
                Cell::code(r.key.as_str()),
                Cell::from(r.count.to_string()),
                Cell::from(format!("{}%", num(r.pct))),
            ]
        })
        .collect();
    s.table(Table::new(
        "hot-rows",
        &["relation", "key", "lock waits", "share"],
        rows,
    ));
    s
}

/// What was checked and measured, then the notes.
fn looked_at(d: &Diagnosis) -> Section {
    let mut s = Section::new("looked-at");
    s.line("");
    s.line("looked at:");
    s.heading(2, "Looked at");
    for c in &d.looked_at {
        let mark = if c.found { "!" } else { "-" };
        s.line(format!("  {mark} {}: {}", c.what, c.value));
    }
    let rows = d
        .looked_at
        .iter()
        .map(|c| {
            vec![
                Cell::from(c.what.as_str()),
                Cell::class("text", c.value.as_str()),
                if c.found {
                    Cell::class("bad", "finding")
                } else {
                    Cell::class("muted", "–")
                },
            ]
        })
        .collect();
    s.table(Table::new("looked-at", &["check", "measured", ""], rows));
    if !d.notes.is_empty() {
        s.line("");
        s.line("notes:");
    }
    for n in &d.notes {
        s.line(format!("  {n}"));
        s.paragraph(Some("note"), vec![Span::plain(n.as_str())]);
    }
    s
}

/// `--run`'s lab ladder: the command, whether it completed, the variants ranked.
fn lab(l: &LabRun) -> Section {
    let mut s = Section::new("lab");
    s.line("");
    s.line(format!("lab run: {}", l.command));
    s.heading(2, format!("Lab run: {}", l.scenario));
    s.push(Block::Pre {
        class: Some("command"),
        code: true,
        text: l.command.clone(),
    });
    if let Some(e) = &l.error {
        s.line(format!("  did not complete: {e}"));
        s.paragraph(
            Some("note"),
            vec![Span::plain(format!("did not complete: {e}"))],
        );
    }
    for v in &l.ranking {
        let vs = v
            .vs_baseline
            .map(|x| format!("{x:.2}×"))
            .unwrap_or_else(|| "–".into());
        let line = match &v.skipped {
            Some(why) => format!("skipped: {why}"),
            None => format!(
                "{:>10.0}/s  {vs:>7}  {}{}",
                v.per_s,
                if v.checks_ok {
                    "checks ✔"
                } else {
                    "checks ✘"
                },
                v.top_wait
                    .as_deref()
                    .map(|w| format!("  top wait {w}"))
                    .unwrap_or_default()
            ),
        };
        let name = if v.baseline {
            format!("{} (baseline)", v.name)
        } else {
            v.name.clone()
        };
        s.line(format!("  {name:<30} {line}"));
    }
    s.push(Block::Bars(Bars {
        title: "Useful work per variant".into(),
        unit: "per second".into(),
        bars: l
            .ranking
            .iter()
            .filter(|v| v.skipped.is_none())
            .map(|v| Bar {
                label: v.name.clone(),
                value: v.per_s,
                badge: match v.vs_baseline {
                    Some(x) => format!("×{x:.2}{}", if v.checks_ok { "" } else { "  checks ✘" }),
                    None => String::new(),
                },
                highlight: v.baseline,
                bad: !v.checks_ok,
            })
            .collect(),
        line: None,
    }));
    s
}
