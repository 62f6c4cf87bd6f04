//! pgbench's client state machine (`advanceConnectionState`) as the core runs it: choose a
//! script, wait for the -R schedule (skipping slots already later than -L), start the
//! transaction, run meta-commands in place and encode SQL commands for the driver to send.
//! It runs until the client has to wait and says why ([`Action`]).

use hotbench_script::{
    choose_script, poisson_rand, Action as ScriptAction, CommandKind, ResultMode,
};

use crate::client_core::{Action, Core};
use crate::config::{QueryMode, GOODPUT_VARIABLE};
use crate::env::Env;
use crate::send::encode_command;
use crate::slot::{MetaResult, Outcome, Phase, Resume, Slot};

impl<E: Env> Core<E> {
    /// Runs the client's state machine at `now` until it has to wait, or until a
    /// meta-command ran: then it answers [`Action::Continue`], and the driver calls again
    /// with the time after it (pgbench resets its lazy `now` after every meta-command, which
    /// may take time: `\shell`), so the core never reads the clock.
    pub fn advance(&mut self, slot: &mut Slot, now: i64) -> Action {
        loop {
            match slot.phase {
                Phase::Finished | Phase::Aborted | Phase::WaitResult | Phase::WaitRollback => {
                    return Action::Wait
                }
                Phase::Reconnect => {
                    if now < slot.wake_at {
                        return Action::Wait;
                    }
                    if self.past_end(now) || self.env.stop_requested() {
                        let gap = (now - slot.disconnected_at).max(0) as u64;
                        let (g, s) = (slot.group, slot.script);
                        self.tally.each(g, s, |c| {
                            c.disconnected_us += gap;
                            c.ended_disconnected += 1;
                        });
                        slot.phase = Phase::Finished;
                        return Action::Wait;
                    }
                    slot.connect_at = now;
                    return Action::Connect;
                }
                Phase::ChooseScript => {
                    if self.finished(slot, now) {
                        slot.phase = Phase::Finished;
                        return Action::Wait;
                    }
                    if !slot.connected {
                        // -C, or the first connection failed: connect before choosing.
                        slot.connect_at = now;
                        return Action::Connect;
                    }
                    if self.choose(slot, now) {
                        return Action::Wait;
                    }
                }
                Phase::Throttle => {
                    if now < slot.wake_at {
                        return Action::Wait;
                    }
                    if self.past_end(now) {
                        slot.phase = Phase::Finished;
                        return Action::Wait;
                    }
                    slot.phase = Phase::StartTx;
                }
                Phase::StartTx => {
                    slot.txn_begin = now;
                    if self.delay[slot.group].is_none() {
                        slot.txn_scheduled = now;
                    }
                    slot.interp.begin_transaction();
                    if self.plan.cfg.display.debug {
                        let script = &self.plan.groups[slot.group].scripts[slot.script];
                        self.events.say(format!(
                            "hotbench: client {} executing script \"{}\"",
                            slot.id,
                            script.name()
                        ));
                    }
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
                        return Action::Wait;
                    }
                    let action = match slot.resume {
                        Resume::Command => {
                            slot.phase = Phase::Command;
                            Action::Wait
                        }
                        Resume::Result => {
                            slot.phase = Phase::WaitResult;
                            self.process_result(slot, now)
                        }
                        Resume::Rollback => {
                            slot.phase = Phase::WaitRollback;
                            self.process_rollback(slot, now)
                        }
                    };
                    if action != Action::Wait {
                        return action;
                    }
                }
                Phase::Command => {
                    if let Some(action) = self.command(slot, now) {
                        return action;
                    }
                }
            }
        }
    }

    /// Picks the next script and its start (-R schedule, -L skips). True: the client must
    /// stop here (finished by -t while skipping).
    fn choose(&mut self, slot: &mut Slot, now: i64) -> bool {
        let g = &self.plan.groups[slot.group];
        slot.script = choose_script(&mut self.rnd.choose, &g.weights);
        slot.cmd = 0;
        slot.tries = 1;
        slot.retried = false;
        let Some(delay) = self.delay[slot.group] else {
            slot.phase = Phase::StartTx;
            return false;
        };
        let wait = poisson_rand(&mut self.rnd.throttle, delay);
        self.trigger[slot.group] += wait;
        slot.txn_scheduled = self.trigger[slot.group];
        if let Some(limit) = self.plan.cfg.latency_limit_us {
            // Too late already: skip this slot of the schedule (pgbench).
            while slot.txn_scheduled < now - limit {
                self.skip(slot, now);
                if self.limit_reached(slot) {
                    slot.phase = Phase::Finished;
                    return true;
                }
                let wait = poisson_rand(&mut self.rnd.throttle, delay);
                self.trigger[slot.group] += wait;
                slot.txn_scheduled = self.trigger[slot.group];
            }
        }
        slot.wake_at = slot.txn_scheduled;
        slot.phase = Phase::Throttle;
        false
    }

    /// Runs command `slot.cmd` at `now`. `None`: go on with the next step; `Some`: stop
    /// here. A meta-command ends with [`Action::Continue`]: what it returned is finished
    /// ([`finish_meta`](Self::finish_meta)) when the driver calls again with the time after.
    fn command(&mut self, slot: &mut Slot, now: i64) -> Option<Action> {
        if let Some((r, t0)) = slot.meta_done.take() {
            return self.finish_meta(slot, r, t0, now);
        }
        let plan = self.plan.clone();
        let script = &plan.groups[slot.group].scripts[slot.script];
        let Some(command) = script.command(slot.cmd) else {
            if slot.pipeline.is_some() {
                self.events.say(format!(
                    "hotbench: error: client {} aborted: end of script reached with pipeline open",
                    slot.id
                ));
                self.abort(slot);
                return Some(Action::Wait);
            }
            self.end_transaction(slot, Outcome::Committed, now);
            return None;
        };
        match &command.kind {
            CommandKind::Sql(sql) => {
                if slot.pipeline.is_some() {
                    let refused = match sql.result_mode() {
                        ResultMode::Gset(_) => Some("gset"),
                        ResultMode::Aset(_) => Some("aset"),
                        ResultMode::Discard => None,
                    };
                    if let Some(meta) = refused {
                        let why = format!("\\{meta} is not allowed in pipeline mode");
                        return Some(self.command_failed(slot, meta, &why));
                    }
                }
                let action = self.send_sql(slot, sql, now);
                if slot.phase == Phase::Command {
                    // Queued inside a pipeline: go on with the next command.
                    return None;
                }
                Some(action)
            }
            CommandKind::Meta(meta) => {
                if self.plan.cfg.display.debug {
                    self.events.say(format!(
                        "hotbench: client {} executing \\{}",
                        slot.id, meta.name
                    ));
                }
                let r = slot
                    .interp
                    .execute(script, slot.script, slot.cmd, &mut self.debug_out);
                if !self.debug_out.is_empty() {
                    // `debug()` output: one stderr line per line written.
                    let text = String::from_utf8_lossy(&self.debug_out).into_owned();
                    self.debug_out.clear();
                    for line in text.lines() {
                        self.events.say(line.to_string());
                    }
                }
                slot.meta_done = Some((r, now));
                Some(Action::Continue)
            }
        }
    }

    /// The meta-command started at `t0` returned `r`; `now` is the time after it.
    fn finish_meta(&mut self, slot: &mut Slot, r: MetaResult, t0: i64, now: i64) -> Option<Action> {
        if self.plan.cfg.report_per_command {
            let dt = now - t0;
            if let Some(c) = self.tally.command(slot.group, slot.script, slot.cmd) {
                c.latency.add(dt as f64);
                c.hist.record_us(dt.max(0) as u64);
            }
        }
        match r {
            Ok(ScriptAction::Next) => slot.cmd += 1,
            Ok(ScriptAction::Jump(n)) => slot.cmd = n,
            Ok(ScriptAction::Sleep(us)) => {
                slot.cmd += 1;
                if us > 0 {
                    slot.wake_at = now + us;
                    slot.resume = Resume::Command;
                    slot.phase = Phase::Sleep;
                    return Some(Action::Wait);
                }
            }
            Ok(ScriptAction::StartPipeline) => {
                if slot.pipeline.is_some() {
                    return Some(self.command_failed(
                        slot,
                        "startpipeline",
                        "already in pipeline mode",
                    ));
                }
                if self.plan.cfg.query_mode == QueryMode::Simple {
                    self.events.say(format!("hotbench: error: client {} aborted: cannot use pipeline mode with the simple query protocol", slot.id));
                    self.abort(slot);
                    return Some(Action::Wait);
                }
                slot.pipeline = Some(0);
                slot.cmd += 1;
            }
            Ok(ScriptAction::SyncPipeline) => {
                if slot.pipeline.is_none() {
                    return Some(self.command_failed(slot, "syncpipeline", "not in pipeline mode"));
                }
                if let (Some(n), true) = (slot.pipeline, slot.connected) {
                    hotbench_wire::encode::sync(&mut slot.out);
                    slot.pipeline = Some(n + 1);
                }
                slot.cmd += 1;
            }
            Ok(ScriptAction::EndPipeline) => {
                let Some(n) = slot.pipeline else {
                    return Some(self.command_failed(slot, "endpipeline", "not in pipeline mode"));
                };
                if slot.connected {
                    hotbench_wire::encode::sync(&mut slot.out);
                }
                slot.pipeline = Some(n + 1);
                slot.cmd_start = now;
                slot.collector.start(None);
                slot.phase = Phase::WaitResult;
                return Some(Action::Send);
            }
            Err(e) => {
                self.events.say(format!(
                    "hotbench: error: client {} command {}: {}",
                    slot.id, e.command, e.message
                ));
                self.events.say(format!(
                    "hotbench: error: {}",
                    e.abort_line(slot.id, slot.script)
                ));
                self.abort(slot);
                return Some(Action::Wait);
            }
        }
        None
    }

    /// A meta-command misused (pipeline state, `\gset` in a pipeline): pgbench's
    /// `commandFailed` line, then the client aborts.
    fn command_failed(&mut self, slot: &mut Slot, meta: &str, why: &str) -> Action {
        self.events.say(format!(
            "hotbench: error: client {} aborted in command {} ({meta}) of script {}; {why}",
            slot.id, slot.cmd, slot.script
        ));
        self.abort(slot);
        Action::Wait
    }

    /// Encodes a SQL command. Inside a pipeline it is only queued (phase stays `Command`);
    /// otherwise the client waits for its results after the driver sent it.
    fn send_sql(&mut self, slot: &mut Slot, sql: &hotbench_script::SqlCommand, now: i64) -> Action {
        if !slot.connected {
            self.on_lost(slot, None, "no connection", now);
            return Action::Wait;
        }
        let in_pipeline = slot.pipeline.is_some();
        let key = (slot.group, slot.script, slot.cmd);
        let prepared = &mut slot.prepared[slot.script][slot.cmd];
        match encode_command(
            &mut slot.out,
            &mut self.bufs,
            self.plan.cfg.query_mode,
            sql,
            &slot.interp.vars,
            key,
            prepared,
            !in_pipeline,
        ) {
            Ok(parsed) => {
                slot.parsed_named = parsed;
                if self.plan.cfg.display.debug {
                    let text = match self.plan.cfg.query_mode {
                        QueryMode::Simple => self.bufs.last_simple_sql(),
                        _ => sql.extended_text(),
                    };
                    self.events
                        .say(format!("hotbench: client {} sending {text}", slot.id));
                }
            }
            Err(e) => {
                self.events.say(format!(
                    "hotbench: error: client {} script {} aborted in command {}: {e}",
                    slot.id, slot.script, slot.cmd
                ));
                self.abort(slot);
                return Action::Wait;
            }
        }
        if in_pipeline {
            // Results are read at \endpipeline; pgbench does not wait either.
            slot.cmd += 1;
            return Action::Wait;
        }
        slot.cmd_start = now;
        slot.collector.start(Some(sql));
        slot.phase = Phase::WaitResult;
        Action::Send
    }
}
