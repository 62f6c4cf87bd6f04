//! The pooler the clients went through, and what its admin console showed: where the
//! clients waited and for how long. The terminal gets `pooler …` lines; the page a chart of
//! clients active and waiting and server connections over time, and a table of the figures.
//! Nothing for a run straight to the server.

use hotbench_stats::probe_record::ProbeRecord;
use hotbench_stats::RunRecord;

use crate::analysis::chart::{Chart, Series};
use crate::analysis::number::num;
use crate::analysis::section::{Cell, Section, Span, Table};
use crate::analysis::timeline::probe_intervals;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("pooler");
    let setup = rec.pooler.as_ref();
    let summary = rec.probes.as_ref().and_then(|p| p.pooler.as_ref());
    let sampled = summary.filter(|s| s.samples > 0);
    if let Some(p) = setup {
        let by = if p.started_by_hotbench {
            "started by hotbench"
        } else {
            "yours, read through --pooler-admin"
        };
        s.line(format!("pooler: {} ({by})", p.describe()));
    }
    if let Some(x) = sampled {
        s.line(format!(
            "pooler clients: {:.1} active, {:.1} waiting for a server connection on average \
             (up to {}; {:.0}% of client samples waiting), longest wait {:.1} ms",
            x.clients_active_avg,
            x.clients_waiting_avg,
            x.clients_waiting_max,
            x.wait_pct,
            x.max_wait_ms
        ));
        let mut servers = format!(
            "pooler servers: {:.1} active, {:.1} idle on average, up to {} open",
            x.servers_active_avg, x.servers_idle_avg, x.servers_max
        );
        if let (Some(w), Some(h)) = (x.times.avg_wait_ms, x.times.avg_hold_ms) {
            servers.push_str(&format!(
                "; per transaction {w:.3} ms waiting for one, {h:.3} ms holding one"
            ));
        }
        s.line(servers);
    }
    if let Some(p) = rec.probe_record() {
        s.chart(chart(&p));
    }
    if setup.is_none() && summary.is_none() {
        return s;
    }
    s.heading(4, "Connection pooler");
    if let Some(p) = setup {
        s.paragraph(None, vec![Span::plain(p.describe())]);
    }
    if let Some(x) = sampled {
        let ms = |v: Option<f64>| v.map(num).unwrap_or_else(|| "-".into());
        let row = |figure: &str, value: String| vec![Cell::from(figure), Cell::from(value)];
        let rows = vec![
            row("clients active (avg)", num(x.clients_active_avg)),
            row(
                "clients waiting for a server connection (avg / max)",
                format!("{} / {}", num(x.clients_waiting_avg), x.clients_waiting_max),
            ),
            row(
                "share of client samples waiting",
                format!("{:.0}%", x.wait_pct),
            ),
            row("longest wait (ms)", num(x.max_wait_ms)),
            row(
                "server connections active / idle (avg), open (max)",
                format!(
                    "{} / {}, {}",
                    num(x.servers_active_avg),
                    num(x.servers_idle_avg),
                    x.servers_max
                ),
            ),
            row("transactions through the pool", x.transactions.to_string()),
            row(
                "per transaction: wait for a server connection (ms)",
                ms(x.times.avg_wait_ms),
            ),
            row("per transaction: holding one (ms)", ms(x.times.avg_hold_ms)),
            row(
                "PgBouncer's transaction and query time (ms, the wait included)",
                format!("{} / {}", ms(x.times.avg_xact_ms), ms(x.times.avg_query_ms)),
            ),
        ];
        s.table(Table::new("pooler", &["figure", "value"], rows));
    }
    s
}

/// Clients active and waiting in the pooler, and its active server connections.
pub fn chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Connection pooler", "time", "s", "connections");
    let tl = probe_intervals(p);
    if !tl.iter().any(|i| i.pooler.is_some()) {
        return c;
    }
    c.x = tl.iter().map(|i| i.t).collect();
    let line = |f: fn(&hotbench_stats::PoolerInterval) -> f64| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_stats::probe_record::ProbeInterval;
    use hotbench_stats::{PoolerInterval, PoolerSetup, PoolerSummary, PoolerTimes};

    fn setup() -> PoolerSetup {
        PoolerSetup {
            kind: "pgbouncer".into(),
            version: "1.18.0".into(),
            pool_mode: "transaction".into(),
            pool_size: Some(10),
            started_by_hotbench: true,
        }
    }

    #[test]
    fn setup_and_figures_are_lines() {
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
        let mut rec = RunRecord {
            pooler: Some(setup()),
            probes: Some(ProbeRecord {
                pooler: Some(s),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            section(&rec).lines(),
            [
                "pooler: PgBouncer 1.18.0, transaction pool of 10 (started by hotbench)",
                "pooler clients: 10.0 active, 89.5 waiting for a server connection on average \
                 (up to 90; 90% of client samples waiting), longest wait 212.0 ms",
                "pooler servers: 9.5 active, 0.5 idle on average, up to 10 open; per transaction \
                 44.100 ms waiting for one, 4.900 ms holding one"
            ]
        );
        rec.pooler = None;
        rec.probes = Some(ProbeRecord {
            pooler: Some(PoolerSummary::default()),
            ..Default::default()
        });
        assert!(section(&rec).lines().is_empty(), "unsampled");
        assert!(section(&RunRecord::default()).blocks.is_empty());
    }

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
        let c = chart(&p);
        assert!(c.has_data());
        assert_eq!(c.series.len(), 3);
        let rec = RunRecord {
            probes: Some(p),
            pooler: Some(setup()),
            ..Default::default()
        };
        let s = section(&rec);
        let table = s.tables().next().expect("a table");
        let cells: Vec<String> = table.rows.iter().map(|r| r[1].text()).collect();
        assert!(cells.contains(&"89%".to_string()), "{cells:?}");
        assert!(cells.contains(&"44".to_string()), "{cells:?}");
        assert!(!chart(&ProbeRecord::default()).has_data());
        let direct = RunRecord {
            probes: Some(ProbeRecord::default()),
            ..Default::default()
        };
        assert!(section(&direct).tables().next().is_none());
    }
}
