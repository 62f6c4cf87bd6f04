//! Statistics for hotbench runs: pgbench-compatible running sums, HDR latency histograms,
//! transaction outcome counters, per-interval timelines and the versioned result record that
//! every renderer (text, JSON, HTML) reads.
//!
//! Records made from records live here too, beside the types they build: [`merge`] (several
//! machines' results into one) and [`threshold`] (pass/fail verdicts on final records, stored
//! in them); `report` only renders.
//!
//! Nothing here does I/O except [`json_file`], which writes result files atomically so that a
//! crash or Ctrl-C never leaves a half-written JSON behind, [`output_path`], which decides
//! where an output may go (never over a non-regular file), and [`input_file`], which reads
//! inputs with a size limit.

pub mod capture_record;
pub mod client_bound;
pub mod clock_skew;
pub mod coarse;
pub mod compare_record;
pub mod config_record;
pub mod counters;
pub mod diagnosis_record;
pub mod fairness;
pub mod histogram;
pub mod hot_keys;
pub mod input_file;
pub mod json_file;
pub mod key_latency;
pub mod ladder_record;
pub mod merge;
pub mod output_path;
pub mod perturbation_record;
pub mod pgbench_format;
pub mod pooler_record;
pub mod probe_record;
pub mod record;
pub mod recovery;
pub mod run_description;
pub mod sessions_record;
pub mod shards;
pub mod simple;
pub mod sweep_record;
pub mod terminal;
#[cfg(any(test, feature = "testing"))]
pub mod testdata;
pub mod threshold;
pub mod usl_record;
pub mod work;
pub mod zipf;

pub use capture_record::{CaptureDoc, CAPTURE_FORMAT};
pub use client_bound::ClientBound;
pub use compare_record::{
    CellComparison, ComparedVariant, ComparisonDoc, LadderComparisonDoc, MetricComparison,
    COMPARE_FORMAT,
};
pub use config_record::{
    ConfigGroup, ConfigRecord, ConfigScript, RetryRecord, ShardPart, ShardsRecord,
};
pub use counters::{saturating_sum, FailureKind, TxnCounters};
pub use diagnosis_record::{Diagnosis, DIAGNOSIS_FORMAT};
pub use histogram::{LatencyHistogram, Percentiles};
/// The settings' value types the record's `config` is written in.
pub use hotbench_settings::{
    Backoff, GoodputRule, Limit, OnDisconnect, QueryMode, RunSettings, ShardConfig,
};
pub use ladder_record::{
    CheckResult, Ladder, LadderFile, MonitorSeries, PhaseTimes, VariantResult, WORK_CHECK,
};
pub use perturbation_record::PerturbationRecord;
pub use pgbench_format::PgbenchCompat;
pub use pooler_record::{PoolerInterval, PoolerSetup, PoolerSummary, PoolerTimes};
pub use probe_record::{align_probes, ProbeRecord};
pub use record::{
    BenchInfo, ClientUsage, CommandRecord, ConnectPhase, ErrorSample, GroupRecord, HostRecord,
    IntervalRecord, IntervalStats, RunRecord, RunStatus, ScriptRecord, ServerInfo, TotalsRecord,
    LADDER_FORMAT, RESULT_FORMAT,
};
pub use recovery::RecoveryRule;
pub use simple::SimpleStats;
pub use sweep_record::{SweepAxis, SweepDoc, SweepPoint, SweepSeries, SWEEP_FORMAT};
pub use threshold::Outcome as ThresholdOutcome;
pub use usl_record::{Constraint, UslDoc, UslFitRecord, USL_FORMAT};
pub use work::{Shortfall, BEHIND_TOLERANCE};
