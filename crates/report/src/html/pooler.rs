//! The pooler in a run's HTML section: clients active and waiting in the pooler and its
//! server connections over time (a chart), and the run's figures (a table). Pure functions
//! of the result record; nothing when the run went straight to the server.

use hotbench_results::probe_record::ProbeRecord;
use hotbench_results::RunRecord;

use crate::analysis::timeline::probe_intervals;
use crate::html::chart::{Chart, Series};
use crate::html::doc::table;
use crate::html::escape::html;
use crate::text::number::num;

/// Clients active and waiting in the pooler, and its active server connections.
pub fn pooler_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Connection pooler", "time", "s", "connections");
    let tl = probe_intervals(p);
    if !tl.iter().any(|i| i.pooler.is_some()) {
        return c;
    }
    c.x = tl.iter().map(|i| i.t).collect();
    let line = |f: fn(&hotbench_results::PoolerInterval) -> f64| {
        tl.iter()
            .map(|i| i.pooler.as_ref().map(f))
            .collect::<Vec<_>>()
    };
    c.series.push(Series::line(
        "clients waiting in the pooler",
        line(|x| x.clients_waiting),
    ));
    c.series
        .push(Series::line("clients active", line(|x| x.clients_active)));
    c.series.push(Series::line(
        "server connections active",
        line(|x| x.servers_active),
    ));
    c
}

/// The pooler's setup and figures as a table.
pub fn pooler_table(rec: &RunRecord) -> String {
    let mut o = String::new();
    let summary = rec.probes.as_ref().and_then(|p| p.pooler.as_ref());
    if rec.pooler.is_none() && summary.is_none() {
        return o;
    }
    o.push_str("<h4>Connection pooler</h4>\n");
    if let Some(p) = &rec.pooler {
        o.push_str(&format!("<p>{}</p>\n", html(&p.describe())));
    }
    if let Some(s) = summary.filter(|s| s.samples > 0) {
        let ms = |v: Option<f64>| v.map(num).unwrap_or_else(|| "-".into());
        let rows = vec![
            vec!["clients active (avg)".into(), num(s.clients_active_avg)],
            vec![
                "clients waiting for a server connection (avg / max)".into(),
                format!("{} / {}", num(s.clients_waiting_avg), s.clients_waiting_max),
            ],
            vec![
                "share of client samples waiting".into(),
                format!("{:.0}%", s.wait_pct),
            ],
            vec!["longest wait (ms)".into(), num(s.max_wait_ms)],
            vec![
                "server connections active / idle (avg), open (max)".into(),
                format!(
                    "{} / {}, {}",
                    num(s.servers_active_avg),
                    num(s.servers_idle_avg),
                    s.servers_max
                ),
            ],
            vec![
                "transactions through the pool".into(),
                s.transactions.to_string(),
            ],
            vec![
                "per transaction: wait for a server connection (ms)".into(),
                ms(s.times.avg_wait_ms),
            ],
            vec![
                "per transaction: holding one (ms)".into(),
                ms(s.times.avg_hold_ms),
            ],
            vec![
                "PgBouncer's transaction and query time (ms, the wait included)".into(),
                format!("{} / {}", ms(s.times.avg_xact_ms), ms(s.times.avg_query_ms)),
            ],
        ];
        o.push_str(&table("pooler", &["figure", "value"], &rows));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::probe_record::ProbeInterval;
    use hotbench_results::{PoolerInterval, PoolerSetup, PoolerSummary, PoolerTimes};

    #[test]
    fn a_pooled_run_gets_a_chart_and_a_table_a_direct_one_neither() {
        let iv = |t: f64, waiting: f64| ProbeInterval {
            t,
            dt: 1.0,
            pooler: Some(PoolerInterval {
                clients_waiting: waiting,
                clients_active: 10.0,
                servers_active: 10.0,
                ..Default::default()
            }),
            ..Default::default()
        };
        let p = ProbeRecord {
            timeline: vec![iv(1.0, 90.0), iv(2.0, 88.0), iv(3.0, 89.0)],
            pooler: Some(PoolerSummary {
                samples: 30,
                wait_pct: 89.0,
                clients_waiting_max: 90,
                times: PoolerTimes {
                    avg_wait_ms: Some(44.0),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let c = pooler_chart(&p);
        assert!(c.has_data());
        assert_eq!(c.series.len(), 3);
        let mut rec = RunRecord {
            probes: Some(p),
            pooler: Some(PoolerSetup {
                kind: "pgbouncer".into(),
                version: "1.18.0<".into(),
                pool_mode: "transaction".into(),
                pool_size: Some(10),
                started_by_hotbench: true,
            }),
            ..Default::default()
        };
        let t = pooler_table(&rec);
        assert!(
            t.contains("PgBouncer 1.18.0&lt;, transaction pool of 10"),
            "{t}"
        );
        assert!(
            t.contains("<td>89%</td>") && t.contains("<td>44</td>"),
            "{t}"
        );
        rec.pooler = None;
        rec.probes = Some(ProbeRecord::default());
        assert_eq!(pooler_table(&rec), "");
        assert!(!pooler_chart(&ProbeRecord::default()).has_data());
    }
}
