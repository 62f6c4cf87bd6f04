//! hotbench's result files: the versioned, typed documents every command writes and every
//! renderer (text, JSON, HTML) reads — the run record (`hotbench-result/1`) with its probes,
//! pooler and perturbations, ladders, sweeps, comparisons, USL fits and diagnoses — their
//! readers (lenient: fields default, older files read) and writers.
//!
//! Records made from records live here too, beside the types they build: [`merge`] (several
//! machines' results into one), [`recovery`] (the time to recover from each perturbation) and
//! [`threshold`] (pass/fail verdicts on final records, stored in them); `report` only renders.
//! The statistics the records are written in (histograms, counters, hot-key sketches) are
//! `hotbench-stats`'.
//!
//! I/O is the documents': [`json_file`] writes result files atomically so that a crash or
//! Ctrl-C never leaves a half-written JSON behind, [`output_path`] decides where an output may
//! go (never over a non-regular file), and [`input_file`] reads inputs with a size limit.
//! What a file or a server controls reaches a terminal through [`terminal`].

pub mod capture_record;
pub mod client_bound;
pub mod clock_skew;
pub mod compare_record;
pub mod config_record;
pub mod diagnosis_record;
#[cfg(test)]
mod doc_fields;
pub mod input_file;
pub mod json_file;
pub mod ladder_record;
pub mod merge;
pub mod output_path;
pub mod perturbation_record;
pub mod perturbation_window;
pub mod pgbench_format;
pub mod pooler_record;
pub mod probe_record;
pub mod record;
pub mod recovery;
pub mod recovery_live;
pub mod run_description;
pub mod sample_record;
pub mod sessions_record;
pub mod shards;
pub mod sweep_record;
pub mod terminal;
#[cfg(any(test, feature = "testing"))]
pub mod testdata;
pub mod threshold;
pub mod threshold_outcome;
pub mod usl_record;
pub mod work;

pub use capture_record::{CaptureDoc, CAPTURE_FORMAT};
pub use client_bound::ClientBound;
pub use compare_record::{
    CellComparison, ComparedVariant, ComparisonDoc, LadderComparisonDoc, MetricComparison,
    TtrCellComparison, TtrComparison, COMPARE_FORMAT,
};
pub use config_record::{
    ConfigGroup, ConfigRecord, ConfigScript, RetryRecord, ShardPart, ShardsRecord,
};
pub use diagnosis_record::{Diagnosis, DIAGNOSIS_FORMAT};
/// The settings' value types the record's `config` is written in.
pub use hotbench_settings::{
    Backoff, GoodputRule, Limit, OnDisconnect, QueryMode, RunSettings, ShardConfig,
};
/// The statistics' types the records are written in.
pub use hotbench_stats::{
    saturating_sum, FailureKind, LatencyHistogram, Percentiles, SimpleStats, TxnCounters,
};
pub use ladder_record::{
    CheckResult, Ladder, LadderFile, MonitorSeries, PhaseTimes, VariantResult, WORK_CHECK,
};
pub use perturbation_record::PerturbationRecord;
pub use perturbation_record::RecoveryRule;
pub use pgbench_format::PgbenchCompat;
pub use pooler_record::{PoolerInterval, PoolerSetup, PoolerSummary, PoolerTimes};
pub use probe_record::ProbeRecord;
pub use record::{
    align_probes, BenchInfo, ClientUsage, CommandRecord, ConnectPhase, ErrorSample, GroupRecord,
    HostRecord, IntervalRecord, IntervalStats, RunRecord, RunStatus, ScriptRecord, ServerInfo,
    TotalsRecord, LADDER_FORMAT, RESULT_FORMAT,
};
pub use sweep_record::{SweepAxis, SweepDoc, SweepPoint, SweepSeries, SWEEP_FORMAT};
pub use threshold_outcome::Outcome as ThresholdOutcome;
pub use usl_record::{Constraint, UslDoc, UslFitRecord, USL_FORMAT};
pub use work::{Shortfall, BEHIND_TOLERANCE};
