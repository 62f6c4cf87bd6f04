//! The ladder table printed at the end of a scenario run: one row per variant (throughput,
//! useful work, latency, failures, retries, top wait, checks, speedup over the baseline),
//! then failed checks with their detail and per-variant notes. A pure function of the
//! [`Ladder`], so it can be re-rendered from a JSON file.

use crate::result::{top_wait, Ladder, VariantResult};

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
    let Some(r) = &v.record else {
        let why = v.skipped.clone().unwrap_or_else(|| "did not run".into());
        return vec![name, format!("skipped: {why}")];
    };
    let t = &r.totals;
    let checks = if v.checks.is_empty() {
        "-".to_string()
    } else {
        let ok = v.checks.iter().filter(|c| c.ok).count();
        let mark = if ok == v.checks.len() { '✔' } else { '✘' };
        format!("{mark} {ok}/{}", v.checks.len())
    };
    vec![
        name,
        format!("{:.0}", t.tps),
        format!("{:.0}", v.useful_per_s().unwrap_or(0.0)),
        format!("{:.2}", t.latency.p50_ms),
        format!("{:.2}", t.latency.p99_ms),
        (t.counters.failures()).to_string(),
        t.counters.retries.to_string(),
        top_wait(r).unwrap_or_else(|| "-".into()),
        checks,
        match l.speedup(v) {
            Some(s) => format!("{s:.2}×"),
            None => "-".into(),
        },
    ]
}

/// The table and what follows it.
pub fn render(l: &Ladder) -> String {
    let mut headers: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
    if let Some(u) = &l.work_unit {
        headers[2] = format!("{u}/s");
    }
    let rows: Vec<Vec<String>> = l.variants.iter().map(|v| row(l, v)).collect();
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
            if i == 0 || i == 7 || cells.len() == 2 {
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
    for (variant, c) in l.failed_checks() {
        out.push_str(&format!(
            "✘ {variant}: check \"{}\" failed: {}\n",
            c.name, c.detail
        ));
    }
    for v in &l.variants {
        for n in &v.notes {
            out.push_str(&format!("  {}: {n}\n", v.name));
        }
    }
    if l.interrupted {
        out.push_str("(interrupted: not every variant ran)\n");
    }
    out
}
