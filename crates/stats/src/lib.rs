//! hotbench-stats (placeholder, being written).
