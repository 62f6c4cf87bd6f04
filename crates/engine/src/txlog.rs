//! pgbench's transaction log (`-l`): one line per transaction, or per aggregate interval with
//! `--aggregate-interval`, in pgbench's exact formats (of the `--pgbench-compat` version), to
//! `PREFIX.PID[.THREAD]`. The driver owns it and writes the core's `Event::Txn` records
//! (sampled by the core).

use std::fs::File;
use std::io::{BufWriter, Write};

use hotbench_results::pgbench_format::Traits;
use hotbench_stats::{FailureKind, SimpleStats};

use crate::clock::to_unix_us;
use crate::config::RunConfig;
use crate::events::TxnRecord;
use crate::slot::Outcome;

pub struct TxLog {
    out: BufWriter<File>,
    path: String,
    aggregate_us: i64,
    throttled: bool,
    max_tries: u32,
    failures_detailed: bool,
    latency_limited: bool,
    version: Traits,
    agg: Agg,
}

#[derive(Default)]
struct Agg {
    /// Unix µs of the interval start (0 = not started).
    start: i64,
    cnt: u64,
    latency: SimpleStats,
    lag: SimpleStats,
    serialization: u64,
    deadlock: u64,
    other: u64,
    skipped: u64,
    retried: u64,
    retries: u64,
}

impl TxLog {
    /// Opens thread `tid`'s log file when -l was given.
    pub fn open(cfg: &RunConfig, tid: usize) -> Result<Option<TxLog>, String> {
        let Some(log) = &cfg.log else { return Ok(None) };
        let pid = std::process::id();
        let path = if tid == 0 {
            format!("{}.{pid}", log.prefix)
        } else {
            format!("{}.{pid}.{tid}", log.prefix)
        };
        let file =
            File::create(&path).map_err(|e| format!("could not open logfile \"{path}\": {e}"))?;
        Ok(Some(TxLog {
            out: BufWriter::with_capacity(64 * 1024, file),
            path,
            aggregate_us: i64::from(log.aggregate_interval) * 1_000_000,
            throttled: cfg.is_throttled(),
            max_tries: cfg.retry.max_tries,
            failures_detailed: cfg.display.failures_detailed,
            latency_limited: cfg.latency_limit_us.is_some(),
            version: cfg.display.pgbench_compat.traits(),
            agg: Agg::default(),
        }))
    }

    /// Logs one record of the core.
    pub fn record(&mut self, r: &TxnRecord) {
        match r.outcome {
            Some(outcome) => self.transaction(
                r.client, r.txn_no, r.script, r.now, r.latency, r.lag, outcome, r.tries,
            ),
            None => self.skipped(r.client, r.txn_no, r.script, r.now),
        }
    }

    /// Logs one finished transaction; `now` is monotonic µs.
    #[allow(clippy::too_many_arguments)]
    fn transaction(
        &mut self,
        client: usize,
        txn_no: u64,
        script: usize,
        now: i64,
        latency: u64,
        lag: Option<u64>,
        outcome: Outcome,
        tries: u32,
    ) {
        let unix = to_unix_us(now);
        if self.aggregate_us > 0 {
            if self.agg.start == 0 {
                self.agg.start = unix / 1_000_000 * 1_000_000;
            }
            while unix >= self.agg.start + self.aggregate_us {
                self.write_agg();
                self.agg = Agg {
                    start: self.agg.start + self.aggregate_us,
                    ..Agg::default()
                };
            }
            let a = &mut self.agg;
            match outcome {
                Outcome::Committed => {
                    a.cnt += 1;
                    a.latency.add(latency as f64);
                    if let Some(l) = lag {
                        a.lag.add(l as f64);
                    }
                }
                Outcome::Failed(FailureKind::Serialization) => a.serialization += 1,
                Outcome::Failed(FailureKind::Deadlock) => a.deadlock += 1,
                Outcome::Failed(_) => a.other += 1,
            }
            if tries > 1 {
                a.retried += 1;
                a.retries += u64::from(tries - 1);
            }
            return;
        }
        let result = match outcome {
            Outcome::Committed => format!("{latency}"),
            Outcome::Failed(FailureKind::Serialization) if self.failures_detailed => {
                "serialization".into()
            }
            Outcome::Failed(FailureKind::Deadlock) if self.failures_detailed => "deadlock".into(),
            Outcome::Failed(_) if self.failures_detailed && self.version.other_failures => {
                "other".into()
            }
            Outcome::Failed(_) => "failed".into(),
        };
        let _ = write!(
            self.out,
            "{client} {txn_no} {result} {script} {} {}",
            unix / 1_000_000,
            unix % 1_000_000
        );
        if self.throttled {
            let _ = write!(self.out, " {}", lag.unwrap_or(0));
        }
        if self.max_tries != 1 {
            let _ = write!(self.out, " {}", tries.saturating_sub(1));
        }
        let _ = self.out.write_all(b"\n");
    }

    /// Logs a transaction skipped under -R/-L (`skipped` in pgbench's log).
    fn skipped(&mut self, client: usize, txn_no: u64, script: usize, now: i64) {
        if self.aggregate_us > 0 {
            self.agg.skipped += 1;
            return;
        }
        let unix = to_unix_us(now);
        let _ = writeln!(
            self.out,
            "{client} {txn_no} skipped {script} {} {}",
            unix / 1_000_000,
            unix % 1_000_000
        );
    }

    /// pgbench's aggregate line: interval_start num_transactions sum_latency sum_latency_2
    /// min_latency max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried retries
    /// serialization_failures deadlock_failures (15 fields), and other_sql_failures in
    /// pgbench 19 (16). As pgbench does, a field whose option is off is 0 (skipped without -L,
    /// retries with one try, failures by kind without --failures-detailed).
    fn write_agg(&mut self) {
        let a = &self.agg;
        let min_max = |s: &SimpleStats| {
            if s.count == 0 {
                (0.0, 0.0)
            } else {
                (s.min, s.max)
            }
        };
        let (lmin, lmax) = min_max(&a.latency);
        let (gmin, gmax) = min_max(&a.lag);
        let skipped = if self.latency_limited { a.skipped } else { 0 };
        let (retried, retries) = if self.max_tries != 1 {
            (a.retried, a.retries)
        } else {
            (0, 0)
        };
        let (ser, dead, other) = if self.failures_detailed {
            (a.serialization, a.deadlock, a.other)
        } else {
            (0, 0, 0)
        };
        let _ = write!(
            self.out,
            "{} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {skipped} {retried} {retries} {ser} {dead}",
            a.start / 1_000_000,
            a.cnt,
            a.latency.sum,
            a.latency.sum2,
            lmin,
            lmax,
            a.lag.sum,
            a.lag.sum2,
            gmin,
            gmax,
        );
        if self.version.other_failures {
            let _ = write!(self.out, " {other}");
        }
        let _ = self.out.write_all(b"\n");
    }

    /// Writes the last (partial) aggregate and flushes.
    pub fn finish(&mut self) -> Result<(), String> {
        if self.aggregate_us > 0 && self.agg.start != 0 {
            self.write_agg();
            self.agg = Agg::default();
        }
        self.out
            .flush()
            .map_err(|e| format!("could not write \"{}\": {e}", self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::PgbenchCompat;

    /// Logs one committed and one other-SQL-failed transaction with `--failures-detailed`,
    /// as pgbench version `version`, and returns the log's lines.
    fn logged(version: u32, aggregate_interval: u32) -> Vec<String> {
        let dir = std::env::temp_dir().join(format!(
            "hotbench-txlog-{}-{version}-{aggregate_interval}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("log").to_string_lossy().into_owned();
        let mut cfg = RunConfig::new(Vec::new(), hotbench_wire::Config::new(), "t".into());
        cfg.display.failures_detailed = true;
        cfg.display.pgbench_compat = PgbenchCompat::new(version).unwrap();
        cfg.log = Some(crate::config::LogConfig {
            prefix: prefix.clone(),
            aggregate_interval,
            sampling_rate: None,
        });
        let mut log = TxLog::open(&cfg, 0).unwrap().unwrap();
        log.transaction(0, 1, 0, 10, 500, None, Outcome::Committed, 1);
        let failed = Outcome::Failed(FailureKind::Other);
        log.transaction(0, 2, 0, 20, 0, None, failed, 1);
        log.finish().unwrap();
        let text = std::fs::read_to_string(format!("{prefix}.{}", std::process::id())).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn aggregate_lines_gain_other_failures_in_pgbench_19() {
        for (version, fields) in [(15, 15), (18, 15), (19, 16)] {
            let lines = logged(version, 1);
            assert_eq!(lines.len(), 1, "{lines:?}");
            let f: Vec<&str> = lines[0].split(' ').collect();
            assert_eq!(f.len(), fields, "pgbench {version}: {lines:?}");
            assert_eq!(f[1], "1", "one committed");
            if version == 19 {
                assert_eq!(f[15], "1", "one other failure");
            }
        }
    }

    #[test]
    fn an_other_failure_is_logged_as_other_from_pgbench_19() {
        let result = |version| logged(version, 0)[1].split(' ').nth(2).unwrap().to_string();
        assert_eq!(result(18), "failed");
        assert_eq!(result(19), "other");
    }
}
