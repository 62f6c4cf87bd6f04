//! The final report, line for line as the pgbench version of `--pgbench-compat` prints it
//! (15 by default; the differences are `hotbench_results::pgbench_format`'s table), so tools
//! that parse pgbench output keep working, followed by hotbench's extra lines.

use std::fmt::Write as _;

use hotbench_results::pgbench_format::Traits;
use hotbench_results::{RunRecord, ScriptRecord, TxnCounters};

fn pct(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * n as f64 / total as f64
    }
}

/// `100.0 * n / total` as pgbench prints it with `%.{prec}f`: `NaN` when `total` is 0
/// (pgbench divides anyway where it does not guard).
fn share(n: u64, total: u64, prec: usize) -> String {
    if total == 0 {
        "NaN".to_string()
    } else {
        format!("{:.prec$}", 100.0 * n as f64 / total as f64)
    }
}

/// pgbench's `printResults`, for the whole run (all groups together).
pub fn pgbench_report(rec: &RunRecord) -> String {
    let mut o = String::new();
    let b = &rec.bench;
    let t = &rec.totals.counters;
    let failures = t.failures();
    let total_cnt = t.total();
    let throttled = b.rate.is_some();
    let version = b.pgbench_compat.traits();
    let _ = writeln!(o, "transaction type: {}", b.transaction_type);
    let _ = writeln!(o, "scaling factor: {}", b.scale);
    if let Some(method) = &b.partition_method {
        let _ = writeln!(
            o,
            "partition method: {method}\npartitions: {}",
            b.partitions
        );
    }
    let _ = writeln!(o, "query mode: {}", b.query_mode);
    let _ = writeln!(o, "number of clients: {}", b.clients);
    let _ = writeln!(o, "number of threads: {}", b.threads);
    if b.max_tries != 0 {
        let _ = writeln!(o, "maximum number of tries: {}", b.max_tries);
    }
    match (b.duration_s, b.transactions_per_client) {
        (Some(d), _) => {
            let _ = writeln!(o, "duration: {d} s");
            let _ = writeln!(o, "number of transactions actually processed: {}", t.cnt);
        }
        (None, n) => {
            let n = n.unwrap_or(0);
            let _ = writeln!(o, "number of transactions per client: {n}");
            let _ = writeln!(
                o,
                "number of transactions actually processed: {}/{}",
                t.cnt,
                n * b.clients as u64
            );
        }
    }
    if total_cnt == 0 && version.stops_when_nothing_tried {
        return o;
    }
    let _ = writeln!(
        o,
        "number of failed transactions: {failures} ({}%)",
        share(failures, total_cnt, 3)
    );
    if b.failures_detailed {
        failure_details(&mut o, "", t, total_cnt, &version);
    }
    if b.max_tries != 1 {
        let _ = writeln!(
            o,
            "number of transactions retried: {} ({}%)",
            t.retried,
            share(t.retried, total_cnt, 3)
        );
        let _ = writeln!(o, "total number of retries: {}", t.retries);
    }
    if !version.stops_when_nothing_tried && t.cnt.saturating_add(t.skipped) == 0 {
        return o;
    }
    if throttled && b.latency_limit_ms.is_some() {
        let _ = writeln!(
            o,
            "number of transactions skipped: {} ({:.3}%)",
            t.skipped,
            pct(t.skipped, total_cnt)
        );
    }
    if let Some(limit) = b.latency_limit_ms {
        let _ = writeln!(
            o,
            "number of transactions above the {limit:.1} ms latency limit: {}/{} ({:.3}%)",
            t.late,
            t.cnt,
            pct(t.late, t.cnt)
        );
    }
    if throttled || b.progress || b.latency_limit_ms.is_some() {
        simple_stats(&mut o, "latency", t);
    } else {
        let _ = writeln!(
            o,
            "latency average = {:.3} ms{}",
            1000.0 * rec.duration_s * b.clients as f64 / total_cnt as f64,
            if failures > 0 {
                " (including failures)"
            } else {
                ""
            }
        );
    }
    if throttled {
        let lag_avg = if t.cnt > 0 {
            0.001 * t.lag.sum / t.cnt as f64
        } else {
            0.0
        };
        let _ = writeln!(
            o,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            lag_avg,
            0.001 * t.lag.max
        );
    }
    let tps = if rec.duration_s > 0.0 {
        t.cnt as f64 / rec.duration_s
    } else {
        0.0
    };
    if b.connect_each_txn {
        let n = (t.cnt + failures).max(1);
        let _ = writeln!(
            o,
            "average connection time = {:.3} ms",
            rec.conn_time_ms / n as f64
        );
        let _ = writeln!(o, "tps = {tps:.6} (including reconnection times)");
    } else {
        let _ = writeln!(o, "initial connection time = {:.3} ms", rec.conn_time_ms);
        let _ = writeln!(o, "tps = {tps:.6} (without initial connection time)");
    }
    let scripts: Vec<&ScriptRecord> = rec.groups.iter().flat_map(|g| &g.scripts).collect();
    let per_script = scripts.len() > 1;
    if per_script || b.report_per_command {
        let total_weight: u64 = scripts.iter().map(|s| s.weight as u64).sum();
        for (i, s) in scripts.iter().enumerate() {
            if per_script {
                script_section(&mut o, i, s, total_weight, rec, &version);
            }
            if b.report_per_command {
                command_section(&mut o, s, per_script, b.max_tries, &version);
            }
        }
    }
    o
}

fn failure_details(o: &mut String, prefix: &str, t: &TxnCounters, total: u64, version: &Traits) {
    let _ = writeln!(
        o,
        "{prefix}number of serialization failures: {} ({}%)",
        t.serialization_failures,
        share(t.serialization_failures, total, 3)
    );
    let _ = writeln!(
        o,
        "{prefix}number of deadlock failures: {} ({}%)",
        t.deadlock_failures,
        share(t.deadlock_failures, total, 3)
    );
    if version.other_failures {
        // pgbench 19: failed = serialization + deadlock + other; hotbench's lost
        // connections (it reconnects where pgbench aborts) are among the other failures.
        let other = t
            .failures()
            .saturating_sub(t.serialization_failures + t.deadlock_failures);
        let _ = writeln!(
            o,
            "{prefix}number of other failures: {other} ({}%)",
            share(other, total, 3)
        );
    }
}

fn simple_stats(o: &mut String, prefix: &str, t: &TxnCounters) {
    if t.latency.count > 0 {
        let _ = writeln!(o, "{prefix} average = {:.3} ms", 0.001 * t.latency.mean());
        let _ = writeln!(o, "{prefix} stddev = {:.3} ms", 0.001 * t.latency.stddev());
    }
}

/// One script's section (several scripts): pgbench 18 counts all its transactions on the
/// first line and adds a `processed` line; 15 to 17 count processed ones only, with the tps.
fn script_section(
    o: &mut String,
    i: usize,
    s: &ScriptRecord,
    total_weight: u64,
    rec: &RunRecord,
    version: &Traits,
) {
    let c = &s.totals.counters;
    let all = &rec.totals.counters;
    let script_total = c.total();
    let tps = if rec.duration_s > 0.0 {
        c.cnt as f64 / rec.duration_s
    } else {
        0.0
    };
    let _ = writeln!(o, "SQL script {}: {}", i + 1, s.name);
    let _ = writeln!(
        o,
        " - weight: {} (targets {:.1}% of total)",
        s.weight,
        pct(s.weight as u64, total_weight)
    );
    if version.per_script_processed_line {
        let _ = writeln!(
            o,
            " - {script_total} transactions ({}% of total)",
            share(script_total, all.total(), 1)
        );
        if script_total == 0 {
            simple_stats(o, " - latency", c);
            return;
        }
        let _ = writeln!(
            o,
            " - number of transactions actually processed: {} (tps = {tps:.6})",
            c.cnt
        );
    } else {
        let _ = writeln!(
            o,
            " - {} transactions ({}% of total, tps = {tps:.6})",
            c.cnt,
            share(c.cnt, all.cnt, 1)
        );
    }
    let f = c.failures();
    let _ = writeln!(
        o,
        " - number of failed transactions: {f} ({}%)",
        share(f, script_total, 3)
    );
    if rec.bench.failures_detailed {
        failure_details(o, " - ", c, script_total, version);
    }
    let max_tries = rec.bench.max_tries;
    if max_tries != 1 {
        let _ = writeln!(
            o,
            " - number of transactions retried: {} ({}%)",
            c.retried,
            share(c.retried, script_total, 3)
        );
        let _ = writeln!(o, " - total number of retries: {}", c.retries);
    }
    if rec.bench.rate.is_some() && rec.bench.latency_limit_ms.is_some() && script_total > 0 {
        let _ = writeln!(
            o,
            " - number of transactions skipped: {} ({:.3}%)",
            c.skipped,
            pct(c.skipped, script_total)
        );
    }
    simple_stats(o, " - latency", c);
}

fn command_section(
    o: &mut String,
    s: &ScriptRecord,
    per_script: bool,
    max_tries: u32,
    version: &Traits,
) {
    let _ = writeln!(
        o,
        "{}statement latencies in milliseconds{}:",
        if per_script { " - " } else { "" },
        if max_tries == 1 {
            " and failures"
        } else {
            ", failures and retries"
        }
    );
    // pgbench's exact columns (parsers split these lines); hotbench's per-command p99 is on
    // separate, labeled lines in `extra_lines`.
    // pgbench 18 narrowed the gaps after the failures and retries columns to one space.
    let gap = if version.narrow_statement_columns {
        " "
    } else {
        "  "
    };
    for c in &s.commands {
        if max_tries == 1 {
            let _ = writeln!(o, "   {:11.3}  {:10}{gap}{}", c.mean_ms, c.failures, c.text);
        } else {
            let _ = writeln!(
                o,
                "   {:11.3}  {:10}{gap}{:10}{gap}{}",
                c.mean_ms, c.failures, c.retries, c.text
            );
        }
    }
}

/// hotbench's lines after pgbench's report: the run's sections
/// (`analysis::sections::RUN`) in the terminal — percentiles, goodput, the connection phase,
/// per-command p99, errors by SQLSTATE, reconnects, hot keys, hosts, groups, pooler, probes,
/// perturbations and notes.
pub fn extra_lines(rec: &RunRecord) -> String {
    crate::text::section::render(&crate::analysis::sections::run(rec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::{BenchInfo, CommandRecord, GroupRecord, Percentiles, TotalsRecord};

    fn record(bench: BenchInfo, counters: TxnCounters, commands: Vec<CommandRecord>) -> RunRecord {
        let totals = TotalsRecord::from_counters(counters, 2.0);
        RunRecord {
            status: hotbench_results::RunStatus::Completed,
            bench,
            duration_s: 2.0,
            conn_time_ms: 15.923,
            totals: totals.clone(),
            groups: vec![GroupRecord {
                name: "default".into(),
                threads: 2,
                clients: 4,
                rate: None,
                totals: totals.clone(),
                scripts: vec![ScriptRecord {
                    name: "<builtin: TPC-B (sort of)>".into(),
                    weight: 1,
                    totals,
                    commands,
                }],
            }],
            ..Default::default()
        }
    }

    #[test]
    fn time_limited_run_with_progress_and_per_command() {
        let mut c = TxnCounters::default();
        for _ in 0..1304 {
            c.record_success(6098, None, 1);
        }
        let bench = BenchInfo {
            transaction_type: "<builtin: TPC-B (sort of)>".into(),
            scale: 1,
            query_mode: "simple".into(),
            clients: 4,
            threads: 2,
            max_tries: 1,
            duration_s: Some(2),
            progress: true,
            report_per_command: true,
            ..Default::default()
        };
        let cmd = CommandRecord {
            index: 0,
            line: 1,
            text: "BEGIN;".into(),
            full_text: String::new(),
            count: 1304,
            mean_ms: 0.146,
            failures: 0,
            retries: 0,
            latency: Percentiles {
                p99_ms: 0.5,
                ..Default::default()
            },
        };
        let cmd_clone = cmd.clone();
        let text = pgbench_report(&record(bench, c, vec![cmd]));
        let expected = "\
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 1304
number of failed transactions: 0 (0.000%)
latency average = 6.098 ms
latency stddev = 0.000 ms
initial connection time = 15.923 ms
tps = 652.000000 (without initial connection time)
statement latencies in milliseconds and failures:
         0.146           0  BEGIN;
";
        assert_eq!(text, expected);
        let rec = record(
            BenchInfo {
                report_per_command: true,
                ..Default::default()
            },
            TxnCounters::default(),
            vec![cmd_clone.clone()],
        );
        let extra = extra_lines(&rec);
        assert!(
            extra.contains("statement latency p99:\n   p99 = 0.500 ms: BEGIN;\n"),
            "{extra}"
        );
        let never = CommandRecord {
            count: 0,
            latency: Percentiles::default(),
            ..cmd_clone
        };
        let rec = record(
            BenchInfo {
                report_per_command: true,
                ..Default::default()
            },
            TxnCounters::default(),
            vec![never],
        );
        let extra = extra_lines(&rec);
        assert!(
            extra.contains("statement latency p99:\n   p99 = – (not run): BEGIN;\n"),
            "{extra}"
        );
    }

    #[test]
    fn count_limited_run_without_progress_uses_run_time_average() {
        let mut c = TxnCounters::default();
        for _ in 0..40 {
            c.record_success(1000, None, 1);
        }
        c.record_failure(hotbench_stats::FailureKind::Serialization);
        let bench = BenchInfo {
            transaction_type: "x.sql".into(),
            scale: 1,
            query_mode: "extended".into(),
            clients: 2,
            threads: 1,
            max_tries: 3,
            transactions_per_client: Some(20),
            failures_detailed: true,
            ..Default::default()
        };
        let text = pgbench_report(&record(bench, c, vec![]));
        assert!(
            text.contains("number of transactions per client: 20\n"),
            "{text}"
        );
        assert!(text.contains("number of transactions actually processed: 40/40\n"));
        assert!(text.contains("number of failed transactions: 1 (2.439%)\n"));
        assert!(text.contains("number of serialization failures: 1 (2.439%)\n"));
        assert!(text
            .contains("number of transactions retried: 0 (0.000%)\ntotal number of retries: 0\n"));
        // 2 s * 2 clients / 41 transactions
        assert!(
            text.contains("latency average = 97.561 ms (including failures)\n"),
            "{text}"
        );
        assert!(!text.contains("stddev"));
    }

    #[test]
    fn extra_lines_show_percentiles_goodput_and_sqlstates() {
        let mut c = TxnCounters::default();
        for i in 0..100 {
            c.record_success(1000 + i * 10, None, u64::from(i % 4 != 0));
        }
        c.record_error_code("40001");
        let rec = record(BenchInfo::default(), c, vec![]);
        let text = extra_lines(&rec);
        assert!(
            text.starts_with("latency percentiles: p50 = 1.49"),
            "{text}"
        );
        assert!(
            text.contains("goodput = 37.500000 per s (75 useful of 100 committed transactions)")
        );
        assert!(text.contains("errors by SQLSTATE: 40001 = 1"));
        assert!(
            !text.contains("connection phase"),
            "none under -C or in old records"
        );
        let mut rec = rec;
        rec.connect = hotbench_results::ConnectPhase {
            duration_ms: 812.5,
            connections: 1000,
            concurrency: 16,
            retries: 3,
        };
        assert!(extra_lines(&rec).contains(
            "connection phase: 1000 connections in 812.500 ms, up to 16 at a time, 3 retries\n"
        ));
    }
}
