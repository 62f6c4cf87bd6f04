//! Per script and per command: the terminal's `statement latency p99` lines under `-r`
//! (pgbench's own `-r` columns stay as pgbench prints them), the page's table of every
//! script and command with its whole statement, count, mean, p99, failures and retries.

use hotbench_results::{RunRecord, ScriptRecord};

use crate::analysis::section::{Cell, Section, Style, Table};

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("commands");
    if rec.bench.report_per_command {
        p99_lines(&mut s, rec);
    }
    let mut rows = Vec::new();
    for sc in rec.groups.iter().flat_map(|g| &g.scripts) {
        let tl = &sc.totals;
        rows.push(vec![
            Cell::styled(Style::Strong, sc.name.as_str()),
            Cell::default(),
            Cell::from(tl.counters.cnt.to_string()),
            Cell::num(tl.latency.mean_ms),
            Cell::num(tl.latency.p99_ms),
            Cell::from(tl.counters.failures().to_string()),
            Cell::from(tl.counters.retries.to_string()),
        ]);
        for c in &sc.commands {
            rows.push(vec![
                Cell::default(),
                // The whole statement (pgbench's -r shows only its first line).
                Cell::styled(
                    Style::Sql,
                    if c.full_text.is_empty() {
                        &c.text
                    } else {
                        &c.full_text
                    }
                    .as_str(),
                ),
                Cell::from(c.count.to_string()),
                Cell::num(c.mean_ms),
                Cell::num(c.latency.p99_ms),
                Cell::from(c.failures.to_string()),
                Cell::from(c.retries.to_string()),
            ]);
        }
    }
    if !rows.is_empty() {
        s.table(
            Table::new(
                "commands",
                &[
                    "script", "command", "count", "mean ms", "p99 ms", "failed", "retries",
                ],
                rows,
            )
            .titled("Scripts and commands"),
        );
    }
    s
}

/// hotbench's per-command p99, one labeled line per command (`p99 = 0.367 ms: SELECT ...`),
/// so pgbench's `-r` lines stay exactly as pgbench prints them.
fn p99_lines(s: &mut Section, rec: &RunRecord) {
    let scripts: Vec<&ScriptRecord> = rec.groups.iter().flat_map(|g| &g.scripts).collect();
    let per_script = scripts.len() > 1;
    for (i, sc) in scripts.iter().enumerate() {
        let which = if per_script {
            format!(" of script {}", i + 1)
        } else {
            String::new()
        };
        s.line(format!("statement latency p99{which}:"));
        for c in &sc.commands {
            // A script drawn for no transaction ran none of its commands: no p99, not 0.
            if c.count == 0 {
                s.line(format!("   p99 = – (not run): {}", c.text));
            } else {
                s.line(format!("   p99 = {:.3} ms: {}", c.latency.p99_ms, c.text));
            }
        }
    }
}
