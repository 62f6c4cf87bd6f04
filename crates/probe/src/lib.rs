//! hotbench-probe (placeholder, being written).
