//! A probe fed another reader's `pg_stat_activity` rows (`hotbench capture`'s sampler) counts
//! them as its wait samples and makes no wait read of its own while the feed is open; once
//! the feeder closes it, the probe reads for itself again. Against a real server: a session
//! idle in its transaction that only the probe's own read can see.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hotbench_pgserver::testing;
use hotbench_probe::{Probe, ProbeOptions, Scope, WaitFeed, WaitRow};
use hotbench_wire::{Config, Connector};

/// [`testing::wait_until`] with the 60 s these tests allow.
fn wait_until(what: &str, done: impl FnMut() -> bool) {
    hotbench_pgserver::testing::wait_until(what, Duration::from_secs(60), done);
}

#[test]
fn fed_reads_are_the_wait_samples_and_a_closed_feed_hands_reading_back() {
    let db = testing::fresh_database("probe_wait_feed");
    let params = Config::parse(&db.socket_conninfo())
        .and_then(|c| c.resolve())
        .expect("conninfo");
    // Somebody's session idle in its transaction: Client:ClientRead to the probe's own read.
    let mut idle = Connector::new(params.clone()).connect().expect("connect");
    idle.simple_query("begin; select 1;").expect("begin");
    let feed = WaitFeed::new();
    let mut opts = ProbeOptions::new("unused");
    opts.scope = Scope::Database;
    opts.connection_name = "fed probe under test".into();
    opts.read_only = true;
    opts.wait_interval = Duration::from_millis(20);
    opts.stats_interval = Duration::from_millis(200);
    opts.wait_feed = Some(feed.clone());
    let probe = Probe::start(&params, opts);
    // The feeder: a backend waiting on an advisory lock (no such session exists: only the
    // feed can have shown it) and an idle one, every 5 ms.
    let stop = AtomicBool::new(false);
    let pushed = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                feed.push(vec![
                    WaitRow {
                        state: "active".into(),
                        wait_event_type: Some("Lock".into()),
                        wait_event: Some("advisory".into()),
                        state_age_s: Some(0.01),
                    },
                    WaitRow {
                        state: "idle".into(),
                        wait_event_type: Some("Client".into()),
                        wait_event: Some("ClientRead".into()),
                        state_age_s: Some(0.2),
                    },
                ]);
                n += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            n
        });
        let from = probe.progress().samples;
        wait_until("ten wait intervals", || {
            probe.progress().samples >= from + 10
        });
        stop.store(true, Ordering::SeqCst);
        h.join().expect("feeder")
    });
    // Every fed read taken by the next interval; then the feeder stops: the probe reads the
    // server itself and sees the idle transaction.
    let from = probe.progress().samples;
    wait_until("two more wait intervals", || {
        probe.progress().samples >= from + 2
    });
    feed.close();
    let from = probe.progress().samples;
    wait_until("five own wait reads", || {
        probe.progress().samples >= from + 5
    });
    let rec = probe.stop();
    idle.close();
    let count = |event: &str| {
        rec.waits
            .iter()
            .find(|w| w.event == event)
            .map_or(0, |w| w.count)
    };
    assert_eq!(count("Lock:advisory"), pushed, "{:?}", rec.waits);
    let own = count("Client:ClientRead");
    assert!(
        own >= 5,
        "own reads after the close: {own}, {:?}",
        rec.waits
    );
    assert_eq!(rec.samples, pushed + own, "no own wait read while fed");
    assert_eq!(
        rec.idle_samples, 0,
        "idle sessions left out, as the probe's own read does"
    );
    assert!(
        rec.notes
            .iter()
            .any(|n| n.contains("reads of capture's activity sampler")),
        "{:?}",
        rec.notes
    );
}
