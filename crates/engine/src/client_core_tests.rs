//! The engine core driven without a server: a hand-moved clock, scripted backend replies
//! and a fake driver that records what the core asked to send. Covers commits, retries of
//! serialization failures and deadlocks, errors that abort, lost connections and
//! reconnects, -R lag, -L skips, pipelines, -C, the round-trip emulation, and the end of a
//! -R run that a stall outlasts (every scheduled transaction counted).

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use hotbench_script::{parse_script, Client, PrngState, ThreadRandom, Variables};
use hotbench_stats::TxnCounters;
use hotbench_wire::Message;

use crate::client_core::{Action, Core};
use crate::config::{
    GoodputRule, GroupConfig, Limit, OnDisconnect, QueryMode, RunConfig, WeightedScript,
};
use crate::env::Env;
use crate::events::{Event, TxnRecord};
use crate::plan::Plan;
use crate::slot::{Outcome, Phase, Slot};
use crate::timers::END_GRACE_US;

/// A clock the test moves, and a stop flag.
#[derive(Clone, Default)]
pub(crate) struct FakeEnv {
    pub(crate) now: Rc<Cell<i64>>,
    stop: Rc<Cell<bool>>,
}

impl Env for FakeEnv {
    fn now(&self) -> i64 {
        self.now.get()
    }
    fn stop_requested(&self) -> bool {
        self.stop.get()
    }
}

pub(crate) fn config(script: &str) -> RunConfig {
    let group = GroupConfig {
        name: "default".into(),
        scripts: vec![WeightedScript {
            script: parse_script("test", script).expect("test script parses"),
            weight: 1,
        }],
        clients: 1,
        rate: None,
        goodput: GoodputRule::Committed,
        keys: Vec::new(),
    };
    let mut cfg = RunConfig::new(vec![group], hotbench_wire::Config::new(), "test".into());
    cfg.limit = Limit::Transactions(1);
    cfg.random_seed = 1;
    cfg
}

/// One client on one thread, connected, at time 1 s.
pub(crate) struct Bench {
    pub(crate) core: Core<FakeEnv>,
    pub(crate) slot: Slot,
    pub(crate) env: FakeEnv,
}

impl Bench {
    pub(crate) fn new(cfg: RunConfig) -> Bench {
        let plan = Plan::new(cfg);
        let env = FakeEnv::default();
        env.now.set(1_000_000);
        let rnd = ThreadRandom {
            choose: PrngState::seed(1),
            throttle: PrngState::seed(2),
            sample: PrngState::seed(3),
        };
        let shape = plan.shape();
        let interp = Client::new(0, Variables::new(), PrngState::seed(4));
        let mut slot = Slot::new(0, 0, interp, &shape[0], 1);
        if !plan.cfg.connect_each_txn {
            slot.mark_connected();
        }
        let mut core = Core::new(Arc::clone(&plan), 0, rnd, env.clone());
        core.start(env.now.get());
        Bench { core, slot, env }
    }

    fn at(&self, us: i64) {
        self.env.now.set(us);
    }

    pub(crate) fn later(&self, us: i64) {
        self.env.now.set(self.env.now.get() + us);
    }

    pub(crate) fn advance(&mut self) -> Action {
        self.core.advance(&mut self.slot)
    }

    /// Takes what the core asked to send, as `(type byte, text)` per frontend message
    /// (the query text for Query and Parse).
    pub(crate) fn sent(&mut self) -> Vec<(u8, String)> {
        let out = std::mem::take(&mut self.slot.out);
        let mut msgs = Vec::new();
        let mut i = 0;
        while i + 5 <= out.len() {
            let tag = out[i];
            let len = u32::from_be_bytes([out[i + 1], out[i + 2], out[i + 3], out[i + 4]]) as usize;
            let body = &out[i + 5..i + 1 + len];
            let text = match tag {
                b'Q' => cstr(body),
                b'P' => {
                    let name_end = body.iter().position(|&b| b == 0).unwrap_or(0);
                    cstr(&body[name_end + 1..])
                }
                _ => String::new(),
            };
            msgs.push((tag, text));
            i += 1 + len;
        }
        msgs
    }

    /// Feeds server messages; the first that ends the wait returns its action.
    pub(crate) fn reply(&mut self, msgs: &[Message]) -> Option<Action> {
        for m in msgs {
            if let Some(a) = self.core.on_message(&mut self.slot, m) {
                return Some(a);
            }
        }
        None
    }

    pub(crate) fn totals(&self) -> &TxnCounters {
        &self.core.tally.groups[0].counters
    }
}

fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

pub(crate) fn backend(tag: u8, body: &[u8]) -> Message {
    let mut buf = BytesMut::new();
    buf.put_u8(tag);
    buf.put_u32(body.len() as u32 + 4);
    buf.put_slice(body);
    Message::parse(&mut buf)
        .expect("well-formed test message")
        .expect("complete test message")
}

fn complete(tag: &str) -> Message {
    backend(b'C', format!("{tag}\0").as_bytes())
}

fn ready(status: u8) -> Message {
    backend(b'Z', &[status])
}

fn error(severity: &str, code: &str, message: &str) -> Message {
    let body = format!("S{severity}\0V{severity}\0C{code}\0M{message}\0\0");
    backend(b'E', body.as_bytes())
}

/// The replies to one simple-protocol statement ending in transaction status `status`.
pub(crate) fn ok(tag: &str, status: u8) -> Vec<Message> {
    vec![complete(tag), ready(status)]
}

pub(crate) const TXN: &str = "BEGIN;\nUPDATE t SET v = v + 1;\nEND;\n";

#[test]
fn a_committed_transaction_is_timed_from_its_start() {
    let mut b = Bench::new(config(TXN));
    assert_eq!(b.advance(), Action::Send);
    assert_eq!(b.sent(), vec![(b'Q', "BEGIN;".to_string())]);
    b.later(100);
    assert_eq!(b.reply(&ok("BEGIN", b'T')), Some(Action::Send));
    assert_eq!(b.sent()[0].1, "UPDATE t SET v = v + 1;");
    b.later(300);
    assert_eq!(b.reply(&ok("UPDATE 1", b'T')), Some(Action::Send));
    b.later(100);
    assert_eq!(b.reply(&ok("COMMIT", b'I')), Some(Action::Wait));
    assert_eq!(b.slot.phase, Phase::Finished, "-t 1 reached");
    let t = b.totals();
    assert_eq!((t.cnt, t.failures(), t.retried), (1, 0, 0));
    assert_eq!(t.latency.mean(), 500.0);
    let cmd = &b.core.tally.groups[0].scripts[0].commands[1];
    assert_eq!((cmd.latency.count, cmd.latency.mean()), (1, 300.0));
}

#[test]
fn a_serialization_failure_is_rolled_back_and_retried() {
    let mut cfg = config(TXN);
    cfg.retry.max_tries = 3;
    let mut b = Bench::new(cfg);
    b.advance();
    b.sent();
    b.reply(&ok("BEGIN", b'T'));
    b.sent();
    let failed = [
        error("ERROR", "40001", "could not serialize access"),
        ready(b'E'),
    ];
    assert_eq!(b.reply(&failed), Some(Action::Send));
    assert_eq!(b.sent(), vec![(b'Q', "ROLLBACK".to_string())]);
    assert_eq!(b.slot.phase, Phase::WaitRollback);
    assert_eq!(b.reply(&ok("ROLLBACK", b'I')), Some(Action::Send));
    assert_eq!(b.sent()[0].1, "BEGIN;", "the transaction starts again");
    assert_eq!(b.slot.tries, 2);
    b.reply(&ok("BEGIN", b'T'));
    b.reply(&ok("UPDATE 1", b'T'));
    b.reply(&ok("COMMIT", b'I'));
    let t = b.totals();
    assert_eq!((t.cnt, t.retried, t.retries), (1, 1, 1));
    assert_eq!(t.serialization_failures, 0);
    assert_eq!(t.errors_by_sqlstate.get("40001"), Some(&1));
    assert_eq!(b.core.errors.len(), 1);
    assert_eq!(b.core.errors[0].sqlstate, "40001");
    assert_eq!(b.core.tally.groups[0].scripts[0].commands[1].retries, 1);
}

#[test]
fn a_deadlock_past_max_tries_fails_the_transaction_and_the_client_goes_on() {
    let mut cfg = config(TXN);
    cfg.limit = Limit::Transactions(2);
    let mut b = Bench::new(cfg);
    b.advance();
    b.reply(&ok("BEGIN", b'T'));
    let dead = [error("ERROR", "40P01", "deadlock detected"), ready(b'E')];
    assert_eq!(b.reply(&dead), Some(Action::Send), "ROLLBACK");
    b.sent();
    // The next transaction starts right after the rollback.
    assert_eq!(b.reply(&ok("ROLLBACK", b'I')), Some(Action::Send));
    assert_eq!(b.sent()[0].1, "BEGIN;");
    let t = b.totals();
    assert_eq!((t.cnt, t.deadlock_failures, t.retries), (0, 1, 0));
    assert_eq!(b.core.tally.groups[0].scripts[0].commands[1].failures, 1);
    assert!(!b.core.any_aborted);
}

#[test]
fn other_errors_abort_the_client_unless_continue_on_error() {
    let unique = [error("ERROR", "23505", "duplicate key"), ready(b'I')];
    let mut b = Bench::new(config("INSERT INTO t VALUES (1);\n"));
    b.advance();
    assert_eq!(b.reply(&unique), Some(Action::Wait));
    assert_eq!(b.slot.phase, Phase::Aborted);
    assert!(b.core.any_aborted && !b.slot.connected);

    let mut cfg = config("INSERT INTO t VALUES (1);\n");
    cfg.retry.continue_on_error = true;
    cfg.limit = Limit::Transactions(2);
    let mut b = Bench::new(cfg);
    b.advance();
    assert_eq!(b.reply(&unique), Some(Action::Send), "next transaction");
    assert_eq!(b.totals().other_failures, 1);
    assert!(!b.core.any_aborted);
}

#[test]
fn retry_on_codes_are_retried_like_serialization_failures() {
    let mut cfg = config("SELECT 1 FOR UPDATE NOWAIT;\n");
    cfg.retry.max_tries = 2;
    cfg.retry.extra_codes = vec![hotbench_wire::SqlState::LOCK_NOT_AVAILABLE];
    let mut b = Bench::new(cfg);
    b.advance();
    let busy = [
        error("ERROR", "55P03", "could not obtain lock"),
        ready(b'I'),
    ];
    assert_eq!(b.reply(&busy), Some(Action::Send), "retried at once");
    assert_eq!(b.slot.tries, 2);
    assert_eq!(b.reply(&busy), Some(Action::Wait), "no tries left");
    assert_eq!(b.totals().other_failures, 1);
    assert_eq!(b.slot.phase, Phase::Finished);
}

#[test]
fn a_lost_connection_fails_the_transaction_then_reconnects_with_backoff() {
    let mut cfg = config(TXN);
    cfg.limit = Limit::Transactions(2);
    let mut b = Bench::new(cfg);
    b.advance();
    b.reply(&ok("BEGIN", b'T'));
    b.core.on_lost(
        &mut b.slot,
        None,
        "server closed the connection unexpectedly",
    );
    assert!(!b.slot.connected && b.slot.out.is_empty());
    assert_eq!(b.slot.phase, Phase::Reconnect);
    assert_eq!(b.totals().connection_failures, 1);
    assert_eq!(b.advance(), Action::Wait, "not before the reconnect delay");
    b.later(10_000);
    assert_eq!(b.advance(), Action::Connect);
    b.core.on_connected(&mut b.slot, Err("refused".into()));
    assert_eq!(b.advance(), Action::Wait, "backing off");
    b.later(20_000);
    assert_eq!(b.advance(), Action::Connect);
    b.later(1_000);
    b.core.on_connected(&mut b.slot, Ok(()));
    let t = b.totals();
    assert_eq!((t.reconnects, t.disconnected_us), (1, 31_000));
    assert_eq!(b.advance(), Action::Send);
    assert_eq!(b.sent()[0].1, "BEGIN;");
}

#[test]
fn a_fatal_error_ends_the_session_and_on_disconnect_abort_aborts() {
    let mut cfg = config(TXN);
    cfg.settings.on_disconnect = OnDisconnect::Abort;
    let mut b = Bench::new(cfg);
    b.advance();
    let fatal = [error("FATAL", "57P01", "terminating connection")];
    assert_eq!(b.reply(&fatal), Some(Action::Wait));
    assert_eq!(b.slot.phase, Phase::Aborted);
    assert!(!b.slot.connected && b.core.any_aborted);
    assert_eq!(b.totals().connection_failures, 1);
    assert_eq!(b.core.errors[0].sqlstate, "57P01");
}

#[test]
fn under_rate_the_lag_is_the_wait_past_the_schedule() {
    let mut cfg = config("SELECT 1;\n");
    cfg.groups[0].rate = Some(100.0);
    let mut b = Bench::new(cfg);
    assert_eq!(b.advance(), Action::Wait);
    assert_eq!(b.slot.phase, Phase::Throttle);
    let scheduled = b.slot.wake_at;
    assert!(scheduled >= 1_000_000);
    b.at(scheduled + 700);
    assert_eq!(b.advance(), Action::Send);
    b.later(200);
    b.reply(&ok("SELECT 1", b'I'));
    let t = b.totals();
    assert_eq!(t.cnt, 1);
    assert_eq!(t.lag.mean(), 700.0);
    assert_eq!(t.latency.mean(), 900.0, "latency counts from the schedule");
}

#[test]
fn under_latency_limit_late_schedule_slots_are_skipped() {
    let mut cfg = config("SELECT 1;\n");
    cfg.groups[0].rate = Some(1000.0);
    cfg.latency_limit_us = Some(1_000);
    cfg.limit = Limit::Transactions(5);
    let mut b = Bench::new(cfg);
    b.later(10_000_000);
    assert_eq!(b.advance(), Action::Wait);
    assert_eq!(b.slot.phase, Phase::Finished);
    assert_eq!((b.totals().skipped, b.totals().cnt), (5, 0));
}

#[test]
fn a_pipeline_is_sent_once_and_its_syncs_awaited() {
    let mut cfg = config("\\startpipeline\nSELECT 1;\n\\syncpipeline\nSELECT 2;\n\\endpipeline\n");
    cfg.query_mode = QueryMode::Extended;
    let mut b = Bench::new(cfg);
    assert_eq!(b.advance(), Action::Send);
    let tags: Vec<u8> = b.sent().iter().map(|m| m.0).collect();
    assert_eq!(
        tags,
        b"PBESPBES".to_vec(),
        "two statements, two syncs, one send"
    );
    let one = [
        backend(b'1', b""),
        backend(b'2', b""),
        complete("SELECT 1"),
        ready(b'I'),
    ];
    assert_eq!(b.reply(&one), None, "waits for the second sync");
    assert_eq!(b.reply(&one), Some(Action::Wait));
    assert_eq!(b.totals().cnt, 1);
}

#[test]
fn connect_each_transaction_closes_and_reopens() {
    let mut cfg = config("SELECT 1;\n");
    cfg.connect_each_txn = true;
    cfg.limit = Limit::Transactions(2);
    let mut b = Bench::new(cfg);
    assert_eq!(b.advance(), Action::Connect);
    b.core.on_connected(&mut b.slot, Ok(()));
    assert_eq!(b.advance(), Action::Send);
    b.sent();
    assert_eq!(b.reply(&ok("SELECT 1", b'I')), Some(Action::Connect));
    assert!(!b.slot.connected, "closed after the transaction");
    b.core.on_connected(&mut b.slot, Err("refused".into()));
    assert_eq!(b.slot.phase, Phase::Aborted, "-C: a failed connect aborts");
}

#[test]
fn round_trip_emulation_delays_processing_of_results() {
    let mut cfg = config("SELECT 1;\n");
    cfg.settings.rtt_us = 3_000;
    let mut b = Bench::new(cfg);
    b.advance();
    assert_eq!(b.reply(&ok("SELECT 1", b'I')), Some(Action::Wait));
    assert_eq!(b.slot.phase, Phase::Sleep);
    assert_eq!(b.advance(), Action::Wait);
    b.later(3_000);
    assert_eq!(b.advance(), Action::Wait);
    assert_eq!(b.slot.phase, Phase::Finished);
    assert_eq!(b.totals().latency.mean(), 3_000.0);
}

/// --think delays only the results that leave the transaction open: BEGIN's and the
/// statements' inside it, not COMMIT's (the client thinks while it holds the locks).
#[test]
fn think_time_delays_results_inside_a_transaction_only() {
    let mut cfg = config(TXN);
    cfg.settings.think_us = 2_000;
    let mut b = Bench::new(cfg);
    b.advance();
    for tag in ["BEGIN", "UPDATE 1"] {
        assert_eq!(b.reply(&ok(tag, b'T')), Some(Action::Wait), "{tag}");
        assert_eq!(b.slot.phase, Phase::Sleep, "thinking after {tag}");
        assert_eq!(b.advance(), Action::Wait, "still thinking");
        b.later(2_000);
        assert_eq!(b.advance(), Action::Send, "next statement after {tag}");
        b.sent();
    }
    // COMMIT's result: the transaction is over, no think time.
    b.reply(&ok("COMMIT", b'I'));
    assert_ne!(b.slot.phase, Phase::Sleep);
    assert_eq!(b.totals().cnt, 1);
    assert_eq!(b.totals().latency.mean(), 4_000.0);
}

#[test]
fn at_the_end_of_the_run_a_transaction_in_flight_is_unfinished() {
    let mut cfg = config(TXN);
    cfg.limit = Limit::Duration(1_000_000);
    let mut b = Bench::new(cfg);
    b.advance();
    b.reply(&ok("BEGIN", b'T'));
    b.later(2_000_000);
    assert!(
        b.core.abandon(&mut b.slot, 3_000_000),
        "a query runs: cancel it"
    );
    assert_eq!(b.slot.phase, Phase::Finished);
    assert_eq!(b.totals().unfinished, 1);
    let mut b = Bench::new(config(TXN));
    b.env.stop.set(true);
    assert_eq!(b.advance(), Action::Wait);
    assert_eq!(b.slot.phase, Phase::Finished, "Ctrl-C before the start");
}

#[test]
fn a_prepared_statement_whose_parse_failed_is_executed_as_pgbench_does() {
    let mut cfg = config("SELECT * FROM missing;\n");
    cfg.query_mode = QueryMode::Prepared;
    cfg.retry.continue_on_error = true;
    cfg.limit = Limit::Transactions(2);
    let mut b = Bench::new(cfg);
    assert_eq!(b.advance(), Action::Send);
    let tags: Vec<u8> = b.sent().iter().map(|m| m.0).collect();
    assert_eq!(tags, b"PBES", "first use: Parse with the execution");
    let parse_failed = [
        error("ERROR", "42P01", "relation does not exist"),
        ready(b'I'),
    ];
    // pgbench counts the statement as prepared anyway: executed again, without a Parse.
    assert_eq!(b.reply(&parse_failed), Some(Action::Send));
    let tags: Vec<u8> = b.sent().iter().map(|m| m.0).collect();
    assert_eq!(tags, b"BES");
    assert_eq!(
        b.totals().other_failures,
        0,
        "a failed prepare is no failure"
    );
    let missing = [
        error("ERROR", "26000", "prepared statement does not exist"),
        ready(b'I'),
    ];
    assert_eq!(b.reply(&missing), Some(Action::Send), "next transaction");
    assert_eq!(b.totals().other_failures, 1);
    let tags: Vec<u8> = b.sent().iter().map(|m| m.0).collect();
    assert_eq!(tags, b"BES", "never parsed again on this connection");
    b.reply(&missing);
    assert_eq!(b.totals().other_failures, 2);
    let codes = &b.totals().errors_by_sqlstate;
    assert_eq!(codes.get("42P01"), Some(&1), "{codes:?}");
    assert_eq!(codes.get("26000"), Some(&2), "{codes:?}");
}

/// The stderr lines the core queued, in order (other events dropped).
fn said(b: &mut Bench) -> Vec<String> {
    b.core
        .events
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::Stderr(l) => Some(l),
            _ => None,
        })
        .collect()
}

#[test]
fn a_timed_run_wakes_at_its_end_then_abandons_after_the_grace() {
    let mut cfg = config(TXN);
    cfg.limit = Limit::Duration(3_000_000);
    cfg.settings.interval_us = 10_000_000;
    let mut b = Bench::new(cfg);
    let origin = 1_000_000;
    let slots = [];
    assert_eq!(
        b.core.poll_timeout(&slots),
        origin + 3_000_000,
        "the -T end"
    );
    assert!(!b.core.must_abandon(origin + 3_000_000));
    b.at(origin + 3_000_000);
    assert_eq!(
        b.core.poll_timeout(&slots),
        origin + 3_000_000 + END_GRACE_US,
        "past the end: the grace's end"
    );
    assert!(!b.core.must_abandon(origin + 3_000_000 + END_GRACE_US - 1));
    assert!(b.core.must_abandon(origin + 3_000_000 + END_GRACE_US));
    // The interval ends at the last transaction's end, or at -T when stuck ones remain.
    assert_eq!(b.core.bench_end(origin + 6_000_000), origin + 3_000_000);
    b.core.last_end_us = origin + 3_100_000;
    assert_eq!(b.core.bench_end(origin + 6_000_000), origin + 3_100_000);
    let b = Bench::new(config(TXN));
    assert_eq!(
        b.core.bench_end(origin + 5),
        origin + 5,
        "-t: when the loop exits"
    );
    assert!(!b.core.must_abandon(i64::MAX / 2), "-t runs have no end");
    b.env.stop.set(true);
    assert!(b.core.must_abandon(origin), "Ctrl-C");
}

#[test]
fn sleeping_clients_and_interval_boundaries_set_the_timeout() {
    let mut cfg = config("\\sleep 5 ms\nSELECT 1;\n");
    cfg.settings.interval_us = 1_000_000;
    let mut b = Bench::new(cfg);
    assert_eq!(b.advance(), Action::Wait);
    assert_eq!(b.slot.phase, Phase::Sleep);
    assert_eq!(
        b.core.poll_timeout([&b.slot]),
        1_005_000,
        "the sleep ends first"
    );
    b.at(2_000_000);
    let _ = b.advance();
    assert_eq!(
        b.core.poll_timeout([&b.slot]),
        2_000_000,
        "the first interval's end"
    );
}

#[test]
fn passed_interval_boundaries_are_each_handed_out_in_order() {
    let mut cfg = config(TXN);
    cfg.settings.interval_us = 1_000_000;
    let mut b = Bench::new(cfg);
    assert!(!b.core.handle_timeout(1_999_999));
    b.advance();
    b.reply(&ok("BEGIN", b'T'));
    // Held up for two and a half intervals: two intervals end at once.
    assert!(b.core.handle_timeout(3_500_000));
    let got: Vec<(u64, u64)> = b
        .core
        .events
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::Interval { index, groups } => Some((index, groups[0].cnt)),
            _ => None,
        })
        .collect();
    assert_eq!(got, vec![(0, 0), (1, 0)]);
    assert_eq!(b.core.poll_timeout([]), 4_000_000);
    b.core.finish_intervals();
    assert!(matches!(
        b.core.events.drain()[..],
        [Event::Interval { index: 2, .. }]
    ));
}

#[test]
fn exit_on_abort_says_so_once_and_stops_every_thread() {
    let unique = [error("ERROR", "23505", "duplicate key"), ready(b'I')];
    let mut cfg = config("INSERT INTO t VALUES (1);\n");
    cfg.exit_on_abort = true;
    let mut b = Bench::new(cfg);
    b.advance();
    b.reply(&unique);
    let events = b.core.events.drain();
    assert!(matches!(events.last(), Some(Event::StopAll)), "{events:?}");
    let lines: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Stderr(l) => Some(l),
            _ => None,
        })
        .collect();
    assert_eq!(
        lines,
        [
            "hotbench: error: client 0 script 0 aborted in command 0 query 0: ERROR:  duplicate key",
            "hotbench: error: Run was aborted due to an error in thread 0",
        ]
    );
    let mut other = Slot::new(
        1,
        0,
        Client::new(1, Variables::new(), PrngState::seed(5)),
        &[1],
        1,
    );
    b.core.abort(&mut other);
    assert!(b.core.events.drain().is_empty(), "once per thread");
    // Without the option the client aborts alone, and nothing asks the others to stop.
    let mut b = Bench::new(config("INSERT INTO t VALUES (1);\n"));
    b.advance();
    b.reply(&unique);
    assert!(!b
        .core
        .events
        .drain()
        .iter()
        .any(|e| matches!(e, Event::StopAll)));
}

#[test]
fn the_core_queues_log_records_and_notices_instead_of_writing_them() {
    let mut cfg = config(TXN);
    cfg.log = Some(crate::config::LogConfig {
        prefix: "unused".into(),
        aggregate_interval: 0,
        sampling_rate: None,
    });
    let mut b = Bench::new(cfg);
    b.advance();
    let notice = backend(b'N', b"SWARNING\0C01000\0Mlook out\0\0");
    b.reply(&[notice]);
    assert_eq!(said(&mut b), ["WARNING:  look out"]);
    b.reply(&ok("BEGIN", b'T'));
    b.reply(&ok("UPDATE 1", b'T'));
    b.later(700);
    b.reply(&ok("COMMIT", b'I'));
    let records: Vec<TxnRecord> = b
        .core
        .events
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            Event::Txn(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(records.len(), 1, "one transaction logged");
    assert_eq!((records[0].client, records[0].txn_no), (0, 1));
    assert_eq!(records[0].latency, 700);
    assert_eq!(records[0].outcome, Some(Outcome::Committed));
}

/// Issue 36, row 14: under -R the server stalls after ten commits and stays stalled past
/// the end of the -T run. At the end plus the grace the transaction in flight is
/// unfinished, and every start the schedule owed before the end that no client could take
/// is unstarted: with the commits they add up to the schedule exactly.
#[test]
fn a_stall_until_the_end_of_a_rate_limited_run_leaves_no_scheduled_transaction_uncounted() {
    let mut cfg = config("SELECT 1;\n");
    cfg.groups[0].rate = Some(100.0);
    cfg.limit = Limit::Duration(1_000_000);
    let mut b = Bench::new(cfg);
    let (origin, end) = (1_000_000, 2_000_000);
    // The schedule as the core draws it: the thread's throttle PRNG (seed 2), mean 10 ms.
    let mut prng = PrngState::seed(2);
    let (mut at, mut scheduled) = (origin, 0u64);
    loop {
        at += hotbench_script::poisson_rand(&mut prng, 10_000.0);
        if at > end {
            break;
        }
        scheduled += 1;
    }
    for _ in 0..10 {
        assert_eq!(b.advance(), Action::Wait);
        assert_eq!(b.slot.phase, Phase::Throttle);
        b.at(b.slot.wake_at);
        assert_eq!(b.advance(), Action::Send);
        b.later(100);
        b.reply(&ok("SELECT 1", b'I'));
    }
    b.advance();
    b.at(b.slot.wake_at);
    assert_eq!(
        b.advance(),
        Action::Send,
        "the eleventh is sent; no answer comes"
    );
    let stalled_at = b.env.now.get();
    assert!(stalled_at < end);
    // The core wakes the driver at the end, then at the end of the grace, and gives up.
    assert_eq!(
        b.core.poll_timeout([&b.slot]),
        end.min(b.core.timers.next_boundary)
    );
    b.at(end + END_GRACE_US);
    assert!(b.core.must_abandon(end + END_GRACE_US));
    assert!(b.core.abandon(&mut b.slot, end + END_GRACE_US), "cancel it");
    b.core.count_unstarted(end + END_GRACE_US);
    let t = b.totals().clone();
    assert_eq!((t.cnt, t.unfinished), (10, 1));
    assert!(t.unstarted > 50, "{}", t.unstarted);
    assert_eq!(
        t.cnt + t.failures() + t.skipped + t.unfinished + t.unstarted,
        scheduled,
        "every scheduled transaction is counted once"
    );
    // Nothing is owed twice.
    b.core.count_unstarted(end + END_GRACE_US);
    assert_eq!(b.totals().unstarted, t.unstarted);
}

/// A -R run that kept up owes nothing at its end, and a client waiting for a start past
/// the end is not counted; one whose start passed (the thread was held up) is.
#[test]
fn a_rate_limited_run_that_kept_up_has_nothing_unstarted() {
    let mut cfg = config("SELECT 1;\n");
    cfg.groups[0].rate = Some(100.0);
    cfg.limit = Limit::Duration(1_000_000);
    let mut b = Bench::new(cfg.clone());
    let end = 2_000_000;
    b.advance();
    for _ in 0..1000 {
        match b.slot.phase {
            Phase::Throttle => {
                b.at(b.slot.wake_at.max(b.env.now.get()));
                b.advance();
            }
            Phase::WaitResult => {
                b.later(100);
                b.reply(&ok("SELECT 1", b'I'));
            }
            _ => break,
        }
    }
    assert_eq!(
        b.slot.phase,
        Phase::Finished,
        "its next start is past the end"
    );
    b.core.count_unstarted(end + 10);
    assert_eq!(b.totals().unstarted, 0);
    // Held up while waiting for a start that is now past: unstarted.
    let mut b = Bench::new(cfg);
    assert_eq!(b.advance(), Action::Wait);
    let start = b.slot.wake_at;
    assert!(!b.core.abandon(&mut b.slot, start + 1), "nothing to cancel");
    assert_eq!(b.totals().unstarted, 1);
}
