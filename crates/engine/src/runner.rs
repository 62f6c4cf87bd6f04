//! The coordinator: builds the per-client state pgbench's way (seeds, variables), starts one
//! worker thread per `-j`, merges their interval reports into the timeline
//! (`interval_merge.rs`), prints nothing itself (observers do), rewrites the JSON result
//! atomically as the run goes, and returns the final record (`record_build.rs`).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

use hotbench_script::{client_variables, define, derive_seeds, Variables};
use hotbench_stats::record::{ErrorSample, RunStatus};
use hotbench_stats::{RunRecord, TotalsRecord, TxnCounters};
use hotbench_wire::Connector;

use crate::clock::{now_us, to_unix_us};
use crate::config::RunConfig;
use crate::interval_merge::IntervalMerger;
use crate::observe::RunObserver;
use crate::plan::Plan;
use crate::progress::Progress;
use crate::record_build::{self, merge_errors, RunEnd};
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
    let defines = defines(&cfg)?;
    crate::perturb::check(&cfg).map_err(EngineError::Config)?;
    let connector = Arc::new(connector(&cfg)?);
    let plan = Plan::new(cfg);
    let cfg = &plan.cfg;
    let nthreads = plan.threads.len();
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        connector,
        barrier: Barrier::new(nthreads + 1),
        origin: AtomicI64::new(0),
        cancel: AtomicBool::new(false),
        knobs: Arc::new(crate::knobs::Knobs::new(cfg.settings.rtt_us)),
    });
    // pgbench's "initial connection time" starts before its threads are created.
    let start_time = now_us();
    let (handles, rx) = spawn_workers(&plan, &shared, &defines)?;
    let (retries, in_flight) = match await_connections(&rx, nthreads) {
        Ok(r) => r,
        Err(e) => {
            shared.cancel.store(true, Ordering::SeqCst);
            shared.barrier.wait();
            for h in handles {
                let _ = h.join();
            }
            return Err(EngineError::Connect(e));
        }
    };
    record.connect = connect_record(&plan, nclients, now_us() - start_time, retries, in_flight);
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
    let perturb = crate::perturb::Driver::start(cfg, origin, shared.knobs.clone());
    record.conn_time_ms = (origin - start_time) as f64 / 1000.0;
    record.started_at = to_unix_us(origin) as f64 / 1e6;
    record.status = RunStatus::Running;

    let mut c = Coordinator::new(&plan, origin);
    c.collect(&rx, &mut record, observers);
    for h in handles {
        let _ = h.join();
    }
    let perturbations = perturb.map(|d| d.finish()).unwrap_or_default();
    // pgbench's interval: from the last connection to the last transaction's end (or -T),
    // without teardown and cancelled stuck transactions.
    let duration_s = (c.bench_end.unwrap_or_else(now_us) - origin).max(1) as f64 / 1e6;
    let cpu_end = crate::usage::cpu_seconds();
    let interrupted = signals::stop_requested();
    c.tally.finish();
    let end = RunEnd {
        duration_s,
        errors: std::mem::take(&mut c.errors),
        aborted: c.aborted,
        interrupted,
        nclients,
        host_labels: (0..c.tally.hosts.len())
            .map(|i| shared.connector.host_label(i))
            .collect(),
        cpu_s: (cpu_end.0 - cpu_start.0, cpu_end.1 - cpu_start.1),
        rss_start_kib: rss_start,
    };
    record_build::finish(&mut record, &plan, &c.tally, end);
    record.perturbations = perturbations;
    hotbench_stats::perturbation_record::judge(
        &mut record.perturbations,
        &record.timeline,
        hotbench_stats::RecoveryRule {
            hold_s: cfg.settings.recovery_hold_us as f64 / 1e6,
            ..Default::default()
        },
    );
    if cfg.connect_each_txn {
        record.conn_time_ms = c.conn_total_us as f64 / 1000.0;
    }
    for o in observers.iter_mut() {
        o.finish(&mut record);
    }
    write_json(cfg, &record);
    Ok(RunOutcome {
        record,
        aborted_clients: c.aborted,
        interrupted,
    })
}

/// `-D` variables, checked.
fn defines(cfg: &RunConfig) -> Result<Variables, EngineError> {
    let mut defines = Variables::new();
    for (n, v) in &cfg.defines {
        define(&mut defines, &format!("{n}={v}")).map_err(EngineError::Config)?;
    }
    Ok(defines)
}

/// The target's connector, `application_name` defaulting to the run's.
fn connector(cfg: &RunConfig) -> Result<Connector, EngineError> {
    let mut params = cfg
        .conn
        .resolve()
        .map_err(|e| EngineError::Config(e.to_string()))?;
    if params.application_name.is_none() {
        params.application_name = Some(cfg.application_name.clone());
    }
    Ok(Connector::new(params))
}

type Workers = (Vec<JoinHandle<()>>, mpsc::Receiver<WorkerMsg>);

/// One thread per `-j`, each with its clients' PRNGs and variables seeded pgbench's way.
fn spawn_workers(
    plan: &Arc<Plan>,
    shared: &Arc<Shared>,
    defines: &Variables,
) -> Result<Workers, EngineError> {
    let cfg = &plan.cfg;
    let nthreads = plan.threads.len();
    let nclients = cfg.total_clients();
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
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    for tid in 0..nthreads {
        let ids: Vec<usize> = plan.threads[tid].clients.iter().map(|c| c.0).collect();
        let rngs = ids.iter().map(|&id| (id, seeds.clients[id])).collect();
        let vars = ids
            .iter()
            .map(|&id| {
                client_variables(
                    defines,
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
    Ok((handles, rx))
}

/// Waits until every thread connected its clients; the first error, or the transient
/// refusals retried and the start-ups in flight at most (summed over threads).
fn await_connections(
    rx: &mpsc::Receiver<WorkerMsg>,
    nthreads: usize,
) -> Result<(u64, usize), String> {
    let mut connect_error = None;
    let mut connected = 0;
    let (mut retries, mut in_flight) = (0, 0);
    while connected < nthreads {
        match rx.recv() {
            Ok(WorkerMsg::Connected {
                result,
                retries: r,
                peak,
            }) => {
                connected += 1;
                retries += r;
                in_flight += peak;
                if let Err(e) = result {
                    connect_error.get_or_insert(e);
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    connect_error.map_or(Ok((retries, in_flight)), Err)
}

fn connect_record(
    plan: &Plan,
    nclients: usize,
    took_us: i64,
    retries: u64,
    in_flight: usize,
) -> hotbench_stats::ConnectPhase {
    let each_txn = plan.cfg.connect_each_txn;
    hotbench_stats::ConnectPhase {
        duration_ms: took_us as f64 / 1000.0,
        connections: if each_txn { 0 } else { nclients },
        concurrency: if each_txn { 0 } else { in_flight },
        retries,
    }
}

/// What the coordinator gathers from the workers while the run goes.
struct Coordinator<'p> {
    plan: &'p Plan,
    origin: i64,
    merger: IntervalMerger,
    tally: Tally,
    aborted: usize,
    conn_total_us: i64,
    /// The latest end of the threads' benchmark intervals (see `WorkerMsg::Done`).
    bench_end: Option<i64>,
    errors: Vec<ErrorSample>,
    running_totals: Vec<TxnCounters>,
    progress: Progress,
}

impl<'p> Coordinator<'p> {
    fn new(plan: &'p Plan, origin: i64) -> Self {
        let cfg = &plan.cfg;
        Coordinator {
            plan,
            origin,
            merger: IntervalMerger::new(plan.threads.len(), plan.groups.len()),
            tally: Tally::new(&plan.shape()),
            aborted: 0,
            conn_total_us: 0,
            bench_end: None,
            errors: Vec::new(),
            running_totals: vec![TxnCounters::default(); plan.groups.len()],
            progress: Progress::new(
                cfg.display.progress_s.map(|p| i64::from(p) * 1_000_000),
                cfg.display.progress_timestamp,
                origin,
            ),
        }
    }

    /// Receives the workers' reports until every thread is done, emitting each complete
    /// interval to the observers and the timeline, and the JSON snapshot now and then.
    fn collect(
        &mut self,
        rx: &mpsc::Receiver<WorkerMsg>,
        record: &mut RunRecord,
        observers: &mut [&mut dyn RunObserver],
    ) {
        while !self.merger.all_done() {
            let Ok(msg) = rx.recv() else { break };
            match msg {
                WorkerMsg::Connected { .. } => {}
                WorkerMsg::Interval {
                    thread,
                    index,
                    groups,
                } => self.merger.add(thread, index, &groups),
                WorkerMsg::Done {
                    thread,
                    tally,
                    aborted,
                    conn_total_us,
                    errors,
                    bench_end_us,
                } => {
                    self.merger.thread_done(thread);
                    self.bench_end =
                        Some(self.bench_end.map_or(bench_end_us, |b| b.max(bench_end_us)));
                    self.tally.merge(&tally);
                    self.aborted += aborted;
                    self.conn_total_us += conn_total_us;
                    merge_errors(&mut self.errors, errors);
                }
            }
            while let Some((index, groups)) = self.merger.pop() {
                self.emit(index, &groups, record, observers);
            }
        }
    }

    fn emit(
        &mut self,
        index: u64,
        groups: &[TxnCounters],
        record: &mut RunRecord,
        observers: &mut [&mut dyn RunObserver],
    ) {
        let interval_us = self.plan.cfg.settings.interval_us.max(1000);
        let begin = self.origin + index as i64 * interval_us;
        let now = now_us();
        let iv = record_build::interval_record(self.origin, begin, interval_us, now, groups);
        for (rt, g) in self.running_totals.iter_mut().zip(groups) {
            rt.merge(g);
        }
        let mut total = TxnCounters::default();
        groups.iter().for_each(|g| total.merge(g));
        if let Some((at, stats)) = self.progress.interval(begin + interval_us, now, &total) {
            for o in observers.iter_mut() {
                o.progress(at, &stats);
            }
        }
        for o in observers.iter_mut() {
            o.interval(&iv);
        }
        record.timeline.push(iv);
        let emitted = index + 1;
        if emitted == 1 || emitted.is_multiple_of(JSON_EVERY) {
            let mut running = TxnCounters::default();
            self.running_totals.iter().for_each(|g| running.merge(g));
            record.duration_s = (now_us() - self.origin) as f64 / 1e6;
            record.totals = TotalsRecord::from_counters(running, record.duration_s);
            write_json(&self.plan.cfg, record);
        }
    }
}

fn write_json(cfg: &RunConfig, record: &RunRecord) {
    if let Some(path) = &cfg.display.json_path {
        // Snapshots only: the command writes the final document and reports its failure.
        if let Err(e) = hotbench_stats::json_file::write_snapshot(path, record) {
            eprintln!("hotbench: error: {e}");
        }
    }
}
