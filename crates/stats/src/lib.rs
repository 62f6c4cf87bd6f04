//! Statistics for hotbench runs: pgbench-compatible running sums ([`simple`]), HDR latency
//! histograms ([`histogram`]), transaction outcome counters ([`counters`]), per-client
//! fairness ([`fairness`]), hot-key sketches with their latencies ([`hot_keys`],
//! [`key_latency`], over coarse clocks: [`coarse`]) and the Zipf law of key popularity
//! ([`zipf`]). Each type has its own `merge`. The result files written in them are
//! `hotbench-results`'; nothing here does I/O.

pub mod coarse;
pub mod counters;
pub mod fairness;
pub mod histogram;
pub mod hot_keys;
pub mod key_latency;
pub mod latency_sketch;
pub mod simple;
pub mod zipf;

pub use counters::{saturating_sum, FailureKind, TxnCounters};
pub use histogram::{LatencyHistogram, Percentiles};
pub use latency_sketch::LatencySketch;
pub use simple::SimpleStats;
