//! The end of a -R run, driven as in `client_core_tests.rs` (its bench): a stall that
//! outlasts the run leaves every scheduled transaction counted (committed, unfinished or
//! unstarted), and a run that kept up owes nothing.

use hotbench_script::PrngState;

use crate::client_core::Action;
use crate::client_core_tests::{config, ok, Bench};
use crate::config::Limit;
use crate::slot::Phase;
use crate::timers::END_GRACE_US;

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
        b.core.poll_timeout(b.now(), [&b.slot]),
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
