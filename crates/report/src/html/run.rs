//! One run record as an HTML section: the header (server, target, clients, duration, rtt,
//! seed, command line, notes), headline numbers, and its charts (throughput and goodput,
//! latency percentiles over time, HDR percentile distribution, failures and retries, server
//! waits and table health when probes ran), then per-script commands and errors. Also the
//! overlays used when several runs share a page.

use std::collections::BTreeMap;

use hotbench_results::probe_record::{ProbeInterval, ProbeRecord};
use hotbench_results::{IntervalStats, RunRecord};

use crate::analysis::timeline::{intervals, probe_intervals};
use crate::html::chart::{Chart, Series};
use crate::html::doc::{facts, table, Doc};
use crate::html::escape::html;
use crate::text::number::num;

/// Waits drawn individually in the stacked chart; the rest are summed as `other`.
const TOP_WAITS: usize = 8;

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

/// Header facts of a run.
pub fn header(rec: &RunRecord) -> String {
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
    let mut o = facts(&pairs);
    for n in &rec.notes {
        o.push_str(&format!("<p class=\"note\">{}</p>\n", html(n)));
    }
    o
}

fn kpi(value: String, label: &str) -> String {
    format!(
        "<div class=\"kpi\"><b>{}</b><span>{}</span></div>",
        html(&value),
        html(label)
    )
}

/// Headline numbers of a run.
pub fn kpis(rec: &RunRecord) -> String {
    let t = &rec.totals;
    let c = &t.counters;
    let l = &t.latency;
    let mut o = String::from("<div class=\"kpis\">");
    o.push_str(&kpi(num(t.tps), "transactions/s"));
    o.push_str(&kpi(num(t.goodput_per_s), "goodput/s"));
    for (v, label) in [
        (l.p50_ms, "p50 ms"),
        (l.p99_ms, "p99 ms"),
        (l.p999_ms, "p99.9 ms"),
        (l.max_ms, "max ms"),
    ] {
        o.push_str(&kpi(num(v), label));
    }
    o.push_str(&kpi(c.failures().to_string(), "failed"));
    o.push_str(&kpi(c.retries.to_string(), "retries"));
    if c.skipped > 0 {
        o.push_str(&kpi(c.skipped.to_string(), "skipped"));
    }
    o.push_str("</div>\n");
    o
}

fn xs(rec: &RunRecord) -> Vec<f64> {
    intervals(rec).iter().map(|i| i.t).collect()
}

fn col(rec: &RunRecord, f: impl Fn(&IntervalStats) -> f64) -> Vec<Option<f64>> {
    intervals(rec).iter().map(|i| Some(f(&i.totals))).collect()
}

pub fn throughput_chart(rec: &RunRecord) -> Chart {
    let mut c = Chart::new("Throughput and goodput", "time", "s", "per second");
    c.x = xs(rec);
    c.series.push(Series::line("tps", col(rec, |s| s.tps)));
    c.series
        .push(Series::line("goodput/s", col(rec, |s| s.goodput_per_s)));
    if rec.groups.len() > 1 {
        for (gi, g) in rec.groups.iter().enumerate() {
            let vals = intervals(rec)
                .iter()
                .map(|i| i.groups.get(gi).map(|s| s.tps))
                .collect();
            let mut s = Series::line(format!("tps {}", g.name), vals);
            s.dashed = true;
            c.series.push(s);
        }
    }
    c
}

pub fn latency_chart(rec: &RunRecord) -> Chart {
    let mut c = Chart::new("Latency percentiles per interval", "time", "s", "ms");
    c.x = xs(rec);
    let has = |s: &IntervalStats| s.cnt > 0;
    let pick = |f: fn(&IntervalStats) -> f64| -> Vec<Option<f64>> {
        intervals(rec)
            .iter()
            .map(|i| has(&i.totals).then(|| f(&i.totals)))
            .collect()
    };
    c.series.push(Series::line("p50", pick(|s| s.lat_p50_ms)));
    c.series.push(Series::line("p90", pick(|s| s.lat_p90_ms)));
    c.series.push(Series::line("p99", pick(|s| s.lat_p99_ms)));
    c.series.push(Series::line("max", pick(|s| s.lat_max_ms)));
    c.y_log = true;
    c
}

/// `(x = 1/(1−q), latency ms)` points of a run's whole-run histogram.
pub fn hdr_points(rec: &RunRecord) -> Vec<(f64, f64)> {
    let h = &rec.totals.counters.hist;
    let n = h.len();
    let mut pts: Vec<(f64, f64)> = h
        .distribution(5)
        .into_iter()
        .filter(|(_, p, _)| *p < 100.0)
        .map(|(v, p, _)| (1.0 / (1.0 - p / 100.0), v as f64 / 1000.0))
        .collect();
    if n > 0 {
        // The maximum, placed where the last sample's quantile is.
        let last = pts.last().map(|p| p.0).unwrap_or(1.0);
        pts.push(((n as f64).max(last * 1.0001), h.max_us() as f64 / 1000.0));
    }
    pts.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-12);
    pts
}

pub fn hdr_chart(runs: &[(&str, &RunRecord)]) -> Chart {
    let mut c = Chart::new(
        "Latency percentile distribution (HDR)",
        "quantile",
        "percentile",
        "ms",
    );
    let lines: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|(name, r)| (name.to_string(), hdr_points(r)))
        .collect();
    align_into(&mut c, lines);
    c
}

/// Puts several `(x, y)` lines on one shared x axis (missing points are gaps).
pub fn align_into(c: &mut Chart, lines: Vec<(String, Vec<(f64, f64)>)>) {
    let key = |x: f64| (x * 1e6).round() as i64;
    let mut all: BTreeMap<i64, f64> = BTreeMap::new();
    for (_, pts) in &lines {
        for (x, _) in pts {
            if x.is_finite() {
                all.insert(key(*x), *x);
            }
        }
    }
    let index: BTreeMap<i64, usize> = all.keys().enumerate().map(|(i, k)| (*k, i)).collect();
    c.x = all.values().copied().collect();
    for (label, pts) in lines {
        let mut vals = vec![None; c.x.len()];
        for (x, y) in pts {
            if let Some(&i) = index.get(&key(x)) {
                vals[i] = y.is_finite().then_some(y);
            }
        }
        c.series.push(Series::line(label, vals));
    }
}

pub fn failures_chart(rec: &RunRecord) -> Chart {
    let mut c = Chart::new("Failures and retries per interval", "time", "s", "count");
    c.x = xs(rec);
    c.series
        .push(Series::line("failed", col(rec, |s| s.failed as f64)));
    c.series
        .push(Series::line("retried txns", col(rec, |s| s.retried as f64)));
    c.series
        .push(Series::line("retries", col(rec, |s| s.retries as f64)));
    let any = |f: fn(&IntervalStats) -> u64| rec.timeline.iter().any(|i| f(&i.totals) > 0);
    if any(|s| s.skipped) {
        c.series
            .push(Series::line("skipped", col(rec, |s| s.skipped as f64)));
    }
    if any(|s| s.reconnects) {
        c.series.push(Series::line(
            "reconnects",
            col(rec, |s| s.reconnects as f64),
        ));
    }
    c
}

/// Stacked wait events over time, as average backends in each wait.
pub fn waits_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new(
        "Server wait events (average backends)",
        "time",
        "s",
        "backends",
    );
    c.stacked = true;
    c.colour_by_label = true;
    let top: Vec<&str> = p
        .waits
        .iter()
        .take(TOP_WAITS)
        .map(|w| w.event.as_str())
        .collect();
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    let per = |iv: &ProbeInterval, n: u64| {
        if iv.samples > 0 {
            n as f64 / f64::from(iv.samples)
        } else {
            n as f64
        }
    };
    for ev in &top {
        let vals = tl
            .iter()
            .map(|iv| Some(per(iv, iv.waits.get(*ev).copied().unwrap_or(0))))
            .collect();
        c.series.push(Series::line(*ev, vals));
    }
    let other: Vec<Option<f64>> = tl
        .iter()
        .map(|iv| {
            let n = hotbench_stats::saturating_sum(
                iv.waits
                    .iter()
                    .filter(|(k, _)| !top.contains(&k.as_str()))
                    .map(|(_, v)| *v),
            );
            Some(per(iv, n))
        })
        .collect();
    if other.iter().any(|v| v.is_some_and(|v| v > 0.0)) {
        c.series.push(Series::line("other", other));
    }
    c
}

/// Dead tuples per table over time.
pub fn health_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Table health: dead tuples", "time", "s", "tuples");
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    let mut names: Vec<String> = p.tables.iter().map(|t| t.name.clone()).collect();
    for iv in tl {
        for t in &iv.tables {
            if !names.contains(&t.name) {
                names.push(t.name.clone());
            }
        }
    }
    for name in names {
        let vals: Vec<Option<f64>> = tl
            .iter()
            .map(|iv| {
                iv.tables
                    .iter()
                    .find(|t| t.name == name)
                    .map(|t| t.dead_tuples as f64)
            })
            .collect();
        c.series.push(Series::line(format!("{name} dead"), vals));
    }
    c
}

/// Backends waiting on locks: a count of backends, on its own axis (the oldest snapshot's
/// age, in thousands of xids, would flatten it to zero).
pub fn locks_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Backends waiting on locks", "time", "s", "backends");
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    if tl.iter().any(|i| i.lock_waiting_max > 0) {
        c.series.push(Series::line(
            "waiting on locks (max)",
            tl.iter()
                .map(|i| Some(f64::from(i.lock_waiting_max)))
                .collect(),
        ));
    }
    c
}

/// Age of the oldest snapshot (xmin) on the server, in transaction ids.
pub fn xmin_chart(p: &ProbeRecord) -> Chart {
    let mut c = Chart::new("Oldest snapshot (xmin age)", "time", "s", "xids");
    let tl = probe_intervals(p);
    c.x = tl.iter().map(|i| i.t).collect();
    if tl.iter().any(|i| i.xmin_age.is_some_and(|a| a > 0)) {
        c.series.push(Series::line(
            "oldest xmin age",
            tl.iter().map(|i| i.xmin_age.map(|a| a as f64)).collect(),
        ));
    }
    c
}

fn probe_tables(p: &ProbeRecord) -> String {
    let mut o = String::new();
    if !p.waits.is_empty() {
        let rows: Vec<Vec<String>> = p
            .waits
            .iter()
            .take(10)
            .map(|w| {
                vec![
                    html(&w.event),
                    w.count.to_string(),
                    format!("{:.1}%", w.pct),
                ]
            })
            .collect();
        o.push_str(&format!(
            "<h4>Top waits (from {}, every {} ms)</h4>\n",
            html(&p.wait_source),
            p.wait_interval_ms.round()
        ));
        o.push_str(&table("waits", &["wait event", "samples", "share"], &rows));
    }
    let l = &p.locks;
    if l.max_waiting > 0 {
        let mut s = format!(
            "up to {} backends waiting on locks, longest blocking chain {}",
            l.max_waiting, l.longest_chain
        );
        if let Some(t) = &l.hot_tuple {
            s.push_str(&format!(
                ", hot tuple {} {}",
                t.relation,
                t.ctid.as_deref().unwrap_or("")
            ));
        } else if let Some(r) = &l.hot_relation {
            s.push_str(&format!(", hot relation {}", r.relation));
        }
        o.push_str(&format!("<p>{}</p>\n", html(&s)));
    }
    if !p.tables.is_empty() {
        let rows: Vec<Vec<String>> = p
            .tables
            .iter()
            .map(|t| {
                vec![
                    html(&t.name),
                    t.inserts.to_string(),
                    t.updates.to_string(),
                    t.hot_updates.to_string(),
                    t.deletes.to_string(),
                    t.live_tuples_end.to_string(),
                    format!("{} → {}", t.dead_tuples_start, t.dead_tuples_end),
                    t.autovacuums.to_string(),
                ]
            })
            .collect();
        o.push_str("<h4>Tables</h4>\n");
        o.push_str(&table(
            "tables",
            &[
                "table",
                "inserts",
                "updates",
                "HOT",
                "deletes",
                "live",
                "dead",
                "autovacuums",
            ],
            &rows,
        ));
    }
    if !p.statements.is_empty() {
        let rows: Vec<Vec<String>> = p
            .statements
            .iter()
            .take(10)
            .map(|s| {
                vec![
                    format!("<code>{}</code>", html(&s.query)),
                    s.calls.to_string(),
                    num(s.mean_ms),
                    num(s.shared_blks_hit_per_call + s.shared_blks_read_per_call),
                ]
            })
            .collect();
        o.push_str("<h4>Statements (pg_stat_statements)</h4>\n");
        o.push_str(&table(
            "statements",
            &["statement", "calls", "mean ms", "blocks/call"],
            &rows,
        ));
    }
    for n in &p.notes {
        o.push_str(&format!("<p class=\"note\">probe: {}</p>\n", html(n)));
    }
    o
}

fn commands_table(rec: &RunRecord) -> String {
    let mut rows = Vec::new();
    for g in &rec.groups {
        for s in &g.scripts {
            let tl = &s.totals;
            rows.push(vec![
                format!("<b>{}</b>", html(&s.name)),
                String::new(),
                tl.counters.cnt.to_string(),
                num(tl.latency.mean_ms),
                num(tl.latency.p99_ms),
                tl.counters.failures().to_string(),
                tl.counters.retries.to_string(),
            ]);
            for c in &s.commands {
                rows.push(vec![
                    String::new(),
                    // The whole statement (pgbench's -r shows only its first line).
                    format!(
                        "<code class=\"sql\">{}</code>",
                        html(if c.full_text.is_empty() {
                            &c.text
                        } else {
                            &c.full_text
                        })
                    ),
                    c.count.to_string(),
                    num(c.mean_ms),
                    num(c.latency.p99_ms),
                    c.failures.to_string(),
                    c.retries.to_string(),
                ]);
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h4>Scripts and commands</h4>\n{}",
        table(
            "commands",
            &["script", "command", "count", "mean ms", "p99 ms", "failed", "retries"],
            &rows
        )
    )
}

fn errors_table(rec: &RunRecord) -> String {
    if rec.errors.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = rec
        .errors
        .iter()
        .map(|e| {
            vec![
                html(&e.sqlstate),
                e.count.to_string(),
                format!("<code>{}</code>", html(&e.message)),
            ]
        })
        .collect();
    format!(
        "<h4>Errors</h4>\n{}",
        table("errors", &["SQLSTATE", "count", "message"], &rows)
    )
}

/// The whole section of one run.
pub fn run_section(doc: &mut Doc, title: &str, rec: &RunRecord) {
    doc.raw("<section class=\"run\">\n");
    doc.heading(2, title);
    doc.raw(&header(rec));
    doc.raw(&kpis(rec));
    let mut throughput = throughput_chart(rec);
    crate::html::perturbations::mark(&mut throughput, rec);
    doc.chart(throughput);
    doc.chart(latency_chart(rec));
    doc.chart(hdr_chart(&[("latency", rec)]));
    doc.chart(failures_chart(rec));
    if let Some(p) = rec.probe_record() {
        doc.chart(waits_chart(&p));
        doc.chart(health_chart(&p));
        doc.chart(locks_chart(&p));
        doc.chart(xmin_chart(&p));
        doc.chart(crate::html::pooler::pooler_chart(&p));
        doc.raw(&probe_tables(&p));
    }
    doc.raw(&crate::html::pooler::pooler_table(rec));
    doc.raw(&crate::html::keys::hot_keys_html(rec));
    doc.raw(&commands_table(rec));
    doc.raw(&errors_table(rec));
    doc.raw(&crate::html::perturbations::perturbations_table(rec));
    doc.raw("</section>\n");
}

/// Throughput of several runs on one time axis.
pub fn throughput_overlay(runs: &[(&str, &RunRecord)], goodput: bool) -> Chart {
    let title = if goodput {
        "Goodput over time"
    } else {
        "Throughput over time"
    };
    let mut c = Chart::new(title, "time", "s", "per second");
    let lines = runs
        .iter()
        .map(|(name, r)| {
            (
                name.to_string(),
                intervals(r)
                    .iter()
                    .map(|i| {
                        (
                            i.t,
                            if goodput {
                                i.totals.goodput_per_s
                            } else {
                                i.totals.tps
                            },
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    align_into(&mut c, lines);
    c
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

    #[test]
    fn hdr_points_rise_to_the_max() {
        let r = hotbench_results::testdata::record("x", 1.0, 2, 400, 2.0);
        let pts = hdr_points(&r);
        assert!(pts.len() > 5);
        assert!(pts.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1));
        let max = r.totals.counters.hist.max_us() as f64 / 1000.0;
        assert_eq!(pts.last().unwrap().1, max);
    }

    #[test]
    fn a_short_last_probe_interval_is_not_drawn_and_units_get_their_own_charts() {
        let iv = |t: f64, dt: f64, waiting: u32, xmin: i64| ProbeInterval {
            t,
            dt,
            samples: 10,
            lock_waiting_max: waiting,
            xmin_age: Some(xmin),
            ..Default::default()
        };
        let p = ProbeRecord {
            timeline: vec![
                iv(1.0, 1.0, 3, 4000),
                iv(2.0, 1.0, 4, 5000),
                iv(3.0, 1.0, 3, 6000),
                iv(3.05, 0.05, 0, 6000),
            ],
            ..Default::default()
        };
        assert_eq!(probe_intervals(&p).len(), 3);
        let locks = locks_chart(&p);
        assert_eq!(locks.x, vec![1.0, 2.0, 3.0]);
        assert_eq!(locks.y_label, "backends");
        assert_eq!(locks.series.len(), 1);
        let xmin = xmin_chart(&p);
        assert_eq!(xmin.y_label, "xids");
        assert_eq!(xmin.series[0].values.last(), Some(&Some(6000.0)));
    }
}
