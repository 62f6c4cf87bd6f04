//! Per-backend `pg_stat_activity` sampling: which statement each client backend runs, in
//! which transaction, since when, read every period over a connection of its own set up
//! exactly as diagnose's (read-only transaction, `statement_timeout`, `lock_timeout`,
//! `search_path = pg_catalog`, `row_security = off`; its `application_name` starts with
//! `hotbench-probe`, so diagnose's own probe, sampling beside it, leaves it out). The one
//! statement is prepared once; its cost is bounded by the probe's [`Governor`] and by the
//! sampler's server-time [`Budget`]. It reads only the activity view: no user table, no lock a
//! user holds. The rows go to the [`Tracker`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hotbench_probe::{Governor, WaitFeed, WaitRow};
use hotbench_wire::{ConnectParams, Connection, Connector, QueryResult};

use crate::budget::Budget;
use crate::tracker::{Row, Tracker};

/// `application_name` of the activity sampler's connection.
pub const APPLICATION_NAME: &str = "hotbench-probe capture";
/// Every statement of the sampler starts with it (`pg_stat_statements` summaries leave such
/// statements out, as the probe's).
const TAG: &str = "/* hotbench-probe */ ";

/// Client backends of this database but hotbench's own, running or idle inside a transaction,
/// or idle for under a second (a session between its transactions). Texts cut to 4,000
/// characters on the server. It reads `pg_stat_get_activity(NULL)`, the function under the
/// `pg_stat_activity` view, with the database's OID looked up once per read (the view
/// joins `pg_database` for every backend) and `date_part` (a float8; `extract` makes a
/// numeric first): 130 µs of server CPU per read with 16 sessions where the view took 210
/// (measured on PostgreSQL 15; at the default 10 ms period that is 1.3% of one core, not 2.1%).
/// The last column, when the server began the read, says with the rows' `clock_timestamp()`
/// how long the server took over it (see [`server_time`]). The wait event (the last two
/// columns) is for diagnose's probe, which counts these reads as its wait samples during a
/// capture ([`WaitFeed`]) instead of copying every backend slot again for its own.
pub const ACTIVITY_SQL: &str = "select a.pid::int8, \
     date_part('epoch', a.xact_start), date_part('epoch', a.query_start), \
     date_part('epoch', a.state_change), date_part('epoch', clock_timestamp()), \
     a.state, left(a.query, 4000), \
     coalesce(a.client_addr is not null and not a.client_addr <<= '127.0.0.0/8' \
       and a.client_addr <> '::1', false), \
     date_part('epoch', pg_catalog.statement_timestamp()), \
     a.wait_event_type, a.wait_event \
     from pg_catalog.pg_stat_get_activity(NULL) a \
     where a.datid = (select d.oid from pg_catalog.pg_database d \
         where d.datname = pg_catalog.current_database()) \
       and a.backend_type = 'client backend' and a.pid <> pg_catalog.pg_backend_pid() \
       and a.application_name <> E'hotbench diagnose' \
       and a.application_name not like E'hotbench-probe%' \
       and a.state is not null and a.state <> '' \
       and (a.state <> 'idle' or a.state_change > pg_catalog.clock_timestamp() - interval '1 second')";

/// Whether the session may set `pg_stat_statements.track` (as the probe asks).
const TRACK_ALLOWED_SQL: &str = "select exists (select 1 from pg_settings \
     where name = 'pg_stat_statements.track' and (context = 'user' \
       or (select rolsuper from pg_roles where rolname = current_user)))";

/// What sampling gave.
pub struct Sampled {
    pub tracker: Tracker,
    pub notes: Vec<String>,
    /// Time spent waiting for the reads (s).
    pub busy_s: f64,
    pub reads: u64,
}

/// Connects as diagnose does and makes the session safe; `Err` says why it could not.
pub fn connect(params: &ConnectParams) -> Result<Connection, String> {
    let mut p = params.clone();
    p.application_name = Some(APPLICATION_NAME.into());
    if p.connect_timeout.is_none() {
        p.connect_timeout = Some(Duration::from_secs(10));
    }
    let mut c = Connector::new(p).connect().map_err(|e| e.to_string())?;
    let _ = c.set_io_timeout(Some(
        hotbench_diagnose::session::STATEMENT_TIMEOUT + Duration::from_secs(3),
    ));
    for sql in hotbench_diagnose::session::settings() {
        c.simple_query(&sql)
            .map_err(|e| format!("\"{sql}\" failed: {e}"))?;
    }
    let ro = first(&mut c, "select current_setting('transaction_read_only')");
    if ro.as_deref() != Some("on") {
        return Err("the session could not be made read-only".into());
    }
    if first(&mut c, TRACK_ALLOWED_SQL).as_deref() == Some("t") {
        let _ = c.simple_query(&format!("{TAG}set pg_stat_statements.track = 'none'"));
    }
    Ok(c)
}

fn first(c: &mut Connection, sql: &str) -> Option<String> {
    c.simple_query(&format!("{TAG}{sql}"))
        .ok()
        .and_then(|r| r.first().and_then(|q| q.get(0, 0)).map(str::to_string))
}

/// How the sampler paces its reads.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// The asked period (`--interval`).
    pub period: Duration,
    /// Milliseconds of server time per second the reads may take (`--sample-budget`; 0:
    /// unbounded).
    pub budget_ms_per_s: f64,
    /// The server runs on this machine: a read's cost is its backend's CPU time, from `/proc`.
    pub local: bool,
    /// How long the capture samples (the budget keeps [`crate::budget::MIN_READS`] in it).
    pub duration: Duration,
}

/// Samples at `pace` until `done` turns true (or the connection fails), handing each read's
/// wait events to `feed` (closed when sampling ends, so the probe reads for itself again).
pub fn sample(c: Connection, pace: Pace, done: &AtomicBool, feed: &WaitFeed) -> Sampled {
    let out = sample_until(c, pace, done, feed);
    feed.close();
    out
}

fn sample_until(mut c: Connection, pace: Pace, done: &AtomicBool, feed: &WaitFeed) -> Sampled {
    let period = pace.period;
    let mut out = Sampled {
        tracker: Tracker::new(period.as_secs_f64()),
        notes: Vec::new(),
        busy_s: 0.0,
        reads: 0,
    };
    let prepared = c
        .simple_query(&format!(
            "{TAG}prepare hotbench_capture_activity as {ACTIVITY_SQL}"
        ))
        .is_ok();
    let read = if prepared {
        format!("{TAG}execute hotbench_capture_activity")
    } else {
        format!("{TAG}{ACTIVITY_SQL}")
    };
    let mut governor = Governor::new(0.005);
    let mut budget = Budget::new(pace.budget_ms_per_s).over(pace.duration.as_secs_f64());
    let base = period.as_secs_f64();
    let stat = format!("/proc/{}/stat", c.backend_pid());
    let cpu_s = || pace.local.then(|| backend_cpu_s(&stat)).flatten();
    let mut cpu_before = cpu_s();
    let began = Instant::now();
    let mut next = began;
    while !done.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        let t0 = Instant::now();
        let r = c.simple_query(&read);
        let mut took = t0.elapsed().as_secs_f64();
        out.busy_s += took;
        out.reads += 1;
        match r {
            Ok(mut v) => {
                let result = v.pop().unwrap_or_default();
                took = server_time(&result).unwrap_or(took);
                feed.push(wait_rows(&result));
                let rows = rows(&result);
                out.tracker.round(&rows);
            }
            Err(e) => {
                let lost = e.is_connection_lost();
                out.notes.push(format!(
                    "pg_stat_activity sampling {}: {}",
                    if lost {
                        "stopped, connection lost"
                    } else {
                        "stopped"
                    },
                    e.to_string().lines().next().unwrap_or("")
                ));
                break;
            }
        }
        let cpu_now = cpu_s();
        let cost = read_cost(cpu_before, cpu_now, took);
        cpu_before = cpu_now;
        let p = governor.period(cost, base).max(budget.period(
            began.elapsed().as_secs_f64(),
            cost,
            base,
        ));
        next += Duration::from_secs_f64(p);
        if next < Instant::now() {
            next = Instant::now() + Duration::from_secs_f64(p);
        }
        if let Some(n) = governor.note("activity samples") {
            out.notes.push(n);
        }
    }
    out.notes.extend(budget.note());
    out.tracker.finish();
    c.close();
    out
}

/// What a read cost the server (s), as the governor and the budget weigh it: its backend's
/// CPU time since the last read when it can be read (the backend's idle time between reads
/// costs none), else the server's time for the read. On a loaded machine the server's time
/// is mostly waiting for a CPU: judged by it, a local sampler whose reads took 0.27 ms of
/// CPU was slowed to every 250 ms (5.1 ms a read) by the governor's 2% rule.
pub fn read_cost(cpu_before: Option<f64>, cpu_now: Option<f64>, server_s: f64) -> f64 {
    match (cpu_before, cpu_now) {
        (Some(a), Some(b)) => (b - a).max(0.0),
        _ => server_s,
    }
}

/// User + system CPU time (s) of the backend whose `/proc/PID/stat` is `path`, when it is a
/// PostgreSQL process (`None` elsewhere: another PID namespace, another machine).
fn backend_cpu_s(path: &str) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if !text.get(open + 1..close)?.contains("postgres") {
        return None;
    }
    // After "pid (comm) ": utime and stime are fields 14 and 15, in USER_HZ (100 a second).
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// How long the server spent on a read (s): from when it began the statement to the last
/// row's `clock_timestamp()` (its rows are made after the backends' states are copied and
/// filtered); `None` without rows (then it cost next to nothing) or times. This, not the
/// round trip, is what the [`Governor`] weighs: on a loaded machine the round trip is mostly
/// waiting for a CPU, on both ends, and judged by it a 0.13 ms read looked like a 5.6 ms one
/// and sampling fell from every 10 ms to every 280 ms (215 samples in 60 s of a Zipf
/// read-check-write, too few to see its hot key's share).
pub fn server_time(r: &QueryResult) -> Option<f64> {
    let f = |row: &Vec<Option<String>>, i: usize| {
        row.get(i)
            .and_then(|c| c.as_deref())
            .and_then(|v| v.parse::<f64>().ok())
    };
    let began = r.rows.first().and_then(|row| f(row, 8))?;
    let last = r
        .rows
        .iter()
        .filter_map(|row| f(row, 4))
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
    Some((last - began).max(0.0))
}

/// One read's backends as diagnose's probe counts wait samples: state, wait event, and how
/// long in that state.
pub fn wait_rows(r: &QueryResult) -> Vec<WaitRow> {
    let f = |v: Option<&str>| v.and_then(|v| v.parse::<f64>().ok());
    r.rows
        .iter()
        .filter_map(|row| {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let state = cell(5)?;
            Some(WaitRow {
                state: state.to_string(),
                wait_event_type: cell(9).filter(|s| !s.is_empty()).map(str::to_string),
                wait_event: cell(10).filter(|s| !s.is_empty()).map(str::to_string),
                state_age_s: f(cell(4))
                    .zip(f(cell(3)))
                    .map(|(now, at)| (now - at).max(0.0)),
            })
        })
        .collect()
}

/// The activity rows of one read.
pub fn rows(r: &QueryResult) -> Vec<Row> {
    let f = |v: Option<&str>| v.and_then(|v| v.parse::<f64>().ok());
    r.rows
        .iter()
        .filter_map(|row| {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            Some(Row {
                pid: cell(0)?.parse().ok()?,
                xact_start: f(cell(1)),
                query_start: f(cell(2)),
                state_change: f(cell(3)),
                now: f(cell(4))?,
                state: cell(5).unwrap_or("").to_string(),
                query: cell(6).unwrap_or("").to_string(),
                remote: cell(7) == Some("t"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use hotbench_probe::Governor;
    use hotbench_wire::QueryResult;

    fn read(began: f64, nows: &[f64]) -> QueryResult {
        let mut r = QueryResult::default();
        for n in nows {
            let mut row: Vec<Option<String>> = vec![None; 9];
            row[0] = Some("1".into());
            row[4] = Some(n.to_string());
            row[8] = Some(began.to_string());
            r.rows.push(row);
        }
        r
    }

    #[test]
    fn the_governor_weighs_the_servers_time_not_the_round_trip() {
        // Rows made 0.15 ms after the server began the read; the round trip took 6 ms (a
        // loaded machine: both ends waited for a CPU).
        let r = read(1000.0, &[1000.0001, 1000.00015]);
        let server = super::server_time(&r).expect("a time");
        assert!((server - 0.00015).abs() < 1e-6, "{server}");
        let (mut by_server, mut by_round_trip) = (Governor::new(0.005), Governor::new(0.005));
        let (mut a, mut b) = (0.0, 0.0);
        for _ in 0..20 {
            a = by_server.period(server, 0.01);
            b = by_round_trip.period(0.006, 0.01);
        }
        assert_eq!(a, 0.01, "sampling keeps its period");
        assert!(b > 0.25, "the round trip alone would slow it to {b} s");
        assert_eq!(super::server_time(&read(1000.0, &[])), None);
    }

    #[test]
    fn a_local_backends_cpu_not_its_wall_time_is_what_a_read_costs() {
        // Loaded: 5.1 ms of server time for a read whose backend spent 0.27 ms of CPU (here a
        // tick in 37 reads). Weighed by its CPU, the governor keeps the 10 ms period.
        let mut g = Governor::new(0.005);
        let mut p = 0.0;
        for i in 0..100u32 {
            let (before, now) = (f64::from(i / 37) * 0.01, f64::from((i + 1) / 37) * 0.01);
            p = g.period(super::read_cost(Some(before), Some(now), 0.0051), 0.01);
        }
        assert_eq!(p, 0.01);
        // Remote (no /proc): the server's time.
        assert_eq!(super::read_cost(None, Some(1.0), 0.0051), 0.0051);
        assert_eq!(super::read_cost(Some(2.0), Some(1.0), 0.0051), 0.0);
    }
}
