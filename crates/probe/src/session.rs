//! The probe's own connection: every query is timed (the probe reports its cost), and each
//! kind of measurement is a [`Part`] that a missing view, function, extension or privilege
//! switches off with one note instead of failing the run.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use hotbench_results::probe_record::ProbeCost;
use hotbench_wire::{BinaryResult, Connection, Error, QueryResult, SqlState, TxStatus};

/// `application_name` of the probe's own connection.
pub const PROBE_APPLICATION_NAME: &str = "hotbench-probe";

/// What a query measures; a failure disables only its part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    Waits,
    LockSpots,
    HotRows,
    Chains,
    Tables,
    Database,
    Wal,
    Xmin,
    Statements,
    WaitSampling,
    EngineWaits,
    Activity,
    Blockers,
    XminHolders,
}

impl Part {
    fn what(self) -> &'static str {
        match self {
            Part::Waits => "wait events (pg_stat_activity)",
            Part::LockSpots => "contended relation/tuple (pg_locks)",
            Part::HotRows => "hot rows (keys read by ctid)",
            Part::Chains => "blocking chains (pg_blocking_pids)",
            Part::Tables => "table health (pg_stat_user_tables)",
            Part::Database => "commits/rollbacks/deadlocks (pg_stat_database)",
            Part::Wal => "WAL bytes and checkpoints (pg_current_wal_lsn, pg_stat_bgwriter)",
            Part::Xmin => "oldest xmin (pg_stat_activity)",
            Part::Statements => "statements (pg_stat_statements)",
            Part::WaitSampling => "pg_wait_sampling",
            Part::EngineWaits => "engine wait history",
            Part::Activity => "statements of the sampled sessions (pg_stat_activity)",
            Part::Blockers => "blocking sessions (pg_blocking_pids)",
            Part::XminHolders => {
                "xmin horizon holders (pg_stat_activity, pg_replication_slots, pg_prepared_xacts)"
            }
        }
    }
}

/// Prefix of every probe query, so the probe's own statements can be told apart in
/// pg_stat_statements.
pub const TAG: &str = "/* hotbench-probe */ ";

pub struct Session {
    conn: Connection,
    pub cost: ProbeCost,
    pub notes: Vec<String>,
    disabled: BTreeSet<Part>,
    lost: bool,
    prepared: BTreeSet<String>,
    no_prepare: bool,
    timeouts: BTreeMap<Part, u32>,
    /// Transactions this session ended: committed, rolled back (pg_stat_database counts them
    /// with the user's; the sampler subtracts them).
    pub own_xacts: [i64; 2],
    /// `own_xacts` as they were at the recent [`Session::own_xacts_counted`] calls, oldest
    /// first (at most one older than [`STATS_FLUSH_INTERVAL`] is kept).
    own_xacts_marks: VecDeque<(Instant, [i64; 2])>,
    /// A statement of the open transaction block failed.
    block_failed: bool,
    /// The connection's `search_path` before the probe pinned it to `pg_catalog`.
    pub user_search_path: Option<String>,
    /// The note of the connection's loss, while it is lost (not a refusal to sample): a
    /// probe that reconnects ([`Session::reconnect`]) takes it back.
    lost_note: Option<String>,
}

/// How often a busy PostgreSQL backend reports its transaction counts at most
/// (`PGSTAT_MIN_INTERVAL`; the stats collector before 15 was faster).
pub const STATS_FLUSH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// A part that timed out this many times is switched off (it keeps costing the server).
pub const TIMEOUTS_TO_DISABLE: u32 = 3;

impl Session {
    pub fn new(conn: Connection) -> Session {
        Session {
            conn,
            cost: ProbeCost::default(),
            notes: Vec::new(),
            disabled: BTreeSet::new(),
            lost: false,
            prepared: BTreeSet::new(),
            no_prepare: false,
            timeouts: BTreeMap::new(),
            own_xacts: [0, 0],
            own_xacts_marks: VecDeque::new(),
            block_failed: false,
            user_search_path: None,
            lost_note: None,
        }
    }

    /// The connection was lost (the server went away or restarted), rather than sampling
    /// refused: a new connection may carry on ([`Session::reconnect`]).
    pub fn may_reconnect(&self) -> bool {
        self.lost && self.lost_note.is_some()
    }

    /// Carries on over `conn` after the connection was lost: statements are prepared anew,
    /// the loss's note is taken back (the caller says what happened), every part that was
    /// on is on again. Returns the connection it replaces.
    pub fn reconnect(&mut self, conn: Connection) -> Connection {
        if let Some(note) = self.lost_note.take() {
            self.notes.retain(|n| *n != note);
        }
        self.lost = false;
        self.block_failed = false;
        self.prepared.clear();
        std::mem::replace(&mut self.conn, conn)
    }

    /// Keep no state on the server session: plain queries instead of `PREPARE`d ones (the
    /// probe's connection goes through a transaction pool).
    pub fn without_session_state(&mut self) {
        self.no_prepare = true;
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn is_lost(&self) -> bool {
        self.lost
    }

    pub fn enabled(&self, part: Part) -> bool {
        !self.lost && !self.disabled.contains(&part)
    }

    /// Switches `part` off with `note` (once).
    pub fn disable(&mut self, part: Part, note: impl Into<String>) {
        if self.disabled.insert(part) {
            self.notes.push(note.into());
        }
    }

    /// Switches `part` off without a note (not a degradation: e.g. an optional extension).
    pub fn disable_silently(&mut self, part: Part) {
        self.disabled.insert(part);
    }

    /// Adds a note unless it is already there.
    pub fn note(&mut self, note: impl Into<String>) {
        let n = note.into();
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// Runs one statement (extended protocol when it has parameters), timing it. Errors are
    /// returned as they are; a lost connection stops all parts.
    pub fn raw(&mut self, sql: &str, params: &[Option<&str>]) -> Result<QueryResult, Error> {
        let t0 = Instant::now();
        let sql = format!("{TAG}{sql}");
        let r = if params.is_empty() {
            self.conn
                .simple_query(&sql)
                .map(|mut v| v.pop().unwrap_or_default())
        } else {
            self.conn.query_params(&sql, params)
        };
        self.count(t0, r.as_ref().err());
        r
    }

    /// The session's own transactions the server has surely counted by now: those ended at
    /// least [`STATS_FLUSH_INTERVAL`] ago (none before that much time has passed). A busy
    /// backend reports its counts at most that often, so the server has counted somewhere
    /// between these and all of them: subtracting all of them took up to a second of the
    /// probe's own reads off the user's commits (3 commits read as 0); subtracting these
    /// leaves at most that second's worth counted as the user's, never fewer than theirs.
    pub fn own_xacts_counted(&mut self) -> [i64; 2] {
        let now = Instant::now();
        self.own_xacts_marks.push_back((now, self.own_xacts));
        let settled = |t: &Instant| now.duration_since(*t) >= STATS_FLUSH_INTERVAL;
        while self.own_xacts_marks.get(1).is_some_and(|(t, _)| settled(t)) {
            self.own_xacts_marks.pop_front();
        }
        match self.own_xacts_marks.front() {
            Some((t, counts)) if settled(t) => *counts,
            _ => [0, 0],
        }
    }

    /// Counts one statement's cost and the transaction it ended, if any; a lost connection
    /// stops all parts.
    fn count(&mut self, t0: Instant, err: Option<&Error>) {
        if self.conn.tx_status() == TxStatus::Idle {
            let failed = err.is_some() || std::mem::take(&mut self.block_failed);
            self.own_xacts[usize::from(failed)] += 1;
        } else if err.is_some() {
            self.block_failed = true;
        }
        self.cost.queries += 1;
        self.cost.busy_ms += t0.elapsed().as_secs_f64() * 1000.0;
        if let Some(e) = err {
            if e.is_connection_lost() && !self.lost {
                self.lost = true;
                let note = format!("probe connection lost, sampling stopped: {}", first_line(e));
                self.lost_note = Some(note.clone());
                self.notes.push(note);
            }
        }
    }

    /// Runs one statement with typed text parameters (extended protocol, unnamed statement),
    /// its results in binary format (see [`Connection::query_binary`]), timing it.
    pub fn raw_binary(
        &mut self,
        sql: &str,
        param_types: &[u32],
        params: &[Option<&str>],
    ) -> Result<BinaryResult, Error> {
        let t0 = Instant::now();
        let sql = format!("{TAG}{sql}");
        let r = self.conn.query_binary(&sql, param_types, params);
        self.count(t0, r.as_ref().err());
        r
    }

    /// Opens a read-only repeatable-read transaction (the next statements share one
    /// snapshot); false when it could not be opened.
    pub fn begin_snapshot(&mut self) -> bool {
        self.raw(
            "begin transaction isolation level repeatable read read only",
            &[],
        )
        .is_ok()
    }

    /// Ends [`Session::begin_snapshot`]'s transaction: a commit, or a rollback when a
    /// statement in it failed.
    pub fn end_snapshot(&mut self) {
        let sql = match self.conn.tx_status() {
            TxStatus::Failed => "rollback",
            _ => "commit",
        };
        let _ = self.raw(sql, &[]);
    }

    /// Runs a query for `part`: `None` (and the part switched off with a note) when it fails.
    pub fn run(&mut self, part: Part, sql: &str, params: &[Option<&str>]) -> Option<QueryResult> {
        if !self.enabled(part) {
            return None;
        }
        let r = self.raw(sql, params);
        self.outcome(part, r)
    }

    /// As [`Session::run`] for a query repeated all run long (`sql` without parameters):
    /// prepared once as `name` (SQL `PREPARE`, so planning is paid once — it is most of the
    /// cost of reading `pg_stat_activity`), then `EXECUTE`d. Servers without `PREPARE` get the
    /// plain query.
    pub fn run_prepared(&mut self, part: Part, name: &str, sql: &str) -> Option<QueryResult> {
        if !self.enabled(part) {
            return None;
        }
        let r = self.prepared_raw(name, sql);
        self.outcome(part, r)
    }

    /// As [`Session::run_prepared`], returning the error for the caller to judge.
    pub fn prepared_raw(&mut self, name: &str, sql: &str) -> Result<QueryResult, Error> {
        let execute = format!("execute {name}");
        if self.no_prepare {
            self.raw(sql, &[])
        } else if self.prepared.contains(name) {
            self.raw(&execute, &[])
        } else {
            match self.raw(&format!("prepare {name} as {sql}"), &[]) {
                Ok(_) => {
                    self.prepared.insert(name.to_string());
                    self.raw(&execute, &[])
                }
                Err(e)
                    if !self.lost
                        && matches!(
                            e.sqlstate(),
                            Some(SqlState::SYNTAX_ERROR | SqlState::FEATURE_NOT_SUPPORTED)
                        ) =>
                {
                    self.no_prepare = true;
                    self.raw(sql, &[])
                }
                Err(e) => Err(e),
            }
        }
    }

    /// Stops every part with `note`, as a lost connection does: nothing more is sampled.
    pub fn stop_all(&mut self, note: impl Into<String>) {
        if !self.lost {
            self.lost = true;
            self.notes.push(note.into());
        }
    }

    /// A query's rows, or `None` with `part` switched off and a note. A query cancelled by
    /// the session's `lock_timeout` or `statement_timeout` is skipped with a note (once per
    /// part) and the part stays on until it has timed out [`TIMEOUTS_TO_DISABLE`] times.
    pub fn outcome(&mut self, part: Part, r: Result<QueryResult, Error>) -> Option<QueryResult> {
        match r {
            Ok(r) => Some(r),
            Err(e) => {
                let timeout = matches!(
                    e.sqlstate(),
                    Some(SqlState::LOCK_NOT_AVAILABLE | SqlState::QUERY_CANCELED)
                );
                if timeout && !self.lost {
                    let n = self.timeouts.entry(part).or_default();
                    *n += 1;
                    if *n < TIMEOUTS_TO_DISABLE {
                        let why = if e.sqlstate() == Some(SqlState::LOCK_NOT_AVAILABLE) {
                            "lock_timeout: another session held a lock it needed"
                        } else {
                            "statement_timeout"
                        };
                        self.note(format!("{}: a read was skipped ({why})", part.what()));
                        return None;
                    }
                }
                if !self.lost {
                    let code = e.sqlstate();
                    let why = match code {
                        Some(SqlState::INSUFFICIENT_PRIVILEGE) => "permission denied".to_string(),
                        Some(c) if c.is_undefined_object() => {
                            "not available on this server".to_string()
                        }
                        _ => first_line(&e),
                    };
                    let code = code.map_or(String::new(), |c| format!(" (SQLSTATE {c})"));
                    self.disable(part, format!("{}: {why}{code}", part.what()));
                }
                None
            }
        }
    }

    pub fn close(self) {
        self.conn.close();
    }
}

/// An SQL string literal that reads the same whatever `standard_conforming_strings` is.
pub fn literal(s: &str) -> String {
    format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

/// The first line of an error, without the `ERROR:  ` prefix.
pub fn first_line(e: &Error) -> String {
    let text = match e.db_error() {
        Some(d) => d.message.clone(),
        None => e.to_string(),
    };
    text.lines().next().unwrap_or("").trim().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(super::literal("hotbench-1-0"), "E'hotbench-1-0'");
        assert_eq!(super::literal(r"a'b\c"), r"E'a''b\\c'");
    }
}
