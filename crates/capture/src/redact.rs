//! `--redact`: captured values replaced by generated ones (placeholder).
