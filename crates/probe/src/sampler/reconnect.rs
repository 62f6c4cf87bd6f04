//! The sampler carrying on over a new connection after its own was lost: the session
//! settled again, and when the server restarted meanwhile (`pg_postmaster_start_time()`
//! changed) every cumulative counter read anew as a new baseline, the counts before it
//! carried ([`crate::restart`]); the next interval is marked `restarted` and the record's
//! `reconnects` say when.

use super::*;
use crate::restart;

const STARTED_SQL: &str = "select pg_postmaster_start_time()::text";

impl Sampler {
    /// Reads the server's start time, to tell a restart from a dropped connection later.
    pub(super) fn note_server_start(&mut self) {
        self.restarts.started = self.server_started();
    }

    /// `pg_postmaster_start_time()`, when it can be read.
    pub(super) fn server_started(&mut self) -> Option<String> {
        self.s
            .raw(STARTED_SQL, &[])
            .ok()
            .and_then(|r| r.get(0, 0).map(str::to_string))
    }

    /// The connection was lost to the server going away, not a refusal to sample.
    pub fn may_reconnect(&self) -> bool {
        self.s.may_reconnect()
    }

    /// Carries on over `conn`, the connection lost since `lost_at` (Unix s).
    pub fn resume(&mut self, conn: hotbench_wire::Connection, opts: &ProbeOptions, lost_at: f64) {
        let old = self.s.reconnect(conn);
        drop(old);
        self.settle(opts);
        if self.s.is_lost() {
            return;
        }
        let started = self.server_started();
        let restarted = restart::restarted(self.restarts.started.as_deref(), started.as_deref());
        self.restarts.started = started;
        if restarted {
            self.rebaseline();
        }
        self.restarts.gaps.push((lost_at, unix_now(), restarted));
    }

    /// Counts before the restart carried, the counters read anew as the new baseline.
    fn rebaseline(&mut self) {
        let server = health::server_delta(
            (self.db_first, self.wal_first),
            (self.db_prev, self.wal_prev),
        );
        let tables = match (&self.tables_first, &self.tables_prev) {
            (Some(f), Some(l)) => health::table_summaries(f, l),
            _ => Vec::new(),
        };
        let stmts = match (&self.stmt_first, &self.stmt_prev) {
            (Some(f), Some(l)) => statements::diff(f, l),
            _ => Snapshot::new(),
        };
        let carried = self.restarts.carried.take().unwrap_or_default();
        self.restarts.carried = Some(carried.then(&server, &tables, &stmts));
        self.read_baseline();
        if self.ws_first.take().is_some() {
            self.s.note(
                "pg_wait_sampling's profile starts again with the server: the run's waits are \
                 the pg_stat_activity samples'",
            );
        }
        self.restarts.pending = true;
    }

    /// The reconnections, `t` counting from `origin`, with a note each.
    pub(super) fn reconnects(&mut self, origin: f64) -> Vec<probe_record::ProbeReconnect> {
        let gaps = std::mem::take(&mut self.restarts.gaps);
        gaps.into_iter()
            .map(|(lost, back, restarted)| {
                let (lost_s, back_s) = (lost - origin, back - origin);
                self.s.note(if restarted {
                    format!(
                        "probe connection lost at {lost_s:.2} s, connected again at \
                         {back_s:.2} s: the server had restarted, its counters count anew \
                         from then (a new baseline; the run's totals add both sides)"
                    )
                } else {
                    format!(
                        "probe connection lost at {lost_s:.2} s, connected again at \
                         {back_s:.2} s (the server had not restarted)"
                    )
                });
                probe_record::ProbeReconnect {
                    lost_s,
                    back_s,
                    server_restarted: restarted,
                }
            })
            .collect()
    }
}
