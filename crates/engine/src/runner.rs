//! The coordinator: builds the per-client state pgbench's way (seeds, variables), starts one
//! worker thread per `-j`, merges their interval reports into the timeline, prints nothing
//! itself (callbacks do), rewrites the JSON result atomically as the run goes, and returns
//! the final record.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};

use hotbench_script::{client_variables, define, derive_seeds, Variables};
use hotbench_stats::record::{ErrorSample, IntervalStats, RunStatus};
use hotbench_stats::{
    CommandRecord, GroupRecord, IntervalRecord, RunRecord, ScriptRecord, TotalsRecord, TxnCounters,
};
use hotbench_wire::Connector;

use crate::clock::{now_us, to_unix_us};
use crate::config::RunConfig;
use crate::observe::RunObserver;
use crate::plan::Plan;
use crate::signals;
use crate::tally::Tally;
use crate::worker::{run_worker, Shared, WorkerMsg};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Bad configuration (exit code 1).
    #[error("{0}")]
    Config(String),
    /// Could not connect at start-up (exit code 1, as pgbench).
    #[error("{0}")]
    Connect(String),
    #[error("{0}")]
    Internal(String),
}

/// How the run ended.
#[derive(Debug)]
pub struct RunOutcome {
    pub record: RunRecord,
    /// Clients aborted by errors (pgbench exits 2 when any).
    pub aborted_clients: usize,
    /// Stopped by Ctrl-C/SIGTERM.
    pub interrupted: bool,
}

/// Rewrite the JSON file every this many intervals.
const JSON_EVERY: u64 = 5;

pub fn run(
    cfg: RunConfig,
    mut record: RunRecord,
    observers: &mut [&mut dyn RunObserver],
) -> Result<RunOutcome, EngineError> {
    signals::install();
    let nclients = cfg.total_clients();
    if nclients == 0 {
        return Err(EngineError::Config("no clients to run".into()));
    }
    let mut defines = Variables::new();
    for (n, v) in &cfg.defines {
        define(&mut defines, &format!("{n}={v}")).map_err(EngineError::Config)?;
    }
    let params = cfg
        .conn
        .resolve()
        .map_err(|e| EngineError::Config(e.to_string()))?;
    let mut params = params;
    if params.application_name.is_none() {
        params.application_name = Some(cfg.application_name.clone());
    }
    let connector = Arc::new(Connector::new(params));
    let plan = Plan::new(cfg);
    let cfg = &plan.cfg;
    let nthreads = plan.threads.len();
    let seed_clients = cfg
        .shard
        .as_ref()
        .map_or(nclients, |s| s.run_clients.max(s.first_client + nclients));
    let seeds = derive_seeds(
        cfg.random_seed,
        seed_clients,
        nthreads,
        !defines.contains("default_seed"),
    );
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        connector,
        barrier: Barrier::new(nthreads + 1),
        origin: AtomicI64::new(0),
        cancel: AtomicBool::new(false),
    });
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    // pgbench's "initial connection time" starts before its threads are created.
    let start_time = now_us();
    for tid in 0..nthreads {
        let ids: Vec<usize> = plan.threads[tid].clients.iter().map(|c| c.0).collect();
        let rngs = ids.iter().map(|&id| (id, seeds.clients[id])).collect();
        let vars = ids
            .iter()
            .map(|&id| {
                client_variables(
                    &defines,
                    id,
                    cfg.scale,
                    seeds.default_seed,
                    seeds.random_seed,
                )
            })
            .collect();
        let rnd = seeds.threads[tid];
        let shared = shared.clone();
        let tx = tx.clone();
        let h = std::thread::Builder::new()
            .name(format!("hotbench-{tid}"))
            // Evaluating the deepest expression a script may hold needs more than the default
            // 2 MB in unoptimised builds; untouched stack pages cost nothing.
            .stack_size(hotbench_script::EXPR_STACK_BYTES)
            .spawn(move || run_worker(shared, tid, rnd, rngs, vars, tx))
            .map_err(|e| EngineError::Internal(format!("could not create thread: {e}")))?;
        handles.push(h);
    }
    drop(tx);

    // Start-up: every thread connects its clients.
    let mut connect_error = None;
    let mut connected = 0;
    let mut connect_retries = 0;
    while connected < nthreads {
        match rx.recv() {
            Ok(WorkerMsg::Connected { result, retries }) => {
                connected += 1;
                connect_retries += retries;
                if let Err(e) = result {
                    connect_error.get_or_insert(e);
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if let Some(e) = connect_error {
        shared.cancel.store(true, Ordering::SeqCst);
        shared.barrier.wait();
        for h in handles {
            let _ = h.join();
        }
        return Err(EngineError::Connect(e));
    }
    record.connect = hotbench_stats::ConnectPhase {
        duration_ms: (now_us() - start_time) as f64 / 1000.0,
        connections: if cfg.connect_each_txn { 0 } else { nclients },
        concurrency: if cfg.connect_each_txn {
            0
        } else {
            plan.threads
                .iter()
                .map(|t| t.clients.len().min(crate::connect_phase::PER_THREAD))
                .sum()
        },
        retries: connect_retries,
    };
    if let Some(at) = cfg.start_at_us {
        let late_s = crate::clock::wait_until_unix_us(at, signals::stop_requested) as f64 / 1e6;
        if late_s > 0.5 {
            record.notes.push(format!(
                "started {late_s:.1} s after --start-at (connecting took longer)"
            ));
        }
    }
    let rss_start = crate::usage::rss_kib();
    let cpu_start = crate::usage::cpu_seconds();
    let origin = now_us();
    shared.origin.store(origin, Ordering::SeqCst);
    shared.barrier.wait();
    let conn_time_ms = (origin - start_time) as f64 / 1000.0;
    record.conn_time_ms = conn_time_ms;
    record.started_at = to_unix_us(origin) as f64 / 1e6;
    record.status = RunStatus::Running;

    let interval_us = cfg.settings.interval_us.max(1000);
    let ngroups = plan.groups.len();
    let mut pending: BTreeMap<u64, (usize, Vec<TxnCounters>)> = BTreeMap::new();
    let mut done = vec![false; nthreads];
    let mut reported = vec![0u64; nthreads];
    let mut next_index = 0u64;
    let mut tally = Tally::new(&plan.shape());
    let mut aborted = 0;
    let mut conn_total_us = 0;
    // The latest end of the threads' benchmark intervals (see `WorkerMsg::Done`).
    let mut bench_end: Option<i64> = None;
    let mut errors: Vec<ErrorSample> = Vec::new();
    let mut running_totals: Vec<TxnCounters> = vec![TxnCounters::default(); ngroups];
    let progress_us = cfg.display.progress_s.map(|p| i64::from(p) * 1_000_000);
    let mut progress_acc = TxnCounters::default();
    let mut next_progress = progress_us.map(|p| origin + p);
    let mut last_progress = origin;

    while done.iter().any(|d| !d) {
        let msg = match rx.recv() {
            Ok(m) => m,
            Err(_) => break,
        };
        match msg {
            WorkerMsg::Connected { .. } => {}
            WorkerMsg::Interval {
                thread,
                index,
                groups,
            } => {
                reported[thread] = index + 1;
                let entry = pending
                    .entry(index)
                    .or_insert_with(|| (0, vec![TxnCounters::default(); ngroups]));
                entry.0 += 1;
                for (acc, g) in entry.1.iter_mut().zip(&groups) {
                    acc.merge(g);
                }
            }
            WorkerMsg::Done {
                thread,
                tally: t,
                aborted: a,
                conn_total_us: c,
                errors: e,
                bench_end_us,
            } => {
                done[thread] = true;
                bench_end = Some(bench_end.map_or(bench_end_us, |b: i64| b.max(bench_end_us)));
                tally.merge(&t);
                aborted += a;
                conn_total_us += c;
                for sample in e {
                    if let Some(x) = errors
                        .iter_mut()
                        .find(|x| x.sqlstate == sample.sqlstate && x.message == sample.message)
                    {
                        x.count += sample.count;
                    } else {
                        errors.push(sample);
                    }
                }
            }
        }
        // Emit every interval all live threads have reported.
        loop {
            let complete = (0..nthreads).all(|t| done[t] || reported[t] > next_index);
            if !complete {
                break;
            }
            let Some((_, groups)) = pending.remove(&next_index) else {
                if done.iter().all(|d| *d) {
                    break;
                }
                // A finished thread may have no more intervals; nothing to emit yet.
                if (0..nthreads).all(|t| done[t] || reported[t] > next_index) {
                    next_index += 1;
                    continue;
                }
                break;
            };
            let begin = origin + next_index as i64 * interval_us;
            let end = begin + interval_us;
            let now = now_us().min(end);
            let t = ((now - origin) as f64 / 1e6).max(0.0);
            // The last interval of a run is usually partial: rates over its real length.
            let dur = ((now - begin) as f64 / 1e6).max(1e-3);
            let mut total = TxnCounters::default();
            for g in &groups {
                total.merge(g);
            }
            for (rt, g) in running_totals.iter_mut().zip(&groups) {
                rt.merge(g);
            }
            let iv = IntervalRecord {
                t,
                totals: IntervalStats::from_counters(&total, dur),
                groups: if ngroups > 1 {
                    groups
                        .iter()
                        .map(|g| IntervalStats::from_counters(g, dur))
                        .collect()
                } else {
                    Vec::new()
                },
            };
            progress_acc.merge(&total);
            if let (Some(np), Some(p)) = (next_progress.as_mut(), progress_us) {
                // The trailing partial interval of a run gets no progress line (pgbench).
                if end >= *np && now_us() >= end {
                    let span = (end - last_progress) as f64 / 1e6;
                    let stats = IntervalStats::from_counters(&progress_acc, span);
                    let at = if cfg.display.progress_timestamp {
                        to_unix_us(end) as f64 / 1e6
                    } else {
                        (end - origin) as f64 / 1e6
                    };
                    for o in observers.iter_mut() {
                        o.progress(at, &stats);
                    }
                    progress_acc.clear();
                    last_progress = end;
                    while *np <= end {
                        *np += p;
                    }
                }
            }
            for o in observers.iter_mut() {
                o.interval(&iv);
            }
            record.timeline.push(iv);
            next_index += 1;
            if next_index == 1 || next_index.is_multiple_of(JSON_EVERY) {
                let mut running = TxnCounters::default();
                for g in &running_totals {
                    running.merge(g);
                }
                record.duration_s = (now_us() - origin) as f64 / 1e6;
                record.totals = TotalsRecord::from_counters(running, record.duration_s);
                write_json(cfg, &record);
            }
        }
    }
    for h in handles {
        let _ = h.join();
    }
    // pgbench's interval: from the last connection to the last transaction's end (or -T),
    // without teardown and cancelled stuck transactions.
    let duration_s = (bench_end.unwrap_or_else(now_us) - origin).max(1) as f64 / 1e6;
    let cpu_end = crate::usage::cpu_seconds();
    let interrupted = signals::stop_requested();
    tally.finish();
    finish_record(
        &mut record,
        &plan,
        &tally,
        duration_s,
        conn_total_us,
        errors,
    );
    if cfg.connect_each_txn {
        record.conn_time_ms = conn_total_us as f64 / 1000.0;
    }
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
    record.hot_key_zipf = crate::key_zipf::zipf_shares(&plan, &tally.keys);
    record
        .hot_keys
        .sort_by(|a, b| b.time_share.total_cmp(&a.time_share));
    for k in tally.keys.iter().filter(|k| k.approximate) {
        record.notes.push(format!(
            "hot keys: more than {} distinct values of {}: counts of rarely seen values are estimates (space-saving sketch; attempts_error bounds the over-count)",
            cfg.settings.key_capacity, k.variable
        ));
    }
    record.hosts = tally
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| hotbench_stats::HostRecord {
            host: shared.connector.host_label(i),
            clients: h.clients,
            moved_in: h.moved_in,
            totals: TotalsRecord::from_counters(h.counters.clone(), duration_s),
        })
        .collect();
    let c = &record.totals.counters;
    let txns = (c.cnt + c.failures()).max(1) as f64;
    let (user, sys) = (cpu_end.0 - cpu_start.0, cpu_end.1 - cpu_start.1);
    record.client = hotbench_stats::ClientUsage {
        rss_start_kib: rss_start,
        rss_end_kib: crate::usage::rss_kib(),
        rss_peak_kib: crate::usage::peak_rss_kib(),
        cpu_user_s: user,
        cpu_sys_s: sys,
        cpu_us_per_txn: (user + sys) / txns * 1e6,
    };
    let lost = record.totals.counters.ended_disconnected;
    if lost > 0 {
        record.notes.push(format!(
            "{lost} of {nclients} clients had no connection when the run ended (the server went away)"
        ));
    }
    record.status = if interrupted {
        RunStatus::Interrupted
    } else if aborted > 0 {
        RunStatus::Aborted
    } else if lost >= nclients as u64 {
        RunStatus::Disconnected
    } else {
        RunStatus::Completed
    };
    for o in observers.iter_mut() {
        o.finish(&mut record);
    }
    write_json(cfg, &record);
    Ok(RunOutcome {
        record,
        aborted_clients: aborted,
        interrupted,
    })
}

fn write_json(cfg: &RunConfig, record: &RunRecord) {
    if let Some(path) = &cfg.display.json_path {
        // Snapshots only: the command writes the final document and reports its failure.
        if let Err(e) = hotbench_stats::json_file::write_snapshot(path, record) {
            eprintln!("hotbench: error: {e}");
        }
    }
}

fn finish_record(
    record: &mut RunRecord,
    plan: &Plan,
    tally: &Tally,
    duration_s: f64,
    _conn_total_us: i64,
    errors: Vec<ErrorSample>,
) {
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
                            .map(|(c, ct)| CommandRecord {
                                index: c.index,
                                line: c.line,
                                text: c.first_line.clone(),
                                full_text: match &c.kind {
                                    hotbench_script::CommandKind::Sql(sql)
                                        if sql.text().trim_end() != c.first_line =>
                                    {
                                        sql.text().trim_end().to_string()
                                    }
                                    _ => String::new(),
                                },
                                count: ct.latency.count,
                                mean_ms: ct.latency.mean() / 1000.0,
                                failures: ct.failures,
                                retries: ct.retries,
                                latency: ct.hist.percentiles(),
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    record.totals = TotalsRecord::from_counters(total, duration_s);
    let mut errors = errors;
    errors.sort_by_key(|e| std::cmp::Reverse(e.count));
    record.errors = errors;
}
