//! hotbench-script (placeholder, being written).
