//! [`RunSettings`]: the settings every command that runs the engine takes, `run`, `scenario
//! run`, `sweep` and `demo` alike. Each field is one setting, declared once: the clap
//! attribute is its flag and default, its value parser its validation, its serde name its
//! field in the result record's `config`. To add a setting, add a field here and read it where
//! it acts (`RunConfig::settings` in the engine); `docs/results.md` documents its field.

use clap::{ArgAction, Args};
use serde::{Deserialize, Serialize};

use crate::duration::{parse_duration_us, Unit};
use crate::perturb::Perturbation;
use crate::perturb_cmd::PerturbCmd;
use crate::values::{duration_at_least_10ms, int_in, on_off, INT_MAX};
use crate::workload::OnDisconnect;

/// Help heading of pgbench's benchmarking options; given in run mode only (`-i` refuses them).
pub const BENCHMARKING: &str = "Benchmarking options";
/// Help heading of hotbench's own options; like pgbench's, refused with `-i`.
pub const HOTBENCH: &str = "hotbench options";

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSettings {
    /// Number of threads (default: 1 for run and sweep, as pgbench; one per core for
    /// scenario ladders; never more than clients)
    #[arg(short = 'j', long = "jobs", value_name = "NUM", value_parser = jobs, help_heading = BENCHMARKING)]
    #[serde(skip)]
    pub jobs: Option<usize>,
    /// Set random seed ("time", "rand", integer; default: PGBENCH_RANDOM_SEED, else the time)
    #[arg(long = "random-seed", value_name = "SEED", help_heading = BENCHMARKING)]
    // The record keeps the seed actually used (`config.random_seed`), not this spelling.
    #[serde(skip)]
    pub random_seed: Option<String>,
    /// Add this delay to every client-server round trip (e.g. 1ms) to emulate network latency
    #[arg(long = "rtt", value_name = "DUR", default_value = "0", value_parser = rtt, help_heading = HOTBENCH)]
    pub rtt_us: i64,
    /// Add this delay after each result that leaves the transaction open (the client's own time between a transaction's statements, while it holds the transaction's locks), on top of --rtt
    #[arg(long = "think", value_name = "DUR", default_value = "0", value_parser = think, help_heading = HOTBENCH)]
    pub think_us: i64,
    /// Timeline interval of the result
    #[arg(long = "interval", value_name = "DUR", default_value = "1s", value_parser = interval, help_heading = HOTBENCH)]
    pub interval_us: i64,
    /// On a lost connection: reconnect or abort the client like pgbench
    #[arg(long = "on-disconnect", value_name = "reconnect|abort", default_value = "reconnect", value_parser = OnDisconnect::parse, help_heading = HOTBENCH)]
    pub on_disconnect: OnDisconnect,
    /// Distinct values kept per --key variable before counts become estimates
    #[arg(long = "key-capacity", value_name = "N", default_value = "1000", value_parser = key_capacity, help_heading = HOTBENCH)]
    pub key_capacity: usize,
    /// Server probes (wait events, locks, table and statement statistics): on or off
    #[arg(long = "probe", value_name = "on|off", default_value = "on", action = ArgAction::Set, value_parser = probe, help_heading = HOTBENCH)]
    pub probe: bool,
    /// Wait-event sampling period of the probes (table and statement statistics follow
    /// --interval)
    #[arg(long = "probe-interval", value_name = "DUR", default_value = "100ms", value_parser = probe_interval, help_heading = HOTBENCH)]
    pub probe_interval_us: i64,
    /// Run the clients through a throwaway PgBouncer hotbench starts in front of the server:
    /// pgbouncer[:transaction|session] (default transaction)
    #[arg(long = "pooler", value_name = "pgbouncer[:MODE]", value_parser = PoolerSpec::parse, help_heading = HOTBENCH)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooler: Option<PoolerSpec>,
    /// Server connections per pool of that PgBouncer (implies --pooler pgbouncer; default
    /// 20); sweep takes a list (4,8,16,32,64) at fixed clients
    #[arg(long = "pool-size", value_name = "N[,N...]", value_parser = PoolSizes::parse, help_heading = HOTBENCH)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_size: Option<PoolSizes>,
    /// The pgbouncer program (or its directory) for --pooler (default: PATH, then /usr/sbin)
    #[arg(long = "pgbouncer-bin", value_name = "PATH", help_heading = HOTBENCH)]
    #[serde(skip)]
    pub pgbouncer_bin: Option<std::path::PathBuf>,
    /// Your own PgBouncer's admin console (postgresql://USER@HOST:PORT/pgbouncer), read during
    /// the run when the clients go through it (the target you name is that PgBouncer)
    #[arg(long = "pooler-admin", value_name = "URL", help_heading = HOTBENCH)]
    // A URL may hold a password; the record's `pooler` says what the console showed.
    #[serde(skip)]
    pub pooler_admin: Option<String>,
    /// Do something to the server during the run and measure the recovery: AT:KIND[=ARGS]
    /// (AT 10s or every30s; kinds checkpoint, vacuum[=TABLE], vacuum-full=TABLE,
    /// analyze=TABLE, ddl-lock=TABLE,DURATION, xmin-hold=DURATION, long-read=TABLE,DURATION,
    /// terminate=N, terminate-all, restart[=fast|immediate], pause=DURATION,
    /// rtt=VALUE,DURATION, rate=R,DURATION, sql=STATEMENT); repeatable
    #[arg(long = "perturb", value_name = "AT:KIND[=ARGS]", action = ArgAction::Append, value_parser = Perturbation::parse, help_heading = HOTBENCH)]
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::perturb::lenient"
    )]
    pub perturb: Vec<Perturbation>,
    /// How long the goodput must stay back after a --perturb for its time to recover to count
    #[arg(long = "recovery-hold", value_name = "DUR", default_value = "2s", value_parser = recovery_hold, help_heading = HOTBENCH)]
    pub recovery_hold_us: i64,
    /// Your own command for a perturbation of a server hotbench did not start: KIND=SHELL
    /// COMMAND (KIND restart or pause; run with sh -c, e.g. 'restart=patronictl switchover
    /// --force'); repeatable
    #[arg(long = "perturb-cmd", value_name = "KIND=COMMAND", action = ArgAction::Append, value_parser = PerturbCmd::parse, help_heading = HOTBENCH)]
    // A command line may carry a token: the record keeps what each firing did, not this.
    #[serde(skip)]
    pub perturb_cmd: Vec<PerturbCmd>,
}

/// `--pool-size`: one size, or a sweep's list, each at least 1, none twice (`4,4` would
/// silently be a one-point sweep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PoolSizes(pub Vec<u32>);

impl PoolSizes {
    pub fn parse(v: &str) -> Result<PoolSizes, String> {
        let list = crate::values::ListOption {
            what: "pool size",
            option: "--pool-size",
            example: "4,8,16",
        };
        let mut out: Vec<u32> = Vec::new();
        for part in list.entries(v)? {
            let n = int_in(part, "--pool-size", 1, 100_000)? as u32;
            if out.contains(&n) {
                return Err(format!(
                    "invalid --pool-size \"{v}\": the pool size {n} is given twice (each point of a sweep is one size)"
                ));
            }
            out.push(n);
        }
        Ok(PoolSizes(out))
    }
}

/// `--pooler`: the pooler hotbench starts in front of the server, in the record as
/// `pgbouncer:MODE` (the mode spelled out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolerSpec {
    /// hotbench's own PgBouncer, pooling in this mode.
    PgBouncer(PoolMode),
}

/// How a PgBouncer hands server connections to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// A server connection per transaction (PgBouncer's busiest, and the default here).
    Transaction,
    /// A server connection per client session.
    Session,
}

impl PoolerSpec {
    /// `pgbouncer[:transaction|session]`.
    pub fn parse(v: &str) -> Result<PoolerSpec, String> {
        let (kind, mode) = v.split_once(':').unwrap_or((v, "transaction"));
        match (kind, mode) {
            ("pgbouncer", "transaction") => Ok(PoolerSpec::PgBouncer(PoolMode::Transaction)),
            ("pgbouncer", "session") => Ok(PoolerSpec::PgBouncer(PoolMode::Session)),
            ("pgbouncer", _) => Err(format!(
                "invalid --pooler \"{v}\": the pool mode is transaction or session"
            )),
            _ => Err(format!(
                "invalid --pooler \"{v}\": expected pgbouncer, pgbouncer:transaction or pgbouncer:session"
            )),
        }
    }

    /// The pool mode.
    pub fn mode(self) -> PoolMode {
        match self {
            PoolerSpec::PgBouncer(m) => m,
        }
    }
}

impl std::fmt::Display for PoolerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let PoolerSpec::PgBouncer(mode) = self;
        let mode = match mode {
            PoolMode::Transaction => "transaction",
            PoolMode::Session => "session",
        };
        write!(f, "pgbouncer:{mode}")
    }
}

impl Serialize for PoolerSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PoolerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PoolerSpec, D::Error> {
        let text = String::deserialize(d)?;
        PoolerSpec::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// `-j`'s default, which differs by command on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadsDefault {
    /// pgbench's one thread: `run` and `sweep` stay drop-in replacements.
    One,
    /// One per core: ladders are hotbench's own, and one thread would bound the clients.
    PerCore,
}

impl RunSettings {
    /// Worker threads for `clients` clients: `-j`, else the command's default, never more
    /// than one per client.
    pub fn threads(&self, clients: usize, default: ThreadsDefault) -> usize {
        let wanted = self.jobs.unwrap_or_else(|| match default {
            ThreadsDefault::One => 1,
            ThreadsDefault::PerCore => std::thread::available_parallelism().map_or(1, |n| n.get()),
        });
        wanted.clamp(1, clients.max(1))
    }
}

impl Default for RunSettings {
    /// Every setting at its flag's default: the clap attribute above is the only place a
    /// default is written, read here from the flags' declaration (no command line is
    /// parsed) and taken through the flag's own value parser. What a record written before a
    /// setting existed reads as.
    fn default() -> RunSettings {
        let flags = Declared(RunSettings::augment_args(clap::Command::new("defaults")));
        RunSettings {
            jobs: None,
            random_seed: None,
            rtt_us: flags.default("rtt_us", rtt),
            think_us: flags.default("think_us", think),
            interval_us: flags.default("interval_us", interval),
            on_disconnect: flags.default("on_disconnect", OnDisconnect::parse),
            key_capacity: flags.default("key_capacity", key_capacity),
            probe: flags.default("probe", probe),
            probe_interval_us: flags.default("probe_interval_us", probe_interval),
            pooler: None,
            pool_size: None,
            pgbouncer_bin: None,
            pooler_admin: None,
            perturb: Vec::new(),
            perturb_cmd: Vec::new(),
            recovery_hold_us: flags.default("recovery_hold_us", recovery_hold),
        }
    }
}

/// The flags as declared (clap's `Command`), for their defaults.
struct Declared(clap::Command);

impl Declared {
    /// The default of the flag of field `id`, through its value parser `parse`.
    fn default<T>(&self, id: &str, parse: fn(&str) -> Result<T, String>) -> T {
        let text = self
            .0
            .get_arguments()
            .find(|a| a.get_id() == id)
            .and_then(|a| a.get_default_values().first())
            .and_then(|v| v.to_str());
        // No user input reaches this: the defaults are ours, and a test reads every one.
        match text.map(parse) {
            Some(Ok(v)) => v,
            Some(Err(e)) => unreachable!("the default of {id} does not parse: {e}"),
            None => unreachable!("the flag of {id} declares no default"),
        }
    }
}

fn jobs(v: &str) -> Result<usize, String> {
    int_in(v, "-j/--jobs", 1, INT_MAX).map(|n| n as usize)
}

fn rtt(v: &str) -> Result<i64, String> {
    parse_duration_us(v, Unit::Millis)
}

fn think(v: &str) -> Result<i64, String> {
    parse_duration_us(v, Unit::Millis)
}

fn interval(v: &str) -> Result<i64, String> {
    duration_at_least_10ms(v, "--interval", Unit::Seconds)
}

fn probe_interval(v: &str) -> Result<i64, String> {
    duration_at_least_10ms(v, "--probe-interval", Unit::Millis)
}

fn probe(v: &str) -> Result<bool, String> {
    on_off(v, "--probe")
}

fn recovery_hold(v: &str) -> Result<i64, String> {
    parse_duration_us(v, Unit::Seconds).map_err(|e| format!("--recovery-hold: {e}"))
}

fn key_capacity(v: &str) -> Result<usize, String> {
    int_in(v, "--key-capacity", 1, 1_000_000).map(|n| n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Command lines are parsed in one place, the binary's `main` (its tests parse every
    // command's flags into these settings); here the value parsers are called directly.

    #[test]
    fn defaults_are_the_flags_defaults() {
        let d = RunSettings::default();
        assert_eq!(
            (d.rtt_us, d.interval_us, d.key_capacity),
            (0, 1_000_000, 1000)
        );
        assert_eq!((d.probe, d.probe_interval_us), (true, 100_000));
        assert_eq!(d.on_disconnect, OnDisconnect::Reconnect);
        assert_eq!((d.jobs, d.think_us), (None, 0));
        assert_eq!(d.recovery_hold_us, 2_000_000);
        // Every flag with a default is one Default reads: a flag added with a default and
        // left out of Default would not compile (a field), nor would a wrong id pass.
        let flags = RunSettings::augment_args(clap::Command::new("x"));
        let with_default: Vec<&str> = flags
            .get_arguments()
            .filter(|a| !a.get_default_values().is_empty())
            .map(|a| a.get_id().as_str())
            .collect();
        let v = serde_json::to_value(&d).unwrap();
        for id in with_default {
            assert!(v.get(id).is_some(), "{id} is not a record field");
        }
    }

    #[test]
    fn values_parse_into_typed_values_with_pgbench_messages() {
        assert_eq!(jobs("4"), Ok(4));
        assert_eq!(rtt("2"), Ok(2000));
        assert_eq!(interval("250ms"), Ok(250_000));
        assert_eq!(probe("off"), Ok(false));
        assert_eq!(think("2.5ms"), Ok(2500));
        assert_eq!(recovery_hold("5"), Ok(5_000_000));
        assert!(recovery_hold("-1s")
            .unwrap_err()
            .starts_with("--recovery-hold: "));
        let e = jobs("0").unwrap_err();
        assert!(
            e.contains("-j/--jobs must be in range 1..2147483647"),
            "{e}"
        );
        let e = interval("1ms").unwrap_err();
        assert!(e.contains("must be at least 10ms"), "{e}");
    }

    #[test]
    fn pooler_settings_parse_and_stay_out_of_the_record_when_unset() {
        let s = RunSettings {
            pooler: Some(PoolerSpec::parse("pgbouncer").unwrap()),
            pool_size: Some(PoolSizes::parse("4,8,16").unwrap()),
            ..Default::default()
        };
        assert_eq!(s.pooler, Some(PoolerSpec::PgBouncer(PoolMode::Transaction)));
        assert_eq!(s.pool_size, Some(PoolSizes(vec![4, 8, 16])));
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(
            (v["pooler"].as_str(), &v["pool_size"]),
            (
                Some("pgbouncer:transaction"),
                &serde_json::json!([4, 8, 16])
            )
        );
        let back: RunSettings = serde_json::from_value(v).unwrap();
        assert_eq!(back.pooler, s.pooler);
        let s = RunSettings {
            pooler: Some(PoolerSpec::parse("pgbouncer:session").unwrap()),
            pooler_admin: Some("postgresql://u:pw@h/pgbouncer".into()),
            ..Default::default()
        };
        assert_eq!(s.pooler.map(PoolerSpec::mode), Some(PoolMode::Session));
        assert!(
            !serde_json::to_string(&s).unwrap().contains("pw@"),
            "no URL in the record"
        );
        let d = serde_json::to_value(RunSettings::default()).unwrap();
        assert!(
            d.get("pooler").is_none() && d.get("pool_size").is_none(),
            "{d}"
        );
        for (e, msg) in [
            (
                PoolerSpec::parse("pgpool").unwrap_err(),
                "expected pgbouncer",
            ),
            (
                PoolerSpec::parse("pgbouncer:statement").unwrap_err(),
                "transaction or session",
            ),
            (
                PoolSizes::parse("0").unwrap_err(),
                "--pool-size must be in range 1..100000",
            ),
            (PoolSizes::parse(",").unwrap_err(), "invalid pool size \"\""),
            (
                PoolSizes::parse("4,,8").unwrap_err(),
                "invalid pool size \"\" in --pool-size \"4,,8\"",
            ),
            (
                PoolSizes::parse("4,4").unwrap_err(),
                "invalid --pool-size \"4,4\": the pool size 4 is given twice",
            ),
        ] {
            assert!(e.contains(msg), "{e}");
        }
    }

    #[test]
    fn perturb_is_recorded_only_when_given() {
        let s = RunSettings {
            perturb: ["2s:checkpoint", "every10s:ddl-lock=pgbench_accounts,1s"]
                .iter()
                .map(|p| Perturbation::parse(p).unwrap())
                .collect(),
            ..Default::default()
        };
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["perturb"][1], "every10s:ddl-lock=pgbench_accounts,1s");
        let back: RunSettings = serde_json::from_value(v).unwrap();
        assert_eq!(back.perturb, s.perturb);
        let d = serde_json::to_value(RunSettings::default()).unwrap();
        assert!(d.get("perturb").is_none(), "{d}");
        let e = Perturbation::parse("2s:restart=slow").unwrap_err();
        assert!(e.contains("invalid --perturb \"2s:restart=slow\""), "{e}");
        assert!(e.contains("fast or immediate"), "{e}");
        // The user's command: parsed, never in the record (it may hold a token).
        let s = RunSettings {
            perturb_cmd: vec![
                PerturbCmd::parse("restart=PGPASSWORD=x pg_ctl restart").unwrap(),
                PerturbCmd::parse("pause=docker pause pg").unwrap(),
            ],
            ..Default::default()
        };
        let v = serde_json::to_value(&s).unwrap();
        assert!(!v.to_string().contains("pg_ctl"), "{v}");
        let e = PerturbCmd::parse("vacuum=x").unwrap_err();
        assert!(e.contains("stands for restart or pause"), "{e}");
    }

    #[test]
    fn threads_follow_jobs_then_the_commands_default_never_above_clients() {
        let mut s = RunSettings::default();
        assert_eq!(s.threads(8, ThreadsDefault::One), 1);
        assert!(s.threads(1000, ThreadsDefault::PerCore) >= 1);
        assert_eq!(s.threads(1, ThreadsDefault::PerCore), 1);
        s.jobs = Some(16);
        assert_eq!(s.threads(4, ThreadsDefault::One), 4);
    }

    #[test]
    fn the_record_fields_round_trip_and_missing_ones_default() {
        let s = RunSettings {
            rtt_us: 3000,
            ..Default::default()
        };
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["rtt_us"], 3000);
        assert!(v.get("jobs").is_none(), "{v}");
        let back: RunSettings = serde_json::from_value(v).unwrap();
        assert_eq!(back.rtt_us, 3000);
        let old: RunSettings = serde_json::from_str(r#"{"rtt_us": 5}"#).unwrap();
        assert_eq!((old.rtt_us, old.key_capacity), (5, 1000));
    }
}
