//! `hotbench merge`: one result from the results of several client machines that ran the
//! same workload against the same server at the same time. Counters are summed and HDR
//! histograms merged exactly (totals, groups, scripts); timelines are aligned on the wall
//! clock (`started_at + t`) and summed interval by interval. What cannot be merged exactly is
//! documented in `docs/results.md` (per-interval and per-command percentiles are
//! count-weighted means; probes are the first input's, since they sample the one server).

use std::collections::BTreeMap;

use crate::record::ClientUsage;
use crate::{
    GroupRecord, IntervalRecord, IntervalStats, RunRecord, ScriptRecord, TotalsRecord, TxnCounters,
};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge")]
    Empty,
    #[error(
        "{name} is not a hotbench result (format \"{format}\", expected \"hotbench-result/…\")"
    )]
    Format { name: String, format: String },
    #[error("{0}")]
    Shards(String),
    /// Inputs run with different settings: their sum would describe no run.
    #[error("{0}")]
    Settings(String),
    /// One run given twice: it would be counted twice.
    #[error("{0}")]
    SameRun(String),
    /// Counts that cannot be summed (past `u64::MAX`): not the results of one run.
    #[error("{0}")]
    Overflow(String),
}

/// The settings every input must share, as `(name, value)`: counts added up across runs of
/// different durations, query modes, scales, tries or added round trips describe no run.
fn settings(r: &RunRecord) -> Vec<(&'static str, String)> {
    let b = &r.bench;
    let opt = |v: Option<String>| v.unwrap_or_else(|| "none".into());
    vec![
        ("duration (-T)", opt(b.duration_s.map(|d| format!("{d} s")))),
        (
            "transactions per client (-t)",
            opt(b.transactions_per_client.map(|n| n.to_string())),
        ),
        ("query mode (-M)", b.query_mode.clone()),
        ("scale", b.scale.to_string()),
        ("maximum number of tries", b.max_tries.to_string()),
        (
            "latency limit (-L)",
            opt(b.latency_limit_ms.map(|l| format!("{l} ms"))),
        ),
        ("added round-trip time (--rtt)", format!("{} us", b.rtt_us)),
        // Timelines are summed interval by interval: 1 s and 100 ms intervals summed would
        // inflate one input's per-interval rates by the ratio.
        (
            "timeline interval (--interval)",
            format!("{} us", r.config.settings.interval_us),
        ),
    ]
}

/// Refuses one run given twice (a copy of a file, or the same file under two names): the
/// same start to the microsecond, seed, counts and duration come from one process only.
fn check_distinct(records: &[(String, RunRecord)]) -> Result<(), MergeError> {
    let identity = |r: &RunRecord| {
        let c = &r.totals.counters;
        (
            r.started_at.to_bits(),
            r.config.random_seed,
            r.config.shard.as_ref().map(|s| s.index),
            c.cnt,
            c.failures(),
            c.hist.len(),
            r.duration_s.to_bits(),
        )
    };
    for (i, (a_name, a)) in records.iter().enumerate() {
        for (b_name, b) in &records[i + 1..] {
            if identity(a) == identity(b) {
                return Err(MergeError::SameRun(format!(
                    "{a_name} and {b_name} are the same run (same start, seed and counts): merging would count it twice"
                )));
            }
        }
    }
    Ok(())
}

/// Refuses inputs whose settings differ, naming the setting and each input's value.
fn check_settings(records: &[(String, RunRecord)]) -> Result<(), MergeError> {
    let Some((first_name, first)) = records.first() else {
        return Ok(());
    };
    let want = settings(first);
    for (name, r) in &records[1..] {
        for ((what, a), (_, b)) in want.iter().zip(settings(r)) {
            if *a != b {
                return Err(MergeError::Settings(format!(
                    "{first_name} and {name} ran with different settings: {what} {a} vs {b}; \
                     merge combines one workload run from several machines at the same time"
                )));
            }
        }
    }
    Ok(())
}

/// Merges `records` (each with a name for notes and errors, e.g. its file name).
pub fn merge(records: &[(String, RunRecord)]) -> Result<RunRecord, MergeError> {
    let Some((_, first)) = records.first() else {
        return Err(MergeError::Empty);
    };
    for (name, r) in records {
        if !r.format.starts_with("hotbench-result/") {
            return Err(MergeError::Format {
                name: name.clone(),
                format: r.format.clone(),
            });
        }
    }
    check_settings(records)?;
    check_distinct(records)?;
    let shards = crate::shards::check(records).map_err(MergeError::Shards)?;
    let mut out = first.clone();
    let duration = records
        .iter()
        .map(|(_, r)| r.duration_s)
        .fold(0.0, f64::max);
    let started = records
        .iter()
        .map(|(_, r)| r.started_at)
        .filter(|s| *s > 0.0)
        .fold(f64::INFINITY, f64::min);
    out.started_at = if started.is_finite() { started } else { 0.0 };
    out.duration_s = duration;
    out.conn_time_ms = records
        .iter()
        .map(|(_, r)| r.conn_time_ms)
        .fold(0.0, f64::max);
    // The worst ending of any part (RunStatus is ordered best to worst).
    out.status = records
        .iter()
        .map(|(_, r)| r.status)
        .max()
        .unwrap_or(crate::RunStatus::Completed);

    let mut totals = TxnCounters::default();
    for (name, r) in records {
        sum_counters(&mut totals, &r.totals.counters, name, "totals")?;
    }
    out.totals = TotalsRecord::from_counters(totals, duration);
    // One description of the merged run (clients, threads, rates, groups summed), and
    // pgbench's header derived from it: `config` and `bench` agree.
    out.config = crate::run_description::merged_config(records);
    out.bench.derive_from(&out.config);
    out.groups = merge_groups(records, duration)?;
    // On the server's clock when every input measured its offset (`clock_skew`).
    let starts = crate::clock_skew::server_starts(records);
    out.timeline = merge_timelines(records, &starts);
    out.errors = merge_errors(records);
    out.client = merge_client(records, &out.totals.counters);
    out.hosts = merge_hosts(records, duration)?;

    let mut notes: Vec<String> = Vec::new();
    for (_, r) in records {
        for n in &r.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let scripts: Vec<&str> = records
        .iter()
        .map(|(_, r)| r.bench.transaction_type.as_str())
        .collect();
    if scripts.iter().any(|s| *s != scripts[0]) {
        notes.push(format!(
            "the inputs ran different scripts: {} (merged as one mixed workload)",
            scripts.join(", ")
        ));
    }
    let names: Vec<&str> = records.iter().map(|(n, _)| n.as_str()).collect();
    notes.push(format!(
        "merged from {} results: {}",
        records.len(),
        names.join(", ")
    ));
    notes.extend(crate::clock_skew::note(records));
    // One machine's clock: the inputs' own offsets are in their files.
    out.server.clock_offset_ms = None;
    let known: Vec<(f64, f64)> = records
        .iter()
        .zip(&starts)
        .filter(|(_, s)| **s > 0.0)
        .map(|((_, r), s)| (*s, *s + r.duration_s))
        .collect();
    let latest_start = known.iter().map(|w| w.0).fold(f64::NEG_INFINITY, f64::max);
    let earliest_end = known.iter().map(|w| w.1).fold(f64::INFINITY, f64::min);
    if known.len() > 1 && latest_start >= earliest_end {
        notes.push(
            "the inputs did not run at the same time: totals per second assume they did".into(),
        );
    }
    let versions: Vec<&str> = records
        .iter()
        .map(|(_, r)| r.server.version.as_str())
        .collect();
    if versions.iter().any(|v| *v != versions[0]) {
        notes.push(format!("server versions differ: {}", versions.join(", ")));
    }
    if records.len() > 1 && records.iter().skip(1).any(|(_, r)| r.probes.is_some()) {
        notes.push("probes are the first result's (they sample the same server)".into());
    }
    if let Some(shards) = shards {
        notes.extend(shards.note());
        out.config.shard = None;
        out.config.shards = Some(shards.record());
    }
    out.notes = notes;
    Ok(out)
}

/// Adds `from` (of input `name`, its `part`) into `into`, refusing counts past `u64::MAX`.
fn sum_counters(
    into: &mut TxnCounters,
    from: &TxnCounters,
    name: &str,
    part: &str,
) -> Result<(), MergeError> {
    into.checked_merge(from).map_err(|e| {
        MergeError::Overflow(format!(
            "{name}: {part}: {e} with the inputs before it: these counts cannot come from one run"
        ))
    })
}

/// Hosts by name: the same server seen from several client machines.
fn merge_hosts(
    records: &[(String, RunRecord)],
    duration: f64,
) -> Result<Vec<crate::HostRecord>, MergeError> {
    let mut out: Vec<crate::HostRecord> = Vec::new();
    for (name, r) in records {
        for h in &r.hosts {
            match out.iter_mut().find(|o| o.host == h.host) {
                None => out.push(h.clone()),
                Some(o) => {
                    o.clients = o.clients.saturating_add(h.clients);
                    o.moved_in = o.moved_in.saturating_add(h.moved_in);
                    sum_counters(&mut o.totals.counters, &h.totals.counters, name, "host")?;
                }
            }
        }
    }
    for h in &mut out {
        h.totals = TotalsRecord::from_counters(std::mem::take(&mut h.totals.counters), duration);
    }
    Ok(out)
}

fn merge_groups(
    records: &[(String, RunRecord)],
    duration: f64,
) -> Result<Vec<GroupRecord>, MergeError> {
    let mut out: Vec<GroupRecord> = Vec::new();
    for (name, r) in records {
        for g in &r.groups {
            match out.iter_mut().find(|o| o.name == g.name) {
                None => out.push(g.clone()),
                Some(o) => {
                    o.clients = o.clients.saturating_add(g.clients);
                    o.threads = o.threads.saturating_add(g.threads);
                    o.rate = match (o.rate, g.rate) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                    sum_counters(&mut o.totals.counters, &g.totals.counters, name, "group")?;
                    for s in &g.scripts {
                        match o.scripts.iter_mut().find(|x| x.name == s.name) {
                            None => o.scripts.push(s.clone()),
                            Some(x) => merge_script(x, s, name)?,
                        }
                    }
                }
            }
        }
    }
    for g in &mut out {
        g.totals = TotalsRecord::from_counters(std::mem::take(&mut g.totals.counters), duration);
        for s in &mut g.scripts {
            s.totals =
                TotalsRecord::from_counters(std::mem::take(&mut s.totals.counters), duration);
        }
    }
    Ok(out)
}

fn merge_script(into: &mut ScriptRecord, s: &ScriptRecord, name: &str) -> Result<(), MergeError> {
    sum_counters(
        &mut into.totals.counters,
        &s.totals.counters,
        name,
        "script",
    )?;
    for c in &s.commands {
        let Some(x) = into.commands.iter_mut().find(|x| x.index == c.index) else {
            into.commands.push(c.clone());
            continue;
        };
        let (a, b) = (x.count as f64, c.count as f64);
        let w = |u: f64, v: f64| {
            if a + b > 0.0 {
                (u * a + v * b) / (a + b)
            } else {
                0.0
            }
        };
        x.mean_ms = w(x.mean_ms, c.mean_ms);
        x.latency.mean_ms = w(x.latency.mean_ms, c.latency.mean_ms);
        x.latency.p50_ms = w(x.latency.p50_ms, c.latency.p50_ms);
        x.latency.p90_ms = w(x.latency.p90_ms, c.latency.p90_ms);
        x.latency.p99_ms = w(x.latency.p99_ms, c.latency.p99_ms);
        x.latency.p999_ms = w(x.latency.p999_ms, c.latency.p999_ms);
        x.latency.max_ms = x.latency.max_ms.max(c.latency.max_ms);
        x.latency.count = x.latency.count.saturating_add(c.latency.count);
        x.count = x.count.saturating_add(c.count);
        x.failures = x.failures.saturating_add(c.failures);
        x.retries = x.retries.saturating_add(c.retries);
    }
    Ok(())
}

/// The interval length of a timeline (median spacing), 1 s when it has fewer than 2 points.
fn interval_of(t: &[IntervalRecord]) -> f64 {
    let mut d: Vec<f64> = t
        .windows(2)
        .map(|w| w[1].t - w[0].t)
        .filter(|d| *d > 0.0)
        .collect();
    if d.is_empty() {
        return 1.0;
    }
    d.sort_by(f64::total_cmp);
    d[d.len() / 2]
}

/// Sums the timelines, each input's shifted by its start `starts[i]` (Unix s, 0 unknown)
/// from the earliest.
fn merge_timelines(records: &[(String, RunRecord)], starts: &[f64]) -> Vec<IntervalRecord> {
    let width = records
        .first()
        .map(|(_, r)| interval_of(&r.timeline))
        .unwrap_or(1.0);
    let origin = starts
        .iter()
        .copied()
        .filter(|s| *s > 0.0)
        .fold(f64::INFINITY, f64::min);
    let mut buckets: BTreeMap<i64, IntervalRecord> = BTreeMap::new();
    for ((_, r), start) in records.iter().zip(starts) {
        let shift = if *start > 0.0 && origin.is_finite() {
            start - origin
        } else {
            0.0
        };
        for iv in &r.timeline {
            let end = iv.t + shift;
            let key = (end / width).round() as i64;
            let slot = buckets.entry(key).or_insert_with(|| IntervalRecord {
                t: key as f64 * width,
                ..Default::default()
            });
            // Keep the last interval's own (possibly partial) end time.
            if (key as f64 * width - end).abs() > 1e-9 && slot.totals.cnt == 0 {
                slot.t = end;
            }
            add_interval(&mut slot.totals, &iv.totals);
            if slot.groups.len() < iv.groups.len() {
                slot.groups
                    .resize_with(iv.groups.len(), IntervalStats::default);
            }
            for (s, g) in slot.groups.iter_mut().zip(&iv.groups) {
                add_interval(s, g);
            }
        }
    }
    buckets.into_values().collect()
}

/// Adds interval `b` into `a`: counts and rates sum (the machines ran concurrently),
/// latency means and stddev are pooled exactly, percentiles are count-weighted means, maxima
/// are maxima.
fn add_interval(a: &mut IntervalStats, b: &IntervalStats) {
    let (na, nb) = (a.cnt as f64, b.cnt as f64);
    let n = na + nb;
    if n > 0.0 {
        let w = |u: f64, v: f64| (u * na + v * nb) / n;
        let mean = w(a.lat_mean_ms, b.lat_mean_ms);
        let second = |m: f64, s: f64| s * s + m * m;
        let var = w(
            second(a.lat_mean_ms, a.lat_stddev_ms),
            second(b.lat_mean_ms, b.lat_stddev_ms),
        ) - mean * mean;
        a.lat_stddev_ms = var.max(0.0).sqrt();
        a.lat_mean_ms = mean;
        a.lat_p50_ms = w(a.lat_p50_ms, b.lat_p50_ms);
        a.lat_p90_ms = w(a.lat_p90_ms, b.lat_p90_ms);
        a.lat_p99_ms = w(a.lat_p99_ms, b.lat_p99_ms);
        a.lag_mean_ms = w(a.lag_mean_ms, b.lag_mean_ms);
    }
    a.lat_max_ms = a.lat_max_ms.max(b.lat_max_ms);
    a.lag_max_ms = a.lag_max_ms.max(b.lag_max_ms);
    a.cnt = a.cnt.saturating_add(b.cnt);
    a.goodput = a.goodput.saturating_add(b.goodput);
    a.failed = a.failed.saturating_add(b.failed);
    a.retried = a.retried.saturating_add(b.retried);
    a.retries = a.retries.saturating_add(b.retries);
    a.skipped = a.skipped.saturating_add(b.skipped);
    a.reconnects = a.reconnects.saturating_add(b.reconnects);
    a.disconnected_s += b.disconnected_s;
    a.tps += b.tps;
    a.goodput_per_s += b.goodput_per_s;
    for (code, n) in &b.errors_by_sqlstate {
        let c = a.errors_by_sqlstate.entry(code.clone()).or_default();
        *c = c.saturating_add(*n);
    }
    a.lat_sketch.merge(&b.lat_sketch);
}

/// Resource use of all client processes: sums, CPU per transaction recomputed.
fn merge_client(records: &[(String, RunRecord)], totals: &TxnCounters) -> ClientUsage {
    let mut c = ClientUsage::default();
    for (_, r) in records {
        c.rss_start_kib = c.rss_start_kib.saturating_add(r.client.rss_start_kib);
        c.rss_end_kib = c.rss_end_kib.saturating_add(r.client.rss_end_kib);
        c.rss_peak_kib = c.rss_peak_kib.saturating_add(r.client.rss_peak_kib);
        c.cpu_user_s += r.client.cpu_user_s;
        c.cpu_sys_s += r.client.cpu_sys_s;
    }
    let txns = totals.cnt.saturating_add(totals.failures());
    if txns > 0 {
        c.cpu_us_per_txn = (c.cpu_user_s + c.cpu_sys_s) * 1e6 / txns as f64;
    }
    c
}

fn merge_errors(records: &[(String, RunRecord)]) -> Vec<crate::ErrorSample> {
    let mut out: Vec<crate::ErrorSample> = Vec::new();
    for (_, r) in records {
        for e in &r.errors {
            match out
                .iter_mut()
                .find(|o| o.sqlstate == e.sqlstate && o.message == e.message)
            {
                Some(o) => o.count = o.count.saturating_add(e.count),
                None => out.push(e.clone()),
            }
        }
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.count));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shards::tests::shard;
    use crate::testdata::record;

    #[test]
    fn shards_merge_into_one_record_naming_their_files() {
        let recs = vec![
            ("b.json".to_string(), shard(2, 3, "k")),
            ("a.json".to_string(), shard(0, 3, "k")),
        ];
        let merged = merge(&recs).unwrap();
        let shards = merged.config.shards.expect("shards recorded");
        assert_eq!(shards.parts[1].file, "b.json");
        assert!(merged.config.shard.is_none());
    }

    #[test]
    fn counts_and_histograms_add_up_and_timelines_align() {
        let a = record("a", 100.0, 3, 500, 2.0);
        let mut b = record("b", 101.0, 3, 300, 4.0);
        b.errors.push(crate::ErrorSample {
            sqlstate: "40001".into(),
            message: "could not serialize".into(),
            count: 2,
        });
        let m = merge(&[("a.json".into(), a.clone()), ("b.json".into(), b.clone())]).unwrap();
        assert_eq!(
            m.totals.counters.cnt,
            a.totals.counters.cnt + b.totals.counters.cnt
        );
        assert_eq!(
            m.totals.counters.hist.len(),
            a.totals.counters.hist.len() + b.totals.counters.hist.len()
        );
        assert_eq!(m.bench.clients, a.bench.clients + b.bench.clients);
        assert_eq!(m.started_at, 100.0);
        // a covers wall seconds 101..103, b 102..104: four buckets, two overlapping.
        let ts: Vec<f64> = m.timeline.iter().map(|i| i.t).collect();
        assert_eq!(ts, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m.timeline[1].totals.cnt, 500 / 3 + 300 / 3);
        let sum: u64 = m.timeline.iter().map(|i| i.totals.cnt).sum();
        let parts: u64 = a
            .timeline
            .iter()
            .chain(&b.timeline)
            .map(|i| i.totals.cnt)
            .sum();
        assert_eq!(sum, parts);
        assert_eq!(m.groups[0].totals.counters.cnt, m.totals.counters.cnt);
        assert_eq!(m.errors[0].count, 2);
        assert!(m.notes.last().unwrap().contains("a.json, b.json"));
    }

    #[test]
    fn refuses_the_same_run_twice() {
        let a = record("a", 100.0, 3, 500, 2.0);
        let b = record("b", 100.5, 3, 500, 2.0);
        let e = merge(&[
            ("a.json".into(), a.clone()),
            ("copy.json".into(), a.clone()),
        ])
        .unwrap_err();
        assert!(matches!(e, MergeError::SameRun(_)), "{e}");
        assert!(
            e.to_string()
                .contains("a.json and copy.json are the same run"),
            "{e}"
        );
        // Another run of the same workload (another start) merges.
        merge(&[("a.json".into(), a), ("b.json".into(), b)]).unwrap();
    }

    #[test]
    fn counts_past_u64_max_are_refused_not_wrapped() {
        let mut a = record("a", 100.0, 3, 500, 2.0);
        let b = record("b", 101.0, 3, 300, 2.0);
        a.totals.counters.cnt = u64::MAX - 10;
        let e = merge(&[("a.json".into(), a.clone()), ("b.json".into(), b.clone())]).unwrap_err();
        assert!(matches!(e, MergeError::Overflow(_)), "{e}");
        assert!(
            e.to_string().contains("b.json: totals: cnt overflows"),
            "{e}"
        );
        a.totals.counters.cnt = 500;
        a.groups[0].totals.counters.retries = u64::MAX;
        let e = merge(&[("a.json".into(), a), ("b.json".into(), b)]).unwrap_err();
        assert!(e.to_string().contains("group: retries overflows"), "{e}");
    }

    #[test]
    fn refuses_inputs_with_different_timeline_intervals() {
        let a = record("a", 100.0, 3, 500, 2.0);
        let mut b = record("b", 101.0, 3, 300, 2.0);
        b.config.settings.interval_us = 100_000;
        let e = merge(&[("a.json".into(), a), ("b.json".into(), b)]).unwrap_err();
        assert!(matches!(e, MergeError::Settings(_)), "{e}");
        assert!(
            e.to_string()
                .contains("timeline interval (--interval) 1000000 us vs 100000 us"),
            "{e}"
        );
    }

    #[test]
    fn refuses_other_documents() {
        let mut a = record("a", 1.0, 1, 10, 1.0);
        a.format = "hotbench-ladder/1".into();
        assert!(merge(&[("x".into(), a)]).is_err());
        assert!(matches!(merge(&[]), Err(MergeError::Empty)));
    }

    #[test]
    fn refuses_inputs_with_different_settings_and_notes_different_scripts() {
        let a = record("a", 100.0, 3, 500, 2.0);
        let mut b = record("b", 100.0, 3, 300, 2.0);
        b.bench.query_mode = "prepared".into();
        let e = merge(&[("a.json".into(), a.clone()), ("b.json".into(), b)]).unwrap_err();
        assert!(matches!(e, MergeError::Settings(_)));
        assert!(e.to_string().contains("query mode (-M)"), "{e}");
        let mut c = record("c", 100.0, 3, 300, 2.0);
        c.bench.duration_s = Some(60);
        let e = merge(&[("a.json".into(), a.clone()), ("c.json".into(), c)]).unwrap_err();
        assert!(e.to_string().contains("duration (-T) 3 s vs 60 s"), "{e}");
        let d = record("d", 100.0, 3, 300, 2.0);
        let m = merge(&[("a.json".into(), a), ("d.json".into(), d)]).unwrap();
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("different scripts: a, d")),
            "{:?}",
            m.notes
        );
    }
}
