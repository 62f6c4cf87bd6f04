//! One line per `--perturb` firing in the text report: what was done and when, then the
//! baseline, the dip, the work lost and the times to recover (or why there are none). Pure
//! functions of the result record; text a server or a file controls is escaped.

use std::fmt::Write;

use hotbench_results::{PerturbationRecord, RunRecord};

/// `perturbation …` lines (empty without `--perturb`).
pub fn perturbation_lines(rec: &RunRecord) -> String {
    let mut o = String::new();
    for p in &rec.perturbations {
        let _ = writeln!(o, "{}", line(p));
    }
    o
}

fn line(p: &PerturbationRecord) -> String {
    let mut o = format!("perturbation {} at {:.3} s", safe(&p.spec), p.at_s);
    if let Some(end) = p.end_s.filter(|e| *e - p.at_s >= 0.0005) {
        let _ = write!(o, " (until {end:.3} s)");
    }
    if let Some(d) = &p.detail {
        let _ = write!(o, " ({})", safe(d));
    }
    if let Some(e) = &p.error {
        let _ = write!(o, ": {}", safe(e));
        return o;
    }
    let Some(b) = p.baseline_per_s else {
        return o + ": no baseline (nothing committed before it), recovery not judged";
    };
    let inherited = if p.baseline_inherited {
        " (the previous perturbation's)"
    } else {
        ""
    };
    let _ = write!(o, ": baseline {b:.1}/s{inherited}");
    if let Some(d) = p.dip_per_s {
        let _ = write!(o, ", dip {d:.1}/s ({:.0}%)", 100.0 * d / b);
    }
    if let Some(l) = p.lost {
        let _ = write!(o, ", lost {l:.0}");
    }
    let ttr = |t: Option<f64>| {
        t.map_or("not recovered by the end of the run".into(), |t| {
            format!("{t:.2} s")
        })
    };
    let _ = write!(o, ", TTR90 {}, TTR99 {}", ttr(p.ttr90_s), ttr(p.ttr99_s));
    if p.failed > 0 || p.reconnects > 0 {
        let _ = write!(o, ", failed {}, reconnects {}", p.failed, p.reconnects);
    }
    if let Some(w) = &p.server {
        if let Some(top) = w.top_waits.first() {
            let _ = write!(o, "; server: top wait {} {:.0}%", safe(&top.event), top.pct);
            if w.lock_waiting_max > 0 {
                let _ = write!(o, ", lock queue up to {}", w.lock_waiting_max);
            }
        }
    }
    o
}

/// Control characters as escapes, so a server's message cannot drive the terminal.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> PerturbationRecord {
        PerturbationRecord::new("2s:ddl-lock=t,1s".into(), "ddl-lock", "t,1s".into(), 2.0)
    }

    #[test]
    fn a_judged_perturbation_is_one_line_with_its_recovery() {
        let mut p = entry();
        p.end_s = Some(3.01);
        p.baseline_per_s = Some(1000.0);
        p.dip_per_s = Some(0.0);
        p.lost = Some(1500.4);
        p.ttr90_s = Some(2.1);
        p.failed = 3;
        let rec = RunRecord {
            perturbations: vec![p],
            ..Default::default()
        };
        assert_eq!(
            perturbation_lines(&rec),
            "perturbation 2s:ddl-lock=t,1s at 2.000 s (until 3.010 s): baseline 1000.0/s, \
             dip 0.0/s (0%), lost 1500, TTR90 2.10 s, TTR99 not recovered by the end of the run, \
             failed 3, reconnects 0\n"
        );
        assert_eq!(perturbation_lines(&RunRecord::default()), "");
    }

    #[test]
    fn failures_and_missing_baselines_say_why_and_server_text_is_escaped() {
        let mut p = entry();
        p.error = Some("42P01: relation \"t\u{1b}[2J\" does not exist".into());
        assert_eq!(
            line(&p),
            "perturbation 2s:ddl-lock=t,1s at 2.000 s: 42P01: relation \"t\\u{1b}[2J\" does not exist"
        );
        let mut p = entry();
        p.detail = Some("terminated 4 backends".into());
        assert!(line(&p).ends_with("(terminated 4 backends): no baseline (nothing committed before it), recovery not judged"), "{}", line(&p));
        p.baseline_per_s = Some(10.0);
        p.baseline_inherited = true;
        assert!(line(&p).contains("baseline 10.0/s (the previous perturbation's)"));
        p.server = Some(hotbench_results::perturbation_record::ServerWindow {
            top_waits: vec![hotbench_results::probe_record::WaitShare {
                event: "Lock:relation".into(),
                count: 40,
                pct: 80.0,
            }],
            lock_waiting_max: 4,
            ..Default::default()
        });
        assert!(
            line(&p).ends_with("; server: top wait Lock:relation 80%, lock queue up to 4"),
            "{}",
            line(&p)
        );
    }
}
