//! `hotbench diagnose`'s terminal report (`hotbench-diagnosis/1` rendered): a header line, the findings ranked with the
//! command to run for each, then each finding's evidence and statements, the checks made
//! (so "nothing found" says what nothing means), the notes, and `--run`'s ranking.

use std::fmt::Write;

use hotbench_results::diagnosis_record::{Diagnosis, DiagnosisStatus, Finding, LabRun};

/// The whole text report.
pub fn render_text(d: &Diagnosis) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", header(d));
    if d.findings.is_empty() {
        let _ = writeln!(
            o,
            "\nno contention found: nothing below crossed its threshold in {:.1} s",
            d.duration_s
        );
    } else {
        let _ = writeln!(o, "\nfindings (most of the active time first):");
        for (i, f) in d.findings.iter().enumerate() {
            let _ = writeln!(
                o,
                "{}. [{}] {:.0}% {}",
                i + 1,
                f.kind.name(),
                f.share * 100.0,
                f.title
            );
            if let Some(c) = &f.command {
                let _ = writeln!(o, "   run: {c}");
            }
        }
        for (i, f) in d.findings.iter().enumerate() {
            let _ = writeln!(o, "\nevidence for {}. {}", i + 1, f.kind.name());
            evidence(&mut o, f);
        }
    }
    let _ = writeln!(o, "\nlooked at:");
    for c in &d.looked_at {
        let mark = if c.found { "!" } else { "-" };
        let _ = writeln!(o, "  {mark} {}: {}", c.what, c.value);
    }
    if !d.notes.is_empty() {
        let _ = writeln!(o, "\nnotes:");
        for n in &d.notes {
            let _ = writeln!(o, "  {n}");
        }
    }
    if let Some(l) = &d.lab {
        lab(&mut o, l);
    }
    o
}

/// `hotbench diagnose: TARGET (PostgreSQL 15.4), 30.0 s sampled every 100 ms as "role"`.
pub fn header(d: &Diagnosis) -> String {
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
    format!(
        "hotbench diagnose: {} ({version}), {:.1} s sampled every {:.0} ms as \"{}\"{status}",
        d.target, d.duration_s, d.interval_ms, d.role
    )
}

fn evidence(o: &mut String, f: &Finding) {
    if let Some(r) = &f.relation {
        let _ = writeln!(o, "   relation: {r}");
    }
    if !f.keys.is_empty() {
        let keys: Vec<String> = f
            .keys
            .iter()
            .take(5)
            .map(|k| format!("{} ({:.0}% of lock waits)", k.key, k.pct))
            .collect();
        let _ = writeln!(o, "   keys: {}", keys.join("; "));
    }
    for e in &f.evidence {
        let _ = writeln!(o, "   {}: {}", e.what, e.value);
    }
    if let Some(e) = &f.estimate {
        let mut s = format!("   estimated: {} clients", e.clients);
        if let Some(k) = e.hot_keys {
            let _ = write!(s, ", {k} hot keys");
        }
        if let Some(r) = e.rtt_ms {
            let _ = write!(s, ", {r:.1} ms between statements");
        }
        if let Some(r) = e.think_ms {
            let _ = write!(s, ", {r:.1} ms of think time inside transactions");
        }
        let _ = writeln!(o, "{s}");
    }
    for s in &f.statements {
        let state = if s.state.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.state)
        };
        let _ = writeln!(o, "   {:<9} {:>6}  {}{state}", s.role, s.samples, s.query);
    }
    if !f.advice.is_empty() {
        let _ = writeln!(o, "   what to do: {}", f.advice);
    }
}

fn lab(o: &mut String, l: &LabRun) {
    let _ = writeln!(o, "\nlab run: {}", l.command);
    if let Some(e) = &l.error {
        let _ = writeln!(o, "  did not complete: {e}");
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
        let _ = writeln!(o, "  {name:<30} {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::diagnosis_record::{
        Check, Evidence, FindingKind, FindingStatement, KeyShare,
    };

    #[test]
    fn findings_come_first_with_their_commands_then_evidence_and_checks() {
        let mut d = Diagnosis::new();
        d.target = "host=db dbname=app".into();
        d.server_version = "PostgreSQL 15.4 on x86_64-pc-linux-gnu".into();
        d.duration_s = 3.0;
        d.interval_ms = 20.0;
        d.role = "mon".into();
        d.findings.push(Finding {
            kind: FindingKind::HotRow,
            title: "hot row: daily_limit (customer_id=1)".into(),
            relation: Some("daily_limit".into()),
            keys: vec![KeyShare {
                key: "customer_id=1".into(),
                count: 9,
                pct: 41.0,
            }],
            share: 0.74,
            command: Some("hotbench scenario run daily-limit -c 16".into()),
            evidence: vec![Evidence::new("sessions on its statements", "16")],
            statements: vec![FindingStatement {
                role: "waiting".into(),
                query: "select 1 for update".into(),
                samples: 55,
                ..Default::default()
            }],
            ..Default::default()
        });
        d.looked_at.push(Check {
            what: "lock waits".into(),
            value: "70%".into(),
            found: true,
        });
        let t = render_text(&d);
        assert!(t.starts_with("hotbench diagnose: host=db dbname=app (PostgreSQL 15.4), 3.0 s sampled every 20 ms as \"mon\"\n"), "{t}");
        let first = t.find("1. [hot_row] 74% hot row: daily_limit").expect(&t);
        let cmd = t
            .find("   run: hotbench scenario run daily-limit -c 16")
            .expect(&t);
        let ev = t.find("evidence for 1. hot_row").expect(&t);
        assert!(first < cmd && cmd < ev, "{t}");
        assert!(t.contains("   keys: customer_id=1 (41% of lock waits)"));
        assert!(
            t.contains("   waiting       55  select 1 for update"),
            "{t}"
        );
        assert!(t.contains("  ! lock waits: 70%"));
        d.findings.clear();
        assert!(render_text(&d)
            .contains("\nno contention found: nothing below crossed its threshold in 3.0 s\n"));
    }
}
