//! `--perturb AT:KIND[=ARGS]`: something done to the server or the clients at a time during
//! the run (a checkpoint, a DDL lock held, backends terminated, a restart, a pause, more
//! network latency, a burst of load), parsed once here into typed values so the engine's
//! perturbation driver and the record's `config.perturb` read the same thing. The spelling
//! round-trips: [`Perturbation`]'s `Display` is what the record stores and what
//! [`Perturbation::parse`] reads back. `--perturb-cmd` (the user's own command for a kind)
//! is `perturb_cmd.rs`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::duration::{format_us, parse_duration_us, Unit};

/// The kinds this build executes, as the usage messages list them.
pub const KINDS: &str = "checkpoint, vacuum[=TABLE], vacuum-full=TABLE, analyze=TABLE, \
                         ddl-lock=TABLE,DURATION, xmin-hold=DURATION, long-read=TABLE,DURATION, \
                         terminate=N, terminate-all, restart[=fast|immediate], pause=DURATION, \
                         rtt=VALUE,DURATION, rate=R,DURATION, sql=STATEMENT";

/// The shortest `everyDUR` period: a perturbation is a transition, not a steady load.
const MIN_PERIOD_US: i64 = 100_000;
/// PostgreSQL's identifier length limit (NAMEDATALEN - 1), in bytes.
const MAX_IDENT_BYTES: usize = 63;

/// When a perturbation happens, counted from the benchmark's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// Once, this many µs into the run (`10s`).
    Once(i64),
    /// At every multiple of this period (`every30s`: at 30 s, 60 s, …).
    Every(i64),
}

/// A table named by a perturbation: `name` or `schema.name`, each part taken as written
/// (case and all) and quoted as an identifier where it is used in SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    pub schema: Option<String>,
    pub name: String,
}

impl TableName {
    /// The name as SQL: each part double-quoted, inner quotes doubled.
    pub fn quoted(&self) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        match &self.schema {
            Some(s) => format!("{}.{}", q(s), q(&self.name)),
            None => q(&self.name),
        }
    }

    fn parse(text: &str, spec: &str) -> Result<TableName, String> {
        let parts: Vec<&str> = text.split('.').collect();
        if parts.len() > 2 {
            return Err(bad(
                spec,
                &format!("table \"{text}\" has more than one dot (TABLE or SCHEMA.TABLE)"),
            ));
        }
        for p in &parts {
            if p.is_empty() {
                return Err(bad(spec, "a table name is missing"));
            }
            if p.len() > MAX_IDENT_BYTES || p.chars().any(char::is_control) {
                return Err(bad(
                    spec,
                    &format!(
                        "\"{p}\" is not a table name (at most 63 bytes, no control characters)"
                    ),
                ));
            }
        }
        Ok(match parts.as_slice() {
            [schema, name] => TableName {
                schema: Some(schema.to_string()),
                name: name.to_string(),
            },
            _ => TableName {
                schema: None,
                name: text.to_string(),
            },
        })
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.schema {
            Some(s) => write!(f, "{s}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What is done to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `CHECKPOINT`.
    Checkpoint,
    /// `VACUUM` of one table, or of the whole database.
    Vacuum(Option<TableName>),
    /// `VACUUM FULL` of one table (rewritten under an ACCESS EXCLUSIVE lock).
    VacuumFull(TableName),
    /// `ANALYZE` of one table.
    Analyze(TableName),
    /// An ACCESS EXCLUSIVE lock held for a while, as a migration's `ALTER TABLE` does.
    DdlLock { table: TableName, hold_us: i64 },
    /// A REPEATABLE READ snapshot held for a while (the xmin horizon pinned).
    XminHold { hold_us: i64 },
    /// An analytics read beside the load: the table scanned again and again for a while in
    /// one REPEATABLE READ transaction.
    LongRead { table: TableName, hold_us: i64 },
    /// N of the run's client backends terminated.
    Terminate(u32),
    /// Every client backend of the run terminated.
    TerminateAll,
    /// The server restarted (a server hotbench started, or `--perturb-cmd`).
    Restart(RestartMode),
    /// Every process of the server but the postmaster stopped (SIGSTOP) for a while, then
    /// continued (a server hotbench started, or `--perturb-cmd`).
    Pause { hold_us: i64 },
    /// The emulated network round trip (`--rtt`) set to `rtt_us` for a while.
    Rtt { rtt_us: i64, hold_us: i64 },
    /// The open-loop rate (`-R`) set to `per_s` transactions per second (the whole run's, as
    /// `-R` is) for a while.
    Rate { per_s: f64, hold_us: i64 },
    /// A statement of the user's, run on its own connection (a scenario's `kill_a_consumer()`).
    Sql(String),
}

/// How `restart` stops the server before starting it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartMode {
    /// Fast shutdown (SIGINT): sessions terminated (57P01), a checkpoint, then the start.
    Fast,
    /// Immediate shutdown (SIGQUIT): sessions cut at once, crash recovery at the start.
    Immediate,
}

/// Where a kind acts, which decides who fires it in a sharded run (`--shard I/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The server as a whole (a checkpoint, a lock, a restart): one shard fires it for the
    /// run (shard 0), not every one.
    Server,
    /// The run's own clients (their backends terminated, their latency, their rate): every
    /// shard does it to its own.
    Clients,
}

impl Kind {
    /// The kind's name as the flag spells it (`ddl-lock`).
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Checkpoint => "checkpoint",
            Kind::Vacuum(_) => "vacuum",
            Kind::VacuumFull(_) => "vacuum-full",
            Kind::Analyze(_) => "analyze",
            Kind::DdlLock { .. } => "ddl-lock",
            Kind::XminHold { .. } => "xmin-hold",
            Kind::LongRead { .. } => "long-read",
            Kind::Terminate(_) => "terminate",
            Kind::TerminateAll => "terminate-all",
            Kind::Restart(_) => "restart",
            Kind::Pause { .. } => "pause",
            Kind::Rtt { .. } => "rtt",
            Kind::Rate { .. } => "rate",
            Kind::Sql(_) => "sql",
        }
    }

    /// Who fires it in a sharded run.
    pub fn scope(&self) -> Scope {
        match self {
            Kind::Terminate(_) | Kind::TerminateAll | Kind::Rtt { .. } | Kind::Rate { .. } => {
                Scope::Clients
            }
            _ => Scope::Server,
        }
    }

    /// Whether it acts on the server's processes (restart, pause), which hotbench can do
    /// only to a server it started, or through the user's `--perturb-cmd`.
    pub fn needs_server_process(&self) -> bool {
        matches!(self, Kind::Restart(_) | Kind::Pause { .. })
    }

    /// The arguments as the flag spells them (`pgbench_accounts,5s`), empty for none.
    pub fn args(&self) -> String {
        match self {
            Kind::Checkpoint | Kind::TerminateAll | Kind::Vacuum(None) => String::new(),
            Kind::Vacuum(Some(t)) | Kind::VacuumFull(t) | Kind::Analyze(t) => t.to_string(),
            Kind::DdlLock { table, hold_us } | Kind::LongRead { table, hold_us } => {
                format!("{table},{}", format_us(*hold_us))
            }
            Kind::XminHold { hold_us } | Kind::Pause { hold_us } => format_us(*hold_us),
            Kind::Terminate(n) => n.to_string(),
            Kind::Restart(RestartMode::Fast) => "fast".into(),
            Kind::Restart(RestartMode::Immediate) => "immediate".into(),
            Kind::Rtt { rtt_us, hold_us } => {
                format!("{},{}", at_text(*rtt_us), format_us(*hold_us))
            }
            Kind::Rate { per_s, hold_us } => format!("{per_s},{}", format_us(*hold_us)),
            Kind::Sql(sql) => sql.clone(),
        }
    }

    /// How long the kind holds what it holds, when it has a duration.
    pub fn hold_us(&self) -> Option<i64> {
        match self {
            Kind::DdlLock { hold_us, .. }
            | Kind::XminHold { hold_us }
            | Kind::LongRead { hold_us, .. }
            | Kind::Pause { hold_us }
            | Kind::Rtt { hold_us, .. }
            | Kind::Rate { hold_us, .. } => Some(*hold_us),
            _ => None,
        }
    }

    fn parse(text: &str, spec: &str) -> Result<Kind, String> {
        let (name, args) = match text.split_once('=') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let need = |what: &str| -> Result<&str, String> {
            args.filter(|a| !a.is_empty())
                .ok_or_else(|| bad(spec, &format!("{name} needs ={what}")))
        };
        let none = |k: Kind| match args {
            Some(_) => Err(bad(spec, &format!("{name} takes no arguments"))),
            None => Ok(k),
        };
        match name {
            "checkpoint" => none(Kind::Checkpoint),
            "terminate-all" => none(Kind::TerminateAll),
            "vacuum" => match args {
                None => Ok(Kind::Vacuum(None)),
                Some(_) => Ok(Kind::Vacuum(Some(TableName::parse(need("TABLE")?, spec)?))),
            },
            "vacuum-full" => Ok(Kind::VacuumFull(TableName::parse(need("TABLE")?, spec)?)),
            "analyze" => Ok(Kind::Analyze(TableName::parse(need("TABLE")?, spec)?)),
            "ddl-lock" | "long-read" => {
                let a = need("TABLE,DURATION")?;
                let (table, dur) = a
                    .rsplit_once(',')
                    .ok_or_else(|| bad(spec, &format!("{name} needs =TABLE,DURATION")))?;
                let (table, hold_us) = (TableName::parse(table, spec)?, hold(dur, spec)?);
                Ok(match name {
                    "ddl-lock" => Kind::DdlLock { table, hold_us },
                    _ => Kind::LongRead { table, hold_us },
                })
            }
            "xmin-hold" => Ok(Kind::XminHold {
                hold_us: hold(need("DURATION")?, spec)?,
            }),
            "terminate" => {
                let n = need("N")?;
                match n.trim().parse::<u32>() {
                    Ok(n) if n >= 1 => Ok(Kind::Terminate(n)),
                    _ => Err(bad(
                        spec,
                        &format!("terminate=N needs a whole number of backends, at least 1 (got \"{n}\")"),
                    )),
                }
            }
            "restart" => match args {
                None | Some("fast") => Ok(Kind::Restart(RestartMode::Fast)),
                Some("immediate") => Ok(Kind::Restart(RestartMode::Immediate)),
                Some(a) => Err(bad(
                    spec,
                    &format!("restart takes fast or immediate (got \"{a}\")"),
                )),
            },
            "pause" => Ok(Kind::Pause {
                hold_us: hold(need("DURATION")?, spec)?,
            }),
            "rtt" => {
                let (v, dur) = pair(need("VALUE,DURATION")?, name, "VALUE,DURATION", spec)?;
                let rtt_us = parse_duration_us(v, Unit::Millis).map_err(|e| bad(spec, &e))?;
                Ok(Kind::Rtt {
                    rtt_us,
                    hold_us: hold(dur, spec)?,
                })
            }
            "rate" => {
                let (r, dur) = pair(need("R,DURATION")?, name, "R,DURATION", spec)?;
                Ok(Kind::Rate {
                    per_s: rate(r, spec)?,
                    hold_us: hold(dur, spec)?,
                })
            }
            "sql" => {
                let sql = need("STATEMENT")?;
                if sql.trim().is_empty() || sql.chars().any(|c| c.is_control() && c != '\t') {
                    return Err(bad(
                        spec,
                        "sql=STATEMENT needs a statement on one line (no control characters)",
                    ));
                }
                Ok(Kind::Sql(sql.to_string()))
            }
            other => Err(bad(
                spec,
                &format!("unknown kind \"{other}\" (kinds: {KINDS})"),
            )),
        }
    }
}

/// One `--perturb`: when, and what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Perturbation {
    pub at: At,
    pub kind: Kind,
}

impl Perturbation {
    /// `AT:KIND[=ARGS]`: `AT` a duration into the run (`10s`, `1500ms`; a bare number is
    /// seconds) or `everyDURATION`.
    pub fn parse(text: &str) -> Result<Perturbation, String> {
        let spec = text;
        let (at, kind) = text.trim().split_once(':').ok_or_else(|| {
            bad(spec, "expected AT:KIND[=ARGS], e.g. 10s:checkpoint or every30s:ddl-lock=pgbench_accounts,5s")
        })?;
        let at = match at.strip_prefix("every") {
            Some(period) => {
                let us = parse_duration_us(period, Unit::Seconds).map_err(|e| bad(spec, &e))?;
                if us < MIN_PERIOD_US {
                    return Err(bad(spec, "the period of every… must be at least 100ms"));
                }
                At::Every(us)
            }
            None => At::Once(parse_duration_us(at, Unit::Seconds).map_err(|e| bad(spec, &e))?),
        };
        Ok(Perturbation {
            at,
            kind: Kind::parse(kind.trim(), spec)?,
        })
    }

    /// When it first happens, µs into the run.
    pub fn first_us(&self) -> i64 {
        match self.at {
            At::Once(us) | At::Every(us) => us,
        }
    }
}

impl fmt::Display for Perturbation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            At::Once(us) => write!(f, "{}", at_text(us))?,
            At::Every(us) => write!(f, "every{}", at_text(us))?,
        }
        write!(f, ":{}", self.kind.name())?;
        let args = self.kind.args();
        if !args.is_empty() {
            write!(f, "={args}")?;
        }
        Ok(())
    }
}

impl From<Perturbation> for String {
    fn from(p: Perturbation) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for Perturbation {
    type Error = String;
    fn try_from(s: String) -> Result<Perturbation, String> {
        Perturbation::parse(&s)
    }
}

/// A time into the run with its unit (`0s`, not `0`, so `every0s` would still read back).
fn at_text(us: i64) -> String {
    match format_us(us) {
        z if z == "0" => "0s".into(),
        t => t,
    }
}

/// `config.perturb` read back: a spelling this build does not read (a kind added later) is
/// left out rather than making the whole record unreadable (readers are lenient).
pub fn lenient<'de, D>(d: D) -> Result<Vec<Perturbation>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let specs: Vec<String> = Vec::deserialize(d)?;
    Ok(specs
        .iter()
        .filter_map(|s| Perturbation::parse(s).ok())
        .collect())
}

/// `A,B` split at the last comma (`VALUE,DURATION`).
fn pair<'a>(
    text: &'a str,
    name: &str,
    what: &str,
    spec: &str,
) -> Result<(&'a str, &'a str), String> {
    text.rsplit_once(',')
        .ok_or_else(|| bad(spec, &format!("{name} needs ={what}")))
}

/// A rate in transactions per second: a finite number above 0.
fn rate(text: &str, spec: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1e9 => Ok(r),
        _ => Err(bad(
            spec,
            &format!(
                "rate=R,DURATION needs a rate above 0 transactions per second (got \"{text}\")"
            ),
        )),
    }
}

fn hold(text: &str, spec: &str) -> Result<i64, String> {
    let us = parse_duration_us(text, Unit::Seconds).map_err(|e| bad(spec, &e))?;
    if us <= 0 {
        return Err(bad(spec, "the duration must be more than 0"));
    }
    Ok(us)
}

fn bad(spec: &str, why: &str) -> String {
    format!("invalid --perturb \"{spec}\": {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(s: &str) -> Perturbation {
        Perturbation::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn table(name: &str) -> TableName {
        TableName {
            schema: None,
            name: name.into(),
        }
    }

    #[test]
    fn every_kind_parses_into_typed_values() {
        assert_eq!(ok("10s:checkpoint").at, At::Once(10_000_000));
        assert_eq!(ok("every30s:checkpoint").at, At::Every(30_000_000));
        assert_eq!(ok("2:vacuum").kind, Kind::Vacuum(None));
        assert_eq!(
            ok("2:vacuum=pgbench_accounts").kind,
            Kind::Vacuum(Some(table("pgbench_accounts")))
        );
        assert_eq!(
            ok("1500ms:analyze=public.T1").kind,
            Kind::Analyze(TableName {
                schema: Some("public".into()),
                name: "T1".into()
            })
        );
        assert_eq!(
            ok("10s:ddl-lock=accounts,5s").kind,
            Kind::DdlLock {
                table: table("accounts"),
                hold_us: 5_000_000
            }
        );
        assert_eq!(
            ok("1s:xmin-hold=60s").kind,
            Kind::XminHold {
                hold_us: 60_000_000
            }
        );
        assert_eq!(ok("1s:vacuum-full=t").kind, Kind::VacuumFull(table("t")));
        assert_eq!(
            ok("1s:long-read=t,2s").kind,
            Kind::LongRead {
                table: table("t"),
                hold_us: 2_000_000
            }
        );
        assert_eq!(ok("1s:terminate=3").kind, Kind::Terminate(3));
        assert_eq!(ok("1s:terminate-all").kind, Kind::TerminateAll);
        assert_eq!(ok("1s:restart").kind, Kind::Restart(RestartMode::Fast));
        assert_eq!(ok("1s:restart=fast").kind, Kind::Restart(RestartMode::Fast));
        assert_eq!(
            ok("1s:restart=immediate").kind,
            Kind::Restart(RestartMode::Immediate)
        );
        assert_eq!(ok("1s:pause=2s").kind, Kind::Pause { hold_us: 2_000_000 });
        assert_eq!(
            ok("1s:rtt=50,2s").kind,
            Kind::Rtt {
                rtt_us: 50_000,
                hold_us: 2_000_000
            }
        );
        assert_eq!(
            ok("1s:rate=800,1.5s").kind,
            Kind::Rate {
                per_s: 800.0,
                hold_us: 1_500_000
            }
        );
        assert_eq!(
            ok("every1s:sql=select kill_a_consumer()").kind,
            Kind::Sql("select kill_a_consumer()".into())
        );
        assert_eq!(
            ok("1s:sql=select a::int from t where b = 'x:y'").kind,
            Kind::Sql("select a::int from t where b = 'x:y'".into())
        );
        assert_eq!(ok("1s:restart").kind.scope(), Scope::Server);
        assert_eq!(ok("1s:rate=5,1s").kind.scope(), Scope::Clients);
        assert!(ok("1s:pause=1s").kind.needs_server_process());
        assert!(!ok("1s:rtt=1ms,1s").kind.needs_server_process());
    }

    #[test]
    fn the_spelling_round_trips_through_the_record() {
        for s in [
            "10s:checkpoint",
            "every30s:ddl-lock=a.b,500ms",
            "0s:terminate-all",
            "1.5s:xmin-hold=2m",
            "3s:vacuum",
            "3s:vacuum=t",
            "4s:terminate=2",
            "5s:vacuum-full=s.t",
            "6s:long-read=t,1.5s",
            "7s:restart=fast",
            "7s:restart=immediate",
            "8s:pause=500ms",
            "9s:rtt=50ms,2s",
            "9s:rtt=0s,2s",
            "10s:rate=812.5,3s",
            "11s:sql=select 1, 'a:b=c'",
        ] {
            let p = ok(s);
            let json = serde_json::to_string(&p).unwrap();
            let back: Perturbation = serde_json::from_str(&json).unwrap();
            assert_eq!(back, p, "{s} → {json}");
        }
        assert_eq!(ok("10:checkpoint").to_string(), "10s:checkpoint");
        assert_eq!(ok("0:checkpoint").to_string(), "0s:checkpoint");
        assert_eq!(ok("1s:restart").to_string(), "1s:restart=fast");
        assert_eq!(ok("1s:rtt=50,2").to_string(), "1s:rtt=50ms,2s");
        assert!(serde_json::from_str::<Perturbation>("\"10s:nope\"").is_err());
    }

    #[test]
    fn table_names_are_quoted_as_identifiers() {
        assert_eq!(table("accounts").quoted(), "\"accounts\"");
        let t = TableName::parse("my schema.we\"ird", "x").unwrap();
        assert_eq!(t.quoted(), "\"my schema\".\"we\"\"ird\"");
    }

    #[test]
    fn bad_input_is_one_clear_usage_message() {
        for (s, msg) in [
            ("checkpoint", "expected AT:KIND[=ARGS]"),
            ("soon:checkpoint", "invalid duration \"soon\""),
            ("-1s:checkpoint", "invalid duration"),
            ("every0s:checkpoint", "at least 100ms"),
            (
                "1s:explode",
                "unknown kind \"explode\" (kinds: checkpoint, vacuum[=TABLE]",
            ),
            (
                "1s:restart=slow",
                "restart takes fast or immediate (got \"slow\")",
            ),
            ("1s:pause", "pause needs =DURATION"),
            ("1s:pause=0s", "more than 0"),
            ("1s:rtt=50ms", "rtt needs =VALUE,DURATION"),
            ("1s:rtt=soon,1s", "invalid duration \"soon\""),
            ("1s:rate=0,1s", "a rate above 0"),
            ("1s:rate=nan,1s", "a rate above 0"),
            ("1s:rate=100", "rate needs =R,DURATION"),
            ("1s:sql=", "sql needs =STATEMENT"),
            ("1s:sql=select\n1", "on one line"),
            ("1s:checkpoint=now", "checkpoint takes no arguments"),
            ("1s:terminate-all=2", "terminate-all takes no arguments"),
            ("1s:analyze", "analyze needs =TABLE"),
            ("1s:analyze=", "analyze needs =TABLE"),
            ("1s:vacuum=", "vacuum needs =TABLE"),
            ("1s:ddl-lock=accounts", "ddl-lock needs =TABLE,DURATION"),
            ("1s:ddl-lock=,5s", "a table name is missing"),
            ("1s:ddl-lock=a,0s", "more than 0"),
            ("1s:ddl-lock=a,5 parsecs", "unknown unit"),
            ("1s:ddl-lock=a.b.c,5s", "more than one dot"),
            ("1s:xmin-hold", "xmin-hold needs =DURATION"),
            ("1s:vacuum-full", "vacuum-full needs =TABLE"),
            ("1s:long-read=t", "long-read needs =TABLE,DURATION"),
            ("1s:terminate=0", "at least 1 (got \"0\")"),
            ("1s:terminate=many", "got \"many\""),
            ("1s:analyze=a\u{7}b", "no control characters"),
        ] {
            let e = Perturbation::parse(s).unwrap_err();
            assert!(
                e.starts_with(&format!("invalid --perturb \"{s}\": ")),
                "{e}"
            );
            assert!(e.contains(msg), "{s}: {e}");
        }
        let long = format!("1s:analyze={}", "x".repeat(64));
        assert!(Perturbation::parse(&long)
            .unwrap_err()
            .contains("at most 63 bytes"));
    }

    #[test]
    fn a_record_with_a_kind_this_build_does_not_know_still_reads() {
        #[derive(Deserialize)]
        struct Config {
            #[serde(default, deserialize_with = "lenient")]
            perturb: Vec<Perturbation>,
        }
        let c: Config =
            serde_json::from_str(r#"{"perturb": ["5s:failover=x", "1s:checkpoint"]}"#).unwrap();
        assert_eq!(c.perturb, vec![ok("1s:checkpoint")]);
    }

    /// Fragments the parser cares about, glued at random: it never panics, and what it
    /// accepts reads back the same from its own spelling.
    fn spec() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just(":".to_string()),
            Just("=".to_string()),
            Just(",".to_string()),
            Just(".".to_string()),
            Just("every".to_string()),
            Just("ddl-lock".to_string()),
            Just("xmin-hold".to_string()),
            Just("terminate".to_string()),
            Just("vacuum".to_string()),
            Just("vacuum-full".to_string()),
            Just("long-read".to_string()),
            Just("checkpoint".to_string()),
            Just("restart".to_string()),
            Just("pause".to_string()),
            Just("rtt".to_string()),
            Just("rate".to_string()),
            Just("sql".to_string()),
            "[0-9]{1,4}(\\.[0-9])?(us|ms|s|m|h)?",
            "[a-zA-Z\"_ ]{0,6}",
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn random_specs_never_panic_and_round_trip(s in spec()) {
            match Perturbation::parse(&s) {
                Ok(p) => prop_assert_eq!(Perturbation::parse(&p.to_string()), Ok(p)),
                Err(e) => prop_assert!(e.starts_with("invalid --perturb")),
            }
        }
    }
}
