//! hotbench-engine (placeholder, being written).
