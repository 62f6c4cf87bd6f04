//! The pooler's lines in the text report: which pooler the clients went through, and what
//! its admin console showed (where the clients waited, for how long). Pure functions of the
//! result record.

use std::fmt::Write;

use hotbench_results::pooler_record::{PoolerSetup, PoolerSummary};
use hotbench_results::RunRecord;

/// `pooler: …` lines (empty for a run straight to the server).
pub fn pooler_lines(rec: &RunRecord) -> String {
    let summary = rec.probes.as_ref().and_then(|p| p.pooler.as_ref());
    lines(rec.pooler.as_ref(), summary)
}

fn lines(setup: Option<&PoolerSetup>, s: Option<&PoolerSummary>) -> String {
    let mut o = String::new();
    if let Some(p) = setup {
        let by = if p.started_by_hotbench {
            "started by hotbench"
        } else {
            "yours, read through --pooler-admin"
        };
        let _ = writeln!(o, "pooler: {} ({by})", p.describe());
    }
    let Some(s) = s.filter(|s| s.samples > 0) else {
        return o;
    };
    let _ = writeln!(
        o,
        "pooler clients: {:.1} active, {:.1} waiting for a server connection on average \
         (up to {}; {:.0}% of client samples waiting), longest wait {:.1} ms",
        s.clients_active_avg,
        s.clients_waiting_avg,
        s.clients_waiting_max,
        s.wait_pct,
        s.max_wait_ms
    );
    let mut servers = format!(
        "pooler servers: {:.1} active, {:.1} idle on average, up to {} open",
        s.servers_active_avg, s.servers_idle_avg, s.servers_max
    );
    if let (Some(w), Some(x)) = (s.times.avg_wait_ms, s.times.avg_hold_ms) {
        let _ = write!(
            servers,
            "; per transaction {w:.3} ms waiting for one, {x:.3} ms holding one"
        );
    }
    let _ = writeln!(o, "{servers}");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::PoolerTimes;

    #[test]
    fn setup_and_figures_are_lines() {
        let setup = PoolerSetup {
            kind: "pgbouncer".into(),
            version: "1.18.0".into(),
            pool_mode: "transaction".into(),
            pool_size: Some(10),
            started_by_hotbench: true,
        };
        let s = PoolerSummary {
            samples: 20,
            clients_active_avg: 10.0,
            clients_waiting_avg: 89.5,
            clients_waiting_max: 90,
            servers_active_avg: 9.5,
            servers_idle_avg: 0.5,
            servers_max: 10,
            wait_pct: 89.9,
            max_wait_ms: 212.0,
            times: PoolerTimes {
                avg_wait_ms: Some(44.1),
                avg_hold_ms: Some(4.9),
                ..Default::default()
            },
            ..Default::default()
        };
        let text = lines(Some(&setup), Some(&s));
        assert_eq!(
            text,
            "pooler: PgBouncer 1.18.0, transaction pool of 10 (started by hotbench)\n\
             pooler clients: 10.0 active, 89.5 waiting for a server connection on average \
             (up to 90; 90% of client samples waiting), longest wait 212.0 ms\n\
             pooler servers: 9.5 active, 0.5 idle on average, up to 10 open; per transaction \
             44.100 ms waiting for one, 4.900 ms holding one\n"
        );
        assert_eq!(lines(None, None), "");
        let unsampled = PoolerSummary::default();
        assert_eq!(lines(None, Some(&unsampled)), "");
    }
}
