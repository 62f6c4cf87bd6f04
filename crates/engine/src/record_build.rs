//! The coordinator's record builder: turns merged counters into the result record's parts —
//! one timeline entry per interval (rates over its real length), the error samples of all
//! threads, and at the end the groups, scripts and commands, clients, hot keys, hosts,
//! the client's own CPU and memory, and the run's status. Pure functions of their inputs,
//! unit-tested without a run.

use hotbench_results::record::{ErrorSample, IntervalStats, RunStatus};
use hotbench_results::{
    CommandRecord, GroupRecord, IntervalRecord, RunRecord, ScriptRecord, TotalsRecord, TxnCounters,
};
use hotbench_stats::LatencySketch;

use crate::plan::Plan;
use crate::tally::Tally;

/// Timeline entry of interval `[begin, begin + len)` (monotonic µs from `origin`) at `now`:
/// the last interval of a run is usually partial, so its rates are over its real length.
/// With `sketch` (a run with `--perturb`) its totals keep a latency sketch, so a
/// perturbation's window gets its own percentiles.
pub fn interval_record(
    origin: i64,
    begin: i64,
    len: i64,
    now: i64,
    groups: &[TxnCounters],
    sketch: bool,
) -> IntervalRecord {
    let now = now.min(begin + len);
    let t = ((now - origin) as f64 / 1e6).max(0.0);
    let dur = ((now - begin) as f64 / 1e6).max(1e-3);
    let mut total = TxnCounters::default();
    for g in groups {
        total.merge(g);
    }
    let mut totals = IntervalStats::from_counters(&total, dur);
    if sketch {
        totals.lat_sketch = LatencySketch::from_histogram(&total.hist);
    }
    IntervalRecord {
        t,
        totals,
        groups: if groups.len() > 1 {
            groups
                .iter()
                .map(|g| IntervalStats::from_counters(g, dur))
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// Adds a thread's error samples to the run's: the same SQLSTATE and message are one sample.
pub fn merge_errors(into: &mut Vec<ErrorSample>, more: Vec<ErrorSample>) {
    for sample in more {
        if let Some(x) = into
            .iter_mut()
            .find(|x| x.sqlstate == sample.sqlstate && x.message == sample.message)
        {
            x.count += sample.count;
        } else {
            into.push(sample);
        }
    }
}

/// What the run's end knows besides the merged tally.
pub struct RunEnd {
    /// pgbench's benchmark interval, seconds.
    pub duration_s: f64,
    pub errors: Vec<ErrorSample>,
    /// Clients aborted by errors.
    pub aborted: usize,
    pub interrupted: bool,
    pub nclients: usize,
    /// Labels of the target's hosts, by index.
    pub host_labels: Vec<String>,
    /// The process's (user, system) CPU seconds during the run.
    pub cpu_s: (f64, f64),
    pub rss_start_kib: u64,
}

/// Fills the final record from the merged tally.
pub fn finish(record: &mut RunRecord, plan: &Plan, tally: &Tally, end: RunEnd) {
    let duration_s = end.duration_s;
    totals_and_groups(record, plan, tally, duration_s);
    let mut errors = end.errors;
    errors.sort_by_key(|e| std::cmp::Reverse(e.count));
    record.errors = errors;
    clients_and_keys(record, plan, tally);
    saturation_note(record);
    record.hosts = tally
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| hotbench_results::HostRecord {
            host: end.host_labels.get(i).cloned().unwrap_or_default(),
            clients: h.clients,
            moved_in: h.moved_in,
            totals: TotalsRecord::from_counters(h.counters.clone(), duration_s),
        })
        .collect();
    let c = &record.totals.counters;
    let txns = (c.cnt + c.failures()).max(1) as f64;
    let (user, sys) = end.cpu_s;
    record.client = hotbench_results::ClientUsage {
        rss_start_kib: end.rss_start_kib,
        rss_end_kib: crate::usage::rss_kib(),
        rss_peak_kib: crate::usage::peak_rss_kib(),
        cpu_user_s: user,
        cpu_sys_s: sys,
        cpu_us_per_txn: (user + sys) / txns * 1e6,
    };
    let lost = record.totals.counters.ended_disconnected;
    if lost > 0 {
        record.notes.push(format!(
            "{lost} of {} clients had no connection when the run ended (the server went away)",
            end.nclients
        ));
    }
    record.status = status(end.interrupted, end.aborted, lost, end.nclients);
}

/// How the run ended, by precedence: interrupted, a client aborted, every client lost its
/// server, else completed.
pub fn status(interrupted: bool, aborted: usize, lost: u64, nclients: usize) -> RunStatus {
    if interrupted {
        RunStatus::Interrupted
    } else if aborted > 0 {
        RunStatus::Aborted
    } else if lost >= nclients as u64 {
        RunStatus::Disconnected
    } else {
        RunStatus::Completed
    }
}

/// A goodput that reached `u64::MAX` (a `sum:` variable of 2^62 and more) stopped there:
/// the record says so instead of showing a wrapped count.
fn saturation_note(record: &mut RunRecord) {
    if record.totals.counters.goodput == u64::MAX {
        record.notes.push(format!(
            "goodput reached {} units and stopped there (saturated): the sum: values are too large to count",
            u64::MAX
        ));
    }
}

fn clients_and_keys(record: &mut RunRecord, plan: &Plan, tally: &Tally) {
    let mut per_client: Vec<hotbench_stats::fairness::ClientRecord> = tally
        .clients
        .iter()
        .map(|(id, g, t)| {
            let group = plan.groups.get(*g).map_or("", |g| g.name.as_str());
            hotbench_stats::fairness::ClientRecord::from_tally(*id, group, t)
        })
        .collect();
    per_client.sort_by_key(|c| c.id);
    record.fairness = hotbench_stats::fairness::fairness(&per_client);
    record.per_client = per_client;
    record.hot_keys = tally.keys.iter().flat_map(|k| k.records()).collect();
    record.hot_key_zipf = crate::key_zipf::zipf_shares(plan, &tally.keys);
    record
        .hot_keys
        .sort_by(|a, b| b.time_share.total_cmp(&a.time_share));
    // A variable no transaction ended with set is named: a --key that counts nothing
    // (a typo, or a variable no script sets) must not pass for a run without hot keys.
    let ran: u64 = tally.groups.iter().map(|g| g.counters.cnt).sum();
    for k in tally
        .keys
        .iter()
        .filter(|k| ran > 0 && k.transactions() == 0)
    {
        record.notes.push(format!(
            "hot keys: no transaction ended with the variable {} set: no key counted for --key {} (does a script set it?)",
            k.variable, k.variable
        ));
    }
    for k in tally.keys.iter().filter(|k| k.approximate) {
        record.notes.push(format!(
            "hot keys: more than {} distinct values of {}: counts of rarely seen values are estimates (space-saving sketch; attempts_error bounds the over-count)",
            plan.cfg.settings.key_capacity, k.variable
        ));
    }
}

fn totals_and_groups(record: &mut RunRecord, plan: &Plan, tally: &Tally, duration_s: f64) {
    record.duration_s = duration_s;
    let mut total = TxnCounters::default();
    record.groups = plan
        .groups
        .iter()
        .zip(&tally.groups)
        .map(|(gp, gt)| {
            total.merge(&gt.counters);
            GroupRecord {
                name: gp.name.clone(),
                threads: 0,
                clients: gp.clients,
                rate: gp.rate,
                totals: TotalsRecord::from_counters(gt.counters.clone(), duration_s),
                scripts: gp
                    .scripts
                    .iter()
                    .zip(&gt.scripts)
                    .enumerate()
                    .map(|(si, (script, st))| ScriptRecord {
                        name: script.name().to_string(),
                        weight: gp.weights.get(si).copied().unwrap_or(1).max(0) as u32,
                        totals: TotalsRecord::from_counters(st.counters.clone(), duration_s),
                        commands: script
                            .commands()
                            .iter()
                            .zip(&st.commands)
                            .map(|(c, ct)| command_record(c, ct))
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    record.totals = TotalsRecord::from_counters(total, duration_s);
}

fn command_record(c: &hotbench_script::Command, ct: &crate::tally::CommandTally) -> CommandRecord {
    CommandRecord {
        index: c.index,
        line: c.line,
        text: c.first_line.clone(),
        full_text: match &c.kind {
            hotbench_script::CommandKind::Sql(sql) if sql.text().trim_end() != c.first_line => {
                sql.text().trim_end().to_string()
            }
            _ => String::new(),
        },
        count: ct.latency.count,
        mean_ms: ct.latency.mean() / 1000.0,
        failures: ct.failures,
        retries: ct.retries,
        latency: ct.hist.percentiles(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(code: &str, msg: &str, count: u64) -> ErrorSample {
        ErrorSample {
            sqlstate: code.into(),
            message: msg.into(),
            count,
        }
    }

    #[test]
    fn the_same_error_from_two_threads_is_one_sample() {
        let mut all = vec![sample("40001", "could not serialize", 2)];
        merge_errors(
            &mut all,
            vec![
                sample("40001", "could not serialize", 3),
                sample("40P01", "deadlock detected", 1),
            ],
        );
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].count, 5);
        assert_eq!(all[1].sqlstate, "40P01");
    }

    #[test]
    fn a_partial_last_interval_is_rated_over_its_real_length() {
        let c = TxnCounters {
            cnt: 500,
            ..Default::default()
        };
        let full = interval_record(
            0,
            1_000_000,
            1_000_000,
            5_000_000,
            std::slice::from_ref(&c),
            false,
        );
        assert_eq!(full.t, 2.0, "ends at the boundary, not at now");
        assert_eq!(full.totals.cnt, 500);
        let partial = interval_record(
            0,
            2_000_000,
            1_000_000,
            2_250_000,
            std::slice::from_ref(&c),
            true,
        );
        assert_eq!(partial.t, 2.25);
        assert!(
            (partial.totals.tps - 2000.0).abs() < 1e-6,
            "{}",
            partial.totals.tps
        );
        let groups = interval_record(0, 0, 1_000_000, 1_000_000, &[c.clone(), c], false);
        assert_eq!(groups.totals.cnt, 1000);
        assert_eq!(groups.groups.len(), 2, "per group with several groups");
    }

    #[test]
    fn an_interval_keeps_its_sqlstates_and_with_perturb_its_latency_sketch() {
        let mut c = TxnCounters::default();
        for us in [1_000, 2_000, 40_000] {
            c.record_success(us, None, 1);
        }
        c.record_error_code("57P01");
        let both = [c.clone(), c];
        let plain = interval_record(0, 0, 1_000_000, 1_000_000, &both, false);
        assert_eq!(plain.totals.errors_by_sqlstate.get("57P01"), Some(&2));
        assert!(
            plain.totals.lat_sketch.is_empty(),
            "no sketch without --perturb"
        );
        let perturbed = interval_record(0, 0, 1_000_000, 1_000_000, &both, true);
        assert_eq!(perturbed.totals.lat_sketch.count(), 6);
        assert!(
            perturbed.groups.iter().all(|g| g.lat_sketch.is_empty()),
            "totals only"
        );
        let p99 = perturbed.totals.lat_sketch.quantile_ms(0.99).unwrap_or(0.0);
        assert!((p99 / 40.0 - 1.0).abs() < 0.07, "{p99}");
    }

    #[test]
    fn status_precedence() {
        assert_eq!(status(true, 1, 10, 10), RunStatus::Interrupted);
        assert_eq!(status(false, 1, 10, 10), RunStatus::Aborted);
        assert_eq!(status(false, 0, 10, 10), RunStatus::Disconnected);
        assert_eq!(status(false, 0, 9, 10), RunStatus::Completed);
    }
}
