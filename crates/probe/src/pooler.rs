//! The connection pooler's admin console (PgBouncer's `pgbouncer` database): what it is
//! ([`read_facts`]: version, pool mode and size, for the checks before a run and the record),
//! commands hotbench's own pooler needs (`RELOAD`), and what the probe samples during a run
//! ([`PoolerTrack`]): `SHOW POOLS` every wait interval (clients active and waiting, server
//! connections active and idle, the longest wait) and `SHOW STATS` every stats interval (its
//! totals' differences: transactions, and the wait, transaction and query time per
//! transaction or query). Columns are read by name, so versions that add some still parse.
//!
//! The console speaks the simple query protocol only, and keeps no state for us: a failed
//! read is a note, never a failed run.

use std::collections::BTreeMap;

use hotbench_results::pooler_record::{PoolerInterval, PoolerSummary, PoolerTimes};
use hotbench_wire::{ConnectParams, Connection, Connector, QueryResult};

use crate::session::first_line;

/// Where the run's pooler is read, and which of its pools are the run's.
#[derive(Debug, Clone)]
pub struct PoolerSource {
    /// Connection options of the admin console (database `pgbouncer`).
    pub admin: ConnectParams,
    /// Client-side database names of the run's pools; empty = every pool but the console's.
    pub databases: Vec<String>,
    /// The user the run's clients log in as; `None` = any.
    pub user: Option<String>,
}

/// What the console says about the pool a run would use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolerFacts {
    /// `1.18.0`.
    pub version: String,
    /// `transaction`, `session` or `statement`.
    pub pool_mode: String,
    pub pool_size: Option<u32>,
}

/// One admin console connection.
pub struct AdminConsole {
    conn: Connection,
}

impl AdminConsole {
    /// Connects to the console with `params` (their database should be `pgbouncer`).
    pub fn connect(params: &ConnectParams) -> Result<AdminConsole, String> {
        let mut params = params.clone();
        params.application_name = Some(crate::session::PROBE_APPLICATION_NAME.into());
        if params.connect_timeout.is_none() {
            params.connect_timeout = Some(std::time::Duration::from_secs(10));
        }
        let mut conn = Connector::new(params).connect().map_err(|e| {
            format!(
                "cannot reach the pooler's admin console: {}",
                first_line(&e)
            )
        })?;
        let _ = conn.set_io_timeout(Some(std::time::Duration::from_secs(10)));
        Ok(AdminConsole { conn })
    }

    /// `SHOW what` as a table (also any other console command that returns rows).
    pub fn show(&mut self, what: &str) -> Result<QueryResult, String> {
        let mut r = self
            .conn
            .simple_query(&format!("SHOW {what}"))
            .map_err(|e| format!("pooler admin console, SHOW {what}: {}", first_line(&e)))?;
        Ok(r.pop().unwrap_or_default())
    }

    /// A console command without rows (`RELOAD`, `KILL db`).
    pub fn command(&mut self, cmd: &str) -> Result<(), String> {
        self.conn
            .simple_query(cmd)
            .map(|_| ())
            .map_err(|e| format!("pooler admin console, {cmd}: {}", first_line(&e)))
    }

    pub fn close(self) {
        self.conn.close();
    }
}

/// The version, pool mode and pool size for client database `database`: its
/// `SHOW DATABASES` line when it has one, else the console's defaults (`SHOW CONFIG`).
pub fn read_facts(console: &mut AdminConsole, database: &str) -> Result<PoolerFacts, String> {
    let v = console.show("VERSION")?;
    let version = parse_version(v.get(0, 0).unwrap_or("")).unwrap_or_default();
    let config = console.show("CONFIG")?;
    let setting = |key: &str| {
        let r = Rows::new(&config);
        let value = r
            .iter()
            .find(|row| row.text("key") == Some(key))
            .and_then(|row| row.text("value").map(str::to_string));
        value
    };
    let mut pool_mode = setting("pool_mode").unwrap_or_default();
    let mut pool_size = setting("default_pool_size").and_then(|s| s.parse().ok());
    let dbs = console.show("DATABASES")?;
    let rows = Rows::new(&dbs);
    if let Some(row) = rows.iter().find(|r| r.text("name") == Some(database)) {
        if let Some(m) = row.text("pool_mode").filter(|m| !m.is_empty()) {
            pool_mode = m.to_string();
        }
        if let Some(n) = row.int("pool_size").filter(|n| *n > 0) {
            pool_size = Some(n as u32);
        }
    }
    Ok(PoolerFacts {
        version,
        pool_mode,
        pool_size,
    })
}

/// "PgBouncer 1.18.0" → "1.18.0".
fn parse_version(text: &str) -> Option<String> {
    let v = text
        .trim()
        .strip_prefix("PgBouncer ")?
        .split_whitespace()
        .next()?;
    Some(v.to_string())
}

/// A console result read by column name.
struct Rows<'a> {
    r: &'a QueryResult,
    index: BTreeMap<&'a str, usize>,
}

struct Row<'a> {
    rows: &'a Rows<'a>,
    i: usize,
}

impl<'a> Rows<'a> {
    fn new(r: &'a QueryResult) -> Rows<'a> {
        let index = r
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        Rows { r, index }
    }

    fn iter(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        (0..self.r.rows.len()).map(move |i| Row { rows: self, i })
    }
}

impl Row<'_> {
    fn text(&self, col: &str) -> Option<&str> {
        let c = *self.rows.index.get(col)?;
        self.rows.r.get(self.i, c)
    }

    fn int(&self, col: &str) -> Option<i64> {
        self.text(col)?.trim().parse().ok()
    }

    fn num(&self, col: &str) -> f64 {
        self.int(col).unwrap_or(0).max(0) as f64
    }
}

/// One `SHOW POOLS` sample over the run's pools.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoolsSample {
    pub clients_active: f64,
    pub clients_waiting: f64,
    pub servers_active: f64,
    pub servers_idle: f64,
    /// Every server connection of the pools (active, idle, used, tested, logging in).
    pub servers_open: f64,
    pub max_wait_ms: f64,
}

fn is_run_pool(src: &PoolerSource, db: Option<&str>, user: Option<&str>) -> bool {
    let Some(db) = db else { return false };
    if db == "pgbouncer" {
        return false;
    }
    let db_ok = src.databases.is_empty() || src.databases.iter().any(|d| d == db);
    let user_ok = match (&src.user, user) {
        (Some(want), Some(u)) => want == u,
        _ => true,
    };
    db_ok && user_ok
}

/// The run's pools in a `SHOW POOLS` result, summed.
pub fn parse_pools(r: &QueryResult, src: &PoolerSource) -> PoolsSample {
    let rows = Rows::new(r);
    let mut s = PoolsSample::default();
    for row in rows.iter() {
        if !is_run_pool(src, row.text("database"), row.text("user")) {
            continue;
        }
        s.clients_active += row.num("cl_active");
        s.clients_waiting += row.num("cl_waiting");
        s.servers_active += row.num("sv_active");
        s.servers_idle += row.num("sv_idle");
        s.servers_open += ["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"]
            .iter()
            .map(|c| row.num(c))
            .sum::<f64>();
        // maxwait (s) + maxwait_us (the fraction), since 1.8.
        let wait_ms = row.num("maxwait") * 1000.0 + row.num("maxwait_us") / 1000.0;
        s.max_wait_ms = s.max_wait_ms.max(wait_ms);
    }
    s
}

/// `SHOW STATS` totals of the run's databases.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatsTotals {
    pub xacts: u64,
    pub queries: u64,
    /// µs.
    pub xact_time: u64,
    pub query_time: u64,
    pub wait_time: u64,
}

/// The run's databases in a `SHOW STATS` result, summed.
pub fn parse_stats(r: &QueryResult, src: &PoolerSource) -> StatsTotals {
    let rows = Rows::new(r);
    let mut t = StatsTotals::default();
    for row in rows.iter() {
        if !is_run_pool(src, row.text("database"), None) {
            continue;
        }
        let n = |c: &str| row.int(c).unwrap_or(0).max(0) as u64;
        t.xacts += n("total_xact_count");
        t.queries += n("total_query_count");
        t.xact_time += n("total_xact_time");
        t.query_time += n("total_query_time");
        t.wait_time += n("total_wait_time");
    }
    t
}

/// Average ms of `time_us` over `n` events, when there were any.
fn per(time_us: u64, n: u64) -> Option<f64> {
    (n > 0).then(|| time_us as f64 / n as f64 / 1000.0)
}

/// Time a transaction held a server connection: PgBouncer's transaction time counts from
/// the client's first query, so the wait for a connection is in it (measured on 1.18: the
/// transaction time less the wait times the pool's server connections by Little's law).
fn hold(d: &StatsTotals) -> Option<f64> {
    per(d.xact_time.saturating_sub(d.wait_time), d.xacts)
}

/// What a stretch of `SHOW STATS` totals took per transaction (and per query).
fn times(d: &StatsTotals) -> PoolerTimes {
    PoolerTimes {
        avg_wait_ms: per(d.wait_time, d.xacts),
        avg_hold_ms: hold(d),
        avg_xact_ms: per(d.xact_time, d.xacts),
        avg_query_ms: per(d.query_time, d.queries),
    }
}

fn delta(a: &StatsTotals, b: &StatsTotals) -> StatsTotals {
    StatsTotals {
        xacts: b.xacts.saturating_sub(a.xacts),
        queries: b.queries.saturating_sub(a.queries),
        xact_time: b.xact_time.saturating_sub(a.xact_time),
        query_time: b.query_time.saturating_sub(a.query_time),
        wait_time: b.wait_time.saturating_sub(a.wait_time),
    }
}

/// Accumulates pool samples and stats totals into intervals and the run's summary; no I/O,
/// so it is tested with made-up console results.
#[derive(Debug, Default)]
pub struct PoolerAccumulator {
    pools: Vec<String>,
    first: Option<StatsTotals>,
    prev: Option<StatsTotals>,
    cur: Vec<PoolsSample>,
    all: Vec<PoolsSample>,
}

fn mean(v: &[PoolsSample], f: impl Fn(&PoolsSample) -> f64) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().map(f).sum::<f64>() / v.len() as f64
    }
}

impl PoolerAccumulator {
    /// Names the pools (`database/user`) seen in a `SHOW POOLS` result.
    pub fn note_pools(&mut self, r: &QueryResult, src: &PoolerSource) {
        for row in Rows::new(r).iter() {
            if is_run_pool(src, row.text("database"), row.text("user")) {
                let name = format!(
                    "{}/{}",
                    row.text("database").unwrap_or(""),
                    row.text("user").unwrap_or("")
                );
                if !self.pools.contains(&name) {
                    self.pools.push(name);
                }
            }
        }
    }

    pub fn add_sample(&mut self, s: PoolsSample) {
        self.cur.push(s);
        self.all.push(s);
    }

    /// The stats totals at the start of the run.
    pub fn baseline(&mut self, t: StatsTotals) {
        self.first = Some(t);
        self.prev = Some(t);
    }

    /// Closes the interval at stats totals `t` (`None`: they could not be read).
    pub fn close_interval(&mut self, t: Option<StatsTotals>) -> PoolerInterval {
        let samples = std::mem::take(&mut self.cur);
        let d = match (&self.prev, &t) {
            (Some(p), Some(n)) => delta(p, n),
            _ => StatsTotals::default(),
        };
        if let Some(t) = t {
            self.prev = Some(t);
        }
        PoolerInterval {
            clients_active: mean(&samples, |s| s.clients_active),
            clients_waiting: mean(&samples, |s| s.clients_waiting),
            servers_active: mean(&samples, |s| s.servers_active),
            servers_idle: mean(&samples, |s| s.servers_idle),
            max_wait_ms: samples.iter().map(|s| s.max_wait_ms).fold(0.0, f64::max),
            transactions: d.xacts,
            times: times(&d),
        }
    }

    /// The run's summary.
    pub fn summary(&self) -> PoolerSummary {
        let all = &self.all;
        let d = match (&self.first, &self.prev) {
            (Some(a), Some(b)) => delta(a, b),
            _ => StatsTotals::default(),
        };
        let active: f64 = all.iter().map(|s| s.clients_active).sum();
        let waiting: f64 = all.iter().map(|s| s.clients_waiting).sum();
        PoolerSummary {
            pools: self.pools.clone(),
            samples: all.len() as u64,
            clients_active_avg: mean(all, |s| s.clients_active),
            clients_waiting_avg: mean(all, |s| s.clients_waiting),
            clients_waiting_max: all
                .iter()
                .map(|s| s.clients_waiting as u32)
                .max()
                .unwrap_or(0),
            servers_active_avg: mean(all, |s| s.servers_active),
            servers_idle_avg: mean(all, |s| s.servers_idle),
            servers_max: all.iter().map(|s| s.servers_open as u32).max().unwrap_or(0),
            wait_pct: if active + waiting > 0.0 {
                100.0 * waiting / (active + waiting)
            } else {
                0.0
            },
            max_wait_ms: all.iter().map(|s| s.max_wait_ms).fold(0.0, f64::max),
            transactions: d.xacts,
            queries: d.queries,
            times: times(&d),
        }
    }
}

/// The probe's pooler reading: its console connection and what it accumulated. A failed
/// read stops the pooler part with one note; the rest of the probe goes on.
pub struct PoolerTrack {
    console: Option<AdminConsole>,
    src: PoolerSource,
    acc: PoolerAccumulator,
    pub note: Option<String>,
}

impl PoolerTrack {
    /// Connects and takes the baseline totals.
    pub fn start(src: PoolerSource) -> PoolerTrack {
        let mut t = PoolerTrack {
            console: None,
            src,
            acc: PoolerAccumulator::default(),
            note: None,
        };
        match AdminConsole::connect(&t.src.admin) {
            Ok(c) => t.console = Some(c),
            Err(e) => t.note = Some(format!("pooler figures: {e}")),
        }
        if let Some(s) = t.read_stats() {
            t.acc.baseline(s);
        }
        t
    }

    /// Ends the console's socket from another thread ([`crate::ProbeHandle::stop`], when the
    /// pooler stalled).
    pub(crate) fn interrupter(&self) -> Option<hotbench_wire::Interrupter> {
        self.console.as_ref()?.conn.interrupter().ok()
    }

    fn read(&mut self, what: &str) -> Option<QueryResult> {
        let c = self.console.as_mut()?;
        match c.show(what) {
            Ok(r) => Some(r),
            Err(e) => {
                self.note = Some(format!("pooler figures stopped: {e}"));
                if let Some(c) = self.console.take() {
                    c.close();
                }
                None
            }
        }
    }

    fn read_stats(&mut self) -> Option<StatsTotals> {
        let r = self.read("STATS")?;
        Some(parse_stats(&r, &self.src))
    }

    /// One `SHOW POOLS` sample.
    pub fn sample(&mut self) {
        if let Some(r) = self.read("POOLS") {
            self.acc.note_pools(&r, &self.src);
            self.acc.add_sample(parse_pools(&r, &self.src));
        }
    }

    /// Closes a stats interval (`None` once the console is gone).
    pub fn close_interval(&mut self) -> Option<PoolerInterval> {
        self.console.as_ref()?;
        let t = self.read_stats();
        Some(self.acc.close_interval(t))
    }

    /// The run's summary; closes the console connection.
    pub fn finish(mut self) -> (PoolerSummary, Option<String>) {
        if let Some(c) = self.console.take() {
            c.close();
        }
        (self.acc.summary(), self.note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(columns: &[&str], rows: &[&[&str]]) -> QueryResult {
        QueryResult {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|v| Some(v.to_string())).collect())
                .collect(),
            command_tag: "SHOW".into(),
        }
    }

    fn source(dbs: &[&str]) -> PoolerSource {
        PoolerSource {
            admin: hotbench_wire::Config::parse("host=127.0.0.1 port=1 dbname=pgbouncer")
                .and_then(|c| c.resolve())
                .expect("params"),
            databases: dbs.iter().map(|d| d.to_string()).collect(),
            user: Some("postgres".into()),
        }
    }

    const POOLS: &[&str] = &[
        "database",
        "user",
        "cl_active",
        "cl_waiting",
        "sv_active",
        "sv_idle",
        "sv_used",
        "sv_tested",
        "sv_login",
        "maxwait",
        "maxwait_us",
        "pool_mode",
    ];

    #[test]
    fn pools_of_the_run_are_summed_and_the_console_left_out() {
        let r = table(
            POOLS,
            &[
                &[
                    "bench",
                    "postgres",
                    "10",
                    "90",
                    "10",
                    "0",
                    "0",
                    "0",
                    "0",
                    "1",
                    "250000",
                    "transaction",
                ],
                &[
                    "bench",
                    "other",
                    "5",
                    "5",
                    "1",
                    "0",
                    "0",
                    "0",
                    "0",
                    "9",
                    "0",
                    "transaction",
                ],
                &[
                    "pgbouncer",
                    "pgbouncer",
                    "1",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "0",
                    "statement",
                ],
            ],
        );
        let s = parse_pools(&r, &source(&["bench"]));
        assert_eq!(
            s,
            PoolsSample {
                clients_active: 10.0,
                clients_waiting: 90.0,
                servers_active: 10.0,
                servers_idle: 0.0,
                servers_open: 10.0,
                max_wait_ms: 1250.0,
            }
        );
        let any = parse_pools(
            &r,
            &PoolerSource {
                user: None,
                ..source(&[])
            },
        );
        assert_eq!(any.clients_waiting, 95.0, "every pool but the console's");
    }

    #[test]
    fn intervals_and_the_summary_come_from_samples_and_stats_differences() {
        let stats = |x: u64, q: u64, xt: u64, qt: u64, wt: u64| StatsTotals {
            xacts: x,
            queries: q,
            xact_time: xt,
            query_time: qt,
            wait_time: wt,
        };
        let mut acc = PoolerAccumulator::default();
        acc.baseline(stats(100, 200, 0, 0, 0));
        let sample = |a: f64, w: f64, wait: f64| PoolsSample {
            clients_active: a,
            clients_waiting: w,
            servers_active: a,
            servers_idle: 0.0,
            servers_open: a,
            max_wait_ms: wait,
        };
        acc.add_sample(sample(10.0, 90.0, 5.0));
        acc.add_sample(sample(10.0, 80.0, 9.0));
        // 1,000 transactions of 2 queries: 4 ms of wait and 1 ms held (PgBouncer's 5 ms of
        // transaction time), 2.5 ms per query.
        let iv = acc.close_interval(Some(stats(1100, 2200, 5_000_000, 5_000_000, 4_000_000)));
        assert_eq!(iv.clients_waiting, 85.0);
        assert_eq!(iv.max_wait_ms, 9.0);
        assert_eq!(iv.transactions, 1000);
        assert_eq!(iv.times.avg_wait_ms, Some(4.0));
        assert_eq!(iv.times.avg_hold_ms, Some(1.0));
        assert_eq!(iv.times.avg_xact_ms, Some(5.0));
        assert_eq!(iv.times.avg_query_ms, Some(2.5));
        // An interval whose stats could not be read has no averages.
        acc.add_sample(sample(100.0, 0.0, 0.0));
        let iv = acc.close_interval(None);
        assert_eq!((iv.transactions, iv.times.avg_wait_ms), (0, None));
        let s = acc.summary();
        assert_eq!(s.samples, 3);
        assert_eq!(s.transactions, 1000);
        assert_eq!(s.clients_waiting_max, 90);
        // 170 waiting of 290 client samples.
        assert!((s.wait_pct - 100.0 * 170.0 / 290.0).abs() < 1e-9);
        assert_eq!(s.top_wait_label().as_deref(), Some("pooler wait 59%"));
    }

    #[test]
    fn console_versions_parse() {
        assert_eq!(parse_version("PgBouncer 1.18.0").as_deref(), Some("1.18.0"));
        assert_eq!(
            parse_version("PgBouncer 1.22.1 libevent").as_deref(),
            Some("1.22.1")
        );
        assert_eq!(parse_version("1.18"), None);
    }
}
