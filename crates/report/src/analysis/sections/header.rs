//! What a run was: server, target, workload, clients, duration, added rtt, seed, start,
//! status, pooler, rate, tries, scale, settings, the client's own cost, command line and
//! tool, then the run's notes. The page's header facts; the terminal has pgbench's header
//! lines instead, and the notes at the end (`notes`).

use hotbench_stats::RunRecord;

use crate::analysis::section::{Block, Section, Span};

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("header");
    s.push(Block::Facts(facts(rec)));
    for n in &rec.notes {
        s.paragraph(Some("note"), vec![Span::plain(n.as_str())]);
    }
    s
}

/// Seconds → "2026-11-22 10:35:49 UTC" (no time-zone database needed).
pub fn utc(unix_s: f64) -> String {
    if !(unix_s.is_finite() && unix_s > 0.0) {
        return "unknown".into();
    }
    let secs = unix_s as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The words for a run's duration: "10 s", "10 transactions per client".
fn limit_text(rec: &RunRecord) -> String {
    let b = &rec.bench;
    let measured = format!("{:.1} s measured", rec.duration_s);
    match (b.duration_s, b.transactions_per_client) {
        (Some(d), _) => format!("{d} s (-T), {measured}"),
        (None, Some(n)) => format!("{n} transactions per client (-t), {measured}"),
        _ => measured,
    }
}

fn facts(rec: &RunRecord) -> Vec<(String, String)> {
    let b = &rec.bench;
    let s = &rec.server;
    let mut server = format!("{} {}", s.engine, s.version);
    if s.embedded {
        server.push_str(" (embedded");
        if s.fast {
            server.push_str(", --fast: fsync and synchronous_commit off");
        }
        server.push(')');
    }
    let mut pairs: Vec<(&str, String)> = vec![
        ("server", server),
        ("target", s.target.clone()),
        ("workload", b.transaction_type.clone()),
        (
            "clients",
            format!(
                "{} clients, {} threads, {} protocol",
                b.clients, b.threads, b.query_mode
            ),
        ),
        ("duration", limit_text(rec)),
        (
            "added rtt",
            if b.rtt_us > 0 {
                format!("{} ms", b.rtt_us as f64 / 1000.0)
            } else {
                "none".into()
            },
        ),
        ("random seed", b.random_seed.to_string()),
        ("started", utc(rec.started_at)),
        ("status", rec.status.to_string()),
    ];
    if let Some(p) = &rec.pooler {
        pairs.push(("pooler", p.describe()));
    }
    if let Some(r) = b.rate {
        pairs.push(("rate limit", format!("{r} tps (-R)")));
    }
    if b.max_tries != 1 {
        pairs.push((
            "max tries",
            if b.max_tries == 0 {
                "unlimited".into()
            } else {
                b.max_tries.to_string()
            },
        ));
    }
    if b.scale > 0 {
        pairs.push(("scale", b.scale.to_string()));
    }
    for (k, v) in &s.settings {
        pairs.push(("setting", format!("{k} = {v}")));
    }
    let cu = &rec.client;
    if cu.cpu_user_s + cu.cpu_sys_s > 0.0 {
        pairs.push((
            "hotbench client",
            format!(
                "{:.1} µs CPU per transaction, RSS {:.1} → {:.1} MiB",
                cu.cpu_us_per_txn,
                cu.rss_start_kib as f64 / 1024.0,
                cu.rss_end_kib as f64 / 1024.0
            ),
        ));
    }
    pairs.push(("command line", rec.command_line.join(" ")));
    pairs.push(("tool", format!("{} {}", rec.tool, rec.tool_version)));
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0.5), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_795_343_749.0), "2026-11-22 10:35:49 UTC");
        assert_eq!(utc(951_782_400.0), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(-1.0), "unknown");
    }
}
