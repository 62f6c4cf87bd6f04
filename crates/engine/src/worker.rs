//! One worker thread (`-j`): the thin I/O driver around the engine core (`client_core.rs`).
//! It owns its clients' connections, waits on a level-triggered epoll set as long as the
//! core's `poll_timeout` allows, reads backend messages and hands them to the core, carries
//! out the core's answers (connect, send, close) and its events (stderr lines, the `-l` log,
//! timeline intervals to the coordinator, stop), without locks or allocation on the hot
//! path. When runs end, how long they may overrun and when intervals close are the core's
//! rules (`timers.rs`), not this loop's.

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
use crate::events::Event;
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
        /// The most start-ups in flight at once.
        peak: usize,
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
    /// What `rtt` and `rate` perturbations change while the run goes (`knobs.rs`).
    pub knobs: Arc<crate::knobs::Knobs>,
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

/// Upper bound of one blocking read, so interval reports and Ctrl-C are never held up.
const BLOCKING_READ_TIMEOUT_US: i64 = 100_000;

/// How long the cancel requests of the clients abandoned at the end may take in all: a
/// stalled server accepts them and never answers.
const CANCEL_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// Retry a write the socket refused this soon, µs.
const FLUSH_RETRY_US: i64 = 100;

/// One worker thread: the core, its clients' sockets, and where its reports go.
struct Worker {
    slots: Vec<Slot>,
    links: Vec<Link>,
    d: Driver,
    core: ThreadCore,
    log: Option<TxLog>,
    tx: Sender<WorkerMsg>,
    /// Tokens of the connections the last wait found readable.
    ready: Vec<u64>,
    knobs: Arc<crate::knobs::Knobs>,
    /// The knobs' generation the core last heard of.
    knobs_seen: u64,
}

pub fn run_worker(
    shared: Arc<Shared>,
    tid: usize,
    rnd: ThreadRandom,
    client_rngs: Vec<(usize, hotbench_script::PrngState)>,
    vars: Vec<hotbench_script::Variables>,
    tx: Sender<WorkerMsg>,
) {
    let mut w = match Worker::new(&shared, tid, rnd, client_rngs, vars, tx) {
        Ok(w) => w,
        Err((tx, e)) => {
            let _ = tx.send(WorkerMsg::Connected {
                result: Err(e),
                retries: 0,
                peak: 0,
            });
            shared.barrier.wait();
            return;
        }
    };
    let t0 = now_us();
    let (result, retries, peak) = w.connect_all();
    let conn_us = now_us() - t0;
    let _ = w.tx.send(WorkerMsg::Connected {
        result: result.map(|_| conn_us),
        retries,
        peak,
    });
    shared.barrier.wait();
    if shared.cancel.load(Ordering::SeqCst) {
        return;
    }
    match TxLog::open(&w.core.plan.cfg, tid) {
        Ok(l) => w.log = l,
        Err(e) => {
            eprintln!("hotbench: error: {e}");
            signals::request_stop();
        }
    }
    w.core.start(shared.origin.load(Ordering::SeqCst));
    w.event_loop();
    w.finish();
}

impl Worker {
    fn new(
        shared: &Shared,
        tid: usize,
        rnd: ThreadRandom,
        client_rngs: Vec<(usize, hotbench_script::PrngState)>,
        vars: Vec<hotbench_script::Variables>,
        tx: Sender<WorkerMsg>,
    ) -> Result<Worker, (Sender<WorkerMsg>, String)> {
        // A private copy: the hot path clones this Arc per command, and a reference count
        // shared by all threads would bounce one cache line between cores on every clone.
        let plan = Arc::new((*shared.plan).clone());
        let slots = new_slots(&plan, tid, client_rngs, vars);
        let links: Vec<Link> = slots.iter().map(|_| Link::default()).collect();
        let poller = match Poller::new(slots.len() + 2) {
            Ok(p) => p,
            Err(e) => return Err((tx, format!("could not create an epoll set: {e}"))),
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
            .map(|k| {
                hotbench_stats::hot_keys::KeySketch::new(k, core.plan.cfg.settings.key_capacity)
            })
            .collect();
        let wake_fd = signals::install();
        let _ = d.poller.add(wake_fd, WAKE_TOKEN);
        Ok(Worker {
            ready: Vec::with_capacity(slots.len() + 2),
            slots,
            links,
            d,
            core,
            log: None,
            tx,
            knobs: shared.knobs.clone(),
            knobs_seen: 0,
        })
    }

    /// Connects every client before the start (pgbench's STEADY phase), unless -C; several
    /// at a time (`connect_phase`). Returns the outcome, the transient refusals retried and
    /// the most start-ups in flight at once.
    fn connect_all(&mut self) -> (Result<(), String>, u64, usize) {
        if self.core.plan.cfg.connect_each_txn {
            return (Ok(()), 0, 0);
        }
        let ids: Vec<usize> = self.slots.iter().map(|s| s.id).collect();
        let (connector, spread) = (&self.d.connector, self.d.spread);
        let opened = connect_phase::open_all(ids.len(), connect_phase::PER_THREAD, |i| {
            connector.connect_client(ids[i], spread)
        });
        let opened = match opened {
            Ok(o) => o,
            Err((i, e)) => {
                let id = ids.get(i).copied().unwrap_or(i);
                return (
                    Err(format!("could not create connection for client {id}: {e}")),
                    0,
                    0,
                );
            }
        };
        let (retries, peak) = (opened.retries, opened.peak);
        let all = self.slots.iter_mut().zip(&mut self.links);
        for (i, ((slot, link), (conn, host))) in all.zip(opened.conns).enumerate() {
            if let Err(e) = self.d.register(link, i, conn) {
                let why = format!("could not create connection for client {}: {e}", slot.id);
                return (Err(why), retries, peak);
            }
            self.core.tally.connected_to(host, slot.host);
            slot.host = Some(host);
            slot.mark_connected();
        }
        (Ok(()), retries, peak)
    }

    /// Runs the clients until every one is done: the core decides, this loop does the I/O.
    fn event_loop(&mut self) {
        loop {
            let mut now = now_us();
            self.apply_knobs(now);
            if self.core.must_abandon(now) {
                let mut cancels = Vec::new();
                for (s, l) in self.slots.iter_mut().zip(&self.links) {
                    if !s.is_done() {
                        cancels.extend(abandon(s, l, &mut self.core, now));
                    }
                }
                // All at once and bounded (a stalled server never answers them), while the
                // connections are still open (a pooler matches a cancel to its client);
                // `step_clients` closes them next.
                hotbench_wire::cancel_all(&cancels, CANCEL_BUDGET);
            }
            let (alive, flushing) = self.step_clients(&mut now);
            self.drain_events();
            if alive == 0 {
                break;
            }
            if self.core.handle_timeout(now) {
                self.drain_events();
                continue;
            }
            let mut wake = self.core.poll_timeout(&self.slots);
            if flushing {
                wake = wake.min(now + FLUSH_RETRY_US);
            }
            if self.d.blocking && self.read_blocking() {
                self.drain_events();
                continue;
            }
            if let Err(e) = self.d.poller.wait(Some(wake), now, &mut self.ready) {
                eprintln!("hotbench: error: epoll_wait() failed: {e}");
                break;
            }
            for &tok in &self.ready {
                let i = tok as usize;
                if let (Some(s), Some(l)) = (self.slots.get_mut(i), self.links.get_mut(i)) {
                    on_readable(s, l, i, &mut self.d, &mut self.core);
                }
            }
            self.drain_events();
        }
    }

    /// Hands the core what a perturbation changed since the last turn (one atomic load when
    /// nothing did).
    fn apply_knobs(&mut self, now: i64) {
        let generation = self.knobs.generation();
        if generation != self.knobs_seen {
            self.knobs_seen = generation;
            self.core.set_rtt(self.knobs.rtt_us(), now);
            self.core.set_rate_factor(self.knobs.rate_factor(), now);
        }
    }

    /// Runs every client that can run now and retries refused writes. Returns how many
    /// clients are not done, and whether a write still waits for room.
    fn step_clients(&mut self, now: &mut i64) -> (usize, bool) {
        let (mut alive, mut flushing) = (0, false);
        let all = self.slots.iter_mut().zip(&mut self.links).enumerate();
        for (i, (s, l)) in all {
            if s.is_done() {
                continue;
            }
            if l.flush_pending {
                retry_flush(s, l, &mut self.d, &mut self.core);
            }
            if s.is_runnable(*now) {
                let action = self.core.advance(s);
                drive(s, l, i, &mut self.d, &mut self.core, action);
                *now = now_us();
            }
            if s.is_done() {
                // pgbench's finishCon: a finished client leaves the poller at once, so a
                // late message or EOF on its socket can neither spin the loop nor revive it.
                self.d.drop_connection(l);
                continue;
            }
            alive += 1;
            flushing |= l.flush_pending;
        }
        (alive, flushing)
    }

    /// One connection: reads its results directly (one syscall instead of epoll + read);
    /// the socket's receive timeout bounds the wait. False when there is nothing to wait for.
    fn read_blocking(&mut self) -> bool {
        let (Some(s), Some(l)) = (self.slots.first_mut(), self.links.first_mut()) else {
            return false;
        };
        if matches!(s.phase, Phase::WaitResult | Phase::WaitRollback)
            && !l.flush_pending
            && !signals::stop_requested()
        {
            on_readable(s, l, 0, &mut self.d, &mut self.core);
            return true;
        }
        false
    }

    /// Carries out what the core queued: stderr lines, -l records, intervals, stop.
    fn drain_events(&mut self) {
        while let Some(e) = self.core.poll_event() {
            match e {
                // Server messages and notices: escape sequences never reach the terminal.
                Event::Stderr(line) => {
                    eprintln!("{}", hotbench_stats::terminal::escape_lines(&line))
                }
                Event::Txn(r) => {
                    if let Some(log) = self.log.as_mut() {
                        log.record(&r);
                    }
                }
                Event::Interval { index, groups } => {
                    let _ = self.tx.send(WorkerMsg::Interval {
                        thread: self.d.tid,
                        index,
                        groups,
                    });
                }
                Event::StopAll => signals::request_stop(),
            }
        }
    }

    /// Closes the connections, flushes the log and sends the thread's results.
    fn finish(mut self) {
        let exit_us = now_us();
        let bench_end_us = self.core.bench_end(exit_us);
        self.core.count_unstarted(exit_us);
        for l in self.links.iter_mut() {
            if let Some(c) = l.conn.take() {
                c.close();
            }
        }
        self.core.finish_intervals();
        self.drain_events();
        if let Some(log) = self.log.as_mut() {
            if let Err(e) = log.finish() {
                eprintln!("hotbench: error: {e}");
            }
        }
        let aborted = self
            .slots
            .iter()
            .filter(|s| s.phase == Phase::Aborted)
            .count();
        self.core.tally.clients = self
            .slots
            .iter_mut()
            .map(|s| (s.id, s.group, std::mem::take(&mut s.fair)))
            .collect();
        let _ = self.tx.send(WorkerMsg::Done {
            thread: self.d.tid,
            tally: Box::new(std::mem::take(&mut self.core.tally)),
            aborted,
            conn_total_us: self.d.conn_total_us,
            errors: std::mem::take(&mut self.core.errors),
            bench_end_us,
        });
    }
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

/// Ends a client at the end of the run; returns how to cancel its query on the server if
/// one runs (sent for all clients at once by the caller, before their connections close).
fn abandon(
    slot: &mut Slot,
    link: &Link,
    core: &mut ThreadCore,
    now: i64,
) -> Option<hotbench_wire::CancelToken> {
    if core.abandon(slot, now) {
        link.conn.as_ref().map(|c| c.cancel_token())
    } else {
        None
    }
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
