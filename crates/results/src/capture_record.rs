//! The capture document (`capture.json` in a directory `hotbench capture` writes, format
//! [`CAPTURE_FORMAT`]): the observed profile of a user's workload that its twin — the
//! scenario written beside it — must reproduce: the statement mix (share of calls and of
//! time per normalized statement), the wait profile (share of active time per wait event),
//! the hot keys and their shares, throughput, the transaction shapes with their weights,
//! latency and think time, the fitted parameters, the sessions, and what could not be read
//! and why. Declared here (the capture crate writes it, `--verify` and `diagnose --capture`
//! read it), documented field by field in `docs/capture.md` (a test keeps the two in step).
//! Every field has a default, so a partial file still reads.

use serde::{Deserialize, Serialize};

/// The `format` of a capture document.
pub const CAPTURE_FORMAT: &str = "hotbench-capture/1";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CaptureDoc {
    pub format: String,
    pub tool_version: String,
    /// `complete`, `interrupted` (Ctrl-C) or `server_lost`: the profile covers what was
    /// sampled either way.
    pub status: CaptureStatus,
    /// The server, password masked.
    pub target: String,
    pub server_version: String,
    /// Unix seconds when sampling began.
    pub started_at: f64,
    /// Seconds sampled.
    pub duration_s: f64,
    /// Per-backend activity sampling period (ms).
    pub interval_ms: f64,
    /// Each source of the capture: used or not, and why.
    pub sources: Vec<SourceUse>,
    pub sessions: Sessions,
    /// Committed transactions per second (`pg_stat_database`, the capture's own left out).
    pub tps: f64,
    /// Rolled-back transactions per second.
    pub rollbacks_per_s: f64,
    /// Normalized statements (literals `?`), most calls first.
    pub statements: Vec<StatementShare>,
    /// Wait events as shares of active session time (0–1), most first; `CPU` is active
    /// without a wait event.
    pub waits: Vec<WaitShare>,
    /// Rows the lock waits queued on (`pg_locks`, keys read by ctid as diagnose reads them),
    /// most waited-on first.
    pub hot_keys: Vec<HotKey>,
    /// The counts behind the waits' and hot keys' shares (empty in captures written before
    /// it was kept): what `--verify` tells a near-tie from a difference with.
    pub sampling: Sampling,
    /// Transaction shapes, most frequent first: one pgbench script each.
    pub shapes: Vec<Shape>,
    /// The twin's client groups when kinds of session ran apart (dedicated producers and
    /// consumers); empty when every client runs every shape by its weight.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<ClientGroup>,
    /// What the sample could not see or reproduce, and why.
    pub notes: Vec<String>,
    /// The diagnosis of the same sample: its findings' one-line titles.
    pub findings: Vec<String>,
}

impl CaptureDoc {
    pub fn new() -> CaptureDoc {
        CaptureDoc {
            format: CAPTURE_FORMAT.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        }
    }

    /// The top wait event, when any was sampled.
    pub fn top_wait(&self) -> Option<&WaitShare> {
        self.waits.first()
    }
}

/// How the capture's sample ended: the one status of every sample's document.
pub use crate::sample_record::SampleStatus as CaptureStatus;

/// One source of the capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourceUse {
    /// `log`, `pg_stat_statements`, `pg_stat_activity`, `pg_locks`.
    pub name: String,
    pub used: bool,
    /// What it gave, or why it could not be used.
    pub detail: String,
}

/// Who ran the workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sessions {
    /// Distinct client backends seen in a transaction or running a statement.
    pub seen: u32,
    /// Mean sessions busy at a sample (running, or idle inside a transaction).
    pub mean_busy: f64,
    /// Mean sessions running a statement at a sample.
    pub mean_active: f64,
    /// Arrivals looked open (sessions mostly idle between transactions, waiting for
    /// requests): the twin runs at the captured rate (`-R`) instead of back to back.
    pub open_arrivals: bool,
    /// Mean time a session sat idle between its transactions (ms), when seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_between_ms: Option<f64>,
    /// Clients connected over a network (not the server's host).
    pub remote: bool,
}

/// A normalized statement's share of the workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatementShare {
    /// Normalized text: literals and parameters are `?`.
    pub query: String,
    pub calls: u64,
    /// Of all calls of the captured statements (0–1).
    pub calls_share: f64,
    pub total_ms: f64,
    /// Of all time in the captured statements (0–1).
    pub time_share: f64,
    pub rows: u64,
    pub mean_ms: f64,
    /// `pg_stat_statements` (exact counts), `log` or `sampled` (estimated executions).
    pub source: String,
}

/// A wait event's share of active session time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WaitShare {
    /// `wait_event_type:wait_event`, or `CPU`.
    pub event: String,
    /// 0–1.
    pub share: f64,
}

/// A row waited on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HotKey {
    pub relation: String,
    /// `id=42`, `a=1, b=x`, or `ctid=(p,t)` when keys were not read.
    pub key: String,
    /// 1 = the most waited-on.
    pub rank: u32,
    /// Share of the lock-waiting samples queued on it (0–1).
    pub share: f64,
    /// Lock-waiting samples queued on it (0: not kept, an older capture).
    pub samples: u64,
}

/// The sample sizes behind a capture's shares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sampling {
    /// `pg_stat_activity` rounds the waits were counted at.
    pub wait_rounds: u64,
    /// Backend samples counted in `waits` (running, or idle inside a transaction).
    pub busy_samples: u64,
    /// Length (s) of each interval of the per-interval counts below.
    pub interval_s: f64,
    /// Busy backend samples per interval.
    pub busy_by_interval: Vec<u64>,
    /// The first events of `waits`: their backend samples per interval.
    pub waits_by_interval: Vec<EventCounts>,
    /// `pg_locks` reads the hot keys were counted at, and their effective count as
    /// independent observations (`(Σ waiters)² / Σ waiters²`).
    pub lock_reads: u64,
    pub lock_reads_effective: f64,
    /// Lock-waiting backend samples at those reads (the hot keys' shares' denominator).
    pub lock_samples: u64,
}

/// One wait event's backend samples per interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventCounts {
    pub event: String,
    pub counts: Vec<u64>,
}

/// One transaction shape: the ordered statements between BEGIN and COMMIT (or one
/// autocommit statement), as one pgbench script.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Shape {
    /// Its script's file name in the scenario directory.
    pub script: String,
    /// Normalized statements in order (BEGIN and COMMIT left out).
    pub statements: Vec<String>,
    /// Per statement: how often it runs per transaction (1 = always; 0.5 = every other
    /// transaction; 3 = three times).
    pub per_transaction: Vec<f64>,
    pub autocommit: bool,
    /// Share of the workload's transactions (0–1): the script's `@W` over the others'.
    pub weight: f64,
    /// Its transactions per second, estimated.
    pub tps: f64,
    /// Mean transaction latency (ms): its statements' mean server time plus the gaps between
    /// them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// Time between consecutive statements (ms): the client's think time and round trip
    /// (`gaps_ms[i]` comes before statement `i + 1`), when seen.
    pub gaps_ms: Vec<Option<f64>>,
    /// Transactions of it seen by sampling (partly or whole).
    pub observed: u64,
    /// The parameters of its statements, in order of appearance.
    pub parameters: Vec<Parameter>,
}

/// One client group of the twin: the shapes one kind of session ran, and how many clients
/// run them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientGroup {
    /// `consumers` (the group holding a queue's claim), `producers`, or `group_N`.
    pub name: String,
    /// Its shapes' scripts.
    pub scripts: Vec<String>,
    /// Clients the twin runs in it.
    pub clients: u32,
    /// `sessions` (sessions seen running only these shapes) or `busy` (the sessions busy
    /// in its shapes at once: Little's law, its tps × (latency + the busy time per
    /// transaction the latencies leave out)).
    pub sized_by: String,
    /// Sessions busy in its shapes on average (Little's law).
    pub busy: f64,
    /// Its clients' time between transactions (ms): (clients − busy) / its tps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_between_ms: Option<f64>,
}

/// One literal or bind position of a shape's statement, and how its values are drawn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Parameter {
    /// The script variable.
    pub variable: String,
    /// Statement (0-based, in the shape) and position (0-based, in the statement).
    pub statement: usize,
    pub position: usize,
    /// The column it is compared with or stored in, when the statement says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// `constant`, `uniform`, `zipfian`, `exponential`, `same` (another parameter's value),
    /// `choice` (one of a few texts) or `unknown`.
    pub model: String,
    /// The model's numbers: `lo`/`hi` (uniform and the key range), `s` (zipfian),
    /// `theta` (exponential), `value` (constant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lo: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `same`: the variable it repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_as: Option<String>,
    /// The hottest values, drawn exactly with their shares (0–1).
    pub hot: Vec<HotValue>,
    /// Values observed.
    pub observations: u64,
    /// Distinct values observed.
    pub distinct: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HotValue {
    pub value: String,
    /// 1 = the most frequent.
    pub rank: u32,
    pub share: f64,
}

/// `hotbench capture --verify DIR`'s score (`DIR/verify.json`, format [`VERIFY_FORMAT`]):
/// the twin against the capture on each measure, and the fidelity line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fidelity {
    pub format: String,
    /// Where the twin ran (password masked), and for how long (s).
    pub target: String,
    pub duration_s: f64,
    pub captured_top_wait: Option<WaitShare>,
    pub twin_top_wait: Option<WaitShare>,
    /// Same top wait event, shares within [`WAIT_TOLERANCE`].
    pub top_wait_ok: bool,
    /// Per normalized statement: captured and twin share of calls.
    pub mix: Vec<MixShare>,
    /// The largest difference of a statement's share of calls.
    pub mix_max_delta: f64,
    pub mix_ok: bool,
    /// The original's first wait against each event it cannot be told from, and against the
    /// next one it can (the ties, with their intervals).
    pub top_wait_ties: Vec<TieTest>,
    /// The twin's share of the captured top wait event (it must be within the tolerance
    /// whichever tied event the twin ranks first).
    pub twin_share_of_captured_top: Option<f64>,
    /// What the hottest key was judged by: `lock waits`, `draws` (the keys the statements
    /// drew: sampled literals in the capture, the twin's own draws), or empty (n/a).
    pub hottest_evidence: String,
    /// The captured hottest key and its rank among the twin's (none: the twin never waited
    /// on it, or never drew it).
    pub hottest_key: Option<HotKey>,
    /// The original's hottest key against the next ones, by the same evidence.
    pub hottest_ties: Vec<TieTest>,
    /// The twin's hottest key, by the same evidence.
    pub twin_first_key: Option<String>,
    pub twin_rank: Option<u32>,
    pub twin_hottest_share: Option<f64>,
    /// `None`: nothing to compare (no hot row captured).
    pub hottest_ok: Option<bool>,
    pub captured_tps: f64,
    pub twin_tps: f64,
    pub tps_ratio: f64,
    pub tps_ok: bool,
    /// Per shape: captured and twin transactions per second and latency (ms).
    pub shapes: Vec<ShapeFidelity>,
    /// Each measure: what was compared, and met (`None`: not applicable, and why).
    pub checks: Vec<Check>,
    /// Measures met, out of those that applied.
    pub passed: u32,
    pub of: u32,
    /// The one line printed.
    pub line: String,
    pub notes: Vec<String>,
}

/// One measure of the fidelity line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Check {
    pub what: String,
    /// `None`: not applicable (`what` says why).
    pub met: Option<bool>,
}

/// Whether the original's first (wait event or key) can be told from another at the samples
/// taken: the difference of their shares with its 95% interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TieTest {
    pub first: String,
    pub other: String,
    pub first_share: f64,
    pub other_share: f64,
    /// `first_share - other_share` and its 95% interval.
    pub diff: f64,
    pub lo: f64,
    pub hi: f64,
    /// What the interval stands on: `20 batches of 3 s, 5,912 backend samples`.
    pub over: String,
    /// The interval holds 0: the two cannot be told apart.
    pub tied: bool,
}

/// The `format` of `verify.json`.
pub const VERIFY_FORMAT: &str = "hotbench-capture-verify/1";
/// The largest difference of the top wait's share that still reproduces it.
pub const WAIT_TOLERANCE: f64 = 0.15;
/// The largest difference of a statement's share of calls that still reproduces the mix.
pub const MIX_TOLERANCE: f64 = 0.05;
/// The twin's throughput must be within these multiples of the captured.
pub const TPS_RANGE: (f64, f64) = (0.5, 2.0);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixShare {
    pub query: String,
    pub captured: f64,
    pub twin: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShapeFidelity {
    pub script: String,
    pub captured_tps: f64,
    pub twin_tps: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_latency_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twin_latency_ms: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/capture.md describes every field `capture.json` writes: the top level, the
    /// sources, sessions, statements, waits, hot keys, a shape and a parameter. A field added
    /// without a line there fails here.
    #[test]
    fn every_field_is_documented() {
        let doc = include_str!("../../../docs/capture.md");
        let mut d = CaptureDoc::new();
        d.sessions.idle_between_ms = Some(1.0);
        d.sources.push(SourceUse::default());
        d.statements.push(StatementShare::default());
        d.waits.push(WaitShare::default());
        d.hot_keys.push(HotKey::default());
        d.sampling.waits_by_interval.push(EventCounts::default());
        d.groups.push(ClientGroup {
            idle_between_ms: Some(1.0),
            ..Default::default()
        });
        d.shapes.push(Shape {
            latency_ms: Some(1.0),
            parameters: vec![Parameter {
                column: Some("c".into()),
                lo: Some(1),
                hi: Some(2),
                s: Some(1.1),
                theta: Some(1.0),
                value: Some("v".into()),
                same_as: Some("p".into()),
                hot: vec![HotValue::default()],
                ..Default::default()
            }],
            ..Default::default()
        });
        let v = serde_json::to_value(&d).expect("serializes");
        let missing = crate::doc_fields::undocumented(
            doc,
            &[
                ("", &v),
                ("sources[].", &v["sources"][0]),
                ("sessions.", &v["sessions"]),
                ("statements[].", &v["statements"][0]),
                ("waits[].", &v["waits"][0]),
                ("hot_keys[].", &v["hot_keys"][0]),
                ("sampling.", &v["sampling"]),
                (
                    "sampling.waits_by_interval[].",
                    &v["sampling"]["waits_by_interval"][0],
                ),
                ("shapes[].", &v["shapes"][0]),
                ("groups[].", &v["groups"][0]),
                ("shapes[].parameters[].", &v["shapes"][0]["parameters"][0]),
                (
                    "shapes[].parameters[].hot[].",
                    &v["shapes"][0]["parameters"][0]["hot"][0],
                ),
            ],
        );
        assert!(
            missing.is_empty(),
            "fields missing from docs/capture.md: {missing:?}"
        );
        let back: CaptureDoc =
            serde_json::from_str(r#"{"format": "hotbench-capture/1", "shapes": [{}]}"#)
                .expect("a partial document reads");
        assert_eq!(back.status, CaptureStatus::Complete);
    }
}
