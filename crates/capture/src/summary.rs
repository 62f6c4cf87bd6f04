//! The capture as the terminal shows it: throughput and sessions, the shapes with their
//! weights and statements, the client groups, the hot keys and the waits, the sources and
//! every note. Plain text from the record; the caller escapes it (`stats::terminal`) before
//! printing, since statements, keys and notes are the server's.

use hotbench_results::capture_record::CaptureDoc;

/// Statements shown per shape.
const SHOWN_STATEMENTS: usize = 8;

pub fn render(d: &CaptureDoc) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "captured {:.0} s of {}: {:.1} transactions/s, {} session{} ({:.1} busy on average{})\n",
        d.duration_s,
        d.target,
        d.tps,
        d.sessions.seen,
        if d.sessions.seen == 1 { "" } else { "s" },
        d.sessions.mean_busy,
        if d.sessions.open_arrivals {
            ", arrivals open: the twin runs at the captured rate"
        } else {
            ""
        }
    ));
    if let Some(w) = d.top_wait() {
        let waits: Vec<String> = d
            .waits
            .iter()
            .take(3)
            .map(|w| format!("{} {:.0}%", w.event, w.share * 100.0))
            .collect();
        let _ = w;
        s.push_str(&format!("waits: {}\n", waits.join(", ")));
    }
    if !d.hot_keys.is_empty() {
        let keys: Vec<String> = d
            .hot_keys
            .iter()
            .take(3)
            .map(|k| format!("{} ({}) {:.0}%", k.relation, k.key, k.share * 100.0))
            .collect();
        s.push_str(&format!(
            "hot rows (share of lock waits): {}\n",
            keys.join(", ")
        ));
    }
    s.push_str(&format!(
        "{} transaction shape{}:\n",
        d.shapes.len(),
        if d.shapes.len() == 1 { "" } else { "s" }
    ));
    for sh in &d.shapes {
        s.push_str(&format!(
            "  {} {:.1}% ({:.1}/s{}){}\n",
            sh.script,
            sh.weight * 100.0,
            sh.tps,
            sh.latency_ms
                .map(|l| format!(", {l:.2} ms"))
                .unwrap_or_default(),
            if sh.autocommit { " autocommit" } else { "" }
        ));
        for (i, q) in sh.statements.iter().enumerate().take(SHOWN_STATEMENTS) {
            let per = sh.per_transaction.get(i).copied().unwrap_or(1.0);
            let mark = if (per - 1.0).abs() < 0.05 {
                String::new()
            } else {
                format!(" ×{per:.2}")
            };
            s.push_str(&format!("    {}{mark}\n", cut(q, 110)));
        }
        if sh.statements.len() > SHOWN_STATEMENTS {
            s.push_str(&format!(
                "    … {} more\n",
                sh.statements.len() - SHOWN_STATEMENTS
            ));
        }
        for p in sh.parameters.iter().filter(|p| !p.hot.is_empty()) {
            let hot: Vec<String> = p
                .hot
                .iter()
                .take(3)
                .map(|h| format!("{} {:.1}%", h.value, h.share * 100.0))
                .collect();
            s.push_str(&format!("    hot {}: {}\n", p.variable, hot.join(", ")));
        }
    }
    for g in &d.groups {
        s.push_str(&format!(
            "client group {}: {} client{} ({}), {:.1} busy ({})\n",
            g.name,
            g.clients,
            if g.clients == 1 { "" } else { "s" },
            g.scripts.join(", "),
            g.busy,
            if g.sized_by == "sessions" {
                "sized by the sessions seen running only these shapes"
            } else {
                "sized by Little's law: the sessions busy in these shapes at once"
            }
        ));
    }
    for src in &d.sources {
        s.push_str(&format!(
            "source {}: {}{}\n",
            src.name,
            if src.used { "" } else { "not used: " },
            src.detail
        ));
    }
    for n in &d.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use hotbench_results::capture_record::{CaptureDoc, ClientGroup};

    #[test]
    fn the_client_groups_are_shown_with_how_they_were_sized() {
        let mut d = CaptureDoc::new();
        d.groups.push(ClientGroup {
            name: "consumers".into(),
            scripts: vec!["shape_02.sql".into()],
            clients: 9,
            sized_by: "busy".into(),
            busy: 8.8,
            idle_between_ms: Some(2.0),
        });
        let s = super::render(&d);
        assert!(
            s.contains(
                "client group consumers: 9 clients (shape_02.sql), 8.8 busy (sized by Little's law"
            ),
            "{s}"
        );
    }
}
