//! One worker thread (`-j`): the thin I/O driver around the engine core (`core.rs`). It owns
//! its clients' connections, waits on a level-triggered epoll set, reads backend messages
//! and hands them to the core, and carries out the core's answers (connect, send, close),
//! without locks or allocation on the hot path. Statistics go to the coordinator over a
//! channel, one message per timeline interval and one at the end.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};

use hotbench_script::ThreadRandom;
use hotbench_stats::{ErrorSample, TxnCounters};
use hotbench_wire::{Connection, Connector, Message};

use crate::client_core::{Action, Core};
use crate::clock::now_us;
use crate::connect_phase;
use crate::env::SystemEnv;
use crate::plan::Plan;
use crate::poller::Poller;
use crate::signals;
use crate::slot::{Phase, Slot};
use crate::tally::Tally;
use crate::txlog::TxLog;

/// Poller token of the stop eventfd.
const WAKE_TOKEN: u64 = u64::MAX - 1;

pub enum WorkerMsg {
    /// Initial connections done (or failed) after `conn_us`.
    Connected {
        result: Result<i64, String>,
        /// Start-ups refused transiently and retried.
        retries: u64,
    },
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
        /// Monotonic µs at which this thread's benchmark interval ended.
        bench_end_us: i64,
        errors: Vec<ErrorSample>,
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

/// The socket side of one client.
#[derive(Default)]
struct Link {
    conn: Option<Connection>,
    /// Output not yet fully written (socket buffer full).
    flush_pending: bool,
}

/// The I/O state of the thread.
struct Driver {
    tid: usize,
    poller: Poller,
    connector: Arc<Connector>,
    spread: hotbench_wire::Spread,
    conn_total_us: i64,
    /// The thread owns one connection: wait for results with a blocking read.
    blocking: bool,
}

type ThreadCore = Core<SystemEnv>;

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
    let mut slots = new_slots(&plan, tid, client_rngs, vars);
    let mut links: Vec<Link> = slots.iter().map(|_| Link::default()).collect();
    let poller = match Poller::new(slots.len() + 2) {
        Ok(p) => p,
        Err(e) => {
            let _ = tx.send(WorkerMsg::Connected {
                result: Err(format!("could not create an epoll set: {e}")),
                retries: 0,
            });
            shared.barrier.wait();
            return;
        }
    };
    let mut d = Driver {
        tid,
        poller,
        connector: shared.connector.clone(),
        spread: plan.cfg.spread,
        conn_total_us: 0,
        blocking: slots.len() == 1,
    };
    let mut core = Core::new(plan, tid, rnd, SystemEnv);
    core.tally.track_hosts(d.connector.host_count());
    core.tally.keys = core
        .plan
        .key_vars
        .iter()
        .map(|k| hotbench_stats::hot_keys::KeySketch::new(k, core.plan.cfg.settings.key_capacity))
        .collect();
    let wake_fd = signals::install();
    let _ = d.poller.add(wake_fd, WAKE_TOKEN);

    // Connect every client before the start (pgbench's STEADY phase), unless -C; several at
    // a time (connect_phase).
    let t0 = now_us();
    let mut result = Ok(0);
    let mut retries = 0;
    if !core.plan.cfg.connect_each_txn {
        let ids: Vec<usize> = slots.iter().map(|s| s.id).collect();
        let (connector, spread) = (&d.connector, d.spread);
        let opened = connect_phase::open_all(ids.len(), connect_phase::PER_THREAD, |i| {
            connector.connect_client(ids[i], spread)
        });
        match opened {
            Ok(opened) => {
                retries = opened.retries;
                let all = slots.iter_mut().zip(&mut links).zip(opened.conns);
                for (i, ((slot, link), (conn, host))) in all.enumerate() {
                    if let Err(e) = d.register(link, i, conn) {
                        result = Err(format!(
                            "could not create connection for client {}: {e}",
                            slot.id
                        ));
                        break;
                    }
                    core.tally.connected_to(host, slot.host);
                    slot.host = Some(host);
                    slot.mark_connected();
                }
            }
            Err((i, e)) => {
                let id = ids.get(i).copied().unwrap_or(i);
                result = Err(format!("could not create connection for client {id}: {e}"));
            }
        }
    }
    let conn_us = now_us() - t0;
    let _ = tx.send(WorkerMsg::Connected {
        result: result.map(|_| conn_us),
        retries,
    });
    shared.barrier.wait();
    if shared.cancel.load(Ordering::SeqCst) {
        return;
    }
    match TxLog::open(&core.plan.cfg, tid) {
        Ok(l) => core.log = l,
        Err(e) => {
            eprintln!("hotbench: error: {e}");
            signals::request_stop();
        }
    }
    let origin = shared.origin.load(Ordering::SeqCst);
    core.start(origin);
    let interval = core.plan.cfg.settings.interval_us.max(1000);
    let mut next_boundary = origin + interval;
    let mut index = 0u64;
    let mut ready = Vec::with_capacity(slots.len() + 2);
    let mut abort_reported = false;

    loop {
        let mut now = now_us();
        if signals::stop_requested() || core.end_us.is_some_and(|e| now >= e + END_GRACE_US) {
            // Transactions blocked past the end (e.g. in a lock queue) would keep the run
            // going forever: cancel them on the server and report them as unfinished.
            for (s, l) in slots.iter_mut().zip(&mut links) {
                if !s.is_done() {
                    abandon(s, l, &mut d, &mut core);
                }
            }
        }
        let mut alive = 0;
        let mut next_wake = next_boundary;
        for (i, (s, l)) in slots.iter_mut().zip(&mut links).enumerate() {
            if s.is_done() {
                continue;
            }
            if l.flush_pending {
                retry_flush(s, l, &mut d, &mut core);
            }
            if s.is_runnable(now) {
                let action = core.advance(s);
                drive(s, l, i, &mut d, &mut core, action);
                now = now_us();
            }
            if s.is_done() {
                // pgbench's finishCon: a finished client leaves the poller at once, so a
                // late message or EOF on its socket can neither spin the loop nor revive it.
                d.drop_connection(l);
                continue;
            }
            alive += 1;
            if s.is_sleeping() {
                next_wake = next_wake.min(s.wake_at);
            }
            if l.flush_pending {
                next_wake = next_wake.min(now + 100);
            }
        }
        if core.any_aborted && core.plan.cfg.exit_on_abort && !abort_reported {
            // pgbench 17's line; hotbench then stops every thread gracefully (results kept).
            eprintln!("hotbench: error: Run was aborted due to an error in thread {tid}");
            abort_reported = true;
            signals::request_stop();
        }
        if alive == 0 {
            break;
        }
        if now >= next_boundary {
            send_interval(&mut core, tid, &tx, &mut index);
            next_boundary += interval;
            while next_boundary <= now {
                send_interval(&mut core, tid, &tx, &mut index);
                next_boundary += interval;
            }
            continue;
        }
        if let Some(end) = core.end_us {
            if end > now {
                next_wake = next_wake.min(end);
            } else {
                next_wake = next_wake.min(end + END_GRACE_US);
            }
        }
        if d.blocking {
            // One connection: read its results directly (one syscall instead of epoll +
            // read); the socket's receive timeout bounds the wait.
            if let (Some(s), Some(l)) = (slots.first_mut(), links.first_mut()) {
                if matches!(s.phase, Phase::WaitResult | Phase::WaitRollback)
                    && !l.flush_pending
                    && !signals::stop_requested()
                {
                    on_readable(s, l, 0, &mut d, &mut core);
                    continue;
                }
            }
        }
        if let Err(e) = d.poller.wait(Some(next_wake), now, &mut ready) {
            eprintln!("hotbench: error: epoll_wait() failed: {e}");
            break;
        }
        for &tok in &ready {
            if tok == WAKE_TOKEN {
                continue;
            }
            let i = tok as usize;
            if let (Some(s), Some(l)) = (slots.get_mut(i), links.get_mut(i)) {
                on_readable(s, l, i, &mut d, &mut core);
            }
        }
    }
    // The benchmark interval ends when the last transaction did, or at -T when stuck ones
    // were cancelled after it (or at Ctrl-C); closing connections is not part of it.
    let exit_us = now_us();
    let bench_end_us = core
        .last_end_us
        .max(core.end_us.map_or(exit_us, |e| e.min(exit_us)));
    // Close connections (Terminate) and flush the log.
    for l in links.iter_mut() {
        if let Some(c) = l.conn.take() {
            c.close();
        }
    }
    if let Some(log) = core.log.as_mut() {
        log.finish();
    }
    send_interval(&mut core, tid, &tx, &mut index);
    let aborted = slots.iter().filter(|s| s.phase == Phase::Aborted).count();
    core.tally.clients = slots
        .iter_mut()
        .map(|s| (s.id, s.group, std::mem::take(&mut s.fair)))
        .collect();
    let _ = tx.send(WorkerMsg::Done {
        thread: d.tid,
        tally: Box::new(std::mem::take(&mut core.tally)),
        aborted,
        conn_total_us: d.conn_total_us,
        errors: std::mem::take(&mut core.errors),
        bench_end_us,
    });
}

/// The thread's clients, numbered and seeded pgbench's way.
fn new_slots(
    plan: &Plan,
    tid: usize,
    client_rngs: Vec<(usize, hotbench_script::PrngState)>,
    vars: Vec<hotbench_script::Variables>,
) -> Vec<Slot> {
    let shape = plan.shape();
    plan.threads[tid]
        .clients
        .iter()
        .zip(client_rngs)
        .zip(vars)
        .map(|((&(id, g), (_, rng)), v)| {
            let interp = hotbench_script::Client::new(id, v, rng);
            Slot::new(id, g, interp, &shape[g], plan.cfg.random_seed)
        })
        .collect()
}

fn send_interval(core: &mut ThreadCore, tid: usize, tx: &Sender<WorkerMsg>, index: &mut u64) {
    let groups = core.tally.take_intervals();
    let _ = tx.send(WorkerMsg::Interval {
        thread: tid,
        index: *index,
        groups,
    });
    *index += 1;
}

impl Driver {
    /// Opens a connection for client `token` (closing any old one) on the host the spread
    /// policy picks for it; returns that host's index.
    fn connect(
        &mut self,
        link: &mut Link,
        token: usize,
        client_id: usize,
    ) -> Result<usize, hotbench_wire::Error> {
        self.drop_connection(link);
        let t0 = now_us();
        let (conn, host) = self.connector.connect_client(client_id, self.spread)?;
        self.conn_total_us += now_us() - t0;
        self.register(link, token, conn)?;
        Ok(host)
    }

    /// Makes `conn` client `token`'s connection, watched by the poller.
    fn register(
        &mut self,
        link: &mut Link,
        token: usize,
        mut conn: hotbench_wire::Connection,
    ) -> Result<(), hotbench_wire::Error> {
        if self.blocking {
            conn.set_nonblocking(false)
                .map_err(hotbench_wire::Error::Io)?;
            set_read_timeout(conn.as_raw_fd(), BLOCKING_READ_TIMEOUT_US)
                .map_err(hotbench_wire::Error::Io)?;
        } else {
            conn.set_nonblocking(true)
                .map_err(hotbench_wire::Error::Io)?;
        }
        self.poller
            .add(conn.as_raw_fd(), token as u64)
            .map_err(hotbench_wire::Error::Io)?;
        link.conn = Some(conn);
        Ok(())
    }

    fn drop_connection(&mut self, link: &mut Link) {
        link.flush_pending = false;
        if let Some(c) = link.conn.take() {
            self.poller.remove(c.as_raw_fd());
            c.close();
        }
    }
}

/// Carries out the core's answers for one client until it has to wait.
fn drive(
    slot: &mut Slot,
    link: &mut Link,
    token: usize,
    d: &mut Driver,
    core: &mut ThreadCore,
    mut action: Action,
) {
    loop {
        if !slot.connected && link.conn.is_some() {
            d.drop_connection(link);
        }
        match action {
            Action::Wait => return,
            Action::Connect => {
                let result = d.connect(link, token, slot.id).map(|host| {
                    core.tally.connected_to(host, slot.host);
                    slot.host = Some(host);
                });
                core.on_connected(slot, result.map_err(|e| e.to_string()));
                action = core.advance(slot);
            }
            Action::Send => match write(slot, link) {
                Ok(()) => return,
                Err(e) => {
                    let last = last_word(link);
                    core.on_lost(slot, last, &e);
                    action = Action::Wait;
                }
            },
        }
    }
}

/// Hands the client's encoded messages to its connection.
fn write(slot: &mut Slot, link: &mut Link) -> Result<(), String> {
    let Some(conn) = link.conn.as_mut() else {
        return Err("no connection".into());
    };
    match conn.write_from(&mut slot.out) {
        Ok(done) => link.flush_pending = !done,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => link.flush_pending = true,
        Err(e) => return Err(e.to_string()),
    }
    Ok(())
}

fn retry_flush(slot: &mut Slot, link: &mut Link, d: &mut Driver, core: &mut ThreadCore) {
    if link.conn.is_none() {
        link.flush_pending = false;
        return;
    }
    if let Err(e) = write(slot, link) {
        link.flush_pending = false;
        let last = last_word(link);
        core.on_lost(slot, last, &e);
        d.drop_connection(link);
    }
}

/// The server's last word on a connection a write just failed on: the error it sent before
/// closing (a terminated backend's FATAL 57P01), still unread. libpq reads it too before
/// reporting a failed send, so the failure is counted by its SQLSTATE.
fn last_word(link: &mut Link) -> Option<hotbench_wire::DbError> {
    let conn = link.conn.as_mut()?;
    let _ = conn.fill();
    while let Ok(Some(msg)) = conn.next_message() {
        if let Message::ErrorResponse(body) = &msg {
            return hotbench_wire::DbError::from_error_response(body).ok();
        }
    }
    None
}

/// Ends a client at the end of the run, cancelling its query on the server if one runs.
fn abandon(slot: &mut Slot, link: &mut Link, d: &mut Driver, core: &mut ThreadCore) {
    if core.abandon(slot) {
        if let Some(conn) = link.conn.as_ref() {
            let _ = conn.cancel_token().cancel();
        }
    }
    d.drop_connection(link);
}

fn on_readable(
    slot: &mut Slot,
    link: &mut Link,
    token: usize,
    d: &mut Driver,
    core: &mut ThreadCore,
) {
    if slot.is_done() {
        d.drop_connection(link);
        return;
    }
    let Some(conn) = link.conn.as_mut() else {
        return;
    };
    let lost = match conn.fill() {
        Ok(0) => Some("server closed the connection unexpectedly".to_string()),
        Ok(_) => None,
        Err(e)
            if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted =>
        {
            return
        }
        Err(e) => Some(e.to_string()),
    };
    if let Some(what) = lost {
        core.on_lost(slot, None, &what);
        d.drop_connection(link);
        return;
    }
    loop {
        let Some(conn) = link.conn.as_mut() else {
            return;
        };
        let msg = match conn.next_message() {
            Ok(Some(m)) => m,
            Ok(None) => return,
            Err(e) => {
                core.on_lost(slot, None, &e.to_string());
                d.drop_connection(link);
                return;
            }
        };
        if let Message::ReadyForQuery(body) = &msg {
            conn.note_ready_for_query(body.status());
        }
        if let Some(action) = core.on_message(slot, &msg) {
            drive(slot, link, token, d, core, action);
            return;
        }
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
