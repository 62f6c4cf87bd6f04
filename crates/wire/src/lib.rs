//! hotbench-wire (placeholder, being written).
