//! The connection phase before the start (pgbench's STEADY): a worker's clients connect
//! concurrently instead of one after another, as many start-ups in flight as the server
//! takes without queueing (`connect_pace.rs`: from two, between one and [`PER_THREAD`] per worker;
//! scoped helper threads run the blocking start-up: TLS, authentication), so the server's
//! back-end start-up overlaps the client's round trips without a small server's cores being
//! crowded by more start-ups than it can run. A server that refuses only
//! for now (starting up, or a Unix socket's listen queue full) is retried with a short back-off
//! for up to [`RETRY_FOR`]; retries are counted and reported.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::connect_pace::Pacer;

use hotbench_wire::{ConnectCause, Connection, Error, SqlState};

/// Start-ups in flight per worker thread, at most.
pub const PER_THREAD: usize = 8;
/// How long one client keeps retrying a transient refusal.
const RETRY_FOR: Duration = Duration::from_secs(10);

/// The connections of one worker, in client order.
pub struct Opened<C = Connection> {
    pub conns: Vec<C>,
    /// Attempts refused transiently and retried.
    pub retries: u64,
    /// The most start-ups that were in flight at once.
    pub peak: usize,
}

/// Opens `n` connections, `connect(i)` for client position `i`, up to `parallel` at a time
/// as the pacer allows, retrying transient refusals. On failure: the position of the first client that could not
/// connect and its error (the connections made are closed by drop).
pub fn open_all<C: Send, F>(
    n: usize,
    parallel: usize,
    connect: F,
) -> Result<Opened<C>, (usize, Error)>
where
    F: Fn(usize) -> Result<C, Error> + Sync,
{
    let slots: Mutex<Vec<Option<C>>> = Mutex::new((0..n).map(|_| None).collect());
    let failed: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let retries = AtomicU64::new(0);
    let pacer = Mutex::new(Pacer::new(parallel));
    let turn = Condvar::new();
    let work = || loop {
        if !wait_turn(&pacer, &turn, || {
            next.load(Ordering::SeqCst) >= n || stop.load(Ordering::SeqCst)
        }) {
            return;
        }
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= n || stop.load(Ordering::SeqCst) {
            if let Ok(mut p) = pacer.lock() {
                p.unused();
            }
            // The phase is over: let every waiting helper see it.
            turn.notify_all();
            return;
        }
        let t0 = Instant::now();
        let result = retrying(|| connect(i), &retries);
        let room = pacer.lock().map_or(1, |mut p| {
            p.done(t0.elapsed().as_secs_f64() * 1e6);
            p.room()
        });
        // Wake only as many helpers as may start now (a herd of them would only go back
        // to sleep).
        for _ in 0..room {
            turn.notify_one();
        }
        match result {
            Ok(c) => {
                if let Ok(mut s) = slots.lock() {
                    s[i] = Some(c);
                }
            }
            Err(e) => {
                stop.store(true, Ordering::SeqCst);
                if let Ok(mut f) = failed.lock() {
                    // Report the first client in order, as a serial start-up would.
                    if f.as_ref().is_none_or(|(j, _)| i < *j) {
                        *f = Some((i, e));
                    }
                }
                return;
            }
        }
    };
    let helpers = parallel.clamp(1, n.max(1));
    if helpers == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 1..helpers {
                s.spawn(work);
            }
            work();
        });
    }
    if let Some(f) = failed.into_inner().unwrap_or(None) {
        return Err(f);
    }
    let conns = slots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect::<Vec<C>>();
    let peak = pacer.into_inner().map_or(0, |p| p.peak);
    Ok(Opened {
        conns,
        retries: retries.load(Ordering::SeqCst),
        peak,
    })
}

/// Waits until the pacer lets one more start-up in flight (true), or `finished` (false).
fn wait_turn(pacer: &Mutex<Pacer>, turn: &Condvar, finished: impl Fn() -> bool) -> bool {
    let Ok(mut p) = pacer.lock() else {
        return false;
    };
    loop {
        if finished() {
            // Pass it on: the other waiting helpers end too, without their timeout.
            turn.notify_all();
            return false;
        }
        if p.try_start() {
            return true;
        }
        // Bounded: a finished phase is noticed even if no completion notifies.
        p = match turn.wait_timeout(p, Duration::from_millis(50)) {
            Ok((p, _)) => p,
            Err(_) => return false,
        };
    }
}

fn retrying<C>(connect: impl Fn() -> Result<C, Error>, retries: &AtomicU64) -> Result<C, Error> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match connect() {
            Ok(c) => return Ok(c),
            Err(e) if transient(&e) && started.elapsed() < RETRY_FOR => {
                retries.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Refusals that go away by themselves: the server is starting up (57P03), or a Unix socket's
/// listen queue is full (EAGAIN). "Too many clients" (53300) is not: retrying would only
/// delay the error when more clients are asked for than the server allows.
fn transient(e: &Error) -> bool {
    if e.sqlstate() == Some(SqlState::CANNOT_CONNECT_NOW) {
        return true;
    }
    match e {
        Error::Connect(c) => c.attempts.iter().any(
            |a| matches!(&a.cause, ConnectCause::Io(io) if io.kind() == io::ErrorKind::WouldBlock),
        ),
        Error::Io(io) => io.kind() == io::ErrorKind::WouldBlock,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_wire::DbError;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn all_connect_in_client_order_with_bounded_concurrency() {
        let calls = AtomicUsize::new(0);
        let in_flight = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let opened = open_all(100, 8, |_| {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(calls.fetch_add(1, Ordering::SeqCst))
        })
        .expect("all connect");
        assert_eq!(opened.conns.len(), 100);
        let mut seen = opened.conns.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        let peak = peak.load(Ordering::SeqCst);
        assert!((2..=8).contains(&peak), "peak concurrency {peak}");
    }

    #[test]
    fn a_failure_stops_the_phase_and_names_the_first_failing_client() {
        let calls = AtomicUsize::new(0);
        let r = open_all(50, 4, |_| {
            let k = calls.fetch_add(1, Ordering::SeqCst);
            if k >= 10 {
                Err(Error::Usage("refused".into()))
            } else {
                Ok(k)
            }
        });
        let Err((i, e)) = r else { panic!("must fail") };
        assert!(i >= 10, "client {i}");
        assert!(e.to_string().contains("refused"));
        assert!(calls.load(Ordering::SeqCst) < 50, "stopped early");
    }

    #[test]
    fn one_at_a_time_when_asked() {
        let order = Mutex::new(Vec::new());
        let next = AtomicUsize::new(0);
        let opened = open_all(5, 1, |_| {
            let k = next.fetch_add(1, Ordering::SeqCst);
            order.lock().unwrap().push(k);
            Ok(k)
        })
        .expect("connect");
        assert_eq!(opened.conns, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_server_starting_up_is_retried_and_counted() {
        let calls = AtomicUsize::new(0);
        let opened = open_all(3, 2, |i| {
            if i == 1 && calls.fetch_add(1, Ordering::SeqCst) < 2 {
                let e = DbError::new("FATAL", SqlState::CANNOT_CONNECT_NOW, "starting up");
                return Err(Error::Db(Box::new(e)));
            }
            Ok(i)
        })
        .expect("connects after retrying");
        assert_eq!(opened.conns, vec![0, 1, 2]);
        assert_eq!(opened.retries, 2);
    }

    #[test]
    fn only_transient_refusals_are_retried() {
        let db = |code| Error::Db(Box::new(DbError::new("FATAL", code, "refused")));
        assert!(
            transient(&db(SqlState::CANNOT_CONNECT_NOW)),
            "the database system is starting up"
        );
        assert!(
            !transient(&db(SqlState::TOO_MANY_CONNECTIONS)),
            "sorry, too many clients already"
        );
        assert!(transient(&Error::Io(io::Error::from(
            io::ErrorKind::WouldBlock
        ))));
        assert!(!transient(&Error::Io(io::Error::from(
            io::ErrorKind::ConnectionRefused
        ))));
    }
}
