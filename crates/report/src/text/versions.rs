//! The report's layout per `--pgbench-compat` version, against lines the real pgbench 15,
//! 17 and 18 printed for the same counts (two scripts, retries and failures, `-r`), and
//! pgbench 19's `number of other failures` as its source prints it.

use hotbench_results::{
    CommandRecord, FailureKind, PgbenchCompat, RunRecord, ScriptRecord, TotalsRecord, TxnCounters,
};

use crate::text::pgbench::pgbench_report;
use hotbench_results::testdata;

fn counters(cnt: u64, serialization: u64, other: u64, retried: u64) -> TxnCounters {
    let mut c = TxnCounters::default();
    for _ in 0..cnt {
        c.record_success(9_555, None, 1);
    }
    (0..serialization).for_each(|_| c.record_failure(FailureKind::Serialization));
    (0..other).for_each(|_| c.record_failure(FailureKind::Other));
    c.retried = retried;
    c.retries = retried;
    c
}

fn command(text: &str, failures: u64, retries: u64) -> CommandRecord {
    CommandRecord {
        index: 0,
        line: 1,
        text: text.into(),
        full_text: String::new(),
        count: 1,
        mean_ms: 0.231,
        failures,
        retries,
        latency: Default::default(),
    }
}

/// pgbench -n -c 4 -t 20 --max-tries 2 -r -f rr.sql@5 -f one.sql@1, as pgbench `version`:
/// rr.sql 31 processed and 28 failed (35 retried), one.sql 21 processed.
fn two_scripts(version: u32, other: u64) -> RunRecord {
    let mut rec = testdata::record("x", 0.0, 1, 0, 1.0);
    let s1 = counters(31, 28, other, 35);
    let s2 = counters(21, 0, 0, 0);
    let mut all = s1.clone();
    all.merge(&s2);
    rec.bench.transaction_type = "multiple scripts".into();
    rec.bench.max_tries = 2;
    rec.bench.duration_s = None;
    rec.bench.transactions_per_client = Some(20);
    rec.bench.report_per_command = true;
    rec.bench.pgbench_compat = PgbenchCompat::new(version).unwrap();
    rec.totals = TotalsRecord::from_counters(all, 1.0);
    rec.groups[0].scripts = vec![
        ScriptRecord {
            name: "rr.sql".into(),
            weight: 5,
            totals: TotalsRecord::from_counters(s1, 1.0),
            commands: vec![command("update hot set v = v + 1 where id = 1;", 28, 35)],
        },
        ScriptRecord {
            name: "one.sql".into(),
            weight: 1,
            totals: TotalsRecord::from_counters(s2, 1.0),
            commands: vec![command("select 1;", 0, 0)],
        },
    ];
    rec
}

fn section(text: &str, from: &str, lines: usize) -> String {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} in\n{text}"));
    text[start..]
        .lines()
        .take(lines)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn pgbench_15_to_17_count_processed_transactions_per_script() {
    for version in [15, 16, 17] {
        let text = pgbench_report(&two_scripts(version, 0));
        assert_eq!(
            section(&text, "SQL script 1", 9),
            "SQL script 1: rr.sql
 - weight: 5 (targets 83.3% of total)
 - 31 transactions (59.6% of total, tps = 31.000000)
 - number of failed transactions: 28 (47.458%)
 - number of transactions retried: 35 (59.322%)
 - total number of retries: 35
 - latency average = 9.555 ms
 - latency stddev = 0.000 ms
 - statement latencies in milliseconds, failures and retries:",
            "pgbench {version}"
        );
        assert!(
            text.contains("\n         0.231          28          35  update hot"),
            "{text}"
        );
    }
}

#[test]
fn pgbench_18_counts_all_transactions_per_script_and_adds_processed() {
    let text = pgbench_report(&two_scripts(18, 0));
    assert_eq!(
        section(&text, "SQL script 1", 7),
        "SQL script 1: rr.sql
 - weight: 5 (targets 83.3% of total)
 - 59 transactions (73.8% of total)
 - number of transactions actually processed: 31 (tps = 31.000000)
 - number of failed transactions: 28 (47.458%)
 - number of transactions retried: 35 (59.322%)
 - total number of retries: 35"
    );
    assert!(
        text.contains("\n         0.231          28         35 update hot"),
        "{text}"
    );
    assert!(text.contains("\n         0.231           0          0 select 1;"));
}

#[test]
fn a_run_where_nothing_was_tried_stops_where_each_version_stops() {
    let mut rec = testdata::record("x", 0.0, 1, 0, 1.0);
    rec.bench.duration_s = None;
    rec.bench.transactions_per_client = Some(1);
    rec.bench.max_tries = 1;
    let mut tail = |version| {
        rec.bench.pgbench_compat = PgbenchCompat::new(version).unwrap();
        let text = pgbench_report(&rec);
        section(&text, "number of transactions actually processed", 3)
    };
    // As pgbench 15.18 and 18.6 print it after an aborted client.
    assert_eq!(
        tail(15),
        "number of transactions actually processed: 0/4\nnumber of failed transactions: 0 (NaN%)"
    );
    assert_eq!(tail(18), "number of transactions actually processed: 0/4");
}

#[test]
fn pgbench_19_reports_other_failures_when_detailed() {
    let mut rec = two_scripts(19, 2);
    rec.bench.failures_detailed = true;
    let text = pgbench_report(&rec);
    assert!(
        text.contains(
            "number of failed transactions: 30 (36.585%)\nnumber of serialization failures: 28 (34.146%)\nnumber of deadlock failures: 0 (0.000%)\nnumber of other failures: 2 (2.439%)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(" - number of other failures: 2 (3.279%)\n"),
        "{text}"
    );
    rec.bench.pgbench_compat = PgbenchCompat::new(18).unwrap();
    assert!(!pgbench_report(&rec).contains("other failures"));
}
