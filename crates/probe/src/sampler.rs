//! The probe's measurements, run by its thread over its own connection: a cheap wait sample
//! of the sampled backends (a run's, or a whole database's) every wait interval (plus
//! `pg_locks` only while some wait on locks, about once a second or per stats interval when
//! shorter), and a stats round every stats interval (tables, database, WAL, oldest xmin,
//! statements, blocking chains; with [`crate::ProbeOptions::observe_sessions`], who the
//! sessions are). [`Sampler::finish`] turns it into the record.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_results::probe_record::{
    self, HotSpot, LockSummary, ProbeInterval, ProbeRecord, WaitShare,
};

use crate::classify::{
    classify, display_relation, engine_of, float, int, longest_chain, parse_int_array, Sampled,
};
use crate::engine_views::{CRDB_CONTENTION_SQL, YB_ASH_SQL};
use crate::health::{self, TablesSnap};
use crate::hot_rows::HotRows;
use crate::key_decode::quote_ident;
use crate::observe::{Observer, WAITS_OBSERVE_SQL};
use crate::options::{ProbeOptions, Scope};
use crate::pooler::PoolerTrack;
use crate::session::{first_line, literal, Part, Session, PROBE_APPLICATION_NAME, TAG};
use crate::statements::{self, Snapshot};
use crate::tables;
use crate::wait_feed::WaitFeed;

mod fed;
mod reconnect;
mod summary;

/// `{F}` in every query: the sampled backends ([`backend_filter`], alias `a`).
const WAITS_SQL: &str = "select a.state, a.wait_event_type, a.wait_event, count(*)::int8 \
     from pg_stat_activity a where {F} group by 1, 2, 3";

const LOCK_SPOTS_SQL: &str = "select l.locktype, \
     coalesce(l.relation::regclass::text, ''), l.page, l.tuple, count(*)::int8 \
     from pg_locks l where l.pid in (select a.pid from pg_stat_activity a \
       where {F} and a.wait_event_type = 'Lock') \
     and l.locktype in ('relation', 'page', 'tuple') \
     and (not l.granted or l.locktype = 'tuple') group by 1, 2, 3, 4";

const CHAINS_SQL: &str = "select a.pid, pg_blocking_pids(a.pid)::text from pg_stat_activity a \
     where {F} and a.wait_event_type = 'Lock'";

const PIDS_SQL: &str = "select a.pid from pg_stat_activity a where {F}";

/// `{S}`: the extension's schema, quoted.
const WAIT_SAMPLING_SQL: &str = "select pid::int8, \
     coalesce(event_type || ':' || event, 'CPU'), sum(count)::int8 \
     from {S}.pg_wait_sampling_profile group by 1, 2";

/// The settings of every probe session (but one through a transaction pool, which keeps no
/// session state) after its timeouts: names resolve only in `pg_catalog`, and row-level
/// security makes a read fail instead of running a policy.
pub const SAFE_SETTINGS: [&str; 2] = ["set search_path = pg_catalog", "set row_security = off"];

/// Whether the session may set `pg_stat_statements.track` (loaded, and a user setting or the
/// role a superuser).
const TRACK_ALLOWED_SQL: &str = "select exists (select 1 from pg_settings \
     where name = 'pg_stat_statements.track' and (context = 'user' \
       or (select rolsuper from pg_roles where rolname = current_user)))";

/// Statements kept on the per-interval timeline.
const TIMELINE_STATEMENTS: usize = 3;

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Accumulates the current stats interval's wait samples.
#[derive(Default)]
struct Current {
    samples: u32,
    waits: BTreeMap<String, u64>,
    lock_waiting_max: u32,
}

pub struct Sampler {
    s: Session,
    /// What the last wait read cost (s): its server backend's CPU time when the server is
    /// local, else its round trip.
    pub waits_read_s: f64,
    /// What the last stats round cost (s), measured alike.
    pub stats_round_s: f64,
    app: String,
    /// Which backends are sampled, as an SQL condition on `pg_stat_activity a` (prepared
    /// statements carry it inline).
    filter: String,
    scope: Scope,
    /// Who the sessions are, when observed.
    observer: Option<Observer>,
    engine: &'static str,
    wait_interval_ms: f64,
    stats_interval_ms: f64,
    top_statements: usize,
    started_unix: f64,
    local_server: bool,
    // Waits.
    samples: u64,
    busy: u64,
    idle: u64,
    hidden_noted: bool,
    totals: BTreeMap<String, u64>,
    max_waiting: u32,
    longest_chain: u32,
    /// Lock-waiting samples to skip before the next `pg_locks` read.
    lock_skip: u64,
    lock_every: u64,
    hot_rel: BTreeMap<String, u64>,
    hot_tuple: BTreeMap<(String, String), u64>,
    hot_rows: HotRows,
    cur: Current,
    // Stats.
    table_oids: Vec<i64>,
    /// No table was named: only the tables the run wrote to are reported.
    only_written: bool,
    tables_first: Option<TablesSnap>,
    tables_prev: Option<TablesSnap>,
    db_first: Option<health::DbSnap>,
    db_prev: Option<health::DbSnap>,
    wal_first: Option<health::WalSnap>,
    wal_prev: Option<health::WalSnap>,
    wal_sql: &'static str,
    tables_sql: &'static str,
    max_xmin_age: Option<i64>,
    stmt_sql: String,
    /// pg_stat_statements' schema, quoted.
    stmt_schema: String,
    stmt_first: Option<Snapshot>,
    stmt_prev: Option<Snapshot>,
    stmt_intervals: Vec<Snapshot>,
    last_stats_at: f64,
    /// `t` holds Unix seconds until [`Sampler::finish`].
    timeline: Vec<ProbeInterval>,
    // pg_wait_sampling.
    ws_first: Option<BTreeMap<(i64, String), u64>>,
    /// pg_wait_sampling's schema, quoted.
    ws_schema: String,
    run_pids: BTreeSet<i64>,
    /// The connection pooler's admin console, when the run goes through one.
    pooler: Option<PoolerTrack>,
    restarts: crate::restart::Restarts,
    /// Another reader's activity rows, the wait samples while it is open.
    feed: Option<WaitFeed>,
}

impl Sampler {
    /// Detects what the server offers and takes the baseline snapshots.
    /// `local_server`: the server runs on this machine (its backend's CPU time is readable).
    /// Ends the pooler console's socket from another thread (see [`PoolerTrack`]).
    pub(crate) fn pooler_interrupter(&self) -> Option<hotbench_wire::Interrupter> {
        self.pooler.as_ref()?.interrupter()
    }

    pub fn begin(s: Session, opts: &ProbeOptions, version: &str, local_server: bool) -> Sampler {
        let engine = engine_of(version);
        let version_num = s.connection().server_version_num();
        let wait_ms = opts.wait_interval.as_secs_f64() * 1000.0;
        let now = unix_now();
        let mut me = Sampler {
            app: server_name(&opts.application_name),
            filter: backend_filter(opts),
            scope: opts.scope.clone(),
            observer: opts
                .observe_sessions
                .then(|| Observer::new(s.connection().server_version_num(), opts.stats_interval)),
            engine,
            wait_interval_ms: wait_ms,
            stats_interval_ms: opts.stats_interval.as_secs_f64() * 1000.0,
            top_statements: opts.top_statements.max(1),
            started_unix: now,
            local_server,
            samples: 0,
            busy: 0,
            idle: 0,
            hidden_noted: false,
            totals: BTreeMap::new(),
            max_waiting: 0,
            longest_chain: 0,
            lock_skip: 0,
            // pg_locks (and the hot rows) once a second, or once per stats interval when
            // that is shorter (a short diagnosis sample still gets a dozen reads).
            lock_every: ((opts.stats_interval.as_secs_f64() * 1000.0).min(1000.0)
                / wait_ms.max(1.0))
            .ceil()
            .max(1.0) as u64,
            hot_rel: BTreeMap::new(),
            hot_tuple: BTreeMap::new(),
            hot_rows: HotRows::new(opts.key_reads, version_num),
            cur: Current::default(),
            table_oids: Vec::new(),
            only_written: opts.tables.is_empty(),
            tables_first: None,
            tables_prev: None,
            db_first: None,
            db_prev: None,
            wal_first: None,
            wal_prev: None,
            wal_sql: health::wal_sql(version_num),
            tables_sql: health::tables_sql(opts.read_only),
            max_xmin_age: None,
            stmt_sql: String::new(),
            stmt_schema: String::new(),
            stmt_first: None,
            stmt_prev: None,
            stmt_intervals: Vec::new(),
            last_stats_at: now,
            timeline: Vec::new(),
            ws_first: None,
            ws_schema: String::new(),
            run_pids: BTreeSet::new(),
            pooler: opts.pooler.clone().map(PoolerTrack::start),
            restarts: Default::default(),
            feed: opts.wait_feed.clone(),
            waits_read_s: 0.0,
            stats_round_s: 0.0,
            s,
        };
        me.settle(opts);
        match engine {
            "cockroachdb" => {
                for p in [
                    Part::Waits,
                    Part::LockSpots,
                    Part::Chains,
                    Part::Wal,
                    Part::Xmin,
                    Part::Activity,
                    Part::Blockers,
                    Part::XminHolders,
                ] {
                    me.s.disable_silently(p);
                }
                me.s.note(
                    "cockroachdb: no wait events or pg_locks; contention events from \
                     crdb_internal.transaction_contention_events instead",
                );
            }
            "yugabytedb" => {
                me.s.disable(Part::Wal, "yugabytedb: no WAL position (DocDB storage)");
            }
            _ => {}
        }
        me.check_privileges();
        me.table_oids = tables::pick(&mut me.s, &opts.tables);
        me.detect_statements(opts.create_extensions);
        me.stmt_sql = statements::snapshot_sql(version_num, &me.stmt_schema);
        me.detect_wait_sampling();
        if me.s.is_lost() {
            return me;
        }
        me.note_server_start();
        me.read_baseline();
        if me.s.enabled(Part::WaitSampling) {
            me.ws_first = me.read_wait_sampling();
        }
        me.last_stats_at = unix_now();
        // Reads made before the probe was ready belong to no interval of its.
        if let Some(f) = &me.feed {
            let _ = f.take();
        }
        me
    }

    pub fn is_lost(&self) -> bool {
        self.s.is_lost()
    }

    /// The counters every delta is taken from (tables, database, WAL, statements), read now:
    /// at the start, and again after a server restart reset them.
    fn read_baseline(&mut self) {
        self.tables_first = self.read_tables();
        self.tables_prev = self.tables_first.clone();
        self.db_first = self.read_database();
        self.db_prev = self.db_first;
        self.wal_first = self.read_wal();
        self.wal_prev = self.wal_first;
        self.stmt_first = self.read_statements();
        self.stmt_prev = self.stmt_first.clone();
    }

    /// The server backend's CPU time (s) when the server is local, and the time now: where a
    /// read's cost is measured from.
    fn cost_start(&self) -> (Option<f64>, std::time::Instant) {
        let cpu = self.local_server.then(|| {
            let pid = self.s.connection().backend_pid();
            proc_cpu_ms(&format!("/proc/{pid}/stat"), "postgres").map(|ms| ms / 1000.0)
        });
        (cpu.flatten(), std::time::Instant::now())
    }

    /// What was spent since `start` (s): the backend's CPU time (in 10 ms ticks: a mean over
    /// reads is exact), else the time that passed (which a busy client machine inflates).
    fn cost_since(&self, start: (Option<f64>, std::time::Instant)) -> f64 {
        match (start.0, self.cost_start().0) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => start.1.elapsed().as_secs_f64(),
        }
    }

    /// The wait read's backends: a run's, or the database's sessions but the idle ones
    /// (skipped on the server: a big server's idle sessions cost every read, and diagnose
    /// does not count them).
    fn wait_filter(&self) -> String {
        match self.scope {
            Scope::Run => self.filter.clone(),
            Scope::Database => format!("{} and a.state is distinct from 'idle'", self.filter),
        }
    }

    /// Adds a note to the record.
    pub fn note(&mut self, note: String) {
        self.s.note(note);
    }

    /// The session's settings: bounded, never in anyone's way, invisible to
    /// pg_stat_statements when allowed, and read-only when asked (refusing to sample when that
    /// cannot be set).
    fn settle(&mut self, opts: &ProbeOptions) {
        if opts.no_session_state {
            // Through a transaction pool these would stay with a server connection the run's
            // clients use next (a 200 ms lock_timeout among them).
            self.s.without_session_state();
            if opts.read_only {
                self.s.stop_all(
                    "refusing to sample: a read-only session needs session state, which a \
                     transaction pool does not keep",
                );
            }
            return;
        }
        let ms = |d: std::time::Duration| d.as_millis().max(1);
        let mut sql = Vec::new();
        if opts.read_only {
            // First: every later statement, these SETs included, runs read-only.
            sql.push("set default_transaction_read_only = on".to_string());
        }
        sql.push(format!(
            "set statement_timeout = '{}ms'",
            ms(opts.statement_timeout)
        ));
        sql.push(format!("set lock_timeout = '{}ms'", ms(opts.lock_timeout)));
        // No name resolves into a user's schema (a function there cannot stand in for a
        // built-in one), and no policy (a user's expression) runs on a read.
        sql.extend(SAFE_SETTINGS.iter().map(|s| s.to_string()));
        for q in &sql {
            if q == SAFE_SETTINGS[0] {
                // Tables named by the user resolve in their own search_path (tables::pick).
                self.s.user_search_path = self
                    .s
                    .raw("select pg_catalog.current_setting('search_path')", &[])
                    .ok()
                    .and_then(|r| r.get(0, 0).map(str::to_string));
            }
            if let Err(e) = self.s.raw(q, &[]) {
                if opts.read_only {
                    self.s.stop_all(format!(
                        "refusing to sample: \"{q}\" failed: {}",
                        first_line(&e)
                    ));
                    return;
                }
            }
        }
        // Hidden from pg_stat_statements where the role may set it (a SET it may not run
        // would leave an ERROR in the server's log).
        let may = self
            .s
            .raw(TRACK_ALLOWED_SQL, &[])
            .ok()
            .is_some_and(|r| r.get(0, 0) == Some("t"));
        if may {
            let _ = self.s.raw("set pg_stat_statements.track = 'none'", &[]);
        }
        if opts.read_only {
            let on = self
                .s
                .raw("select current_setting('transaction_read_only')", &[])
                .ok()
                .is_some_and(|r| r.get(0, 0) == Some("on"));
            if !on {
                self.s
                    .stop_all("refusing to sample: the session could not be made read-only");
            }
        }
    }

    fn check_privileges(&mut self) {
        let sql = "select rolsuper or pg_has_role(current_user, 'pg_read_all_stats', 'USAGE'), \
                   current_user from pg_roles where rolname = current_user";
        if let Ok(r) = self.s.raw(sql, &[]) {
            if r.get(0, 0) == Some("f") {
                let role = r.get(0, 1).unwrap_or("?").to_string();
                self.s.note(format!(
                    "role \"{role}\" lacks pg_read_all_stats: other roles' sessions are hidden \
                     (oldest xmin and lock holders cover this role's sessions only)"
                ));
            }
        }
    }

    fn detect_statements(&mut self, create: bool) {
        if self.engine == "cockroachdb" {
            self.s.disable(
                Part::Statements,
                "statements: pg_stat_statements does not exist on cockroachdb",
            );
            return;
        }
        let schema = match self.s.raw(statements::INSTALLED_SQL, &[]) {
            Ok(r) => r.get(0, 1).map(quote_ident),
            Err(_) => None,
        };
        if let Some(schema) = schema {
            self.stmt_schema = schema;
            return;
        }
        // shared_preload_libraries is readable only with pg_read_all_settings: None = unknown.
        let preloaded = self
            .s
            .raw(statements::PRELOADED_SQL, &[])
            .ok()
            .and_then(|r| r.get(0, 0).map(|v| v.contains("pg_stat_statements")));
        if create
            && preloaded == Some(true)
            && self
                .s
                .raw("create extension if not exists pg_stat_statements", &[])
                .is_ok()
        {
            if let Ok(r) = self.s.raw(statements::INSTALLED_SQL, &[]) {
                self.stmt_schema = r.get(0, 1).map(quote_ident).unwrap_or_default();
            }
            return;
        }
        let how = match preloaded {
            Some(true) => "CREATE EXTENSION pg_stat_statements to see statements",
            Some(false) => {
                "add it to shared_preload_libraries and CREATE EXTENSION pg_stat_statements"
            }
            None => "it needs shared_preload_libraries and CREATE EXTENSION pg_stat_statements",
        };
        self.s.disable(
            Part::Statements,
            format!("statements: pg_stat_statements is not installed in this database ({how})"),
        );
    }

    fn detect_wait_sampling(&mut self) {
        let sql = "select n.nspname::text from pg_extension e \
                   join pg_namespace n on n.oid = e.extnamespace \
                   where e.extname = 'pg_wait_sampling'";
        let schema = match self.s.raw(sql, &[]) {
            Ok(r) => r.get(0, 0).map(quote_ident),
            Err(_) => None,
        };
        self.ws_schema = schema.clone().unwrap_or_default();
        if schema.is_none() {
            // Not a degradation worth a note: pg_stat_activity sampling is the default.
            self.s.disable_silently(Part::WaitSampling);
        }
    }

    /// One sample of the run's backends (and of the pooler's pools): read here, or the reads
    /// a [`WaitFeed`] handed over since the last, counted alike (`fed.rs`).
    pub fn sample_waits(&mut self) {
        if let Some(p) = self.pooler.as_mut() {
            p.sample();
        }
        if let Some(reads) = self.feed.as_ref().and_then(WaitFeed::take) {
            self.waits_read_s = 0.0;
            self.fed_waits(reads);
            return;
        }
        let sql = match self.observer {
            Some(_) => WAITS_OBSERVE_SQL,
            None => WAITS_SQL,
        }
        .replace("{F}", &self.wait_filter());
        let cost = self.cost_start();
        let r = self
            .s
            .run_prepared(Part::Waits, "hotbench_probe_waits", &sql);
        self.waits_read_s = self.cost_since(cost);
        let Some(r) = r else {
            return;
        };
        self.samples += 1;
        self.cur.samples += 1;
        let (mut lock_waiting, mut hidden) = (0u32, 0u64);
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let n = int(cell(3)).unwrap_or(0).max(0) as u64;
            if let Some(o) = &mut self.observer {
                o.wait_row(cell(0), cell(4), cell(5));
            }
            let (l, h) = self.count_wait(classify(cell(0), cell(1), cell(2)), n);
            lock_waiting += l;
            hidden += h;
        }
        self.after_waits(lock_waiting, hidden);
    }

    fn sample_lock_spots(&mut self) {
        let sql = LOCK_SPOTS_SQL.replace("{F}", &self.filter);
        let Some(r) = self
            .s
            .run_prepared(Part::LockSpots, "hotbench_probe_locks", &sql)
        else {
            return;
        };
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            let rel = display_relation(cell(1).unwrap_or(""), self.s.user_search_path.as_deref());
            let n = int(cell(4)).unwrap_or(0).max(0) as u64;
            if rel.is_empty() || n == 0 {
                continue;
            }
            *self.hot_rel.entry(rel.clone()).or_default() += n;
            if cell(0) == Some("tuple") {
                let ctid = format!("({},{})", cell(2).unwrap_or("?"), cell(3).unwrap_or("?"));
                *self.hot_tuple.entry((rel, ctid)).or_default() += n;
            }
        }
    }

    fn read_chains(&mut self) -> Option<u32> {
        // Observing sessions: one read gives the blockers and the chains.
        let g = match &mut self.observer {
            Some(o) => o.blockers(&mut self.s, &self.filter)?,
            None => {
                let sql = CHAINS_SQL.replace("{F}", &self.filter);
                let r = self
                    .s
                    .run_prepared(Part::Chains, "hotbench_probe_chains", &sql)?;
                let mut g = BTreeMap::new();
                for row in &r.rows {
                    let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
                    if let Some(pid) = int(cell(0)) {
                        g.insert(pid, parse_int_array(cell(1).unwrap_or("")));
                    }
                }
                g
            }
        };
        let c = longest_chain(&g);
        self.longest_chain = self.longest_chain.max(c);
        Some(c)
    }

    fn read_tables(&mut self) -> Option<TablesSnap> {
        if self.table_oids.is_empty() {
            return None;
        }
        let arr = format!("'{}'", health::oid_array(&self.table_oids));
        let sql = self.tables_sql.replace("$1", &arr);
        let r = self
            .s
            .run_prepared(Part::Tables, "hotbench_probe_tables", &sql)?;
        Some(health::parse_tables(&r, self.s.user_search_path.as_deref()))
    }

    /// The database's commits, rollbacks and deadlocks, with the probe's own transactions the
    /// server has likely counted by now ([`Session::own_xacts_counted`]), for the delta to
    /// subtract.
    fn read_database(&mut self) -> Option<health::DbSnap> {
        let r = self
            .s
            .run_prepared(Part::Database, "hotbench_probe_db", health::DATABASE_SQL)?;
        let [c, r, d, ..] = health::parse_database(&r)?;
        let [own_c, own_r] = self.s.own_xacts_counted();
        Some([c, r, d, own_c, own_r])
    }

    fn read_wal(&mut self) -> Option<health::WalSnap> {
        let r = self
            .s
            .run_prepared(Part::Wal, "hotbench_probe_wal", self.wal_sql)?;
        health::parse_wal(&r)
    }

    fn read_xmin(&mut self) -> (Option<i64>, Option<f64>) {
        match self
            .s
            .run_prepared(Part::Xmin, "hotbench_probe_xmin", health::XMIN_SQL)
        {
            Some(r) => (int(r.get(0, 0)), float(r.get(0, 1))),
            None => (None, None),
        }
    }

    fn read_statements(&mut self) -> Option<Snapshot> {
        let sql = self.stmt_sql.clone();
        let r = self
            .s
            .run_prepared(Part::Statements, "hotbench_probe_statements", &sql)?;
        Some(statements::parse(&r))
    }

    fn read_wait_sampling(&mut self) -> Option<BTreeMap<(i64, String), u64>> {
        let sql = WAIT_SAMPLING_SQL.replace("{S}", &self.ws_schema);
        let r = self.s.run(Part::WaitSampling, &sql, &[])?;
        let mut m = BTreeMap::new();
        for row in &r.rows {
            let cell = |i: usize| row.get(i).and_then(|c| c.as_deref());
            if let (Some(pid), Some(ev), Some(n)) = (int(cell(0)), cell(1), int(cell(2))) {
                m.insert((pid, ev.to_string()), n.max(0) as u64);
            }
        }
        Some(m)
    }

    /// Closes the current interval: table, database, WAL, xmin and statement deltas.
    pub fn stats_round(&mut self) {
        if self.s.is_lost() {
            return;
        }
        let cost = self.cost_start();
        self.stats_round_inner();
        self.stats_round_s = self.cost_since(cost);
    }

    fn stats_round_inner(&mut self) {
        let now = unix_now();
        let chain = if self.cur.lock_waiting_max > 0 {
            self.read_chains()
        } else {
            None
        };
        let tables = self.read_tables();
        let db = self.read_database();
        let wal = self.read_wal();
        let (xmin_age, oldest_xact_s) = self.read_xmin();
        if let Some(a) = xmin_age {
            self.max_xmin_age = Some(self.max_xmin_age.map_or(a, |m| m.max(a)));
        }
        let stmts = self.read_statements();
        if let Some(o) = &mut self.observer {
            o.activity(&mut self.s, &self.filter);
            o.xmin_holders(&mut self.s);
        }
        if self.s.enabled(Part::WaitSampling) {
            let sql = PIDS_SQL.replace("{F}", &self.filter);
            if let Some(r) = self
                .s
                .run_prepared(Part::WaitSampling, "hotbench_probe_pids", &sql)
            {
                for row in &r.rows {
                    if let Some(p) = int(row.first().and_then(|c| c.as_deref())) {
                        self.run_pids.insert(p);
                    }
                }
            }
        }
        let cur = std::mem::take(&mut self.cur);
        let iv = ProbeInterval {
            t: now,
            dt: now - self.last_stats_at,
            samples: cur.samples,
            waits: cur.waits,
            lock_waiting_max: cur.lock_waiting_max,
            longest_chain: chain,
            tables: {
                let mut v = match (&self.tables_prev, &tables) {
                    (Some(p), Some(n)) => health::table_intervals(p, n),
                    (None, Some(n)) => health::table_intervals(&TablesSnap::new(), n),
                    _ => Vec::new(),
                };
                // Unnamed tables: points only for those written so far (memory follows the
                // workload; the rest are dropped at the end anyway).
                if let (true, Some(f), Some(n)) = (self.only_written, &self.tables_first, &tables) {
                    let written = tables::written_since(f, n);
                    v.retain(|t| written.contains(&t.name));
                }
                v
            },
            server: health::server_delta((self.db_prev, self.wal_prev), (db, wal)),
            xmin_age,
            oldest_xact_s,
            statements: Vec::new(),
            pooler: self.pooler.as_mut().and_then(PoolerTrack::close_interval),
            restarted: std::mem::take(&mut self.restarts.pending),
        };
        self.stmt_intervals.push(match (&self.stmt_prev, &stmts) {
            (Some(p), Some(n)) => statements::diff(p, n),
            _ => Snapshot::new(),
        });
        self.timeline.push(iv);
        if tables.is_some() {
            self.tables_prev = tables;
        }
        if db.is_some() {
            self.db_prev = db;
        }
        if wal.is_some() {
            self.wal_prev = wal;
        }
        if stmts.is_some() {
            self.stmt_prev = stmts;
        }
        self.last_stats_at = now;
    }
}

/// The sampled backends as a condition on `pg_stat_activity a`: the run's (by
/// application_name), or every client backend of the database but the probe's own and other
/// hotbench probes'. Values are SQL literals built here, never pasted text.
fn backend_filter(opts: &ProbeOptions) -> String {
    match opts.scope {
        Scope::Run => format!(
            "a.application_name = {} and a.pid <> pg_backend_pid()",
            literal(&server_name(&opts.application_name))
        ),
        Scope::Database => format!(
            "a.datname = current_database() and a.backend_type = 'client backend' \
             and a.pid <> pg_backend_pid() and a.application_name <> {} \
             and a.application_name not like {}",
            literal(&server_name(&opts.connection_name)),
            literal(&format!("{PROBE_APPLICATION_NAME}%"))
        ),
    }
}

/// `name` as the server stores it: at most 63 bytes (NAMEDATALEN - 1), cut at a character
/// boundary, so a long application_name still matches.
fn server_name(name: &str) -> String {
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// User + system CPU time (ms) of the process or thread whose `/proc/…/stat` is `path`, when
/// its command name contains `comm` (PostgreSQL backends are `postgres`). `None` elsewhere.
fn proc_cpu_ms(path: &str, comm: &str) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if !text.get(open + 1..close)?.contains(comm) {
        return None;
    }
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15, in
    // USER_HZ (100 per second on Linux).
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn own_thread_cpu_is_readable_on_linux() {
        if std::path::Path::new("/proc/thread-self/stat").exists() {
            assert!(super::proc_cpu_ms("/proc/thread-self/stat", "").is_some());
            assert!(super::proc_cpu_ms("/proc/thread-self/stat", "no such comm").is_none());
        }
        assert!(super::proc_cpu_ms("/nonexistent", "").is_none());
    }

    #[test]
    fn long_names_are_cut_as_the_server_does() {
        assert_eq!(super::server_name("hotbench-1-a"), "hotbench-1-a");
        let long = "x".repeat(62) + "éé";
        assert_eq!(super::server_name(&long), "x".repeat(62));
        assert_eq!(super::server_name(&"y".repeat(80)).len(), 63);
    }
}
