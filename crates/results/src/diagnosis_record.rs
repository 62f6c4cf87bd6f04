//! The diagnosis document (`hotbench diagnose --json`, format [`DIAGNOSIS_FORMAT`]): what a
//! read-only sample of somebody else's server found — findings ranked by the share of active
//! session time they explain, each with its evidence and the lab scenario (and exact command)
//! that reproduces it — plus what was looked at, and the probe's record as the raw evidence.
//! Declared here (the diagnose crate writes it, the report crate renders it), documented field
//! by field in `docs/diagnosis.md`. Every field has a default, so a partial file (a server
//! gone mid-sample) still reads.

use serde::{Deserialize, Serialize};

use crate::probe_record::{ProbeRecord, XminHolder};

/// The `format` of a diagnosis document.
pub const DIAGNOSIS_FORMAT: &str = "hotbench-diagnosis/1";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Diagnosis {
    pub format: String,
    pub tool_version: String,
    pub status: DiagnosisStatus,
    /// The server, password masked.
    pub target: String,
    /// `version()`.
    pub server_version: String,
    /// `postgresql`, `yugabytedb` or `cockroachdb`.
    pub engine: String,
    /// The role diagnose connected as.
    pub role: String,
    /// Unix seconds when sampling began.
    pub started_at: f64,
    /// Seconds sampled.
    pub duration_s: f64,
    /// Wait-sampling period (ms); statements, blockers, tables and the xmin horizon are read
    /// every `stats_interval_ms`.
    pub interval_ms: f64,
    pub stats_interval_ms: f64,
    /// Cores of the server's machine, when known (a local server, or `--server-cores`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cores: Option<u32>,
    /// Most explaining first.
    pub findings: Vec<Finding>,
    /// Everything that was checked, with what was measured (so "nothing found" says what
    /// nothing means).
    pub looked_at: Vec<Check>,
    /// What could not be read, and why.
    pub notes: Vec<String>,
    /// The samples themselves: wait events and timeline, hot rows, statements, tables.
    pub probe: ProbeRecord,
    /// `--run`: the suggested ladder, run on the embedded server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabRun>,
}

impl Diagnosis {
    pub fn new() -> Diagnosis {
        Diagnosis {
            format: DIAGNOSIS_FORMAT.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        }
    }
}

/// How the diagnosis' sample ended (the findings cover what was sampled): the one status of
/// every sample's document.
pub use crate::sample_record::SampleStatus as DiagnosisStatus;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A session, slot or prepared transaction held the xmin horizon through the sample
    /// (first of the kinds: on an equal share it is the cause of a bloating table's slowness).
    XminHorizon,
    /// Lock waits concentrated on a few rows of a relation.
    #[default]
    HotRow,
    /// A table used as a queue: claims (`FOR UPDATE [SKIP LOCKED] … LIMIT`) and deletes.
    Queue,
    /// Waits on a heavyweight lock that is not a row's: `Lock:object` (the lock a committing
    /// transaction that issued NOTIFY takes), `Lock:relation`, `Lock:extend`, `Lock:advisory`, …
    LockWait,
    Deadlocks,
    /// Rolled-back transactions (PostgreSQL counts serialization failures only as rollbacks).
    Serialization,
    /// Commits waiting on the WAL (`LWLock:WALWrite`, `IO:WALSync`).
    CommitBound,
    /// Lock holders idle inside their transaction.
    IdleInTransaction,
    /// More sessions running than the server has cores.
    Oversubscribed,
}

impl FindingKind {
    /// The name used in the JSON and the text (`hot_row`).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::HotRow => "hot_row",
            FindingKind::Queue => "queue",
            FindingKind::LockWait => "lock_wait",
            FindingKind::XminHorizon => "xmin_horizon",
            FindingKind::Deadlocks => "deadlocks",
            FindingKind::Serialization => "serialization",
            FindingKind::CommitBound => "commit_bound",
            FindingKind::IdleInTransaction => "idle_in_transaction",
            FindingKind::Oversubscribed => "oversubscribed",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Finding {
    pub kind: FindingKind,
    /// One line saying what was found.
    pub title: String,
    /// The relation it is about (as `regclass` prints it), when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// The hot rows' keys, most waited-on first.
    pub keys: Vec<KeyShare>,
    /// Share of active session time it explains (0–1); for deadlocks and serialization
    /// failures, the share of transactions they rolled back.
    pub share: f64,
    /// The statements involved: waiting, blocking, claiming, holding.
    pub statements: Vec<FindingStatement>,
    /// The lab scenario that reproduces it, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// Its variants that fit (empty: the whole ladder).
    pub variants: Vec<String>,
    /// Parameters estimated from the sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
    /// The exact command that runs the scenario with those parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The same command as arguments (after `hotbench`).
    pub command_args: Vec<String>,
    /// The same ladder, typed: what `command` is rendered from and `diagnose --run` runs
    /// (in the diagnosing process only; the file has it as `command`).
    #[serde(skip)]
    pub suggestion: Option<SuggestedLadder>,
    /// What was measured: samples, shares, counts.
    pub evidence: Vec<Evidence>,
    /// The xmin horizon's holder (`xmin_horizon`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<XminHolder>,
    /// What to do about it, in a sentence.
    pub advice: String,
}

/// A hot row's key and its share of the relation's lock waits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeyShare {
    /// `customer_id=42, day=2025-06-01`, or `ctid=(0,7)` when keys could not be read.
    pub key: String,
    /// Lock-waiting backend samples queued on it.
    pub count: u64,
    /// Percent of all lock-waiting samples.
    pub pct: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FindingStatement {
    /// `waiting`, `blocking`, `claiming`, `writing`, `holding`, `running`.
    pub role: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub queryid: String,
    /// Normalized text (literals replaced by `?`).
    pub query: String,
    /// Backend samples (or waiter/blocker pairs, for `blocking`).
    pub samples: u64,
    /// The blocker's state, for `blocking`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub state: String,
}

/// Scenario parameters estimated from the sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Estimate {
    /// Sessions seen on the relation's statements (the lab's clients).
    pub clients: u32,
    /// Distinct hot rows seen (the lab's hot keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_keys: Option<u32>,
    /// Time between a transaction's statements (ms) of clients across a network, for `--rtt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<f64>,
    /// The same for clients on the server's host, where it is the client's own time, for
    /// `--think`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think_ms: Option<f64>,
}

/// The lab ladder a finding suggests, typed: `hotbench scenario run SCENARIO -c CLIENTS
/// [--variants …] [--param …] [--rtt …] [--think …]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SuggestedLadder {
    pub scenario: String,
    /// Empty: the whole ladder.
    pub variants: Vec<String>,
    pub clients: u32,
    /// `--param NAME=VALUE`s, in order.
    pub params: Vec<(String, String)>,
    /// `--rtt`, µs (whole tenths of a millisecond, as the command spells them).
    pub rtt_us: Option<i64>,
    /// `--think`, µs (whole tenths of a millisecond).
    pub think_us: Option<i64>,
}

/// One measured fact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Evidence {
    pub what: String,
    pub value: String,
}

impl Evidence {
    pub fn new(what: impl Into<String>, value: impl Into<String>) -> Evidence {
        Evidence {
            what: what.into(),
            value: value.into(),
        }
    }
}

/// One check diagnose made, whether or not it found something.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Check {
    /// `lock waits`, `WAL waits`, `oldest xmin`, …
    pub what: String,
    /// What was measured (`3% of active time`), or why it could not be.
    pub value: String,
    /// It gave a finding.
    pub found: bool,
}

/// The suggested ladder, run on the embedded server (`--run`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LabRun {
    pub command: String,
    pub scenario: String,
    /// Variants in the ladder's order.
    pub ranking: Vec<LabVariant>,
    /// Why the ladder did not complete, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LabVariant {
    pub name: String,
    pub baseline: bool,
    /// Useful work per second (the ladder's goodput).
    pub per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// Useful work per second over the baseline's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_baseline: Option<f64>,
    pub checks_ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_wait: Option<String>,
    /// Why it did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_statuses_are_snake_case_and_a_partial_file_reads() {
        let mut d = Diagnosis::new();
        d.status = DiagnosisStatus::ServerLost;
        d.findings.push(Finding {
            kind: FindingKind::XminHorizon,
            ..Default::default()
        });
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["format"], DIAGNOSIS_FORMAT);
        assert_eq!(v["status"], "server_lost");
        assert_eq!(v["findings"][0]["kind"], "xmin_horizon");
        assert_eq!(FindingKind::IdleInTransaction.name(), "idle_in_transaction");
        let back: Diagnosis =
            serde_json::from_str(r#"{"format": "hotbench-diagnosis/1", "findings": [{}]}"#)
                .unwrap();
        assert_eq!(back.findings[0].kind, FindingKind::HotRow);
        assert_eq!(back.status, DiagnosisStatus::Complete);
    }

    /// docs/diagnosis.md describes every field the document writes: the top level, a
    /// finding (with its estimate) and the lab run. A field added without a line there
    /// fails here.
    #[test]
    fn every_field_is_documented() {
        let doc = include_str!("../../../docs/diagnosis.md");
        let mut d = Diagnosis::new();
        d.server_cores = Some(2);
        d.findings.push(Finding {
            relation: Some("t".into()),
            scenario: Some("s".into()),
            estimate: Some(Estimate {
                clients: 1,
                hot_keys: Some(1),
                rtt_ms: Some(1.0),
                think_ms: Some(1.0),
            }),
            command: Some("c".into()),
            holder: Some(XminHolder::default()),
            ..Default::default()
        });
        d.lab = Some(LabRun {
            error: Some("e".into()),
            ..Default::default()
        });
        let v = serde_json::to_value(&d).unwrap();
        let missing = crate::doc_fields::undocumented(
            doc,
            &[
                ("", &v),
                ("findings[].", &v["findings"][0]),
                ("findings[].estimate.", &v["findings"][0]["estimate"]),
                ("lab.", &v["lab"]),
            ],
        );
        assert!(
            missing.is_empty(),
            "fields missing from docs/diagnosis.md: {missing:?}"
        );
    }
}
