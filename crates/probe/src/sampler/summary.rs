//! The end of a probe: a last stats round, then the run's summaries — wait-event shares
//! (from pg_wait_sampling when it is there), lock hot spots, statements, and the engines'
//! own contention views — assembled into the [`ProbeRecord`].

use super::*;

impl Sampler {
    /// Final round and end-of-run summaries; `origin` (Unix s) is what `t` counts from.
    pub fn finish(mut self, origin: Option<f64>) -> ProbeRecord {
        self.stats_round();
        self.note_feed();
        let origin = origin.unwrap_or(self.started_unix);
        let mut waits = probe_record::shares(&self.totals);
        let busy_samples = self.busy;
        let mut wait_source = "pg_stat_activity".to_string();
        if let Some(first) = self.ws_first.take() {
            if let Some(last) = self.read_wait_sampling() {
                let mut m: BTreeMap<String, u64> = BTreeMap::new();
                for ((pid, ev), n) in &last {
                    // Idle sessions wait on ClientRead too; pg_wait_sampling cannot tell them
                    // apart from round trips inside a transaction, so Client waits are left out.
                    if !self.run_pids.contains(pid) || ev.starts_with("Client:") {
                        continue;
                    }
                    let before = first.get(&(*pid, ev.clone())).copied().unwrap_or(0);
                    *m.entry(ev.clone()).or_default() += n.saturating_sub(before);
                }
                if m.values().sum::<u64>() > 0 {
                    waits = probe_record::shares(&m);
                    wait_source = "pg_wait_sampling".into();
                }
            }
        }
        let engine_waits = self.engine_waits();
        let statements = self.statement_summary();
        let locks = self.lock_summary();
        let mut tables = match (&self.tables_first, &self.tables_prev) {
            (Some(f), Some(l)) => health::table_summaries(f, l),
            _ => Vec::new(),
        };
        let mut server = health::server_delta(
            (self.db_first, self.wal_first),
            (self.db_prev, self.wal_prev),
        );
        // The counts before the server's restarts, if any, and the ones after.
        if let Some(c) = &self.restarts.carried {
            server = crate::restart::add_server(&c.server, &server);
            tables = crate::restart::chain_tables(&c.tables, &tables);
        }
        if self.samples > 0 && busy_samples == 0 && self.idle == 0 {
            self.s.note(match self.scope {
                Scope::Run => format!(
                    "no backend with application_name \"{}\" was seen: no wait events",
                    self.app
                ),
                Scope::Database => "no session of the database was active while sampling: no \
                                    wait events"
                    .to_string(),
            });
        }
        let mut timeline = std::mem::take(&mut self.timeline);
        if self.only_written {
            health::keep_written(&mut tables, &mut timeline);
        }
        for iv in &mut timeline {
            iv.t -= origin;
        }
        let top_ids: Vec<String> = statements
            .iter()
            .take(TIMELINE_STATEMENTS)
            .map(|s| s.queryid.clone())
            .collect();
        for (iv, d) in timeline.iter_mut().zip(&self.stmt_intervals) {
            iv.statements = top_ids
                .iter()
                .filter_map(|id| d.get(id).map(|c| statements::interval(id, c)))
                .collect();
        }
        let pooler = self.pooler.take().map(|p| {
            let (summary, note) = p.finish();
            if let Some(n) = note {
                self.s.note(n);
            }
            summary
        });
        let reconnects = self.reconnects(origin);
        let sessions = self
            .observer
            .take()
            .map(|o| o.finish(self.hot_rows.relations()));
        let (lock_reads, lock_reads_effective) = self.hot_rows.reads();
        let record = ProbeRecord {
            engine: self.engine.to_string(),
            wait_source,
            application_name: self.app.clone(),
            origin,
            wait_interval_ms: self.wait_interval_ms,
            stats_interval_ms: self.stats_interval_ms,
            top_wait: pooler
                .as_ref()
                .and_then(|p| p.top_wait_label())
                .or_else(|| waits.first().map(probe_record::format_share)),
            samples: self.samples,
            busy_samples,
            idle_samples: self.idle,
            waits,
            locks,
            hot_rows: self.hot_rows.summary(),
            lock_reads,
            lock_reads_effective,
            tables,
            server,
            max_xmin_age: self.max_xmin_age,
            statements,
            engine_waits,
            timeline,
            notes: std::mem::take(&mut self.s.notes),
            cost: {
                let mut c = self.s.cost.clone();
                if self.local_server {
                    let pid = self.s.connection().backend_pid();
                    c.server_cpu_ms = proc_cpu_ms(&format!("/proc/{pid}/stat"), "postgres");
                }
                c.client_cpu_ms = proc_cpu_ms("/proc/thread-self/stat", "");
                c
            },
            pooler,
            sessions,
            reconnects,
        };
        self.s.close();
        record
    }

    fn lock_summary(&self) -> LockSummary {
        let by_type: BTreeMap<String, u64> = self
            .totals
            .iter()
            .filter_map(|(k, &v)| k.strip_prefix("Lock:").map(|t| (t.to_string(), v)))
            .collect();
        let hot_relation = self
            .hot_rel
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(rel, &count)| HotSpot {
                relation: rel.clone(),
                ctid: None,
                count,
            });
        let hot_tuple = self
            .hot_tuple
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|((rel, ctid), &count)| HotSpot {
                relation: rel.clone(),
                ctid: Some(ctid.clone()),
                count,
            });
        LockSummary {
            by_type: probe_record::shares(&by_type),
            max_waiting: self.max_waiting,
            longest_chain: self.longest_chain,
            hot_relation,
            hot_tuple,
        }
    }

    fn statement_summary(&mut self) -> Vec<hotbench_results::probe_record::StatementStats> {
        let (Some(first), Some(last)) = (&self.stmt_first, &self.stmt_prev) else {
            return Vec::new();
        };
        let mut total = statements::diff(first, last);
        if let Some(c) = &self.restarts.carried {
            total = crate::restart::add_statements(&c.statements, &total);
        }
        // A few extra candidates: the probe's own statements are dropped once texts are known.
        let candidates = statements::top(&total, self.top_statements + 8);
        if candidates.is_empty() {
            return Vec::new();
        }
        let ids: Vec<&str> = candidates.iter().map(|(id, _)| id.as_str()).collect();
        let arr = format!("{{{}}}", ids.join(","));
        let texts: BTreeMap<String, String> = match self.s.run(
            Part::Statements,
            &statements::text_sql(&self.stmt_schema),
            &[Some(&arr)],
        ) {
            Some(r) => r
                .rows
                .iter()
                .filter_map(|row| {
                    let id = row.first()?.as_deref()?;
                    let q = row.get(1)?.as_deref().unwrap_or("");
                    Some((id.to_string(), q.to_string()))
                })
                .collect(),
            None => BTreeMap::new(),
        };
        let tag = TAG.trim();
        candidates
            .iter()
            .filter_map(|(id, c)| {
                let q = texts.get(id).map(String::as_str).unwrap_or("");
                if q.trim_start().starts_with(tag) {
                    return None;
                }
                Some(statements::stats(id, q, c))
            })
            .take(self.top_statements)
            .collect()
    }

    fn engine_waits(&mut self) -> Vec<WaitShare> {
        let since = format!("{:.3}", self.started_unix);
        match self.engine {
            "yugabytedb" => {
                let Some(r) = self.s.run(Part::EngineWaits, YB_ASH_SQL, &[Some(&since)]) else {
                    return Vec::new();
                };
                let m: BTreeMap<String, u64> = r
                    .rows
                    .iter()
                    .filter_map(|row| {
                        let ev = row.first()?.as_deref()?;
                        let n = int(row.get(1)?.as_deref())?;
                        Some((ev.to_string(), n.max(0) as u64))
                    })
                    .collect();
                probe_record::shares(&m)
            }
            "cockroachdb" => {
                let Some(r) = self
                    .s
                    .run(Part::EngineWaits, CRDB_CONTENTION_SQL, &[Some(&since)])
                else {
                    return Vec::new();
                };
                let n = int(r.get(0, 0)).unwrap_or(0).max(0) as u64;
                let secs = float(r.get(0, 1)).unwrap_or(0.0);
                if n > 0 {
                    self.s.note(format!(
                        "cockroachdb: {n} transaction contention events, {secs:.3} s waited"
                    ));
                }
                let mut m = BTreeMap::new();
                m.insert("Contention:transaction".to_string(), n);
                probe_record::shares(&m)
            }
            _ => Vec::new(),
        }
    }
}
