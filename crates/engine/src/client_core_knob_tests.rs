//! The engine core's inputs from the perturbations and the server's last word, driven as in
//! `client_core_tests.rs` (its bench): an immediate shutdown's 57P01 notice before the
//! connection drops, an `rtt` change, a `rate` change.

use crate::client_core::Action;
use crate::client_core_tests::{backend, config, ok, Bench, TXN};
use crate::config::Limit;
use crate::slot::Phase;

/// An immediate shutdown says goodbye in a WARNING (57P01, PostgreSQL 14+) and closes the
/// connection: the transaction's failure is counted under that SQLSTATE, as a fast
/// shutdown's FATAL is (the `restart=immediate` perturbation's 57P01).
#[test]
fn a_shutdown_notice_before_the_connection_drops_is_the_failures_sqlstate() {
    let mut b = Bench::new(config(TXN));
    b.advance();
    b.sent();
    let body =
        "SWARNING\0VWARNING\0C57P01\0Mterminating connection due to immediate shutdown command\0\0";
    assert_eq!(b.reply(&[backend(b'N', body.as_bytes())]), None);
    b.core
        .on_lost(&mut b.slot, None, "server closed the connection");
    assert_eq!(b.totals().connection_failures, 1);
    assert_eq!(b.totals().errors_by_sqlstate.get("57P01"), Some(&1));
    assert_eq!(b.core.errors[0].sqlstate, "57P01");
}

/// `rtt=VALUE,DURATION`: results that arrive after the change wait out the new round trip,
/// and the run's own again after it is set back.
#[test]
fn an_rtt_change_applies_to_the_next_results() {
    let mut cfg = config("SELECT 1;\n");
    cfg.limit = Limit::Transactions(2);
    let mut b = Bench::new(cfg);
    let now = b.env.now.get();
    b.core.set_rtt(5_000, now);
    b.advance();
    assert_eq!(b.reply(&ok("SELECT 1", b'I')), Some(Action::Wait));
    assert_eq!(b.slot.phase, Phase::Sleep);
    assert_eq!(b.slot.wake_at, now + 5_000);
    b.later(5_000);
    b.core.set_rtt(0, b.env.now.get());
    assert_eq!(
        b.advance(),
        Action::Send,
        "the first result processed, the next sent"
    );
    b.sent();
    b.reply(&ok("SELECT 1", b'I'));
    assert_ne!(b.slot.phase, Phase::Sleep, "no round trip any more");
    assert_eq!(b.totals().cnt, 2);
}

/// `rate=R,DURATION`: the schedule's gaps shrink by the factor from the change on, a
/// schedule drawn ahead at the old rate is brought back to the change, and factor 1 gives
/// the run's rate back.
#[test]
fn a_rate_change_draws_the_schedule_at_the_new_rate() {
    let mut cfg = config("SELECT 1;\n");
    cfg.groups[0].rate = Some(10.0);
    let mut b = Bench::new(cfg);
    let base = b.core.delay[0].expect("throttled");
    assert_eq!(base, 100_000.0);
    let now = b.env.now.get();
    b.core.trigger[0] = now + 300_000;
    b.core.set_rate_factor(4.0, now);
    assert_eq!(b.core.delay[0], Some(25_000.0));
    assert_eq!(b.core.trigger[0], now, "the burst starts at the change");
    b.core.set_rate_factor(1.0, now + 1_000_000);
    assert_eq!(b.core.delay[0], Some(base));
    assert_eq!(
        b.core.trigger[0], now,
        "a slower rate leaves the schedule where it is"
    );
    b.core.set_rate_factor(f64::NAN, now);
    assert_eq!(
        b.core.delay[0],
        Some(base),
        "a factor that is no number changes nothing"
    );
}
