//! hotbench-report (placeholder, being written).
