//! One worker thread (`-j`): owns its clients' connections and drives them from a
//! level-triggered epoll loop, exactly one state machine step at a time per client, without
//! locks or allocation on the hot path. Statistics go to the coordinator over a channel, one
//! message per timeline interval and one at the end.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};

use hotbench_script::{choose_script, poisson_rand, CommandKind, ThreadRandom};
use hotbench_stats::{FailureKind, TxnCounters};
use hotbench_wire::{Connector, DbError};

use crate::clock::now_us;
use crate::collect::Step;
use crate::config::{GoodputRule, OnDisconnect, QueryMode, GOODPUT_VARIABLE};
use crate::plan::Plan;
use crate::poller::Poller;
use crate::send::{encode_command, SendBuffers};
use crate::signals;
use crate::slot::{Outcome, Phase, Resume, Slot};
use crate::tally::Tally;
use crate::txlog::TxLog;

/// Poller token of the stop eventfd.
const WAKE_TOKEN: u64 = u64::MAX - 1;
/// Distinct error messages remembered per thread.
const MAX_ERROR_SAMPLES: usize = 20;

pub enum WorkerMsg {
    /// Initial connections done (or failed) after `conn_us`.
    Connected { result: Result<i64, String> },
    Interval {
        thread: usize,
        index: u64,
        groups: Vec<TxnCounters>,
    },
    Done {
        thread: usize,
        tally: Box<Tally>,
        aborted: usize,
        conn_total_us: i64,
        errors: Vec<(String, String, u64)>,
    },
}

/// Shared between coordinator and workers.
pub struct Shared {
    pub plan: Arc<Plan>,
    pub connector: Arc<Connector>,
    pub barrier: Barrier,
    /// Monotonic µs at which the benchmark started (set by the coordinator).
    pub origin: AtomicI64,
    /// Set by the coordinator when start-up failed: workers exit at once.
    pub cancel: AtomicBool,
}

struct Ctx {
    plan: Arc<Plan>,
    tid: usize,
    tally: Tally,
    poller: Poller,
    bufs: SendBuffers,
    rnd: ThreadRandom,
    trigger: Vec<i64>,
    delay: Vec<Option<f64>>,
    end_us: Option<i64>,
    connector: Arc<Connector>,
    conn_total_us: i64,
    errors: Vec<(String, String, u64)>,
    log: Option<TxLog>,
    any_aborted: bool,
    /// The thread owns one connection: wait for results with a blocking read.
    blocking: bool,
}

/// How long transactions may run past the end of a -T run before they are cancelled.
const END_GRACE_US: i64 = 2_000_000;

/// Upper bound of one blocking read, so interval reports and Ctrl-C are never held up.
const BLOCKING_READ_TIMEOUT_US: i64 = 100_000;

pub fn run_worker(
    shared: Arc<Shared>,
    tid: usize,
    rnd: ThreadRandom,
    client_rngs: Vec<(usize, hotbench_script::PrngState)>,
    vars: Vec<hotbench_script::Variables>,
    tx: Sender<WorkerMsg>,
) {
    // A private copy: the hot path clones this Arc per command, and a reference count shared
    // by all threads would bounce one cache line between cores on every clone.
    let plan = Arc::new((*shared.plan).clone());
    let assigned = plan.threads[tid].clients.clone();
    let shape = plan.shape();
    let mut slots: Vec<Slot> = assigned
        .iter()
        .zip(client_rngs)
        .zip(vars)
        .map(|((&(id, g), (_, rng)), v)| {
            let interp = hotbench_script::Client::new(id, v, rng);
            Slot::new(id, g, interp, &shape[g], plan.cfg.random_seed)
        })
        .collect();
    let poller = match Poller::new(slots.len() + 2) {
        Ok(p) => p,
        Err(e) => {
            let _ = tx.send(WorkerMsg::Connected {
                result: Err(format!("could not create an epoll set: {e}")),
            });
            shared.barrier.wait();
            return;
        }
    };
    let mut cx = Ctx {
        tid,
        tally: Tally::new(&shape),
        poller,
        bufs: SendBuffers::default(),
        rnd,
        trigger: vec![0; plan.groups.len()],
        delay: (0..plan.groups.len())
            .map(|g| {
                let here = assigned.iter().filter(|(_, gg)| *gg == g).count();
                plan.throttle_delay_us(g, here)
            })
            .collect(),
        end_us: None,
        connector: shared.connector.clone(),
        conn_total_us: 0,
        errors: Vec::new(),
        log: None,
        any_aborted: false,
        blocking: slots.len() == 1,
        plan,
    };
    let wake_fd = signals::install();
    let _ = cx.poller.add(wake_fd, WAKE_TOKEN);

    // Connect every client before the start (pgbench's STEADY phase), unless -C.
    let t0 = now_us();
    let mut result = Ok(0);
    if !cx.plan.cfg.connect_each_txn {
        for (i, slot) in slots.iter_mut().enumerate() {
            match connect_slot(slot, i, &mut cx) {
                Ok(()) => {}
                Err(e) => {
                    result = Err(format!(
                        "could not create connection for client {}: {e}",
                        slot.id
                    ));
                    break;
                }
            }
        }
    }
    let conn_us = now_us() - t0;
    let _ = tx.send(WorkerMsg::Connected {
        result: result.map(|_| conn_us),
    });
    shared.barrier.wait();
    if shared.cancel.load(Ordering::SeqCst) {
        return;
    }
    match TxLog::open(&cx.plan.cfg, tid) {
        Ok(l) => cx.log = l,
        Err(e) => {
            eprintln!("hotbench: error: {e}");
            signals::request_stop();
        }
    }
    let origin = shared.origin.load(Ordering::SeqCst);
    for t in cx.trigger.iter_mut() {
        *t = origin;
    }
    cx.end_us = match cx.plan.cfg.limit {
        crate::config::Limit::Duration(d) => Some(origin + d),
        crate::config::Limit::Transactions(_) => None,
    };
    let interval = cx.plan.cfg.interval_us.max(1000);
    let mut next_boundary = origin + interval;
    let mut index = 0u64;
    let mut ready = Vec::with_capacity(slots.len() + 2);

    loop {
        let mut now = now_us();
        if signals::stop_requested() {
            for s in slots.iter_mut() {
                if !s.is_done() {
                    abandon(s, &mut cx);
                }
            }
        }
        if cx.end_us.is_some_and(|e| now >= e + END_GRACE_US) {
            // Transactions blocked past the end (e.g. in a lock queue) would keep the run
            // going forever: cancel them on the server and report them as unfinished.
            for s in slots.iter_mut() {
                if !s.is_done() {
                    abandon(s, &mut cx);
                }
            }
        }
        let mut alive = 0;
        let mut next_wake = next_boundary;
        for (i, s) in slots.iter_mut().enumerate() {
            if s.is_done() {
                continue;
            }
            if s.flush_pending {
                retry_flush(s, i, &mut cx);
            }
            if s.is_runnable(now) {
                advance(s, i, &mut cx);
                now = now_us();
            }
            if s.is_done() {
                // pgbench's finishCon: a finished client leaves the poller at once, so a
                // late message or EOF on its socket can neither spin the loop nor revive it.
                drop_connection(s, &mut cx);
                continue;
            }
            alive += 1;
            if s.is_sleeping() {
                next_wake = next_wake.min(s.wake_at);
            }
            if s.flush_pending {
                next_wake = next_wake.min(now + 100);
            }
        }
        if cx.any_aborted && cx.plan.cfg.exit_on_abort {
            signals::request_stop();
        }
        if alive == 0 {
            break;
        }
        if now >= next_boundary {
            send_interval(&mut cx, &tx, &mut index);
            next_boundary += interval;
            while next_boundary <= now {
                send_interval(&mut cx, &tx, &mut index);
                next_boundary += interval;
            }
            continue;
        }
        if let Some(end) = cx.end_us {
            if end > now {
                next_wake = next_wake.min(end);
            } else {
                next_wake = next_wake.min(end + END_GRACE_US);
            }
        }
        if cx.blocking {
            // One connection: read its results directly (one syscall instead of epoll +
            // read); the socket's receive timeout bounds the wait.
            if let Some(s) = slots.first_mut() {
                if matches!(s.phase, Phase::WaitResult | Phase::WaitRollback)
                    && !s.flush_pending
                    && !signals::stop_requested()
                {
                    on_readable(s, 0, &mut cx);
                    continue;
                }
            }
        }
        if let Err(e) = cx.poller.wait(Some(next_wake), &mut ready) {
            eprintln!("hotbench: error: epoll_wait() failed: {e}");
            break;
        }
        for &tok in &ready {
            if tok == WAKE_TOKEN {
                continue;
            }
            if let Some(s) = slots.get_mut(tok as usize) {
                on_readable(s, tok as usize, &mut cx);
            }
        }
    }
    // Close connections (Terminate) and flush the log.
    for s in slots.iter_mut() {
        if let Some(c) = s.conn.take() {
            c.close();
        }
    }
    if let Some(log) = cx.log.as_mut() {
        log.finish();
    }
    send_interval(&mut cx, &tx, &mut index);
    let aborted = slots.iter().filter(|s| s.phase == Phase::Aborted).count();
    let _ = tx.send(WorkerMsg::Done {
        thread: tid,
        tally: Box::new(std::mem::take(&mut cx.tally)),
        aborted,
        conn_total_us: cx.conn_total_us,
        errors: std::mem::take(&mut cx.errors),
    });
}

fn send_interval(cx: &mut Ctx, tx: &Sender<WorkerMsg>, index: &mut u64) {
    let groups = cx.tally.take_intervals();
    let _ = tx.send(WorkerMsg::Interval {
        thread: cx.tid,
        index: *index,
        groups,
    });
    *index += 1;
}

fn connect_slot(slot: &mut Slot, token: usize, cx: &mut Ctx) -> Result<(), hotbench_wire::Error> {
    let t0 = now_us();
    let mut conn = cx.connector.connect()?;
    cx.conn_total_us += now_us() - t0;
    if cx.blocking {
        conn.set_nonblocking(false)
            .map_err(hotbench_wire::Error::Io)?;
        set_read_timeout(conn.as_raw_fd(), BLOCKING_READ_TIMEOUT_US)
            .map_err(hotbench_wire::Error::Io)?;
    } else {
        conn.set_nonblocking(true)
            .map_err(hotbench_wire::Error::Io)?;
    }
    cx.poller
        .add(conn.as_raw_fd(), token as u64)
        .map_err(hotbench_wire::Error::Io)?;
    slot.forget_prepared();
    slot.conn = Some(conn);
    Ok(())
}

/// stderr for `debug()`, locked only when something is written: taking the process-wide
/// stderr lock for every meta-command would make all threads contend on it.
struct LazyStderr;

impl io::Write for LazyStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stderr().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// SO_RCVTIMEO: a blocking read returns WouldBlock after `us` without data.
fn set_read_timeout(fd: std::os::fd::RawFd, us: i64) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    };
    // SAFETY: setting a socket option on a socket we own, with a valid timeval.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn drop_connection(slot: &mut Slot, cx: &mut Ctx) {
    if let Some(c) = slot.conn.take() {
        cx.poller.remove(c.as_raw_fd());
        c.close();
    }
}

/// Runs the client's state machine until it has to wait.
fn advance(slot: &mut Slot, token: usize, cx: &mut Ctx) {
    loop {
        let now = now_us();
        match slot.phase {
            Phase::Finished | Phase::Aborted | Phase::WaitResult | Phase::WaitRollback => return,
            Phase::Reconnect => {
                if now < slot.wake_at {
                    return;
                }
                if past_end(cx, now) || signals::stop_requested() {
                    let gap = (now - slot.disconnected_at).max(0) as u64;
                    let (g, s) = (slot.group, slot.script);
                    cx.tally.each(g, s, |c| c.disconnected_us += gap);
                    slot.phase = Phase::Finished;
                    return;
                }
                match connect_slot(slot, token, cx) {
                    Ok(()) => {
                        slot.reconnect_attempts = 0;
                        let gap = (now_us() - slot.disconnected_at).max(0) as u64;
                        let (g, s) = (slot.group, slot.script);
                        cx.tally.each(g, s, |c| {
                            c.reconnects += 1;
                            c.disconnected_us += gap;
                        });
                        slot.phase = Phase::ChooseScript;
                    }
                    Err(_) => {
                        slot.reconnect_attempts += 1;
                        let backoff = (10_000i64 << slot.reconnect_attempts.min(7)).min(1_000_000);
                        slot.wake_at = now + backoff;
                        return;
                    }
                }
            }
            Phase::ChooseScript => {
                if finished(slot, cx, now) {
                    slot.phase = Phase::Finished;
                    return;
                }
                if slot.conn.is_none() {
                    if let Err(e) = connect_slot(slot, token, cx) {
                        if cx.plan.cfg.connect_each_txn {
                            eprintln!(
                                "hotbench: error: client {} aborted while establishing connection: {e}",
                                slot.id
                            );
                            abort(slot, cx);
                            return;
                        }
                        slot.phase = Phase::Reconnect;
                        slot.wake_at = now + 10_000;
                        return;
                    }
                }
                let g = &cx.plan.groups[slot.group];
                slot.script = choose_script(&mut cx.rnd.choose, &g.weights);
                slot.cmd = 0;
                slot.tries = 1;
                slot.retried = false;
                if let Some(delay) = cx.delay[slot.group] {
                    let wait = poisson_rand(&mut cx.rnd.throttle, delay);
                    cx.trigger[slot.group] += wait;
                    slot.txn_scheduled = cx.trigger[slot.group];
                    if let Some(limit) = cx.plan.cfg.latency_limit_us {
                        // Too late already: skip this slot of the schedule (pgbench).
                        while slot.txn_scheduled < now - limit {
                            let (g, s) = (slot.group, slot.script);
                            cx.tally.each(g, s, |c| c.skipped += 1);
                            if let Some(log) = cx.log.as_mut() {
                                log.skipped(slot.id, slot.txns_done, s, now);
                            }
                            slot.txns_done += 1;
                            if limit_reached(slot, cx) {
                                slot.phase = Phase::Finished;
                                return;
                            }
                            let wait = poisson_rand(&mut cx.rnd.throttle, delay);
                            cx.trigger[slot.group] += wait;
                            slot.txn_scheduled = cx.trigger[slot.group];
                        }
                    }
                    slot.wake_at = slot.txn_scheduled;
                    slot.phase = Phase::Throttle;
                } else {
                    slot.phase = Phase::StartTx;
                }
            }
            Phase::Throttle => {
                if now < slot.wake_at {
                    return;
                }
                if past_end(cx, now) {
                    slot.phase = Phase::Finished;
                    return;
                }
                slot.phase = Phase::StartTx;
            }
            Phase::StartTx => {
                slot.txn_begin = now;
                if cx.delay[slot.group].is_none() {
                    slot.txn_scheduled = now;
                }
                slot.interp.begin_transaction();
                if slot.interp.vars.contains(GOODPUT_VARIABLE) {
                    let _ = slot.interp.vars.set_value(
                        "goodput",
                        GOODPUT_VARIABLE,
                        hotbench_script::Value::Int(1),
                    );
                }
                slot.phase = Phase::Command;
            }
            Phase::Sleep => {
                if now < slot.wake_at {
                    return;
                }
                match slot.resume {
                    Resume::Command => slot.phase = Phase::Command,
                    Resume::Result => {
                        slot.phase = Phase::WaitResult;
                        process_result(slot, token, cx);
                    }
                    Resume::Rollback => {
                        slot.phase = Phase::WaitRollback;
                        process_rollback(slot, token, cx);
                    }
                }
            }
            Phase::Command => {
                let plan = cx.plan.clone();
                let script = &plan.groups[slot.group].scripts[slot.script];
                let Some(command) = script.command(slot.cmd) else {
                    end_transaction(slot, cx, Outcome::Committed);
                    continue;
                };
                match &command.kind {
                    CommandKind::Sql(sql) => {
                        send_sql(slot, token, cx, sql);
                        if slot.phase == Phase::WaitResult && slot.pipeline.is_none() {
                            return;
                        }
                        if slot.phase != Phase::Command {
                            return;
                        }
                    }
                    CommandKind::Meta(_) => {
                        let t0 = now;
                        let r = slot
                            .interp
                            .execute(script, slot.script, slot.cmd, &mut LazyStderr);
                        if cx.plan.cfg.report_per_command {
                            let dt = now_us() - t0;
                            if let Some(c) = cx.tally.command(slot.group, slot.script, slot.cmd) {
                                c.latency.add(dt as f64);
                                c.hist.record_us(dt.max(0) as u64);
                            }
                        }
                        match r {
                            Ok(hotbench_script::Action::Next) => slot.cmd += 1,
                            Ok(hotbench_script::Action::Jump(n)) => slot.cmd = n,
                            Ok(hotbench_script::Action::Sleep(us)) => {
                                slot.cmd += 1;
                                if us > 0 {
                                    slot.wake_at = now_us() + us;
                                    slot.resume = Resume::Command;
                                    slot.phase = Phase::Sleep;
                                    return;
                                }
                            }
                            Ok(hotbench_script::Action::StartPipeline) => {
                                if cx.plan.cfg.query_mode == QueryMode::Simple {
                                    eprintln!("hotbench: error: client {} aborted: cannot use pipeline mode with the simple query protocol", slot.id);
                                    abort(slot, cx);
                                    return;
                                }
                                slot.pipeline = Some(0);
                                slot.cmd += 1;
                            }
                            Ok(hotbench_script::Action::SyncPipeline) => {
                                if let (Some(n), Some(conn)) = (slot.pipeline, slot.conn.as_mut()) {
                                    hotbench_wire::encode::sync(conn.out_buf());
                                    slot.pipeline = Some(n + 1);
                                }
                                slot.cmd += 1;
                            }
                            Ok(hotbench_script::Action::EndPipeline) => {
                                let Some(n) = slot.pipeline else {
                                    slot.cmd += 1;
                                    continue;
                                };
                                if let Some(conn) = slot.conn.as_mut() {
                                    hotbench_wire::encode::sync(conn.out_buf());
                                }
                                slot.pipeline = Some(n + 1);
                                slot.cmd_start = now_us();
                                slot.collector.start(None);
                                if !flush(slot, token, cx) {
                                    return;
                                }
                                slot.phase = Phase::WaitResult;
                                return;
                            }
                            Err(e) => {
                                eprintln!(
                                    "hotbench: error: client {} command {}: {}",
                                    slot.id, e.command, e.message
                                );
                                eprintln!(
                                    "hotbench: error: {}",
                                    e.abort_line(slot.id, slot.script)
                                );
                                abort(slot, cx);
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
}

fn send_sql(slot: &mut Slot, token: usize, cx: &mut Ctx, sql: &hotbench_script::SqlCommand) {
    let mode = cx.plan.cfg.query_mode;
    let in_pipeline = slot.pipeline.is_some();
    let Some(conn) = slot.conn.as_mut() else {
        lost(slot, token, cx, None, "no connection");
        return;
    };
    let key = (slot.group, slot.script, slot.cmd);
    let prepared = &mut slot.prepared[slot.script][slot.cmd];
    match encode_command(
        conn.out_buf(),
        &mut cx.bufs,
        mode,
        sql,
        &slot.interp.vars,
        key,
        prepared,
        !in_pipeline,
    ) {
        Ok(parsed) => slot.parsed_named = parsed,
        Err(e) => {
            eprintln!(
                "hotbench: error: client {} script {} aborted in command {}: {e}",
                slot.id, slot.script, slot.cmd
            );
            abort(slot, cx);
            return;
        }
    }
    if in_pipeline {
        // Results are read at \endpipeline; pgbench does not wait either.
        slot.cmd += 1;
        return;
    }
    slot.cmd_start = now_us();
    slot.collector.start(Some(sql));
    if flush(slot, token, cx) {
        slot.phase = Phase::WaitResult;
    }
}

/// Writes the output buffer; false if the client lost its connection.
fn flush(slot: &mut Slot, token: usize, cx: &mut Ctx) -> bool {
    let Some(conn) = slot.conn.as_mut() else {
        return false;
    };
    match conn.flush() {
        Ok(done) => {
            slot.flush_pending = !done;
            slot.phase = Phase::WaitResult;
            true
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            slot.flush_pending = true;
            slot.phase = Phase::WaitResult;
            true
        }
        Err(e) => {
            lost(slot, token, cx, None, &e.to_string());
            false
        }
    }
}

fn retry_flush(slot: &mut Slot, token: usize, cx: &mut Ctx) {
    let Some(conn) = slot.conn.as_mut() else {
        slot.flush_pending = false;
        return;
    };
    match conn.flush() {
        Ok(done) => slot.flush_pending = !done,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) => {
            slot.flush_pending = false;
            lost(slot, token, cx, None, &e.to_string());
        }
    }
}

fn on_readable(slot: &mut Slot, token: usize, cx: &mut Ctx) {
    if slot.is_done() {
        drop_connection(slot, cx);
        return;
    }
    let Some(conn) = slot.conn.as_mut() else {
        return;
    };
    match conn.fill() {
        Ok(0) => {
            lost(
                slot,
                token,
                cx,
                None,
                "server closed the connection unexpectedly",
            );
            return;
        }
        Ok(_) => {}
        Err(e)
            if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted =>
        {
            return
        }
        Err(e) => {
            lost(slot, token, cx, None, &e.to_string());
            return;
        }
    }
    let plan = cx.plan.clone();
    loop {
        let Some(conn) = slot.conn.as_mut() else {
            return;
        };
        let msg = match conn.next_message() {
            Ok(Some(m)) => m,
            Ok(None) => return,
            Err(e) => {
                lost(slot, token, cx, None, &e.to_string());
                return;
            }
        };
        if !matches!(slot.phase, Phase::WaitResult | Phase::WaitRollback) {
            // Asynchronous messages (notices, parameter status) between commands.
            if let hotbench_wire::Message::ErrorResponse(body) = &msg {
                let err = DbError::from_error_response(body).ok();
                lost(
                    slot,
                    token,
                    cx,
                    err,
                    "server sent an error outside a command",
                );
                return;
            }
            continue;
        }
        let sql = if slot.phase == Phase::WaitResult && slot.pipeline.is_none() {
            match plan.groups[slot.group].scripts[slot.script]
                .command(slot.cmd)
                .map(|c| &c.kind)
            {
                Some(CommandKind::Sql(s)) => Some(s),
                _ => None,
            }
        } else {
            None
        };
        let step = match slot.collector.on_message(&msg, sql, &mut slot.interp.vars) {
            Ok(s) => s,
            Err(e) => {
                lost(slot, token, cx, None, &e.to_string());
                return;
            }
        };
        if let Some(err) = &slot.collector.error {
            if err.is_fatal() {
                let err = slot.collector.error.take();
                lost(slot, token, cx, err, "the server terminated the session");
                return;
            }
        }
        if step == Step::Done {
            if let Some(conn) = slot.conn.as_mut() {
                conn.note_ready_for_query(slot.collector.tx_status);
            }
            if let Some(n) = slot.pipeline {
                if n > 1 {
                    slot.pipeline = Some(n - 1);
                    continue;
                }
            }
            let rtt = cx.plan.cfg.rtt_us;
            if rtt > 0 {
                slot.resume = if slot.phase == Phase::WaitRollback {
                    Resume::Rollback
                } else {
                    Resume::Result
                };
                slot.wake_at = now_us() + rtt;
                slot.phase = Phase::Sleep;
                return;
            }
            if slot.phase == Phase::WaitRollback {
                process_rollback(slot, token, cx);
            } else {
                process_result(slot, token, cx);
            }
            if slot.is_runnable(now_us()) {
                advance(slot, token, cx);
            }
            return;
        }
    }
}

/// A command's results are complete (after the emulated round trip, if any).
fn process_result(slot: &mut Slot, token: usize, cx: &mut Ctx) {
    let now = now_us();
    let latency = now - slot.cmd_start;
    let in_pipeline = slot.pipeline.is_some();
    if in_pipeline {
        slot.pipeline = None;
    }
    if let Some(err) = slot.collector.error.take() {
        if slot.parsed_named && !slot.collector.parsed {
            // The server rejected the Parse: the named statement does not exist.
            if let Some(p) = slot
                .prepared
                .get_mut(slot.script)
                .and_then(|s| s.get_mut(slot.cmd))
            {
                *p = false;
            }
        }
        handle_sql_error(slot, token, cx, err);
        return;
    }
    if let Some(e) = slot.collector.store_error.take() {
        eprintln!(
            "hotbench: error: {}",
            e.pgbench_message(slot.id, slot.script, slot.cmd)
        );
        abort(slot, cx);
        return;
    }
    if let Some(c) = cx.tally.command(slot.group, slot.script, slot.cmd) {
        c.latency.add(latency as f64);
        c.hist.record_us(latency.max(0) as u64);
    }
    slot.cmd += 1;
    slot.phase = Phase::Command;
}

enum ErrClass {
    Serialization,
    Deadlock,
    OtherRetriable,
    Other,
}

fn classify(code: &str, extra: &[String]) -> ErrClass {
    match code {
        "40001" => ErrClass::Serialization,
        "40P01" => ErrClass::Deadlock,
        c if extra.iter().any(|e| e == c) => ErrClass::OtherRetriable,
        _ => ErrClass::Other,
    }
}

fn remember_error(cx: &mut Ctx, err: &DbError) {
    if let Some(e) = cx
        .errors
        .iter_mut()
        .find(|(c, m, _)| *c == err.code && *m == err.message)
    {
        e.2 += 1;
    } else if cx.errors.len() < MAX_ERROR_SAMPLES {
        cx.errors.push((err.code.clone(), err.message.clone(), 1));
    }
}

fn handle_sql_error(slot: &mut Slot, token: usize, cx: &mut Ctx, err: DbError) {
    let plan = cx.plan.clone();
    let cfg = &plan.cfg;
    let (g, s, c) = (slot.group, slot.script, slot.cmd);
    cx.tally.each(g, s, |t| t.record_error_code(&err.code));
    remember_error(cx, &err);
    let class = classify(&err.code, &cfg.retry.extra_codes);
    let kind = match class {
        ErrClass::Serialization => Some(FailureKind::Serialization),
        ErrClass::Deadlock => Some(FailureKind::Deadlock),
        ErrClass::OtherRetriable => Some(FailureKind::Other),
        ErrClass::Other => None,
    };
    let in_tx = slot.collector.tx_status != b'I';
    if cfg.verbose_errors {
        eprintln!(
            "hotbench: client {} got an error in command {} (SQL) of script {}; {}",
            slot.id,
            c,
            s,
            one_line(&err)
        );
    }
    match kind {
        Some(kind) => {
            let now = now_us();
            if can_retry(slot, cx, now) {
                if let Some(t) = cx.tally.command(g, s, c) {
                    t.retries += 1;
                }
                if cfg.verbose_errors {
                    let max = cfg.retry.max_tries;
                    eprintln!(
                        "hotbench: client {} repeats the transaction after the error (try {}/{})",
                        slot.id,
                        slot.tries,
                        if max == 0 {
                            "unlimited".to_string()
                        } else {
                            max.to_string()
                        }
                    );
                }
                slot.retry_after_rollback = true;
            } else {
                if let Some(t) = cx.tally.command(g, s, c) {
                    t.failures += 1;
                }
                slot.retry_after_rollback = false;
                slot.failure_after_rollback = Some(kind);
            }
            finish_error(slot, token, cx, in_tx);
        }
        None if cfg.retry.continue_on_error => {
            if let Some(t) = cx.tally.command(g, s, c) {
                t.failures += 1;
            }
            slot.retry_after_rollback = false;
            slot.failure_after_rollback = Some(FailureKind::Other);
            finish_error(slot, token, cx, in_tx);
        }
        None => {
            if let Some(t) = cx.tally.command(g, s, c) {
                t.failures += 1;
            }
            eprintln!(
                "hotbench: error: client {} script {} aborted in command {} query {}: {}",
                slot.id, s, c, 0, err
            );
            abort(slot, cx);
        }
    }
}

fn one_line(err: &DbError) -> String {
    format!("{}: {} (SQLSTATE {})", err.severity, err.message, err.code)
}

/// After an error: roll back if a transaction block is open, then retry or fail.
fn finish_error(slot: &mut Slot, token: usize, cx: &mut Ctx, in_tx: bool) {
    if in_tx {
        if let Some(conn) = slot.conn.as_mut() {
            if hotbench_wire::encode::query(conn.out_buf(), "ROLLBACK").is_ok() {
                slot.collector.start(None);
                if flush(slot, token, cx) {
                    slot.phase = Phase::WaitRollback;
                }
                return;
            }
        }
    }
    process_rollback(slot, token, cx);
}

fn process_rollback(slot: &mut Slot, token: usize, cx: &mut Ctx) {
    if slot.collector.error.take().is_some() {
        eprintln!(
            "hotbench: error: client {} aborted: could not roll back the failed transaction",
            slot.id
        );
        abort(slot, cx);
        return;
    }
    let _ = token;
    if slot.retry_after_rollback {
        slot.retry_after_rollback = false;
        let (g, s) = (slot.group, slot.script);
        cx.tally.each(g, s, |c| c.retries += 1);
        slot.retried = true;
        slot.tries += 1;
        slot.interp.restart_transaction();
        slot.cmd = 0;
        let delay = cx
            .plan
            .cfg
            .retry
            .backoff
            .delay_us(slot.tries, slot.jitter.next_unit());
        if delay > 0 {
            slot.wake_at = now_us() + delay;
            slot.resume = Resume::Command;
            slot.phase = Phase::Sleep;
        } else {
            slot.phase = Phase::Command;
        }
    } else {
        let kind = slot
            .failure_after_rollback
            .take()
            .unwrap_or(FailureKind::Other);
        end_transaction(slot, cx, Outcome::Failed(kind));
    }
}

fn can_retry(slot: &Slot, cx: &Ctx, now: i64) -> bool {
    let cfg = &cx.plan.cfg;
    if cfg.retry.max_tries != 0 && slot.tries >= cfg.retry.max_tries {
        return false;
    }
    if let Some(limit) = cfg.latency_limit_us {
        if now - slot.txn_scheduled > limit {
            return false;
        }
    }
    !past_end(cx, now) && !signals::stop_requested()
}

fn past_end(cx: &Ctx, now: i64) -> bool {
    cx.end_us.is_some_and(|e| now >= e)
}

fn limit_reached(slot: &Slot, cx: &Ctx) -> bool {
    match cx.plan.cfg.limit {
        crate::config::Limit::Transactions(n) => slot.txns_done >= n,
        crate::config::Limit::Duration(_) => false,
    }
}

fn finished(slot: &Slot, cx: &Ctx, now: i64) -> bool {
    limit_reached(slot, cx) || past_end(cx, now) || signals::stop_requested()
}

fn end_transaction(slot: &mut Slot, cx: &mut Ctx, outcome: Outcome) {
    let now = now_us();
    let (g, s) = (slot.group, slot.script);
    // pgbench counts the transaction first, then aborts a client left inside a block.
    let incomplete = outcome == Outcome::Committed && slot.collector.tx_status != b'I';
    let throttled = cx.delay[g].is_some();
    let latency = (now - slot.txn_scheduled).max(0) as u64;
    let lag = throttled.then(|| (slot.txn_begin - slot.txn_scheduled).max(0) as u64);
    let retried = slot.retried;
    match outcome {
        Outcome::Committed => {
            let useful = is_useful(slot, cx);
            let late = cx
                .plan
                .cfg
                .latency_limit_us
                .is_some_and(|l| latency as i64 > l);
            cx.tally.each(g, s, |c| {
                c.record_success(latency, lag, useful);
                if late {
                    c.late += 1;
                }
                if retried {
                    c.retried += 1;
                }
            });
        }
        Outcome::Failed(kind) => {
            cx.tally.each(g, s, |c| {
                c.record_failure(kind);
                if retried {
                    c.retried += 1;
                }
            });
        }
    }
    if let Some(log) = cx.log.as_mut() {
        log.transaction(
            &mut cx.rnd.sample,
            slot.id,
            slot.txns_done,
            s,
            now,
            latency,
            lag,
            outcome,
            slot.tries,
        );
    }
    slot.txns_done += 1;
    if incomplete {
        eprintln!(
            "hotbench: error: client {} aborted: end of script reached without completing the last transaction",
            slot.id
        );
        abort(slot, cx);
        return;
    }
    if cx.plan.cfg.connect_each_txn {
        drop_connection(slot, cx);
    }
    slot.phase = Phase::ChooseScript;
}

fn is_useful(slot: &Slot, cx: &Ctx) -> bool {
    let truthy = |name: &str| -> Option<bool> {
        let text = slot.interp.vars.text(name)?;
        let t = text.trim().to_ascii_lowercase();
        Some(!(t.is_empty() || t == "0" || t == "f" || t == "false" || t == "off" || t == "no"))
    };
    match &cx.plan.groups[slot.group].goodput {
        GoodputRule::Committed => truthy(GOODPUT_VARIABLE).unwrap_or(true),
        GoodputRule::Variable(name) => truthy(name).unwrap_or(false),
        GoodputRule::Rows => slot.collector.last_rows > 0,
    }
}

/// Ends a client at the end of the run: a transaction still in flight is cancelled on the
/// server (so its locks go away at once) and counted as unfinished.
fn abandon(slot: &mut Slot, cx: &mut Ctx) {
    if slot.in_transaction() {
        if matches!(slot.phase, Phase::WaitResult | Phase::WaitRollback) {
            if let Some(conn) = slot.conn.as_ref() {
                let _ = conn.cancel_token().cancel();
            }
        }
        let (g, s) = (slot.group, slot.script);
        cx.tally.each(g, s, |c| c.unfinished += 1);
    }
    drop_connection(slot, cx);
    slot.phase = Phase::Finished;
}

fn abort(slot: &mut Slot, cx: &mut Ctx) {
    drop_connection(slot, cx);
    slot.phase = Phase::Aborted;
    cx.any_aborted = true;
}

/// The connection is gone: fail the transaction in flight, then reconnect or abort.
fn lost(slot: &mut Slot, token: usize, cx: &mut Ctx, err: Option<DbError>, what: &str) {
    let _ = token;
    let (g, s) = (slot.group, slot.script);
    let detail = match &err {
        Some(e) => {
            cx.tally.each(g, s, |c| c.record_error_code(&e.code));
            remember_error(cx, e);
            format!("{e}")
        }
        None => what.to_string(),
    };
    let was_in_tx = slot.in_transaction();
    drop_connection(slot, cx);
    slot.flush_pending = false;
    slot.pipeline = None;
    if was_in_tx {
        let retried = slot.retried;
        cx.tally.each(g, s, |c| {
            c.record_failure(FailureKind::Connection);
            if retried {
                c.retried += 1;
            }
        });
        slot.txns_done += 1;
    }
    match cx.plan.cfg.on_disconnect {
        OnDisconnect::Abort => {
            eprintln!(
                "hotbench: error: client {} script {} aborted in command {}: connection lost: {detail}",
                slot.id, s, slot.cmd
            );
            slot.phase = Phase::Aborted;
            cx.any_aborted = true;
        }
        OnDisconnect::Reconnect => {
            if cx.plan.cfg.verbose_errors {
                eprintln!(
                    "hotbench: client {} lost its connection ({detail}); reconnecting",
                    slot.id
                );
            }
            slot.disconnected_at = now_us();
            slot.reconnect_attempts = 0;
            slot.wake_at = now_us() + 10_000;
            slot.phase = Phase::Reconnect;
        }
    }
}
