//! hotbench-scenario (placeholder, being written).
