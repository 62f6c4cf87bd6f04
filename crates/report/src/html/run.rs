//! One run record as an HTML section: the header (server, target, clients, duration, rtt,
//! seed, command line, notes), headline numbers, and its charts (throughput and goodput,
//! latency percentiles over time, HDR percentile distribution, failures and retries, server
//! waits and table health when probes ran), then per-script commands and errors. Also the
//! overlays used when several runs share a page.

use std::collections::BTreeMap;

use hotbench_stats::{IntervalStats, RunRecord};

use crate::analysis::chart::{Chart, Series};
use crate::analysis::number::num;
use crate::analysis::timeline::intervals;
use crate::html::doc::{facts, table, Doc};
use crate::html::escape::html;

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
    use crate::analysis::section::Block;
    let pooler = crate::analysis::sections::pooler::section(rec);
    let (pooler_charts, pooler_rest): (Vec<&Block>, Vec<&Block>) = pooler
        .blocks
        .iter()
        .partition(|b| matches!(b, Block::Chart(_)));
    doc.raw("<section class=\"run\">\n");
    doc.heading(2, title);
    doc.raw(&header(rec));
    doc.raw(&kpis(rec));
    let mut throughput = throughput_chart(rec);
    crate::analysis::sections::perturbations::mark(&mut throughput, rec);
    doc.chart(throughput);
    doc.chart(latency_chart(rec));
    doc.chart(hdr_chart(&[("latency", rec)]));
    doc.chart(failures_chart(rec));
    let probes = crate::analysis::sections::probes::section(rec);
    for b in probes.blocks.iter().chain(pooler_charts.iter().copied()) {
        if matches!(b, Block::Chart(_)) {
            crate::html::section::block(doc, b);
        }
    }
    for b in &probes.blocks {
        if !matches!(b, Block::Chart(_)) {
            crate::html::section::block(doc, b);
        }
    }
    for b in pooler_rest {
        crate::html::section::block(doc, b);
    }
    crate::html::section::sections(doc, &[crate::analysis::sections::keys::section(rec)]);
    doc.raw(&commands_table(rec));
    doc.raw(&errors_table(rec));
    crate::html::section::sections(
        doc,
        &[crate::analysis::sections::perturbations::section(rec)],
    );
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
        let r = hotbench_stats::testdata::record("x", 1.0, 2, 400, 2.0);
        let pts = hdr_points(&r);
        assert!(pts.len() > 5);
        assert!(pts.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1));
        let max = r.totals.counters.hist.max_us() as f64 / 1000.0;
        assert_eq!(pts.last().unwrap().1, max);
    }
}
