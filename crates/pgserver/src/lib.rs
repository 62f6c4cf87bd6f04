//! hotbench-pgserver (placeholder, being written).
