//! What failed or did not finish: the terminal's lines (errors by SQLSTATE, failures besides
//! serialization and deadlock, unfinished and unstarted transactions, reconnects), the page's
//! table of error samples (SQLSTATE, count, the server's message).

use hotbench_stats::RunRecord;

use crate::analysis::section::{Cell, Section, Table};

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("errors");
    let t = &rec.totals.counters;
    if !t.errors_by_sqlstate.is_empty() {
        let list: Vec<String> = t
            .errors_by_sqlstate
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        s.line(format!("errors by SQLSTATE: {}", list.join(", ")));
    }
    if t.other_failures > 0 || t.connection_failures > 0 {
        // Not pgbench 19's `number of other failures` line (which counts both).
        s.line(format!(
            "failures besides serialization and deadlock: {} SQL errors, {} lost connections",
            t.other_failures, t.connection_failures
        ));
    }
    if t.unfinished > 0 {
        s.line(format!(
            "unfinished transactions: {} (still running at the end; cancelled, not counted)",
            t.unfinished
        ));
    }
    if t.unstarted > 0 {
        s.line(format!(
            "unstarted transactions: {} (scheduled by -R before the end, never begun: the clients were held up)",
            t.unstarted
        ));
    }
    if t.reconnects > 0 || t.disconnected_us > 0 {
        s.line(format!(
            "reconnects: {} (time without connection: {:.3} s over all clients)",
            t.reconnects,
            t.disconnected_us as f64 / 1e6
        ));
    }
    if !rec.errors.is_empty() {
        let rows = rec
            .errors
            .iter()
            .map(|e| {
                vec![
                    Cell::from(e.sqlstate.as_str()),
                    Cell::from(e.count.to_string()),
                    Cell::code(e.message.as_str()),
                ]
            })
            .collect();
        s.table(Table::new("errors", &["SQLSTATE", "count", "message"], rows).titled("Errors"));
    }
    s
}
